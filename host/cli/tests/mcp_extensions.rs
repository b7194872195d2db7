//! The MCP extensions and result shapes `guild serve` offers beside the core protocol, driven
//! over stdio by a bare JSON-RPC peer that sees exactly what goes over the wire: the skills
//! extension (`skills/list`, `skills/get`, manifests whose digests match what
//! `resources/read` serves) and the `task` tool's output schema, which every result's
//! `structuredContent` must conform to.

mod common;

use common::mcp_setup::setup;
use common::stdio_peer::StdioPeer;

/// The skills extension: `skills/list` and `skills/get` give each skill's frontmatter and a
/// complete manifest of its files whose digests and sizes are those of the bytes
/// `resources/read` serves; a URI that names no skill's `SKILL.md`, and a bad cursor, are
/// invalid params.
#[test]
fn the_skills_extension_lists_each_skill_with_a_manifest_that_matches_its_files() {
    use sha2::Digest as _;
    let dir = setup();
    let (mut peer, init) = StdioPeer::start(dir.path(), serde_json::json!({}));
    assert!(
        init["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/skills"].is_object(),
        "{init}"
    );
    let listed = peer.request("skills/list", serde_json::json!({}));
    let skills = listed["result"]["skills"].as_array().expect("skills");
    assert_eq!(skills.len(), 1, "{listed}");
    let skill = &skills[0];
    assert_eq!(skill["uri"], "skill://release-notes/SKILL.md", "{skill}");
    assert_eq!(skill["frontmatter"]["name"], "release-notes", "{skill}");
    assert_eq!(
        skill["frontmatter"]["description"],
        "How to write release notes for a Guild release."
    );
    let manifest = skill["resources"]
        .as_array()
        .expect("a manifest, not dynamic");
    let mut uris: Vec<&str> = manifest.iter().filter_map(|r| r["uri"].as_str()).collect();
    uris.sort_unstable();
    assert_eq!(
        uris,
        [
            "skill://release-notes/SKILL.md",
            "skill://release-notes/logo.bin",
            "skill://release-notes/template.md"
        ]
    );
    for file in manifest {
        let uri = file["uri"].as_str().expect("uri");
        let rel = uri.trim_start_matches("skill://");
        let on_disk = std::fs::read(dir.path().join("skills").join(rel)).expect("file");
        let digest = format!("sha256:{}", hex::encode(sha2::Sha256::digest(&on_disk)));
        assert_eq!(file["digest"], digest.as_str(), "{file}");
        assert_eq!(file["size"], on_disk.len(), "{file}");
        // What resources/read serves is what the manifest describes.
        let read = peer.request("resources/read", serde_json::json!({"uri": uri}));
        let contents = &read["result"]["contents"][0];
        let served = match contents["text"].as_str() {
            Some(text) => text.as_bytes().to_vec(),
            None => base64::Engine::decode(
                &base64::engine::general_purpose::STANDARD,
                contents["blob"].as_str().expect("text or blob"),
            )
            .expect("base64"),
        };
        assert_eq!(served, on_disk, "{uri}");
    }
    let got = peer.request(
        "skills/get",
        serde_json::json!({"uri": "skill://release-notes/SKILL.md"}),
    );
    assert_eq!(&got["result"]["skill"], skill, "{got}");
    // An edit shows in the next entry's digest.
    std::fs::write(
        dir.path().join("skills/release-notes/template.md"),
        "# Release X.Y\n\n## Changes\n\n## Fixes\n",
    )
    .expect("edit");
    let again = peer.request(
        "skills/get",
        serde_json::json!({"uri": "skill://release-notes/SKILL.md"}),
    );
    assert_ne!(&again["result"]["skill"], skill, "{again}");
    for uri in [
        "skill://release-notes/template.md",
        "skill://nobody/SKILL.md",
        "memory://team",
    ] {
        let refused = peer.request("skills/get", serde_json::json!({"uri": uri}));
        assert_eq!(refused["error"]["code"], -32602, "{uri}: {refused}");
    }
    let bad = peer.request("skills/list", serde_json::json!({"cursor": "nope"}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    peer.stop();
}

/// `task` declares an output schema, and the `structuredContent` of a single task, of a failed
/// one and of a batch all conform to it (checked with a JSON Schema validator, as clients do),
/// and the model usage it describes is typed.
#[test]
fn task_results_conform_to_the_task_tools_output_schema() {
    let dir = setup();
    let (mut peer, _) = StdioPeer::start(dir.path(), serde_json::json!({}));
    let listed = peer.request("tools/list", serde_json::json!({}));
    let task = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "task")
        .expect("the task tool")
        .clone();
    let schema = task["outputSchema"].clone();
    assert_eq!(schema["type"], "object", "{task}");
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let call = |peer: &mut StdioPeer, arguments: serde_json::Value| {
        let answer = peer.request(
            "tools/call",
            serde_json::json!({"name": "task", "arguments": arguments}),
        );
        answer["result"]["structuredContent"].clone()
    };
    let single = call(
        &mut peer,
        serde_json::json!({"subagent_type": "probe", "description": "{\"op\":\"tools\"}"}),
    );
    let failed = call(
        &mut peer,
        serde_json::json!({"subagent_type": "probe", "description": "{\"op\":\"trap\"}"}),
    );
    let batch = call(
        &mut peer,
        serde_json::json!({"tasks": [
            {"subagent_type": "probe", "description": "{\"op\":\"tools\"}"},
            {"subagent_type": "nobody", "description": "x"},
        ]}),
    );
    assert_eq!(single["status"], "succeeded", "{single}");
    assert_ne!(failed["status"], "succeeded", "{failed}");
    assert_eq!(batch["tasks"].as_array().map(Vec::len), Some(2), "{batch}");
    for (what, content) in [("single", &single), ("failed", &failed), ("batch", &batch)] {
        let errors: Vec<String> = validator
            .iter_errors(content)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{what}: {errors:?}\n{content}");
    }
    // The schema can fail: a result without its status does not conform.
    let mut broken = single.clone();
    broken.as_object_mut().expect("object").remove("status");
    assert!(!validator.is_valid(&broken));
    // Model usage is typed: counts per alias conform, anything else does not.
    let mut with_models = single.clone();
    with_models["usage"]["models"] =
        serde_json::json!({"fast": {"calls": 2, "prompt_tokens": 22, "completion_tokens": 14}});
    assert!(validator.is_valid(&with_models), "{with_models}");
    with_models["usage"]["models"]["fast"] = serde_json::json!({"calls": -1});
    assert!(!validator.is_valid(&with_models));
    peer.stop();
}

/// The official TypeScript client (`@modelcontextprotocol/client` 2.4 with its skills client,
/// and the Tasks add-on `@modelcontextprotocol/ext-tasks`, installed by tests/setup.sh) drives
/// `guild serve`: it verifies every skill file it reads against the entry (and refuses one
/// changed behind it), checks a task's `structuredContent` against the output schema, and runs a
/// task through the add-on's session API.
#[test]
fn the_typescript_client_verifies_skills_and_runs_tasks() {
    let dir = setup();
    let guild = std::path::PathBuf::from(env!("CARGO_BIN_EXE_guild"));
    let args = [
        guild,
        dir.path().join("guild.toml"),
        dir.path().join("skills"),
    ];
    let summary = ts_script("client.mjs", &args, dir.path());
    assert_eq!(
        summary["skills"],
        serde_json::json!(["skill://release-notes/SKILL.md"])
    );
    assert!(
        summary["body"]
            .as_str()
            .is_some_and(|b| b.contains("template.md")),
        "{summary}"
    );
    assert_eq!(
        summary["verified"],
        serde_json::json!(["template.md", "logo.bin"])
    );
    assert!(
        summary["tampered"]
            .as_str()
            .is_some_and(|t| t.starts_with("refused")),
        "{summary}"
    );
    assert_eq!(summary["plain_status"], "succeeded", "{summary}");
    assert_eq!(summary["session_status"], "succeeded", "{summary}");
}

/// A folder whose `guild.toml` loads kb with its `/workspace` granted read-write (kb writes
/// artifacts there).
fn kb_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("kb")).expect("kb folder");
    let text = format!(
        "[host]\nplugins = [{:?}]\ndata_dir = \"data\"\n\n[grants.kb]\nfs = [{{ guest = \"/workspace\", host = \"kb\", mode = \"rw\" }}]\n",
        common::plugin("kb").display().to_string()
    );
    std::fs::write(dir.path().join("guild.toml"), text).expect("guild.toml");
    dir
}

