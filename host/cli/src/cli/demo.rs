//! `guild demo`: the end-to-end walk-through on embedded defaults.
//!
//! It starts the local tracker stand-in on 127.0.0.1 (real use points the tracker connector at
//! the real service), writes a real `guild.toml` with least-privilege grants into the demo's
//! folder (so it can be reused with `guild --config …`), loads the example plugins and runs the
//! kb, triage, digest and textstats (C) specialists against it, then the prompt-defined
//! triage-agent, whose model is a scripted stand-in on 127.0.0.1 ([`agent_step`]), and the
//! prompt-defined triage-lead, which delegates to triage and optimist and revises a child whose
//! report failed validation ([`lead_step`]). The host's
//! data folder is `state/` inside the demo folder, and kb's workspace sits next to it, never
//! inside: no grant may reach host state. Its last steps ship kb as a signed bundle to a
//! teammate's host (`bundle/` in the demo folder, [`bundle_step`]) and drive `guild serve` with
//! an MCP client ([`mcp_step`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use guild_host::session::render_batch;
use guild_host::types::{TaskResult, TaskStatus};
use guild_host::{Config, TaskRequest};

use super::{render, start_host_with};
use crate::demo::tracker::TrackerServer;

#[path = "demo_agent.rs"]
mod agent_step;
#[path = "demo_bundle.rs"]
mod bundle_step;
#[path = "demo_lead.rs"]
mod lead_step;
#[path = "demo_mcp.rs"]
mod mcp_step;

/// Arguments of `guild demo`.
#[derive(Args)]
pub(crate) struct DemoArgs {
    /// Folder holding the built example plugins.
    #[arg(long, default_value = "plugins")]
    plugins: PathBuf,
    /// Demo folder: config, token, kb workspace and the host's data folder `state/` (compile
    /// cache, receipts, tasks). Everything but the compile cache is reset on every run.
    #[arg(long, default_value = ".guild/demo")]
    data: PathBuf,
}

const REPO: &str = "acme/shop";
/// The host's data folder inside the demo folder; the kb workspace is its sibling.
const STATE_DIR: &str = "state";

