//! Allowed/denied pairs for fs, env, config, tools, sockets — and the empty grant.

use guild_tests::{assert_denied, host, probe};
use serde_json::json;

const PROBE: &[&str] = &["testing/probe", "testing/echo"];

fn fs_grants(dir: &std::path::Path) -> String {
    std::fs::create_dir_all(dir.join("data")).expect("mkdir");
    std::fs::create_dir_all(dir.join("ro")).expect("mkdir");
    std::fs::create_dir_all(dir.join("outside")).expect("mkdir");
    std::fs::write(dir.join("ro/readme.md"), "read me").expect("write");
    std::fs::write(dir.join("outside/secret.txt"), "outside the sandbox").expect("write");
    r#"[grants.probe]
fs = [{ guest = "/data", host = "data", mode = "rw" }, { guest = "/ro", host = "ro", mode = "ro" }]
"#
    .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fs_read_write_allowed_in_granted_folders() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &fs_grants(dir.path())).await;
    let p = probe(&h, json!({"op": "read", "path": "/ro/readme.md"})).await;
    assert!(p.ok, "{p:?}");
    assert_eq!(p.value, json!("read me"));
    let p = probe(
        &h,
        json!({"op": "write", "path": "/data/new.md", "content": "hi"}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("data/new.md")).expect("written"),
        "hi"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fs_write_to_read_only_mount_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &fs_grants(dir.path())).await;
    let p = probe(
        &h,
        json!({"op": "write", "path": "/ro/readme.md", "content": "changed"}),
    )
    .await;
    assert!(!p.ok, "write to a read-only mount succeeded: {p:?}");
    let p = probe(
        &h,
        json!({"op": "write", "path": "/ro/new.md", "content": "x"}),
    )
    .await;
    assert!(!p.ok, "create in a read-only mount succeeded: {p:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ro/readme.md")).expect("read"),
        "read me"
    );
    assert!(!dir.path().join("ro/new.md").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fs_dotdot_and_symlink_escapes_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let grants = fs_grants(dir.path());
    std::os::unix::fs::symlink(dir.path().join("outside"), dir.path().join("data/link"))
        .expect("symlink");
    std::os::unix::fs::symlink(
        dir.path().join("outside/secret.txt"),
        dir.path().join("data/file-link"),
    )
    .expect("symlink");
    let h = host(dir.path(), PROBE, &grants).await;
    for path in [
        "/data/../outside/secret.txt",
        "/data/../../etc/passwd",
        "/data/link/secret.txt",
        "/data/file-link",
    ] {
        let p = probe(&h, json!({"op": "read", "path": path})).await;
        assert!(!p.ok, "{path} escaped the sandbox: {p:?}");
        assert_ne!(p.value, json!("outside the sandbox"));
    }
    let p = probe(
        &h,
        json!({"op": "write", "path": "/data/link/planted.txt", "content": "x"}),
    )
    .await;
    assert!(!p.ok, "{p:?}");
    assert!(!dir.path().join("outside/planted.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fs_ungranted_paths_invisible() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &fs_grants(dir.path())).await;
    for path in ["/etc/passwd", "/outside/secret.txt", "/", "/tmp"] {
        let p = probe(&h, json!({"op": "read", "path": path})).await;
        assert!(!p.ok, "{path} readable: {p:?}");
    }
    let p = probe(&h, json!({"op": "list", "path": "/"})).await;
    assert!(
        !p.ok || p.value.as_array().is_some_and(|a| a.is_empty()),
        "{p:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_grant_denies_everything() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, "").await;
    let p = probe(&h, json!({"op": "read", "path": "/data/x"})).await;
    assert!(!p.ok, "{p:?}");
    let p = probe(&h, json!({"op": "config", "key": "greeting"})).await;
    assert_denied(&p, "config");
    let p = probe(
        &h,
        json!({"op": "tool", "name": "echo.echo", "input": {"a": 1}}),
    )
    .await;
    assert_denied(&p, "echo.echo");
    let p = probe(
        &h,
        json!({"op": "http", "method": "GET", "url": "http://127.0.0.1:9/"}),
    )
    .await;
    assert_denied(&p, "http");
    let p = probe(&h, json!({"op": "tools"})).await;
    assert!(
        p.ok && p.value.as_array().is_some_and(|a| a.is_empty()),
        "{p:?}"
    );
    let info = h.plugin("probe").expect("probe loaded");
    assert!(
        info.capabilities
            .iter()
            // Limits always apply; even the plugin's own skills/ folder needs a grant.
            .filter(|r| r.capability != "limits")
            .all(|r| !matches!(r.status, guild_host::capability::RowStatus::Granted(_))),
        "{:?}",
        info.capabilities
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_inherited_env_args_sockets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, "").await;
    let p = probe(&h, json!({"op": "env"})).await;
    assert!(p.ok, "{p:?}");
    let vars = &p.value["vars"];
    assert!(
        vars.as_object().is_some_and(|o| o.is_empty())
            || vars.as_array().is_some_and(|a| a.is_empty()),
        "environment leaked: {vars}"
    );
    assert!(
        p.value["args"].as_array().is_none_or(|a| a.is_empty()),
        "{:?}",
        p.value
    );
    // A listener on loopback the guest might try to reach directly, bypassing the http capability.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let p = probe(&h, json!({"op": "tcp", "addr": addr.to_string()})).await;
    assert!(!p.ok, "raw socket reached {addr}: {p:?}");
    // Printing works for the guest; that nothing of it reaches the host's stdout is checked
    // on the built binary (host/tests/cli.rs, guest_stdout_never_reaches_the_hosts_stdout).
    let p = probe(
        &h,
        json!({"op": "print", "text": "to tracing, not to the host's stdout"}),
    )
    .await;
    assert!(p.ok, "{p:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_granted_key_readable_other_keys_denied() {
    let dir = tempfile::tempdir().expect("tempdir");
    let grants = r#"[grants.probe]
config = { greeting = "hello", unrequested = "x" }"#;
    let h = host(dir.path(), PROBE, grants).await;
    let p = probe(&h, json!({"op": "config", "key": "greeting"})).await;
    assert!(p.ok, "{p:?}");
    assert_eq!(p.value, json!("hello"));
    let p = probe(&h, json!({"op": "config", "key": "missing"})).await;
    assert_denied(&p, "missing");
    let p = probe(&h, json!({"op": "config", "key": "unrequested"})).await;
    assert_denied(&p, "unrequested");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_granted_runs_ungranted_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let grants = r#"[grants.probe]
tools = ["echo.echo"]"#;
    let h = host(dir.path(), PROBE, grants).await;
    let p = probe(
        &h,
        json!({"op": "tool", "name": "echo.echo", "input": {"say": "hi"}}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    let calls = &p.result.tool_calls;
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].tool, "echo.echo");
    assert!(calls[0].plugin.starts_with("echo@"));
    let p = probe(
        &h,
        json!({"op": "tool", "name": "echo.create", "input": {}}),
    )
    .await;
    assert_denied(&p, "echo.create");
    assert_eq!(
        p.result.tool_calls.len(),
        1,
        "a refused call is recorded too"
    );
    assert!(p.result.tool_calls[0].plugin.is_empty());
    let p = probe(&h, json!({"op": "tools"})).await;
    assert!(p.ok, "{p:?}");
    let names: Vec<_> = p
        .value
        .as_array()
        .map(|a| a.iter().map(|t| t["name"].clone()).collect())
        .unwrap_or_default();
    assert_eq!(names, vec![json!("echo.echo")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugin_info_reports_the_effective_http_grant() {
    use guild_host::capability::RowStatus;
    let dir = tempfile::tempdir().expect("tempdir");
    // The probe requests `http://127.0.0.1:*` and `https://*.example.com`, among others.
    let grants = r#"[grants.probe]
http = ["http://127.0.0.1:8080", "https://other.org"]"#;
    let h = host(dir.path(), PROBE, grants).await;
    let info = h.plugin("probe").expect("probe loaded");
    let row = |target: &str| {
        info.capabilities
            .iter()
            .find(|r| r.capability == "http" && r.target == target)
            .map(|r| r.status.clone())
    };
    assert_eq!(
        row("http://127.0.0.1:*"),
        Some(RowStatus::Granted("http://127.0.0.1:8080".to_owned())),
        "{:#?}",
        info.capabilities
    );
    assert_eq!(
        row("https://*.example.com"),
        Some(RowStatus::Denied("not granted".to_owned())),
        "a non-empty grant elsewhere does not grant this pattern"
    );
    assert_eq!(row("https://other.org"), Some(RowStatus::Unused));
    // And enforcement agrees: the port the row does not show is refused.
    let p = probe(
        &h,
        json!({"op": "http", "method": "GET", "url": "http://127.0.0.1:9/"}),
    )
    .await;
    assert_denied(&p, "http");
}

/// A refused tool says which side is missing and where to add it; the SDK prints the kind once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_tool_tells_not_requested_from_not_granted() {
    let dir = tempfile::tempdir().expect("tempdir");
    // echo.create is requested by the probe's manifest; cnotes.echo is not.
    let grants = r#"[grants.probe]
tools = ["echo.echo", "cnotes.echo"]"#;
    let plugins = ["testing/probe", "testing/echo", "testing/cnotes"];
    let h = host(dir.path(), &plugins, grants).await;
    for (tool, fix) in [
        (
            "echo.create",
            "requested but not granted by the operator: add it to `[grants.probe] tools` in guild.toml",
        ),
        (
            "cnotes.echo",
            "granted by the operator but not requested by the plugin: add it to `[capabilities] tools` in the plugin.toml of plugin 'probe'",
        ),
        ("echo.nowhere", "no loaded connector offers `echo.nowhere`."),
    ] {
        let p = probe(&h, json!({"op": "tool", "name": tool, "input": {}})).await;
        assert_denied(&p, tool);
        assert!(p.error.contains(fix), "{tool}: {}", p.error);
        assert!(
            p.error.starts_with("denied: plugin 'probe'") && !p.error.contains("denied: denied:"),
            "{tool}: {}",
            p.error
        );
    }
}

/// A misspelled tool is reported as a typo with the nearest loaded tool and the naming rule,
/// not as a grant to add, whether or not the misspelling is granted; the load names it too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misspelled_tool_names_the_nearest_loaded_tool() {
    let dir = tempfile::tempdir().expect("tempdir");
    let grants = r#"[grants.probe]
tools = ["echo.echo", "echo.ech"]"#;
    let h = host(dir.path(), PROBE, grants).await;
    for typo in ["echo.ech", "echo.ecoh"] {
        let p = probe(&h, json!({"op": "tool", "name": typo, "input": {}})).await;
        assert_denied(&p, typo);
        assert!(
            p.error.contains(&format!(
                "no loaded connector offers `{typo}`; did you mean `echo.echo`?"
            )) && p.error.contains("a tool is called as `connector.tool`")
                && !p.error.contains("add it to"),
            "{typo}: {}",
            p.error
        );
    }
    let warnings = h.load_warnings();
    assert!(
        warnings.iter().any(|w| w.starts_with("plugin 'probe': [grants.probe] tools in ")
            && w.contains(
                "names `echo.ech`, but no loaded connector offers `echo.ech`; did you mean `echo.echo`?"
            )),
        "{warnings:#?}"
    );
    // A request no loaded connector answers is named with where it is written.
    assert!(
        warnings.iter().any(|w| w.starts_with(
            "plugin 'probe': [capabilities] tools in its plugin.toml names `legacy-connector.note`"
        )),
        "{warnings:#?}"
    );
    assert!(
        !warnings.iter().any(|w| w.contains("`echo.echo`,")),
        "an offered tool is not warned about: {warnings:#?}"
    );
}