/// A `task` result links each artifact its report references (`resource_link`, the report's
/// sha256 in `_meta`); `resources/read` serves the bytes while they are still those the report
/// claimed, and refuses them, naming the artifact, once they changed; an unknown artifact URI is
/// not found.
#[test]
fn task_results_link_their_artifacts_and_resources_read_serves_them() {
    let dir = kb_folder();
    let (mut peer, _) = StdioPeer::start(dir.path(), serde_json::json!({}));
    let called = peer.request(
        "tools/call",
        serde_json::json!({"name": "task", "arguments": {"subagent_type": "kb",
            "description": "save notes/a.md\n# Notes\n\nfirst line"}}),
    );
    let content = called["result"]["content"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let link = content
        .iter()
        .find(|c| c["type"] == "resource_link")
        .unwrap_or_else(|| panic!("no resource_link: {called}"))
        .clone();
    let uri = link["uri"].as_str().unwrap_or_default().to_owned();
    assert!(
        uri.starts_with("artifact://") && uri.ends_with("notes/a.md"),
        "{link}"
    );
    let claimed = link["_meta"]["sha256"].clone();
    assert!(claimed.as_str().is_some_and(|s| s.len() == 64), "{link}");
    // Allowed: the bytes the report claimed.
    let read = peer.request("resources/read", serde_json::json!({"uri": uri}));
    let contents = &read["result"]["contents"][0];
    assert!(
        contents["text"]
            .as_str()
            .is_some_and(|t| t.contains("first line")),
        "{read}"
    );
    assert_eq!(contents["_meta"]["sha256"], claimed, "{read}");
    // Denied: changed behind the report.
    let file = dir.path().join("kb/notes/a.md");
    assert!(file.is_file(), "kb saved elsewhere: {called}");
    std::fs::write(&file, "# Notes\n\nrewritten\n").expect("rewrite");
    let refused = peer.request("resources/read", serde_json::json!({"uri": uri}));
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("notes/a.md") && message.contains("changed since the report"),
        "{refused}"
    );
    let unknown = peer.request(
        "resources/read",
        serde_json::json!({"uri": "artifact://no-such-task/notes/a.md"}),
    );
    assert_eq!(unknown["error"]["code"], -32002, "{unknown}");
    // The host ends when the data dir goes with the temporary folder.
    peer.stop();
}

