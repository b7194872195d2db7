//! The daily model token counts on PostgreSQL: two stores on one database (two hosts) see each
//! other's tokens, days and plugins are counted apart, concurrent adds from two stores sum
//! exactly, and a database of the previous schema version gains the table when opened.

mod common;

use std::sync::Arc;

use guild_pg::{PgDailyTokens, schema};

#[test]
fn two_stores_on_one_database_share_the_counts() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let a = PgDailyTokens::open(&config).expect("open a");
    let b = PgDailyTokens::open(&config).expect("open b");
    assert_eq!(
        b.used("asker", 20_000).expect("read"),
        0,
        "nothing spent yet"
    );
    a.add("asker", 20_000, 18).expect("add on a");
    assert_eq!(
        b.used("asker", 20_000).expect("read on b"),
        18,
        "b sees a's tokens"
    );
    b.add("asker", 20_000, 7).expect("add on b");
    assert_eq!(
        a.used("asker", 20_000).expect("read on a"),
        25,
        "a sees b's tokens"
    );
    // Another day and another plugin are counted apart.
    assert_eq!(a.used("asker", 20_001).expect("read"), 0);
    assert_eq!(a.used("other", 20_000).expect("read"), 0);
    // A separate database shares nothing.
    let elsewhere = PgDailyTokens::open(&common::fresh(&server)).expect("open elsewhere");
    assert_eq!(elsewhere.used("asker", 20_000).expect("read"), 0);
}

#[test]
fn concurrent_adds_from_two_stores_sum_exactly() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    const ADDS: u64 = 50;
    let stores: Vec<Arc<PgDailyTokens>> = (0..2)
        .map(|_| Arc::new(PgDailyTokens::open(&config).expect("open")))
        .collect();
    let barrier = Arc::new(std::sync::Barrier::new(stores.len()));
    let threads: Vec<_> = stores
        .iter()
        .enumerate()
        .map(|(i, store)| {
            let (store, barrier) = (store.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for n in 0..ADDS {
                    // Distinct amounts: a lost update would show in the sum.
                    store
                        .add("asker", 7, 1 + (i as u64) * 1000 + n)
                        .expect("add");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("no panic");
    }
    let expected: u64 = (0..2u64)
        .flat_map(|i| (0..ADDS).map(move |n| 1 + i * 1000 + n))
        .sum();
    for store in &stores {
        assert_eq!(store.used("asker", 7).expect("read"), expected);
    }
}

#[test]
fn a_version_3_database_gains_the_table() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    drop(PgDailyTokens::open(&config).expect("open"));
    let db = config
        .target()
        .rsplit('/')
        .next()
        .expect("a database name")
        .to_owned();
    let mut client = server.client(&db).expect("client");
    client
        .batch_execute(
            "DROP TABLE daily_tokens; DROP INDEX tasks_orphaned; \
             ALTER TABLE tasks DROP COLUMN retryable; UPDATE guild_schema SET version = 3",
        )
        .expect("take the database back to version 3");
    let store = PgDailyTokens::open(&config).expect("a version 3 database is migrated");
    store.add("asker", 1, 5).expect("the table is there");
    assert_eq!(store.used("asker", 1).expect("read"), 5);
    let version: i32 = client
        .query_one("SELECT version FROM guild_schema", &[])
        .expect("guild_schema")
        .get(0);
    assert_eq!(version, schema::LATEST);
}
