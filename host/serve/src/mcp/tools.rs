//! The MCP tool list: names, descriptions and input schemas. The `task` tool carries the roster
//! (each specialist with its one-line description) in its description and as an enum in its
//! schema, so the list is rebuilt whenever the roster changes.

use std::sync::Arc;

use guild_host::types::RosterEntry;
use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

/// Every tool the server offers, for the current roster, the plugins still loading (at
/// start-up) and the batch limit, in a fixed order: `task`, the background-task tools, the
/// skill tools, the receipt tools and `reload`.
pub(crate) fn all(roster: &[RosterEntry], loading: &[String], batch_max: usize) -> Vec<Tool> {
    let brief = Brief::new(roster, loading);
    let mut tools = vec![task_tool(roster, loading, batch_max, &brief)];
    tools.extend(background_tools(&brief));
    tools.extend(skill_tools());
    tools.extend(receipt_tools());
    tools.push(tool(
        "reload",
        "Load the plugins and guild.toml again and swap the new set in; running tasks finish on their versions. Says what changed and what was rejected.",
        object(&[], &[]),
    ));
    tools
}

/// The schemas of a task's fields, shared by `task` (alone and in a batch) and `start_task`:
/// the specialist (an enum of the roster's names and aliases), the brief, and the optional
/// root anchor of the tree the task starts if it delegates (docs/delegation.md#the-root-anchor).
struct Brief {
    specialist: Value,
    description: Value,
    completion_criteria: Value,
    constraints: Value,
}

impl Brief {
    /// The enum holds the roster's names and aliases, and the names of plugins still loading
    /// (a task to one waits for the load).
    fn new(roster: &[RosterEntry], loading: &[String]) -> Self {
        let names: Vec<String> = roster
            .iter()
            .flat_map(|r| std::iter::once(r.name.clone()).chain(r.aliases.iter().cloned()))
            .chain(loading.iter().cloned())
            .collect();
        Self {
            specialist: json!({
                "type": "string",
                "enum": names,
                "description": "The specialist to run (name or alias from the roster).",
            }),
            description: json!({
                "type": "string",
                "description": "The self-contained brief: the specialist sees nothing else of your thread, so it must carry all the context.",
            }),
            completion_criteria: anchor_list(
                "How the task knows it is done, should its specialist delegate: the root anchor every task of its tree is checked against (default: the report answers the description).",
            ),
            constraints: anchor_list(
                "What every task the specialist delegates to (and theirs) must respect: a child's brief that drops one is refused.",
            ),
        }
    }

    /// An object with the two fields, both required, and the optional anchor.
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "subagent_type": self.specialist,
                "description": self.description,
                "completion_criteria": self.completion_criteria,
                "constraints": self.constraints,
            },
            "required": ["subagent_type", "description"],
            "additionalProperties": false,
        })
    }
}

/// An optional list of the root anchor (at most `MAX_ITEMS` of `MAX_ITEM` characters).
fn anchor_list(description: &str) -> Value {
    use guild_host::delegate::anchor::{MAX_ITEM, MAX_ITEMS};
    json!({
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": MAX_ITEM},
        "maxItems": MAX_ITEMS,
        "description": description,
    })
}

/// `task`: one task, or a batch of up to `batch_max`; the roster is in its description. Its
/// result's `structuredContent` is the task's result (or `{"tasks": [...]}` for a batch), as
/// its output schema says.
fn task_tool(roster: &[RosterEntry], loading: &[String], batch_max: usize, brief: &Brief) -> Tool {
    with_output(
        task_tool_input(roster, loading, batch_max, brief),
        task_output_schema(),
    )
}

/// A tool with an output schema: its results carry `structuredContent` that conforms to it.
fn with_output(tool: Tool, schema: Value) -> Tool {
    match schema {
        Value::Object(map) => tool.with_raw_output_schema(Arc::new(map)),
        _ => tool,
    }
}