pub(crate) async fn run(args: DemoArgs, json: bool) -> anyhow::Result<ExitCode> {
    let plugins = args
        .plugins
        .canonicalize()
        .with_context(|| format!("cannot find the plugins folder {}", args.plugins.display()))?;
    check_plugins_built(&plugins)?;
    let data = prepare_data_dir(&args.data)?;

    let token = format!("demo-{}", uuid::Uuid::new_v4().simple());
    let tracker = TrackerServer::start(&token)
        .await
        .context("failed to start the local tracker stand-in")?;
    std::fs::write(data.join("tracker-token"), &token).context("failed to write the demo token")?;
    let model = agent_step::start_model().await?;
    let config_file = data.join("guild.toml");
    let config_text = demo_config(&plugins, tracker.base_url())
        + &agent_step::config(&model.base_url())
        + &lead_step::config();
    std::fs::write(&config_file, config_text)
        .with_context(|| format!("failed to write {}", config_file.display()))?;
    let config = Config::load(&config_file)?;

    let mut transcript = Vec::new();
    say(
        json,
        &format!(
            "Guild demo — tracker stand-in at {} (repo {REPO})",
            tracker.base_url()
        ),
    );
    say(
        json,
        &format!("config written to {}\n", config_file.display()),
    );
    let host = start_host_with(config).await?;
    if !host.load_errors().is_empty() {
        anyhow::bail!(
            "some demo plugins failed to load: {}",
            host.load_errors().join("; ")
        );
    }
    say(json, &render::plugin_table(&host.plugins()));
    say(json, "roster (what a supervisor may delegate to):");
    for r in host.roster() {
        say(json, &format!("  {:<8} {}", r.name, r.description));
    }

    let mut failed = specialist_steps(&host, json, &mut transcript).await?;

    batch_step(&host, json).await?;

    transcript.push(careless_step(&host, &tracker, json).await?);

    background_step(&host, json).await?;

    failed |= memory_steps(&host, json, &mut transcript).await?;

    say(
        json,
        "\n== 11. a specialist defined by a prompt (triage-agent: prompt.md + a skill) files a bug; tokens accounted, its claim validated",
    );
    let (result, ok) = agent_step::run(&host, &tracker, &model, |text| say(json, text)).await?;
    failed |= !ok;
    transcript.push(result);

    say(
        json,
        "\n== 12. a lead defined by a prompt splits a triage job into two delegated tasks; a child's claim fails validation, the lead revises it; the tree",
    );
    let (result, ok) = lead_step::run(&host, &tracker, &model, |text| say(json, text)).await?;
    failed |= !ok;
    transcript.push(result);

    ledger_step(&host, json).await?;

    denial_step(&host, &tracker, json);

    say(
        json,
        "\n== 15. a signed bundle: the lead signs kb, a teammate's host installs it, a tampered copy is refused",
    );
    failed |= !bundle_step::run(&plugins, &data, |text| say(json, text)).await?;
    // The server takes the data dir over: this process's host lets go of it first.
    drop(host);
    say(
        json,
        "\n== 16. an MCP client drives `guild serve` over stdio (what Claude Code or Cursor do)",
    );
    failed |= !mcp_step::run(&config_file, |text| say(json, text)).await?;

    if json {
        super::print_json(&Transcript { tasks: &transcript })?;
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Every plugin the demo runs must have been built (triage-agent's and triage-lead's component
/// is their copy of agent-loop's).
fn check_plugins_built(plugins: &Path) -> anyhow::Result<()> {
    let names = ["kb", "tracker", "triage", "digest", "optimist", "textstats"];
    let components = names
        .iter()
        .map(|name| (*name, format!("{name}.wasm")))
        .chain(
            [agent_step::SPECIALIST, lead_step::SPECIALIST]
                .map(|name| (name, "agent-loop.wasm".to_owned())),
        );
    for (name, component) in components {
        let wasm = plugins.join(name).join(component);
        anyhow::ensure!(
            wasm.is_file(),
            "{} is missing: build the plugins first with plugins/build.sh",
            wasm.display()
        );
    }
    Ok(())
}

/// Scenes 1-5: kb, triage and digest, one task each; whether any failed.
async fn specialist_steps(
    host: &guild_host::Host,
    json: bool,
    transcript: &mut Vec<TaskResult>,
) -> anyhow::Result<bool> {
    let steps: [(&str, &str, String); 5] = [
        (
            "1. kb saves two notes in its granted /workspace",
            "kb",
            "save notes/checkout.md\n# Checkout\nThe checkout page times out when the cart has over 50 items.\n\
             save notes/search.md\n# Search\nSearch ignores accents: 'café' does not find 'cafe'.\n"
                .to_owned(),
        ),
        ("2. kb searches what it saved", "kb", "search checkout\nlist notes".to_owned()),
        (
            "3. triage files a bug list through the tracker connector (host attaches the token)",
            "triage",
            "- [bug] Checkout times out with more than 50 items in the cart\n\
             - [bug] Search ignores accents\n\
             - [ux] Error page shows a stack trace\n"
                .to_owned(),
        ),
        (
            "4. triage again with an overlapping list: duplicates are found, not re-filed",
            "triage",
            "- [bug] Search ignores accents\n- [bug] Password reset email is sent twice\n".to_owned(),
        ),
        ("5. digest (a Python specialist) summarises the open bugs", "digest", "is:open".to_owned()),
    ];
    let mut failed = false;
    for (title, specialist, brief) in steps {
        say(json, &format!("\n== {title}"));
        let spinner = render::spinner(&format!("running {specialist}"));
        let result = host.task(specialist, &brief).await;
        spinner.finish_and_clear();
        let result = result?;
        failed |= result.status != TaskStatus::Succeeded;
        say(json, render::task_result(&result).trim_end());
        transcript.push(result);
    }
    Ok(failed)
}

/// Scene 6: a batch fanned out to four specialists.
async fn batch_step(host: &guild_host::Host, json: bool) -> anyhow::Result<()> {
    say(
        json,
        "\n== 6. a batch fans out to four specialists at once, one written in C (results in input order)",
    );
    let batch = [
        TaskRequest::new("kb", "search accents"),
        TaskRequest::new("digest", "checkout"),
        TaskRequest::new("triage", "- [bug] Cart badge shows a stale count\n"),
        TaskRequest::new(
            "textstats",
            "Checkout times out with more than 50 items in the cart.\nSearch ignores accents: 'café' does not find 'cafe'.\n",
        ),
    ];
    let items = host.session().batch(&batch).await?;
    say(json, render_batch(&items, render::task_result).trim_end());
    Ok(())
}

/// Scene 7: a careless specialist's claim, caught by validation from the receipts.
async fn careless_step(
    host: &guild_host::Host,
    tracker: &TrackerServer,
    json: bool,
) -> anyhow::Result<TaskResult> {
    say(
        json,
        "\n== 7. a careless specialist claims an issue the tracker refused; validation catches it",
    );
    tracker.set_refuse_creates(Some((410, "Issues are disabled for this repo".to_owned())));
    let caught = host
        .task("optimist", "- Newsletter signup button does nothing\n")
        .await?;
    tracker.set_refuse_creates(None);
    say(json, render::task_result(&caught).trim_end());
    Ok(caught)
}

/// Scene 8: a background task whose reports stream while it runs.
async fn background_step(host: &guild_host::Host, json: bool) -> anyhow::Result<()> {
    say(
        json,
        "\n== 8. a background task: started at once, reports streamed while it runs",
    );
    let id = host.start_task(
        "triage",
        "- [bug] Coupon field rejects lowercase codes\n- [ux] Footer links overlap on mobile\n",
    )?;
    say(json, &format!("started {id}"));
    loop {
        let check = host.check_task(&id)?;
        for r in &check.new_reports {
            say(json, &format!("  report {}: {}", r.sequence, r.output));
        }
        if !check.task.status.is_live() {
            if let Some(result) = check.task.result {
                say(json, render::task_result(&result).trim_end());
            }
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Ok(())
}

/// Scenes 9-10: team memory written and read back; whether any failed.
async fn memory_steps(
    host: &guild_host::Host,
    json: bool,
    transcript: &mut Vec<TaskResult>,
) -> anyhow::Result<bool> {
    let mut failed = false;
    let memory_steps = [
        (
            "9. kb records a team decision in team memory (validated by the host, receipted)",
            "remember team\n## Decisions\n- 2026-03-01: checkout caps the cart at 50 items until the timeout is fixed\n",
        ),
        (
            "10. a second kb task reads the decision back",
            "recall team",
        ),
    ];
    for (title, brief) in memory_steps {
        say(json, &format!("\n== {title}"));
        let result = host.task("kb", brief).await?;
        failed |= result.status != TaskStatus::Succeeded;
        say(json, render::task_result(&result).trim_end());
        transcript.push(result);
    }
    Ok(failed)
}

/// Scene 13: the receipts ledger and its chain check.
async fn ledger_step(host: &guild_host::Host, json: bool) -> anyhow::Result<()> {
    say(
        json,
        "\n== 13. the receipts ledger: every mutating call, hash-chained",
    );
    for r in host.receipts(None, 100).await?.iter().rev() {
        say(json, &format!("  {}", render::receipt_line(r)));
    }
    let chain = host.verify_receipts().await?;
    say(
        json,
        &format!(
            "  chain check: {} ({} entries)",
            if chain.ok { "intact" } else { "TAMPERED" },
            chain.entries
        ),
    );
    Ok(())
}

/// Scene 14: what kb was denied, and what the tracker now holds.
fn denial_step(host: &guild_host::Host, tracker: &TrackerServer, json: bool) {
    say(
        json,
        "\n== 14. what a denial looks like: kb asks for its folder and team memory, nothing more",
    );
    if let Some(kb) = host.plugin("kb") {
        say(json, render::plugin_detail(&kb).trim_end());
    }
    let issues = tracker.issues();
    say(
        json,
        &format!("\nthe tracker now holds {} issue(s):", issues.len()),
    );
    for i in &issues {
        say(
            json,
            &format!(
                "  #{} [{}] {}  {}/{}/{}/issues/{}",
                i.number,
                i.labels.join(","),
                i.title,
                tracker.base_url(),
                i.owner,
                i.repo,
                i.number
            ),
        );
    }
}

#[derive(serde::Serialize)]
struct Transcript<'a> {
    tasks: &'a [TaskResult],
}

fn say(json: bool, text: &str) {
    // With --json, stdout carries only the JSON document; the narration goes to stderr.
    if json {
        eprintln!("{text}");
    } else if outln!("{text}").is_err() {
        // The reader stopped (`guild demo | head`): the walk-through goes on, unprinted.
    }
}

fn prepare_data_dir(data: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(data)
        .with_context(|| format!("failed to create {}", data.display()))?;
    let data = data.canonicalize()?;
    let workspace = data.join("kb-workspace");
    if workspace.exists() {
        std::fs::remove_dir_all(&workspace)
            .with_context(|| format!("failed to reset {}", workspace.display()))?;
    }
    std::fs::create_dir_all(&workspace)?;
    let state = data.join(STATE_DIR);
    std::fs::create_dir_all(&state)
        .with_context(|| format!("failed to create {}", state.display()))?;
    // A fresh ledger (with its head anchor: a ledger is refused for writing when it is
    // shorter than its anchor), task store and tree store each run, so the walk-through reads the same
    // every time.
    for entry in std::fs::read_dir(&state)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if [
            "receipts.db",
            "receipts.head",
            ".receipts.head.new-",
            "tasks.db",
            "trees.db",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
        {
            std::fs::remove_file(entry.path())
                .with_context(|| format!("failed to reset {}", entry.path().display()))?;
        }
    }
    Ok(data)
}

/// Least-privilege grants for the example plugins.
fn demo_config(plugins: &Path, tracker: &str) -> String {
    format!(
        r#"# Written by `guild demo`: grants for the example plugins against the local tracker
# stand-in. Real use points base_url at the real service, sends the token only there and
# takes it from the environment:
#   [grants.tracker.secrets.TRACKER_TOKEN]
#   env = "TRACKER_TOKEN"
#   hosts = ["https://api.github.com"]
[host]
plugins_dir = "{plugins}"
# Host state (receipts, tasks, compile cache); granted folders live outside it.
data_dir = "{STATE_DIR}"

# Whose team memory this host serves (plugins never choose).
[memory]
workspace = "demo"

[grants.kb]
fs = [{{ guest = "/workspace", host = "kb-workspace", mode = "rw" }}]
memory = ["team:read", "team:write"]

[grants.tracker]
http = ["{tracker}"]
config = {{ base_url = "{tracker}", repo = "{REPO}" }}

[grants.tracker.secrets.TRACKER_TOKEN]
file = "tracker-token"
hosts = ["{tracker}"]

[grants.triage]
tools = ["tracker.create_issue", "tracker.search_issues"]
report = true

[grants.optimist]
tools = ["tracker.create_issue"]

[grants.digest]
tools = ["tracker.search_issues"]
"#,
        plugins = plugins.display()
    )
}
