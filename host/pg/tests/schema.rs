//! The database is Guild's or refused: a newer schema, another application's tables or another
//! application's `guild_schema` are refused with errors that say so, and nothing is changed;
//! an empty database is adopted, and a second store opens the migrated one.

mod common;

use guild_pg::{PgConfig, PgError, PgLedgerStore, PgMemoryStore, schema};
use guild_receipts::LedgerStore;

#[test]
fn empty_database_is_migrated_once_and_reopened() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let first = PgLedgerStore::open(&config).expect("an empty database is adopted");
    let memory = PgMemoryStore::open(&config).expect("the same database holds memory");
    let again = PgLedgerStore::open(&config).expect("a migrated database reopens");
    assert!(again.verify().expect("verify").ok);
    drop((first, memory, again));
    let mut client = server.client(&db_name(&config)).expect("client");
    let row = client
        .query_one("SELECT application, version FROM guild_schema", &[])
        .expect("guild_schema");
    assert_eq!(
        (row.get::<_, String>(0), row.get::<_, i32>(1)),
        ("guild".to_owned(), schema::LATEST)
    );
}

#[test]
fn newer_schema_is_refused() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    drop(PgLedgerStore::open(&config).expect("open"));
    let mut client = server.client(&db_name(&config)).expect("client");
    client
        .execute(
            "UPDATE guild_schema SET version = $1",
            &[&(schema::LATEST + 1)],
        )
        .expect("pretend a newer Guild wrote it");
    for err in [
        PgLedgerStore::open(&config).err(),
        PgMemoryStore::open(&config).err(),
    ] {
        match err {
            Some(
                e @ PgError::Newer {
                    found, supported, ..
                },
            ) => {
                assert_eq!((found, supported), (schema::LATEST + 1, schema::LATEST));
                assert!(e.to_string().contains("upgrade Guild"), "{e}");
            }
            other => panic!("a newer schema must be refused, got {other:?}"),
        }
    }
}

#[test]
fn foreign_database_is_refused_and_left_alone() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let mut client = server.client(&db_name(&config)).expect("client");
    client
        .batch_execute("CREATE TABLE customers (id int PRIMARY KEY)")
        .expect("another application's table");
    match PgLedgerStore::open(&config).err() {
        Some(e @ PgError::Foreign { .. }) => {
            assert!(e.to_string().contains("customers"), "{e}")
        }
        other => panic!("a foreign database must be refused, got {other:?}"),
    }
    let ours: bool = client
        .query_one("SELECT to_regclass('guild_schema') IS NOT NULL", &[])
        .expect("look")
        .get(0);
    assert!(!ours, "nothing was created in the refused database");
}

#[test]
fn another_applications_guild_schema_is_refused() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let mut client = server.client(&db_name(&config)).expect("client");
    client
        .batch_execute(
            "CREATE TABLE guild_schema (application text, version int); \
             INSERT INTO guild_schema VALUES ('mediaeval-guilds', 1)",
        )
        .expect("someone else's guild_schema");
    match PgMemoryStore::open(&config).err() {
        Some(e @ PgError::Foreign { .. }) => {
            assert!(e.to_string().contains("mediaeval-guilds"), "{e}")
        }
        other => panic!("someone else's guild_schema must be refused, got {other:?}"),
    }
}

#[test]
fn password_in_the_url_is_refused() {
    let err = PgConfig::from_url("postgres://guild:hunter2@127.0.0.1:5432/guild")
        .expect_err("a password in the url");
    assert!(
        err.to_string().contains(guild_pg::PASSWORD_ENV),
        "names the variable to use: {err}"
    );
    let ok = PgConfig::with_password(
        "postgres://guild@127.0.0.1:5432/guild",
        Some("hunter2".into()),
    )
    .expect("a url without a password");
    assert_eq!(ok.target(), "127.0.0.1/guild");
    assert!(
        !format!("{ok:?}").contains("hunter2"),
        "the password is not shown"
    );
}

fn db_name(config: &PgConfig) -> String {
    config
        .target()
        .rsplit('/')
        .next()
        .expect("a database name")
        .to_owned()
}