/// The shape of one task's result (`guild_host::types::TaskResult` as JSON): the fields a
/// client can rely on, typed; the nested records stay open so a field added later is no break.
fn task_result_schema() -> Value {
    let open = json!({"type": "object"});
    let nullable = |schema: Value| json!({"anyOf": [schema, {"type": "null"}]});
    json!({
        "type": "object",
        "properties": {
            "task_id": {"type": "string", "description": "The host's id for the task."},
            "specialist": {"type": "string", "description": "name@version of the specialist that ran."},
            "status": {"type": "string", "enum": ["succeeded", "failed", "timed_out"]},
            "report": nullable(open.clone()),
            "error": nullable(json!({"type": "string"})),
            "tool_calls": {"type": "array", "items": open},
            "reports": {"type": "array", "items": open},
            "receipts": {"type": "array", "items": open, "description": "The receipts the host wrote for the task's mutating calls."},
            "validation": nullable(json!({"type": "object", "description": "The host's verdict on the report."})),
            "skills": open,
            "warning": nullable(json!({"type": "string"})),
            "usage": usage_schema(),
        },
        "required": ["task_id", "specialist", "status", "tool_calls", "receipts", "usage"],
    })
}

/// A task's usage: wall time and tool calls, and the model calls by alias with their tokens
/// (docs/models.md, Accounting); `models` is absent when the task called no model.
fn usage_schema() -> Value {
    let count = json!({"type": "integer", "minimum": 0});
    json!({
        "type": "object",
        "properties": {
            "wall_ms": count,
            "tool_calls": count,
            "models": {
                "type": "object",
                "description": "Model calls by alias: calls answered, prompt and completion tokens.",
                "additionalProperties": {
                    "type": "object",
                    "properties": {
                        "calls": count,
                        "prompt_tokens": count,
                        "completion_tokens": count,
                    },
                    "required": ["calls", "prompt_tokens", "completion_tokens"],
                },
            },
        },
    })
}

/// `task`'s output: one result, or a batch's results in input order.
fn task_output_schema() -> Value {
    let mut schema = task_result_schema();
    schema["properties"]["tasks"] = json!({
        "type": "array",
        "description": "A batch's children, in input order: each its result (`Ok`) or why it could not start (`Err`).",
        "items": {
            "type": "object",
            "properties": {
                "index": {"type": "integer", "minimum": 0},
                "subagent_type": {"type": "string"},
                "result": {
                    "type": "object",
                    "properties": {"Ok": task_result_schema(), "Err": {"type": "string"}},
                    "minProperties": 1,
                    "maxProperties": 1,
                },
            },
            "required": ["index", "subagent_type", "result"],
        },
    });
    schema["required"] = json!([]);
    schema["anyOf"] = json!([
        {"required": ["task_id", "specialist", "status", "tool_calls", "receipts", "usage"]},
        {"required": ["tasks"]},
    ]);
    schema
}

fn task_tool_input(
    roster: &[RosterEntry],
    loading: &[String],
    batch_max: usize,
    brief: &Brief,
) -> Tool {
    tool(
        "task",
        &task_description(roster, loading, batch_max),
        json!({
            "type": "object",
            "properties": {
                "subagent_type": brief.specialist,
                "description": brief.description,
                "completion_criteria": brief.completion_criteria,
                "constraints": brief.constraints,
                "tasks": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": batch_max,
                    "description": "A batch, mutually exclusive with subagent_type/description; results in input order, labelled [task 0], [task 1], ...",
                    "items": brief.schema(),
                },
            },
            "additionalProperties": false,
        }),
    )
}

