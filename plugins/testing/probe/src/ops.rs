//! The probe's operations. Each returns `Ok(Ok(value))` when it succeeded, `Ok(Err(text))` when
//! it failed, and `Err(text)` when the brief itself was malformed.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::io::Write as _;
use std::time::Duration;

use guild_sdk::{config, http, log, tools};
use serde_json::{Value, json};

/// The op names, for error messages.
pub(crate) const NAMES: &str = "read, write, list, env, http, config, tool, tools, loop, alloc, \
     output, trap, recurse, sleep, print, tcp, log, seq, brief, report, reports, skills, skill_load, \
     skill_read, report_as, open_many, tool_loop, fail_big, report_many, memory_read, memory_update, \
     disk";

/// The result of an op: the value, or the error as text.
type OpResult = Result<Value, String>;

/// Runs `op` with the arguments in `req`.
pub(crate) fn perform(op: &str, req: &Value) -> Result<OpResult, String> {
    Ok(match op {
        "read" => std::fs::read_to_string(str_arg(req, "path")?)
            .map(Value::String)
            .map_err(|e| e.to_string()),
        "write" => {
            let content = str_arg(req, "content")?;
            std::fs::write(str_arg(req, "path")?, content)
                .map(|()| json!(content.len()))
                .map_err(|e| e.to_string())
        }
        "list" => list(str_arg(req, "path")?),
        "env" => Ok(env()),
        "http" => http_op(req)?,
        "config" => config::get(str_arg(req, "key")?)
            .map(Value::String)
            .map_err(|e| e.to_string()),
        "tool" => tool(req)?,
        "tool_loop" => tool_loop(req)?,
        "report_many" => report_many(u64_arg(req, "count")?, u64_arg(req, "bytes")?)?,
        "open_many" => open_many(str_arg(req, "path")?, u64_arg(req, "count")?),
        "disk" => Ok(crate::fs_ops::disk(req)?),
        "tools" => Ok(granted()),
        "loop" => spin(),
        "alloc" => alloc(u64_arg(req, "mb")?),
        "output" => {
            let kb = u64_arg(req, "kb")?;
            let len = usize::try_from(kb.saturating_mul(1024)).map_err(|e| e.to_string())?;
            Ok(Value::String("x".repeat(len)))
        }
        "trap" => panic!("probe: trap requested"),
        "recurse" => Ok(json!(recurse(
            0,
            req.get("frame").and_then(Value::as_bool).unwrap_or(false)
        ))),
        "sleep" => {
            let ms = u64_arg(req, "ms")?;
            std::thread::sleep(Duration::from_millis(ms));
            Ok(json!(ms))
        }
        "print" => {
            let text = str_arg(req, "text")?;
            println!("{text}");
            eprintln!("{text}");
            let _ = std::io::stdout().flush();
            Ok(json!(text))
        }
        "tcp" => std::net::TcpStream::connect(str_arg(req, "addr")?)
            .map(|stream| json!(format!("connected: {:?}", stream.peer_addr().ok())))
            .map_err(|e| e.to_string()),
        "seq" => {
            // Several operations in one task, in order; each answer is {ok, value, error}.
            let mut answers = Vec::new();
            for step in req
                .get("ops")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let op = step.get("op").and_then(Value::as_str).unwrap_or_default();
                answers.push(match perform(op, step)? {
                    Ok(value) => json!({"ok": true, "value": value, "error": null}),
                    Err(error) => json!({"ok": false, "value": null, "error": error}),
                });
            }
            Ok(Value::Array(answers))
        }
        "brief" => Ok(req.get("_brief").cloned().unwrap_or(Value::Null)),
        "report" => guild_sdk::progress::send(str_arg(req, "text")?)
            .map(Value::String)
            .map_err(|e| e.to_string()),
        "reports" => {
            // Several reports, then carry on: sending never ends the run.
            let mut ids = Vec::new();
            for text in req
                .get("texts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let text = text.as_str().unwrap_or_default();
                ids.push(guild_sdk::progress::send(text).map_err(|e| e.to_string())?);
                if let Some(ms) = req.get("pause_ms").and_then(Value::as_u64) {
                    std::thread::sleep(Duration::from_millis(ms));
                }
            }
            Ok(json!(ids))
        }
        "skills" => Ok(Value::Array(
            guild_sdk::skills::catalog()
                .into_iter()
                .map(|s| json!({"name": s.name, "description": s.description}))
                .collect(),
        )),
        "skill_load" => guild_sdk::skills::load(str_arg(req, "name")?)
            .map(Value::String)
            .map_err(|e| e.to_string()),
        "skill_read" => guild_sdk::skills::read(str_arg(req, "name")?, str_arg(req, "path")?)
            .map(|b| Value::String(String::from_utf8_lossy(&b).into_owned()))
            .map_err(|e| e.to_string()),
        "memory_read" => crate::memory_ops::read(req)?,
        "memory_update" => crate::memory_ops::update(req)?,
        "log" => {
            // `repeat` builds a large message inside the guest (hostcall data tests).
            let repeat = req.get("repeat").and_then(Value::as_u64).unwrap_or(1);
            let repeat = usize::try_from(repeat).map_err(|e| e.to_string())?;
            let text = str_arg(req, "text")?.repeat(repeat);
            match req.get("level").and_then(Value::as_str).unwrap_or("info") {
                "trace" => log::trace(&text),
                "debug" => log::debug(&text),
                "warn" => log::warn(&text),
                "error" => log::error(&text),
                _ => log::info(&text),
            }
            // A repeated message is answered with its length, not echoed into the report.
            Ok(if repeat == 1 {
                json!(text)
            } else {
                json!(text.len())
            })
        }
        other => return Err(format!("unknown op `{other}`; ops: {NAMES}")),
    })
}

