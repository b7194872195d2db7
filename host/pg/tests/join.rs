//! The plugin-set check when hosts join one database: a plugin another live host runs with other
//! digests refuses the join (naming the plugin, both digests and the host) unless allowed; the
//! same digests, or plugins only one host has, join; a dead host's record does not count; hosts
//! joining at once with different digests do not both join.

mod common;

use std::time::Duration;

use guild_pg::{PgError, PgTaskStore, PluginDigest, PluginSet};

const LEASE: Duration = Duration::from_secs(2);

fn set(entries: &[(&str, &str, &str)]) -> PluginSet {
    entries
        .iter()
        .map(|(name, component, definition)| {
            (
                (*name).to_owned(),
                PluginDigest {
                    component: (*component).to_owned(),
                    definition: (*definition).to_owned(),
                },
            )
        })
        .collect()
}

fn joined(
    store: &PgTaskStore,
    config: &guild_pg::PgConfig,
    server: &guild_pg::testing::TestServer,
) -> String {
    let db = config.target().rsplit('/').next().expect("db").to_owned();
    server
        .client(&db)
        .expect("client")
        .query_one(
            "SELECT plugins FROM guild_hosts WHERE id = $1",
            &[&store.identity().id],
        )
        .and_then(|r| r.try_get(0))
        .expect("the host's row")
}

#[test]
fn a_plugin_with_other_digests_refuses_the_join_unless_allowed() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let a = PgTaskStore::open(&config, LEASE).expect("host a");
    let mine = set(&[("probe", "c1", "d1"), ("echo", "e1", "f1")]);
    assert!(
        a.join(&mine, false)
            .expect("the first host joins")
            .is_empty()
    );

    let b = PgTaskStore::open(&config, LEASE).expect("host b");
    let theirs = set(&[
        ("probe", "c2", "d1"),
        ("echo", "e1", "f1"),
        ("only-b", "x", "y"),
    ]);
    let err = b.join(&theirs, false).expect_err("refused");
    let text = err.to_string();
    assert!(matches!(err, PgError::PluginMismatch { ref mismatches, .. } if mismatches.len() == 1));
    for part in [
        "plugin 'probe'",
        "component sha256 c2 here but c1 on",
        &a.identity().name,
        "allow_plugin_mismatch = true",
    ] {
        assert!(text.contains(part), "names {part:?}: {text}");
    }
    assert!(
        !text.contains("'echo'"),
        "the same digests are fine: {text}"
    );
    assert_eq!(
        joined(&b, &config, &server),
        "",
        "a refused host records nothing"
    );
    assert_eq!(
        b.plugin_mismatches(&theirs).expect("compare").len(),
        1,
        "the read-only comparison finds it too"
    );

    let allowed = b.join(&theirs, true).expect("allowed");
    assert_eq!(allowed.len(), 1, "the mismatch is returned to be logged");
    assert!(joined(&b, &config, &server).contains("only-b"), "b joined");

    let c = PgTaskStore::open(&config, LEASE).expect("host c");
    let err = c
        .join(&set(&[("echo", "e1", "f2")]), false)
        .expect_err("another definition is refused too");
    assert!(
        err.to_string().contains("definition sha256 f2 here but f1"),
        "{err}"
    );
}

#[test]
fn the_same_digests_and_plugins_only_one_host_has_join() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let a = PgTaskStore::open(&config, LEASE).expect("host a");
    let b = PgTaskStore::open(&config, LEASE).expect("host b");
    a.join(&set(&[("probe", "c1", "d1"), ("only-a", "a", "a")]), false)
        .expect("a joins");
    let found = b
        .join(&set(&[("probe", "c1", "d1"), ("only-b", "b", "b")]), false)
        .expect("b joins");
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(b.live_hosts().expect("hosts").len(), 1);
}

#[test]
fn a_dead_hosts_record_does_not_count() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let b = PgTaskStore::open(&config, LEASE).expect("host b");
    let db = config.target().rsplit('/').next().expect("db").to_owned();
    let other = serde_json::json!({"probe": {"component": "old", "definition": "d1"}}).to_string();
    // A host that stopped renewing an hour ago, with another component under the same name.
    server
        .client(&db)
        .expect("client")
        .execute(
            "INSERT INTO guild_hosts (id, name, started, last_seen, plugins) VALUES \
             ('dead', 'host gone pid 1', now() - interval '2 hours', now() - interval '1 hour', $1)",
            &[&other],
        )
        .expect("a dead host's row");
    let found = b
        .join(&set(&[("probe", "new", "d1")]), false)
        .expect("the dead host's set is not compared");
    assert!(found.is_empty());
    // The same row, seen now, refuses the join: the test would pass for the wrong reason otherwise.
    server
        .client(&db)
        .expect("client")
        .execute(
            "UPDATE guild_hosts SET last_seen = now() WHERE id = 'dead'",
            &[],
        )
        .expect("the host is seen again");
    let c = PgTaskStore::open(&config, LEASE).expect("host c");
    let err = c
        .join(&set(&[("probe", "new", "d1")]), false)
        .expect_err("a live host with another component refuses the join");
    assert!(err.to_string().contains("host gone pid 1"), "{err}");
}

#[test]
fn hosts_joining_at_once_with_other_digests_do_not_both_join() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    const HOSTS: usize = 4;
    let stores: Vec<PgTaskStore> = (0..HOSTS)
        .map(|_| PgTaskStore::open(&config, LEASE).expect("host"))
        .collect();
    let barrier = std::sync::Barrier::new(HOSTS);
    let outcomes: Vec<bool> = std::thread::scope(|s| {
        let joins: Vec<_> = stores
            .iter()
            .enumerate()
            .map(|(i, store)| {
                let barrier = &barrier;
                s.spawn(move || {
                    let mine = set(&[("probe", &format!("c{i}"), "d")]);
                    barrier.wait();
                    match store.join(&mine, false) {
                        Ok(_) => true,
                        Err(PgError::PluginMismatch { .. }) => false,
                        Err(e) => panic!("{e}"),
                    }
                })
            })
            .collect();
        joins
            .into_iter()
            .map(|j| j.join().expect("no panic"))
            .collect()
    });
    assert_eq!(
        outcomes.iter().filter(|ok| **ok).count(),
        1,
        "exactly one of the hosts joined: {outcomes:?}"
    );
}
