//! Daily model budgets shared by the hosts on one PostgreSQL database
//! (docs/postgres.md#model-budgets): tokens the `asker` test specialist spends through the
//! stand-in endpoint on one host count against its `tokens_per_day` on the other. Each host has
//! a data dir of its own, so nothing but the database joins them. Every stand-in call spends 18
//! tokens.

use guild_host::Host;
use guild_host::llm::standin::StandIn;
use guild_pg::testing::TestServer;
use serde_json::json;

use super::models::{ask, complete, error, host};
use super::shared_store::{server, store_table};

/// Two hosts on the database `db` of `server` with `asker` granted `fast` and
/// `tokens_per_day`, and their data dirs.
async fn two_hosts(
    server: &TestServer,
    db: &str,
    s: &StandIn,
    tokens_per_day: u64,
) -> (Vec<tempfile::TempDir>, Host, Host) {
    let store = store_table(server, db);
    let grant = format!("models = [\"fast\"]\ntokens_per_day = {tokens_per_day}");
    let dirs: Vec<_> = (0..2)
        .map(|_| tempfile::tempdir().expect("tempdir"))
        .collect();
    let a = host(dirs[0].path(), s, Some(&grant), &store).await;
    let b = host(dirs[1].path(), s, Some(&grant), &store).await;
    (dirs, a, b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_spent_on_one_host_exhaust_the_daily_budget_on_the_other() {
    let Some(server) = server() else { return };
    let s = StandIn::start(vec![]).await.expect("stand-in");
    let (_dirs, a, b) = two_hosts(&server, "budgets_spent", &s, 18).await;
    let (_, details) = ask(&a, complete("fast", 1)).await;
    assert_eq!(details[0]["ok"], json!(true), "host A's call: {details}");
    let (_, details) = ask(&b, complete("fast", 1)).await;
    assert!(
        error(&details, 0).starts_with("budget-exceeded: daily token budget spent (18 of 18"),
        "host B counts host A's tokens: {details}"
    );
    assert_eq!(s.requests().len(), 1, "host B's refused call sent nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn below_the_shared_limit_the_other_host_calls_and_both_calls_count() {
    let Some(server) = server() else { return };
    let s = StandIn::start(vec![]).await.expect("stand-in");
    let (_dirs, a, b) = two_hosts(&server, "budgets_left", &s, 30).await;
    let (_, details) = ask(&a, complete("fast", 1)).await;
    assert_eq!(details[0]["ok"], json!(true), "host A's call: {details}");
    let (_, details) = ask(&b, complete("fast", 1)).await;
    assert_eq!(
        details[0]["ok"],
        json!(true),
        "18 of 30 spent: host B may call: {details}"
    );
    // Both calls count, on either host.
    for (name, h) in [("A", &a), ("B", &b)] {
        let (_, details) = ask(h, complete("fast", 1)).await;
        assert!(
            error(&details, 0).starts_with("budget-exceeded: daily token budget spent (36 of 30"),
            "host {name}: {details}"
        );
    }
    assert_eq!(s.requests().len(), 2, "the refused calls sent nothing");
}
