//! The task store with leases across hosts: a task started on one store is seen, and cancelled,
//! from another; a host that dies (a child process, killed) loses its task to `interrupted` once
//! its lease expires, and nobody runs it again, while its retryable task is taken up by exactly
//! one live host as a new attempt; a live host's leases are renewed; a host that stops cleanly
//! interrupts what it held and leaves `guild_hosts`.

mod common;

use std::io::BufRead;
use std::time::Duration;

use guild_pg::{PgConfig, PgTaskStore};

const CHILD_URL: &str = "GUILD_PG_TEST_TASK_HOLDER_URL";

const LEASE: Duration = Duration::from_secs(1);

/// Waits (without a time limit that could make the test flaky, beyond a generous guard against
/// hanging forever) until `f` holds.
fn until(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..1200 {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("gave up waiting until {what}");
}

fn status(store: &PgTaskStore, id: &str) -> String {
    store
        .get(id)
        .expect("get")
        .expect("the task is there")
        .status
}

#[test]
fn a_task_started_on_one_host_is_seen_and_cancelled_from_another() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let a = PgTaskStore::open(&config, LEASE).expect("host a");
    let b = PgTaskStore::open(&config, LEASE).expect("host b");
    a.insert("t", "probe", "brief").expect("insert");
    assert!(a.start_attempt("t", 1).expect("start"), "a claims it");
    assert!(
        !b.start_attempt("t", 1).expect("start on b"),
        "a task held by another host does not start here"
    );
    a.event("t", "report", "{\"output\":\"one\"}")
        .expect("report");
    let seen = b.get("t").expect("get").expect("b sees a's task");
    assert_eq!((seen.status.as_str(), seen.attempt), ("running", 1));
    assert_eq!(seen.owner_name, a.identity().name);
    assert_eq!(b.list(10).expect("list").len(), 1, "b lists a's task");
    assert_eq!(
        b.take_new_reports("t").expect("take").len(),
        1,
        "b takes a's report"
    );
    assert!(
        a.take_new_reports("t").expect("take").is_empty(),
        "one cursor for every host"
    );
    assert_eq!(
        b.live_elsewhere("t").expect("owner").as_deref(),
        Some(a.identity().name.as_str()),
        "b names the host running it"
    );
    assert_eq!(
        a.live_elsewhere("t").expect("owner"),
        None,
        "a runs it itself"
    );

    assert!(a.still_running_here("t", 1).expect("watch"));
    assert!(b.end("t", "cancelled").expect("cancel from b"), "b cancels");
    assert!(
        !a.still_running_here("t", 1).expect("watch"),
        "a sees the cancel and stops its attempt"
    );
    a.finish("t", 1, "succeeded", "{}").expect("late finish");
    assert_eq!(
        status(&b, "t"),
        "cancelled",
        "a's late result does not undo the cancel"
    );
    assert!(
        !b.end("t", "cancelled").expect("cancel again"),
        "an ended task stays as it is"
    );
}

/// Entry point of the holder process of [`a_dead_hosts_task_is_interrupted_and_never_runs_again`]
/// (this test binary again): opens a store, starts task `t`, says so, and waits to be killed.
#[test]
#[ignore = "a child process of a_dead_hosts_task_is_interrupted_and_never_runs_again"]
fn holder_process() {
    let Some(url) = std::env::var_os(CHILD_URL) else {
        return;
    };
    let config = PgConfig::with_password(url.to_str().expect("url"), None).expect("url");
    let store = PgTaskStore::open(&config, LEASE).expect("open");
    store.insert("t", "probe", "brief").expect("insert");
    assert!(store.start_attempt("t", 1).expect("start"));
    store
        .insert_retryable("r", "probe", "retry me")
        .expect("insert a retryable task");
    assert!(store.start_attempt("r", 1).expect("start"));
    println!("RUNNING");
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

#[test]
fn a_dead_hosts_task_is_interrupted_and_never_runs_again() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let url = server.url(config.target().rsplit('/').next().expect("db"));
    let mut child = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--ignored",
            "--exact",
            "holder_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_URL, &url)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start the holder process");
    let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    assert!(
        lines.any(|l| l.is_ok_and(|l| l.contains("RUNNING"))),
        "the holder started its task"
    );
    let b = PgTaskStore::open(&config, LEASE).expect("host b");
    let holder = b
        .live_elsewhere("t")
        .expect("owner")
        .expect("held by the child");
    assert!(holder.contains(&format!("pid {}", child.id())), "{holder}");
    assert_eq!(
        b.live_hosts().expect("hosts").len(),
        1,
        "the holder is registered"
    );

    child.kill().expect("SIGKILL the holder");
    child.wait().expect("reap the holder");
    until("the dead host's task is interrupted", || {
        status(&b, "t") == "interrupted"
    });
    let events = b.events("t").expect("events");
    assert!(
        events.iter().any(|(k, p)| k == "status"
            && p.contains("stopped renewing its lease")
            && p.contains(&holder)),
        "the event says why and names the host: {events:?}"
    );
    assert!(
        !b.start_attempt("t", 1).expect("start"),
        "an interrupted task is not run again"
    );
    assert_eq!(b.live_elsewhere("t").expect("owner"), None);
    until("the dead host drops out of the live hosts", || {
        b.live_hosts().expect("hosts").is_empty()
    });

    // The retryable task waits for a host that has its specialist, and one host takes it.
    until("the retryable task is released", || {
        b.get("r")
            .expect("get")
            .is_some_and(|r| r.status == "queued" && r.attempt == 2)
    });
    assert!(
        b.claim_orphans(&["other".into()])
            .expect("claim")
            .is_empty(),
        "a host without the specialist does not take it"
    );
    assert!(
        !b.start_attempt("r", 2).expect("start"),
        "nobody runs it before taking it"
    );
    let c = PgTaskStore::open(&config, LEASE).expect("host c");
    let (by_b, by_c) = std::thread::scope(|s| {
        let from_b = s.spawn(|| b.claim_orphans(&["probe".into()]).expect("claim"));
        let from_c = s.spawn(|| c.claim_orphans(&["probe".into()]).expect("claim"));
        (from_b.join().expect("b"), from_c.join().expect("c"))
    });
    let (taker, other) = match (by_b.len(), by_c.len()) {
        (1, 0) => (&b, &c),
        (0, 1) => (&c, &b),
        counts => panic!("exactly one host takes the task: {counts:?}"),
    };
    let taken = by_b.iter().chain(&by_c).next().expect("one");
    assert_eq!(
        (taken.id.as_str(), taken.description.as_str(), taken.attempt),
        ("r", "retry me", 2)
    );
    assert!(
        !other.start_attempt("r", 2).expect("start"),
        "not the other host"
    );
    assert!(
        taker.start_attempt("r", 2).expect("start"),
        "the taker runs attempt 2"
    );
    assert!(
        !taker.start_attempt("r", 1).expect("start"),
        "the dead host's attempt never runs again"
    );
    let events = b.events("r").expect("events");
    assert!(
        events
            .iter()
            .any(|(_, p)| p.contains("it is retryable: attempt 2 waits"))
            && events.iter().any(|(_, p)| p.contains("taken up by")),
        "{events:?}"
    );
    // A clean stop releases what is retryable instead of ending it.
    drop(c);
    drop(b);
    let d = PgTaskStore::open(&config, LEASE).expect("host d");
    let r = d.get("r").expect("get").expect("r");
    assert_eq!((r.status.as_str(), r.attempt), ("queued", 3), "{r:?}");
}