pub(crate) fn str_arg<'a>(req: &'a Value, field: &str) -> Result<&'a str, String> {
    req.get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("field `{field}` must be a string"))
}

fn u64_arg(req: &Value, field: &str) -> Result<u64, String> {
    req.get(field)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("field `{field}` must be a non-negative integer"))
}

fn list(path: &str) -> OpResult {
    let entries = std::fs::read_dir(path).map_err(|e| e.to_string())?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(json!(names))
}

fn env() -> Value {
    let vars: BTreeMap<String, String> = std::env::vars().collect();
    let args: Vec<String> = std::env::args().collect();
    json!({ "vars": vars, "args": args })
}

/// `{method, url, headers?, body?}`; headers as an object or a list of `[name, value]` pairs.
fn http_op(req: &Value) -> Result<OpResult, String> {
    let method = req.get("method").and_then(Value::as_str).unwrap_or("GET");
    let mut request = http::request(method, str_arg(req, "url")?);
    match req.get("headers") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (name, value) in map {
                request = request.header(name.as_str(), value.as_str().unwrap_or_default());
            }
        }
        Some(Value::Array(pairs)) => {
            for pair in pairs {
                let (Some(name), Some(value)) = (
                    pair.get(0).and_then(Value::as_str),
                    pair.get(1).and_then(Value::as_str),
                ) else {
                    return Err("field `headers` pairs must be [name, value] strings".to_owned());
                };
                request = request.header(name, value);
            }
        }
        Some(_) => return Err("field `headers` must be an object or a list of pairs".to_owned()),
    }
    if let Some(body) = req.get("body").and_then(Value::as_str) {
        request = request.body(body);
    }
    Ok(request
        .send()
        .map(|resp| {
            // Reversed, the body is no encoding the host searches what leaves a guest for: a
            // test sees exactly what the guest received.
            let body = resp.text();
            json!({
                "status": resp.status,
                "headers": resp.headers,
                "body_reversed": body.chars().rev().collect::<String>(),
                "body": body,
            })
        })
        .map_err(|e| e.to_string()))
}

/// `{name, input}`: ok when the host returned an outcome, whatever its status.
fn tool(req: &Value) -> Result<OpResult, String> {
    let name = str_arg(req, "name")?;
    let input = req.get("input").cloned().unwrap_or_else(|| json!({}));
    // `input_raw`: the JSON text sent as it is, for inputs a JSON value cannot carry (a key
    // repeated in an object).
    let raw = req.get("input_raw").and_then(Value::as_str);
    let answer = match (raw, req.get("key").and_then(Value::as_str)) {
        (Some(raw), _) => tools::call_raw(name, raw),
        (None, Some(key)) => tools::call_idempotent(name, &input, key),
        (None, None) => tools::call(name, &input),
    };
    Ok(answer
        .map(|outcome| {
            let output = outcome
                .output_json()
                .unwrap_or_else(|_| Value::String(outcome.output.clone()));
            let status = match outcome.status {
                guild_sdk::CallStatus::Success => "success",
                guild_sdk::CallStatus::Pending => "pending",
                guild_sdk::CallStatus::Failed(_) => "failed",
            };
            json!({
                "status": status,
                "output": output,
                "external_id": outcome.external_id,
                "verifiable_url": outcome.verifiable_url,
                "preview": outcome.preview,
                "error": outcome.error(),
            })
        })
        .map_err(|e| e.to_string()))
}