/// `start_task`, `check_task`, `update_task`, `cancel_task`, `list_tasks`, `task_tree`,
/// `approve_task`.
fn background_tools(brief: &Brief) -> Vec<Tool> {
    let task_id = json!({"type": "string", "description": "The task id start_task returned."});
    vec![
        tool(
            "start_task",
            "Start a background task on a specialist; returns its id at once. Follow it with check_task.",
            brief.schema(),
        ),
        tool(
            "check_task",
            "Status of a background task (queued, running, succeeded, failed, timed_out, cancelled, interrupted), the reports since the last check, a pending approval, and the result when done. With all_reports, every report the task sent as well.",
            object(
                &[
                    ("task_id", task_id.clone()),
                    (
                        "all_reports",
                        json!({"type": "boolean", "description": "Also return every report the task sent, those earlier checks returned included (to read an interrupted task's reports again)."}),
                    ),
                ],
                &["task_id"],
            ),
        ),
        tool(
            "update_task",
            "Cancel the running attempt of a background task and restart it with the original brief plus every update appended (same id).",
            object(
                &[
                    ("task_id", task_id.clone()),
                    (
                        "update",
                        json!({"type": "string", "description": "What to add to the brief."}),
                    ),
                ],
                &["task_id", "update"],
            ),
        ),
        tool(
            "cancel_task",
            "Cancel a live background task.",
            object(&[("task_id", task_id.clone())], &["task_id"]),
        ),
        tool(
            "list_tasks",
            "Background tasks, newest first.",
            object(&[("limit", limit())], &[]),
        ),
        tool(
            "task_tree",
            "The delegation tree a task belongs to (the tasks its specialists handed work to, and theirs): root first, each node's specialist, level, status, the verdict on its report, its parent's review, the child whose report it has yet to review, and what it may still spend.",
            object(&[("task_id", task_id.clone())], &["task_id"]),
        ),
        tool(
            "approve_task",
            "Answer the approval request a task is waiting on (a tool with approval = always): approved true lets the call run, false refuses it.",
            object(
                &[
                    ("task_id", task_id),
                    ("approved", json!({"type": "boolean"})),
                ],
                &["task_id", "approved"],
            ),
        ),
    ]
}

/// `list_skills`, `load_skill`, `read_skill_resource`: the three levels of disclosure.
fn skill_tools() -> Vec<Tool> {
    vec![
        tool(
            "list_skills",
            "The skill catalog (name and description of every skill you may load).",
            object(&[], &[]),
        ),
        tool(
            "load_skill",
            "The SKILL.md body of one skill from the catalog.",
            object(&[("name", json!({"type": "string"}))], &["name"]),
        ),
        tool(
            "read_skill_resource",
            "One resource file of a skill, by its path relative to the skill folder.",
            object(
                &[
                    ("name", json!({"type": "string"})),
                    ("path", json!({"type": "string"})),
                ],
                &["name", "path"],
            ),
        ),
    ]
}

/// `receipts` and `verify_receipt`.
fn receipt_tools() -> Vec<Tool> {
    vec![
        tool(
            "receipts",
            "Receipts of mutating tool calls, newest first, or those of one task.",
            object(
                &[("task_id", json!({"type": "string"})), ("limit", limit())],
                &[],
            ),
        ),
        tool(
            "verify_receipt",
            "With receipt_id: fetch the receipt's verifiable URL and say what it shows. Without: check the whole receipts chain.",
            object(&[("receipt_id", json!({"type": "string"}))], &[]),
        ),
    ]
}

/// The `limit` argument of the listing tools.
fn limit() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": 1000, "default": 20})
}

fn task_description(roster: &[RosterEntry], loading: &[String], batch_max: usize) -> String {
    let mut text = format!(
        "Delegate work to a specialist. Send subagent_type and description for one task, or tasks \
         (1 to {batch_max}) for a batch. The description must carry all the context: the \
         specialist sees nothing else.\n\nSpecialists:\n"
    );
    if !loading.is_empty() {
        // At start-up, before the first load published the set: named so a model knows what
        // is coming; the list is sent again (list_changed) once they are loaded.
        text.push_str(&format!(
            "  (loading: {}; a task to one waits until the plugins are loaded)\n",
            loading.join(", ")
        ));
    } else if roster.is_empty() {
        text.push_str("  (none loaded)\n");
    }
    for r in roster {
        let aliases = match r.aliases.is_empty() {
            true => String::new(),
            false => format!(" (aliases: {})", r.aliases.join(", ")),
        };
        text.push_str(&format!(
            "- {}@{}{aliases}: {}\n",
            r.name,
            r.version,
            guild_host::text::one_line(&r.description)
        ));
    }
    text
}

pub(super) fn object(properties: &[(&str, Value)], required: &[&str]) -> Value {
    let props: serde_json::Map<String, Value> = properties
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    json!({
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false,
    })
}

pub(super) fn tool(name: &'static str, description: &str, schema: Value) -> Tool {
    let schema: JsonObject = match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    Tool::new(name, description.to_owned(), Arc::new(schema))
}