#[test]
fn a_live_hosts_lease_is_renewed_and_a_clean_stop_releases_it() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let a = PgTaskStore::open(&config, LEASE).expect("host a");
    let b = PgTaskStore::open(&config, LEASE).expect("host b");
    a.insert("t", "probe", "brief").expect("insert");
    assert!(a.start_attempt("t", 1).expect("start"));
    let mut client = server
        .client(config.target().rsplit('/').next().expect("db"))
        .expect("client");
    let mut lease_until = || -> String {
        client
            .query_one("SELECT lease_until::text FROM tasks WHERE id = 't'", &[])
            .and_then(|r| r.try_get(0))
            .expect("lease")
    };
    // Three renewals seen: more than a whole lease went by, and the task is still a's.
    let mut seen = vec![lease_until()];
    until("a renewed its lease three times", || {
        let now = lease_until();
        if seen.last() != Some(&now) {
            seen.push(now);
        }
        seen.len() > 3
    });
    assert_eq!(status(&b, "t"), "running", "a live host keeps its task");
    assert!(a.still_running_here("t", 1).expect("watch"));
    assert_eq!(b.live_hosts().expect("hosts").len(), 1, "b sees a");

    drop(a);
    assert_eq!(
        status(&b, "t"),
        "interrupted",
        "a clean stop interrupts what it held"
    );
    let events = b.events("t").expect("events");
    assert!(
        events.iter().any(|(_, p)| p.contains("stopped")),
        "{events:?}"
    );
    assert!(
        b.live_hosts().expect("hosts").is_empty(),
        "a left guild_hosts"
    );
}

#[test]
fn an_approval_request_is_answered_once_from_any_host() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let a = PgTaskStore::open(&config, LEASE).expect("host a");
    let b = PgTaskStore::open(&config, LEASE).expect("host b");
    let c = PgTaskStore::open(&config, LEASE).expect("host c");
    a.insert("t", "probe", "brief").expect("insert");
    assert!(a.start_attempt("t", 1).expect("start"));
    assert_eq!(b.pending_approval("t").expect("read"), None);
    assert!(
        !b.answer_approval("t", "approved").expect("answer"),
        "nothing pending"
    );
    let seq = a
        .event("t", "approval_request", "{\"tool\":\"echo.guarded\"}")
        .expect("request");
    assert_eq!(
        b.pending_approval("t").expect("read"),
        Some((seq, "{\"tool\":\"echo.guarded\"}".to_owned()))
    );
    assert_eq!(a.approval_answer("t", seq).expect("read"), None);
    // Two hosts answer at once: one answer is recorded.
    let answered = std::thread::scope(|s| {
        let x = s.spawn(|| b.answer_approval("t", "approved").expect("b answers"));
        let y = s.spawn(|| c.answer_approval("t", "denied").expect("c answers"));
        [x.join().expect("b"), y.join().expect("c")]
    });
    assert_eq!(answered.iter().filter(|a| **a).count(), 1, "{answered:?}");
    let verdict = if answered[0] { "approved" } else { "denied" };
    assert_eq!(
        a.approval_answer("t", seq).expect("read").as_deref(),
        Some(verdict)
    );
    assert_eq!(b.pending_approval("t").expect("read"), None, "answered");
    // A request that a cancel (a status event) came after is no longer pending.
    a.event("t", "approval_request", "{}").expect("request");
    assert!(b.pending_approval("t").expect("read").is_some());
    b.event("t", "status", "cancelled by the caller")
        .expect("status");
    assert_eq!(b.pending_approval("t").expect("read"), None);
    assert!(!c.answer_approval("t", "approved").expect("answer"));
}
