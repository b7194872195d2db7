//! A PostgreSQL server per test, and fresh databases on it.

#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicUsize, Ordering};

use guild_pg::PgConfig;
use guild_pg::testing::{TestServer, TestServerError};

/// Set to make a missing PostgreSQL a failure instead of a skip.
pub const REQUIRE_ENV: &str = "GUILD_REQUIRE_PG";

/// A started server, or `None` (with a loud message) when PostgreSQL is not installed here.
pub fn server() -> Option<TestServer> {
    match TestServer::start() {
        Ok(server) => Some(server),
        Err(e @ TestServerError::NotInstalled) if std::env::var_os(REQUIRE_ENV).is_none() => {
            eprintln!(
                "\n************************************************************\n\
                 SKIPPED: {e}\n\
                 (set {REQUIRE_ENV}=1 to fail instead)\n\
                 ************************************************************\n"
            );
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// A new, empty database on `server`.
pub fn fresh(server: &TestServer) -> PgConfig {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    server
        .create_database(&format!("guild_test_{n}"))
        .expect("create a database")
}
