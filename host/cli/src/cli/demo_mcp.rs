//! The demo's MCP step: `guild serve` on the demo's config runs as a child and rmcp's client
//! (the official Rust MCP SDK) drives it over the child's stdio, the way Claude Code or Cursor
//! launch it: initialize, tools/list, one `task` call, one resource read, then the session
//! closes and the child exits with it. The child is a proxy to the data dir's host, which it
//! starts in the background; the demo's host leaves one second after its last client.

use std::path::Path;

use anyhow::Context;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation,
    ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt as _};

/// Runs the session; `say` prints one line of the walk-through. Returns whether the task
/// succeeded.
pub(super) async fn run(config_file: &Path, say: impl Fn(&str)) -> anyhow::Result<bool> {
    let client = start_server(config_file).await?;
    say_initialized(&client, &say);
    list_tools(&client, &say).await?;
    let succeeded = call_task(&client, &say).await?;
    read_team_memory(&client, &say).await?;
    // Closing the session closes the child's stdin; the child exits, and the host once idle.
    client
        .cancel()
        .await
        .context("failed to close the MCP session")?;
    say(
        "  session closed: the client's guild serve exits with it, as under Claude Code; the \
         host it started goes on while clients or tasks need it (here 1 s, [serve] idle_exit_s)",
    );
    Ok(succeeded)
}

/// `guild serve --watch off --idle-exit-s 1` on `config_file` as a child, with an initialized
/// session over its stdio.
async fn start_server(
    config_file: &Path,
) -> anyhow::Result<RunningService<RoleClient, ClientConfig>> {
    let exe = std::env::current_exe().context("failed to find the guild binary")?;
    let mut command = tokio::process::Command::new(exe);
    command.arg("--config").arg(config_file).args([
        "serve",
        "--watch",
        "off",
        "--idle-exit-s",
        "1",
    ]);
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::null())
        .spawn()
        .context("failed to start guild serve")?;
    let client_info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("guild-demo", env!("CARGO_PKG_VERSION")),
    );
    client_info
        .serve(transport)
        .await
        .context("failed to initialize an MCP session with guild serve")
}

/// The server and protocol version the initialize handshake agreed on.
fn say_initialized(client: &Peer<RoleClient>, say: &impl Fn(&str)) {
    let (server, protocol) = client.peer_info().map_or_else(
        || ("?".to_owned(), "?".to_owned()),
        |info| {
            let server = info
                .server_info
                .as_ref()
                .map_or_else(|| "?".to_owned(), |s| format!("{} {}", s.name, s.version));
            (server, info.protocol_version.to_string())
        },
    );
    say(&format!(
        "  initialize: the client (rmcp) starts `guild serve`; server {server}, MCP {protocol}"
    ));
}

/// `tools/list`: the tool names, and the roster the `task` tool's schema offers.
async fn list_tools(client: &Peer<RoleClient>, say: &impl Fn(&str)) -> anyhow::Result<()> {
    let tools = client.list_all_tools().await.context("tools/list failed")?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    say(&format!(
        "  tools/list: {} tools: {}",
        names.len(),
        names.join(", ")
    ));
    let roster: Vec<String> = tools
        .iter()
        .find(|t| t.name == "task")
        .and_then(|t| t.input_schema.get("properties"))
        .and_then(|p| p["subagent_type"]["enum"].as_array())
        .map(|e| {
            e.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    say(&format!(
        "  the task tool lists the specialists an agent may ask: {}",
        roster.join(", ")
    ));
    Ok(())
}

/// `tools/call task` on kb; whether the result is not an error.
async fn call_task(client: &Peer<RoleClient>, say: &impl Fn(&str)) -> anyhow::Result<bool> {
    let arguments = serde_json::json!({"subagent_type": "kb", "description": "search checkout"});
    let mut call = CallToolRequestParams::new("task");
    if let serde_json::Value::Object(arguments) = arguments {
        call = call.with_arguments(arguments);
    }
    let result = client
        .call_tool(call)
        .await
        .context("tools/call task failed")?;
    say("  tools/call task {subagent_type: kb, description: \"search checkout\"}:");
    for block in &result.content {
        if let Some(text) = block.as_text() {
            for line in guild_host::text::for_terminal(&text.text)
                .trim_end()
                .lines()
            {
                say(&format!("    {line}"));
            }
        }
    }
    Ok(result.is_error != Some(true))
}

/// `resources/read memory://team`: the team memory kb wrote in step 9, as the agent reads it
/// without a tool call (its first lines).
async fn read_team_memory(client: &Peer<RoleClient>, say: &impl Fn(&str)) -> anyhow::Result<()> {
    let uri = "memory://team";
    let read = client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .with_context(|| format!("resources/read {uri} failed"))?;
    say(&format!(
        "  resources/read {uri} (the team memory kb wrote in step 9):"
    ));
    for contents in &read.contents {
        if let ResourceContents::TextResourceContents { text, .. } = contents {
            for line in guild_host::text::for_terminal(text)
                .trim_end()
                .lines()
                .take(8)
            {
                say(&format!("    {line}"));
            }
        }
    }
    Ok(())
}