fn granted() -> Value {
    let tools: Vec<Value> = tools::granted()
        .into_iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.spec.description,
                "mutating": tool.spec.mutating,
                "receipt_type": tool.spec.receipt_type,
                "operation": tool.spec.operation,
            })
        })
        .collect();
    json!(tools)
}

/// Spins until the host interrupts it; `black_box` keeps the optimiser from removing the loop.
fn spin() -> OpResult {
    let mut counter: u64 = 0;
    loop {
        counter = black_box(counter.wrapping_add(1));
    }
}

/// Allocates and touches `mb` MiB in 1 MiB chunks. When the host refuses to grow memory the
/// allocator aborts, so the instance traps as any Rust guest that runs out of memory would.
fn alloc(mb: u64) -> OpResult {
    const CHUNK: usize = 1024 * 1024;
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    for _ in 0..mb {
        let mut chunk = vec![0u8; CHUNK];
        for page in chunk.iter_mut().step_by(4096) {
            *page = 1;
        }
        chunks.push(black_box(chunk));
    }
    let touched: u64 = chunks
        .iter()
        .map(|c| c.iter().step_by(4096).map(|&b| u64::from(b)).sum::<u64>())
        .sum();
    Ok(json!({ "mb": mb, "pages": touched }))
}

/// Recurses until a stack runs out: wasm's own call stack, or with `frame` (4 KiB of locals
/// per call) the shadow stack in linear memory, which ends in an out-of-bounds access.
fn recurse(depth: u64, frame: bool) -> u64 {
    if frame {
        deep_frames(black_box(depth))
    } else {
        deep_calls(black_box(depth))
    }
}

/// No locals in linear memory: only wasm's call stack grows. The arithmetic after the call
/// keeps the optimiser from turning the recursion into a loop; `n` never reaches `u64::MAX`.
fn deep_calls(n: u64) -> u64 {
    if n == u64::MAX {
        return n;
    }
    deep_calls(n + 1).wrapping_mul(3).wrapping_add(n)
}

/// 4 KiB of locals per call, kept in linear memory by `black_box`.
fn deep_frames(n: u64) -> u64 {
    if n == u64::MAX {
        return n;
    }
    let locals = black_box([n as u8; 4096]);
    deep_frames(n + 1).wrapping_add(u64::from(locals[usize::from(locals[0])]))
}

/// `{name, input, count}`: calls the tool `count` times whatever it answers; reports how many
/// calls were answered with an outcome, how many were refused, and the last refusal.
fn tool_loop(req: &Value) -> Result<OpResult, String> {
    let name = str_arg(req, "name")?;
    let input = req.get("input").cloned().unwrap_or_else(|| json!({}));
    let (mut answered, mut refused, mut last_error) = (0u64, 0u64, None);
    for _ in 0..u64_arg(req, "count")? {
        match tools::call(name, &input) {
            Ok(_) => answered += 1,
            Err(e) => {
                refused += 1;
                last_error = Some(e.to_string());
            }
        }
    }
    Ok(Ok(
        json!({"answered": answered, "refused": refused, "last_error": last_error}),
    ))
}

/// `{bytes}`: the text of a specialist error of that many bytes (`run` returns it).
pub(crate) fn fail_big(req: &Value) -> Result<String, String> {
    let bytes = usize::try_from(u64_arg(req, "bytes")?).map_err(|e| e.to_string())?;
    Ok("f".repeat(bytes))
}

/// Opens `path` `count` times and keeps every handle open until the end.
fn open_many(path: &str, count: u64) -> OpResult {
    let mut files = Vec::new();
    for _ in 0..count {
        files.push(std::fs::File::open(path).map_err(|e| e.to_string())?);
    }
    Ok(json!(black_box(files).len()))
}

/// Sends `count` reports of `bytes` bytes each; stops at the first refusal and says which.
fn report_many(count: u64, bytes: u64) -> Result<OpResult, String> {
    let text = "r".repeat(usize::try_from(bytes).map_err(|e| e.to_string())?);
    for sent in 0..count {
        if let Err(e) = guild_sdk::progress::send(&text) {
            return Ok(Ok(json!({"sent": sent, "error": e.to_string()})));
        }
    }
    Ok(Ok(json!({"sent": count, "error": null})))
}