/// `guild serve --http 127.0.0.1:0` on `dir`'s configuration: the child and its URL.
fn serve_http(dir: &std::path::Path) -> (std::process::Child, String) {
    let mut child = common::guild(dir, &["serve", "--http", "127.0.0.1:0", "--no-token"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("guild serve starts");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let url = common::serve_url(&mut stderr);
    // Keep reading stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, url)
}

fn stop(mut child: std::process::Child) {
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

fn ts_tasks(dir: &std::path::Path, args: &[&str]) -> serde_json::Value {
    ts_script("tasks.mjs", args, dir)
}

/// Runs `host/cli/tests/mcp_ts/SCRIPT ARGS` (the official TypeScript client, installed by
/// tests/setup.sh) in `dir`; the JSON summary on its last line.
fn ts_script(
    script: &str,
    args: &[impl AsRef<std::ffi::OsStr>],
    dir: &std::path::Path,
) -> serde_json::Value {
    let client = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_ts");
    assert!(
        ["client", "ext-tasks"].iter().all(|p| client
            .join("node_modules/@modelcontextprotocol")
            .join(p)
            .is_dir()),
        "the TypeScript MCP client is not installed: run tests/setup.sh (plugins/build.sh does)"
    );
    let out = std::process::Command::new("node")
        .arg(client.join(script))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("a JSON summary")
}

fn assert_ts_tasks(summary: &serde_json::Value) {
    assert_eq!(summary["protocol"], "2025-11-25", "{summary}");
    assert!(
        summary["capability"]["requests"]["tools"]["call"].is_object(),
        "{summary}"
    );
    assert_eq!(summary["kind"], "task", "{summary}");
    assert!(
        ["working", "completed"].contains(&summary["polled"].as_str().unwrap_or_default()),
        "{summary}"
    );
    assert_eq!(summary["status"], "succeeded", "{summary}");
    assert_eq!(summary["settled"], "completed", "{summary}");
    assert_eq!(summary["again"], "succeeded", "{summary}");
    assert_eq!(summary["cancelled"], "cancelled", "{summary}");
    assert_eq!(summary["cancelled_on_server"], "cancelled", "{summary}");
    assert_eq!(
        summary["listed"],
        serde_json::json!(["completed", "cancelled"]),
        "{summary}"
    );
    assert_eq!(summary["newest"], true, "{summary}");
    // Allowed only on request: without a task preference the call stays synchronous.
    assert_eq!(summary["plain_kind"], "immediate", "{summary}");
}

/// The TypeScript Tasks add-on's task API (`@modelcontextprotocol/ext-tasks`, on the 2025-11-25
/// session the client negotiates) over stdio and streamable HTTP: a `task` call created as a
/// background task, polled (`tasks/get`), settled and read again (`tasks/result`), another
/// cancelled (`tasks/cancel`), both listed (`tasks/list`); a call without a task preference
/// stays synchronous.
#[test]
fn the_typescript_tasks_api_runs_background_tasks_over_stdio_and_http() {
    let dir = setup();
    let config = dir.path().join("guild.toml");
    let summary = ts_tasks(
        dir.path(),
        &[
            "stdio",
            env!("CARGO_BIN_EXE_guild"),
            config.to_str().expect("utf-8"),
        ],
    );
    assert_ts_tasks(&summary);
    let dir = setup();
    let (child, url) = serve_http(dir.path());
    let summary = ts_tasks(dir.path(), &["http", &url]);
    stop(child);
    assert_ts_tasks(&summary);
}

/// The Python SDK's task API (`session.experimental` of `mcp` 1.30, the 1.x line; `mcp` 2.x
/// has none) over stdio and streamable HTTP: created, polled to its end, result read, another
/// cancelled, both listed; a tool other than `task` is refused as a task.
#[test]
fn the_python_tasks_api_runs_background_tasks_over_stdio_and_http() {
    let python =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/langchain/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: tests/setup.sh installs the 1.x Python SDK there",
        python.display()
    );
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_tasks_py.py");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(&python)
            .arg(&script)
            .args(args)
            .env_remove("GUILD_CONFIG")
            .env_remove("GUILD_LOG")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("python runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains("all checks passed"),
            "{stdout}\n{stderr}"
        );
    };
    let dir = setup();
    let config = dir.path().join("guild.toml");
    run(&[
        "stdio",
        env!("CARGO_BIN_EXE_guild"),
        config.to_str().expect("utf-8"),
    ]);
    let dir = setup();
    let (child, url) = serve_http(dir.path());
    run(&["http", &url]);
    stop(child);
}

/// A client on protocol 2025-06-18 (before Tasks) gets neither `capabilities.tasks` nor
/// `execution` on `task`, and a `tools/call` with a `task` parameter runs synchronously.
#[test]
fn clients_before_2025_11_25_get_no_tasks() {
    let dir = setup();
    let (mut peer, init) = StdioPeer::start(dir.path(), serde_json::json!({}));
    assert!(
        init["result"]["capabilities"].get("tasks").is_none(),
        "{init}"
    );
    let listed = peer.request("tools/list", serde_json::json!({}));
    let task = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "task")
        .expect("the task tool")
        .clone();
    assert!(task.get("execution").is_none(), "{task}");
    let called = peer.request(
        "tools/call",
        serde_json::json!({"name": "task", "task": {"ttl": 1000},
            "arguments": {"subagent_type": "probe", "description": "{\"op\":\"brief\"}"}}),
    );
    assert_eq!(
        called["result"]["structuredContent"]["status"], "succeeded",
        "{called}"
    );
    peer.stop();
}

