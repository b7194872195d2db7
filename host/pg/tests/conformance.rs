//! Both storage contracts' conformance suites, on a real PostgreSQL server; a store called
//! straight from async code neither panics nor deadlocks.

mod common;

use guild_memory::{DocId, MemoryStore, Scope};
use guild_pg::{PgLedgerStore, PgMemoryStore};
use guild_receipts::{AuditKind, LedgerStore};

#[test]
fn ledger_conformance() {
    let Some(server) = common::server() else {
        return;
    };
    guild_receipts::conformance::run(&|| {
        Box::new(PgLedgerStore::open(&common::fresh(&server)).expect("open the ledger"))
    });
}

#[test]
fn memory_conformance() {
    let Some(server) = common::server() else {
        return;
    };
    guild_memory::conformance::run(&|| {
        Box::new(PgMemoryStore::open(&common::fresh(&server)).expect("open the memory store"))
    });
}

/// The `postgres` client starts a runtime of its own, which panics on a runtime thread; the
/// stores run it on their connection thread, so even a direct call from async code works.
#[test]
fn calls_from_async_code_do_not_panic() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    for runtime in [
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime"),
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .expect("runtime"),
    ] {
        let config = config.clone();
        runtime.block_on(async move {
            let ledger = PgLedgerStore::open(&config).expect("open from async code");
            ledger
                .audit(AuditKind::PluginLoaded, "kb@0.1.0", "from async")
                .expect("audit from async code");
            assert!(ledger.verify().expect("verify").ok);
            let memory = PgMemoryStore::open(&config).expect("open from async code");
            let doc = DocId::new(Scope::Team, "acme");
            assert!(memory.history(&doc, 1).expect("history").len() <= 1);
            drop(ledger);
            drop(memory);
        });
    }
}
