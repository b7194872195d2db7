//! Team and private memory over MCP: the `read_memory` and `update_memory` tools and the
//! `memory://team` / `memory://private` resources. Each is one call into the host's
//! [`Memory`] (the same operations as `guild memory show|update`), for the workspace and user
//! the server was started with (`[memory]` in guild.toml or `guild serve --workspace/--user`):
//! a client never chooses whose memory it touches. Every write is recorded as `supervisor`.

use guild_host::memory::{
    Actor, DATA_LOSS_PERCENT, HARD_LIMIT_CHARS, HEADING_REQUIRED_ABOVE_CHARS, Memory,
    PERSONAL_HEADINGS, SOFT_LIMIT_CHARS, Scope, UpdateOutcome, thousands,
};
use rmcp::model::{CallToolResult, MetaObject, Resource, ResourceContents};
use serde_json::{Value, json};

use super::{failure, success, tools};

/// The URI of a scope's document.
pub(crate) fn uri(scope: Scope) -> String {
    format!("memory://{scope}")
}

/// The scope a `memory://` URI names; `None` for any other URI.
pub(crate) fn scope_of_uri(uri: &str) -> Option<Scope> {
    match uri {
        "memory://team" => Some(Scope::Team),
        "memory://private" => Some(Scope::Private),
        _ => None,
    }
}

fn scope_arg(args: &Value) -> Result<Scope, String> {
    match args.get("scope").and_then(Value::as_str) {
        Some("team") => Ok(Scope::Team),
        Some("private") => Ok(Scope::Private),
        Some(other) => Err(format!(
            "`scope` must be \"team\" or \"private\", not {other:?}"
        )),
        None => Err("missing string argument `scope` (\"team\" or \"private\")".to_owned()),
    }
}

/// One line per scope: the document and its usage, or why it is not available.
async fn usage_lines(memory: &Memory) -> String {
    let mut out = String::new();
    for scope in [Scope::Team, Scope::Private] {
        let line = match memory.read(scope).await {
            Ok(doc) => format!("- {scope} ({}): {}\n", doc.doc, doc.usage),
            Err(e) => format!("- {scope}: not available ({e})\n"),
        };
        out.push_str(&line);
    }
    out
}

/// The protocol's rules, as the model must follow them.
fn rules() -> String {
    let personal: Vec<String> = PERSONAL_HEADINGS.iter().map(|h| format!("{h:?}")).collect();
    format!(
        "Replace one memory document with its FULL new text. Every update is a full \
         replacement: read_memory first, then merge and curate (do not just append). The host \
         validates every write: errors refuse it and change nothing; warnings come back with \
         the stored version.\n\
         Rules:\n\
         - Markdown with `##` headings: content over {HEADING_REQUIRED_ABOVE_CHARS} characters \
         without a `##` heading is refused; text before the first `##` heading is dropped.\n\
         - Entries are bullets `- YYYY-MM-DD: text` (legacy `- (YYYY-MM-DD) [tag] text` is \
         normalized); other `-` lines get a warning.\n\
         - At most {} characters (above: refused; merge related entries, drop stale ones, \
         shorten descriptions); above {} characters: a warning to consolidate.\n\
         - Team memory may not add personal headings ({}): keep those in private memory.\n\
         - Dropping a section, or a new text under {DATA_LOSS_PERCENT} % of the old, warns of \
         possible data loss.\n\
         - Send NO_UPDATE when nothing needs to change.\n\
         - base_version is the version read_memory returned: if another writer stored a \
         version since, the update is refused as a conflict naming both versions; read again, \
         merge, and send the full document with the new base_version.\n",
        thousands(HARD_LIMIT_CHARS),
        thousands(SOFT_LIMIT_CHARS),
        personal.join(", "),
    )
}