/// A background task's results link its artifacts as a `task` result does: `check_task`,
/// `tasks/get` and `tasks/result` carry the same `resource_link`, and `resources/read` serves
/// it.
#[test]
fn background_results_link_their_artifacts() {
    let dir = kb_folder();
    let tasks = serde_json::json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let (mut peer, _) = StdioPeer::start(dir.path(), tasks);
    let started = peer.request(
        "tools/call",
        serde_json::json!({"name": "start_task", "arguments": {"subagent_type": "kb",
            "description": "save notes/b.md\n# Notes\n\nbackground line"}}),
    );
    let id = started["result"]["structuredContent"]["task_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no task id: {started}"))
        .to_owned();
    let result = peer.request("tasks/result", serde_json::json!({"taskId": id}));
    let links = |content: &serde_json::Value| -> Vec<String> {
        content
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter(|c| c["type"] == "resource_link")
                    .filter_map(|c| c["uri"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let from_result = links(&result["result"]["content"]);
    assert_eq!(from_result.len(), 1, "{result}");
    assert!(
        from_result[0].starts_with(&format!("artifact://{id}/"))
            && from_result[0].ends_with("notes/b.md"),
        "{result}"
    );
    let got = peer.request("tasks/get", serde_json::json!({"taskId": id}));
    assert_eq!(
        links(&got["result"]["result"]["content"]),
        from_result,
        "{got}"
    );
    let checked = peer.request(
        "tools/call",
        serde_json::json!({"name": "check_task", "arguments": {"task_id": id}}),
    );
    assert_eq!(
        links(&checked["result"]["content"]),
        from_result,
        "{checked}"
    );
    let read = peer.request("resources/read", serde_json::json!({"uri": from_result[0]}));
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("background line")),
        "{read}"
    );
    peer.stop();
}
