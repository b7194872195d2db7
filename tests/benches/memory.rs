//! Memory benchmarks (docs/performance.md, "Memory").
//!
//! Run: `cargo bench -p guild-tests --bench memory`.
//! Reports medians; no timing is asserted anywhere.
//!
//! 1. validate + store of a 25,000-character document (the hard limit), each a full
//!    replacement of the previous version, on a SQLite file under target/ (WAL,
//!    `synchronous=FULL`): median over many updates, and validation alone for comparison;
//! 2. history size after 1,000 updates of that document: versions kept and the database file's
//!    size on disk (database + write-ahead log).

use std::sync::Arc;
use std::time::{Duration, Instant};

use guild_host::config::MemorySettings;
use guild_host::memory::{
    Actor, HARD_LIMIT_CHARS, Memory, Scope, SqliteMemoryStore, UpdateOutcome, validate,
};

const UPDATES: usize = 1_000;

/// A valid document of exactly 25,000 characters whose last bullet says `n`, so that every
/// update differs from the stored version.
fn document(n: usize) -> String {
    let mut text = String::from("## Decisions\n");
    let mut i = 0;
    while text.chars().count() + 60 < HARD_LIMIT_CHARS {
        text.push_str(&format!(
            "- 2026-01-{:02}: decision {i:05} recorded for the team\n",
            i % 28 + 1
        ));
        i += 1;
    }
    let tail = format!("- 2026-02-01: update {n:06} ");
    let fill = HARD_LIMIT_CHARS - text.chars().count() - tail.chars().count() - 1;
    text.push_str(&tail);
    text.push_str(&"x".repeat(fill));
    text.push('\n');
    assert_eq!(text.chars().count(), HARD_LIMIT_CHARS);
    text
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn file_size(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let path = dir.path().join("memory.db");
    let store = SqliteMemoryStore::open(&path).expect("open");
    let memory = Memory::new(
        Arc::new(store),
        MemorySettings {
            workspace: Some("bench".into()),
            user: None,
        },
    );
    let docs: Vec<String> = (0..UPDATES).map(document).collect();

    let mut validate_only = Vec::new();
    for pair in docs.windows(2).take(200) {
        let t = Instant::now();
        let v = validate(Scope::Team, &pair[1], Some(&pair[0]));
        validate_only.push(t.elapsed());
        assert!(matches!(v, guild_host::memory::Validation::Accepted { .. }));
    }

    let mut updates = Vec::with_capacity(UPDATES);
    runtime.block_on(async {
        for (base, doc) in (0u64..).zip(&docs) {
            let t = Instant::now();
            let outcome = memory
                .update(Scope::Team, doc, base, &Actor::Supervisor)
                .await
                .expect("update");
            updates.push(t.elapsed());
            assert!(
                matches!(outcome, UpdateOutcome::Stored { .. }),
                "{outcome:?}"
            );
        }
    });
    let versions = runtime
        .block_on(memory.history(Scope::Team, usize::MAX))
        .expect("history")
        .len();
    let db = file_size(&path);
    let wal = file_size(&path.with_file_name("memory.db-wal"));

    println!(
        "memory: validate + store of a {HARD_LIMIT_CHARS}-char document (full replacement, durable)"
    );
    println!("  median {:?} over {UPDATES} updates", median(updates));
    println!("  validation alone: median {:?}", median(validate_only));
    println!("memory: history after {UPDATES} updates");
    println!("  {versions} versions kept");
    println!(
        "  database {:.1} MiB + WAL {:.1} MiB ({:.1} KiB per version of {HARD_LIMIT_CHARS} chars)",
        db as f64 / (1024.0 * 1024.0),
        wal as f64 / (1024.0 * 1024.0),
        (db + wal) as f64 / 1024.0 / versions.max(1) as f64
    );
}