/// The two memory tools, with the current usage of both documents in their descriptions
/// (computed each time tools/list is served).
pub(crate) async fn tools(memory: &Memory) -> Vec<rmcp::model::Tool> {
    let usage = usage_lines(memory).await;
    let scope = json!({
        "type": "string",
        "enum": ["team", "private"],
        "description": "team: the workspace's shared memory; private: the user's own.",
    });
    vec![
        tools::tool(
            "read_memory",
            &format!(
                "Read the team memory (shared by the workspace) or your private memory, with \
                 its version and usage.\nCurrent usage (limit {}):\n{usage}",
                thousands(HARD_LIMIT_CHARS)
            ),
            tools::object(&[("scope", scope.clone())], &["scope"]),
        ),
        tools::tool(
            "update_memory",
            &format!("{}Current usage:\n{usage}", rules()),
            tools::object(
                &[
                    ("scope", scope),
                    (
                        "text",
                        json!({"type": "string", "description": "The whole new document (or NO_UPDATE)."}),
                    ),
                    (
                        "base_version",
                        json!({
                            "type": "integer",
                            "minimum": 0,
                            "description": "The version read_memory returned, which the text \
                                was merged into (0 for an empty document). If another version \
                                was stored since, nothing is stored: read again and merge.",
                        }),
                    ),
                ],
                &["scope", "text", "base_version"],
            ),
        ),
    ]
}

/// `read_memory`.
pub(crate) async fn read(memory: &Memory, args: &Value) -> Result<CallToolResult, String> {
    let scope = scope_arg(args)?;
    let doc = memory.read(scope).await.map_err(|e| e.to_string())?;
    let header = match &doc.version {
        Some(v) => format!(
            "{} version {} by {}: {} (update_memory with base_version {})\n",
            doc.doc, v.version, v.actor, doc.usage, v.version
        ),
        None => format!(
            "{} is empty: {} (update_memory with base_version 0)\n",
            doc.doc, doc.usage
        ),
    };
    let structured = serde_json::to_value(&doc).unwrap_or(Value::Null);
    Ok(success(format!("{header}\n{}", doc.text), structured))
}

/// `update_memory`: a refused write is an `isError` result naming every broken rule.
pub(crate) async fn update(memory: &Memory, args: &Value) -> Result<CallToolResult, String> {
    let scope = scope_arg(args)?;
    let text = args
        .get("text")
        .and_then(Value::as_str)
        .ok_or("missing string argument `text` (the whole new document, or NO_UPDATE)")?;
    let base = args.get("base_version").and_then(Value::as_u64).ok_or(
        "missing integer argument `base_version` (the version read_memory returned, 0 for an \
         empty document)",
    )?;
    let outcome = memory
        .update(scope, text, base, &Actor::Supervisor)
        .await
        .map_err(|e| e.to_string())?;
    let structured = serde_json::to_value(&outcome).unwrap_or(Value::Null);
    Ok(match &outcome {
        UpdateOutcome::Stored {
            doc,
            version,
            warnings,
            usage,
        } => {
            let mut text = format!("stored {doc} version {}: {usage}\n", version.version);
            for w in warnings {
                text.push_str(&format!("warning: {w}\n"));
            }
            success(text, structured)
        }
        UpdateOutcome::NoOp { doc, reason, usage } => {
            success(format!("{doc} unchanged: {reason}; {usage}\n"), structured)
        }
        UpdateOutcome::Refused { doc, errors, usage } => {
            let mut text = String::new();
            for e in errors {
                text.push_str(&format!("error: {e}\n"));
            }
            text.push_str(&format!(
                "refused: {doc} is unchanged; the refused text was {usage}\n"
            ));
            let mut result = failure(text);
            result.structured_content = Some(structured);
            result
        }
    })
}

/// The documents the server names, as resources (a scope without a name is left out).
pub(crate) async fn resources(memory: &Memory) -> Vec<Resource> {
    let mut out = Vec::new();
    for scope in [Scope::Team, Scope::Private] {
        let Ok(doc) = memory.read(scope).await else {
            continue;
        };
        let mut meta = MetaObject::default();
        if let Some(v) = &doc.version {
            meta.0.insert("sha256".to_owned(), json!(v.sha256));
            meta.0.insert("version".to_owned(), json!(v.version));
        }
        out.push(
            Resource::new(uri(scope), format!("{scope} memory"))
                .with_description(format!("{}: {}", doc.doc, doc.usage))
                .with_mime_type("text/markdown")
                .with_size(doc.text.len() as u64)
                .with_meta(meta),
        );
    }
    out
}

/// Reads one memory document as a resource.
pub(crate) async fn read_resource(
    memory: &Memory,
    scope: Scope,
) -> Result<ResourceContents, String> {
    let doc = memory.read(scope).await.map_err(|e| e.to_string())?;
    Ok(ResourceContents::text(doc.text, uri(scope)).with_mime_type("text/markdown"))
}
