//! Table tests for the request ∩ grant intersection: every area allowed and denied, and the
//! empty grant denying everything.

use std::path::Path;

use url::Url;

use super::*;
use crate::config::Config;
use crate::manifest::{FsMode, Manifest};

const FULL: &str = r#"
[plugin]
name = "probe"
version = "1.0.0"
kind = "specialist"
component = "probe.wasm"

[capabilities]
tools = ["echo.echo", "echo.create"]
http = ["http://127.0.0.1:*", "https://*.example.com"]
fs = [{ guest = "/data", mode = "rw" }, { guest = "/ro", mode = "ro" }]
config = ["greeting", "missing"]
secrets = [{ name = "API_TOKEN", hosts = ["http://127.0.0.1:*"], header = "Authorization", format = "Bearer {}" }]
llm = true
report = true

[limits]
memory_mb = 32
timeout_s = 10
max_output_kb = 64
"#;

fn manifest() -> Manifest {
    Manifest::parse(FULL, Path::new("/plugins/probe")).expect("fixture manifest parses")
}

fn config(text: &str, dir: &Path) -> Config {
    Config::parse(text, &dir.join("guild.toml"), dir).expect("fixture config parses")
}

fn url(s: &str) -> Url {
    Url::parse(s).expect("fixture url")
}

#[test]
fn empty_grant_denies_everything() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (eff, rows) = resolve(&manifest(), &config("", dir.path())).expect("resolves");
    assert!(eff.fs.is_empty());
    assert!(eff.tools.is_empty());
    assert!(eff.config.is_empty());
    assert!(eff.http.secrets.is_empty());
    assert!(eff.http.check_url(&url("http://127.0.0.1:8080/")).is_err());
    assert!(
        eff.http
            .check_url(&url("https://api.example.com/"))
            .is_err()
    );
    let denied = rows
        .iter()
        .filter(|r| matches!(r.status, RowStatus::Denied(_)))
        .count();
    // 2 tools + 2 http + 2 fs + 2 config + 1 secret + llm + report
    assert_eq!(denied, 11, "{rows:#?}");
    assert!(!eff.report);
    assert!(
        !rows
            .iter()
            .any(|r| r.capability != "limits" && matches!(r.status, RowStatus::Granted(_)))
    );
}

#[test]
fn tools_are_the_intersection() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(
        r#"[grants.probe]
tools = ["echo.echo", "echo.fail"]"#,
        dir.path(),
    );
    let (eff, rows) = resolve(&manifest(), &cfg).expect("resolves");
    assert_eq!(eff.tools.iter().collect::<Vec<_>>(), vec!["echo.echo"]);
    assert!(
        rows.iter()
            .any(|r| r.target == "echo.create" && matches!(r.status, RowStatus::Denied(_)))
    );
    assert!(
        rows.iter()
            .any(|r| r.target == "echo.fail" && r.status == RowStatus::Unused)
    );
}

#[test]
fn config_values_only_for_requested_keys() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(
        r#"[grants.probe]
config = { greeting = "hello", region = "eu" }"#,
        dir.path(),
    );
    let (eff, _) = resolve(&manifest(), &cfg).expect("resolves");
    assert_eq!(
        eff.config.get("greeting").map(String::as_str),
        Some("hello")
    );
    assert!(
        !eff.config.contains_key("region"),
        "granted but not requested"
    );
    assert!(
        !eff.config.contains_key("missing"),
        "requested but not granted"
    );
}

#[test]
fn fs_mode_is_the_lower_of_request_and_grant() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("d")).expect("mkdir");
    std::fs::create_dir(dir.path().join("r")).expect("mkdir");
    let cfg = config(
        r#"[grants.probe]
fs = [{ guest = "/data", host = "d", mode = "ro" }, { guest = "/ro", host = "r", mode = "rw" }]"#,
        dir.path(),
    );
    let (eff, _) = resolve(&manifest(), &cfg).expect("resolves");
    assert_eq!(eff.fs.len(), 2);
    assert!(eff.fs.iter().all(|m| m.mode == FsMode::Ro), "{:?}", eff.fs);
}

#[test]
fn rw_mounts_carry_the_grant_quota_or_the_host_default_and_ro_mounts_none() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("d")).expect("mkdir");
    std::fs::create_dir(dir.path().join("r")).expect("mkdir");
    let cfg = config(
        r#"[host]
fs_quota_files = 77
[grants.probe]
fs = [{ guest = "/data", host = "d", mode = "rw", quota_mb = 3 }, { guest = "/ro", host = "r", mode = "rw", quota_mb = 9 }]"#,
        dir.path(),
    );
    let (eff, rows) = resolve(&manifest(), &cfg).expect("resolves");
    let data = eff.fs.iter().find(|m| m.guest == "/data").expect("mounted");
    assert_eq!(
        data.quota,
        Some(FsQuota {
            bytes: 3 * 1024 * 1024,
            files: 77
        })
    );
    let ro = eff.fs.iter().find(|m| m.guest == "/ro").expect("mounted");
    assert_eq!(ro.quota, None, "a read-only mount needs no quota");
    assert!(
        rows.iter()
            .any(|r| format!("{r:?}").contains("quota 3 MiB / 77 files")),
        "{rows:?}"
    );
    let defaults = config(
        r#"[grants.probe]
fs = [{ guest = "/data", host = "d", mode = "rw" }]"#,
        dir.path(),
    );
    let (eff, _) = resolve(&manifest(), &defaults).expect("resolves");
    assert_eq!(
        eff.fs[0].quota,
        Some(FsQuota {
            bytes: 256 * 1024 * 1024,
            files: 10_000
        })
    );
}

#[test]
fn a_zero_quota_is_refused_naming_the_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = Config::parse(
        r#"[grants.probe]
fs = [{ guest = "/data", host = "d", mode = "rw", quota_files = 0 }]"#,
        &dir.path().join("guild.toml"),
        dir.path(),
    )
    .expect_err("zero quota");
    assert!(
        err.to_string().contains("grants.probe.fs[0].quota_files"),
        "{err}"
    );
    let err = Config::parse(
        "[host]\nfs_quota_mb = 0\n",
        &dir.path().join("guild.toml"),
        dir.path(),
    )
    .expect_err("zero default");
    assert!(err.to_string().contains("host.fs_quota_mb"), "{err}");
}

#[test]
fn fs_grant_of_a_missing_folder_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(
        r#"[grants.probe]
fs = [{ guest = "/data", host = "nope", mode = "rw" }]"#,
        dir.path(),
    );
    let err = resolve(&manifest(), &cfg).expect_err("missing folder");
    let msg = err.to_string();
    assert!(
        msg.contains("probe") && msg.contains("nope") && msg.contains("/data"),
        "{msg}"
    );
}

#[test]
fn http_needs_request_and_grant() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(
        r#"[grants.probe]
http = ["http://127.0.0.1:8080", "https://other.org"]"#,
        dir.path(),
    );
    let (eff, _) = resolve(&manifest(), &cfg).expect("resolves");
    assert!(eff.http.check_url(&url("http://127.0.0.1:8080/x")).is_ok());
    assert!(
        eff.http.check_url(&url("http://127.0.0.1:9090/x")).is_err(),
        "port not granted"
    );
    assert!(
        eff.http.check_url(&url("https://other.org/")).is_err(),
        "granted but not requested"
    );
}

#[test]
fn secrets_need_a_granted_value() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (none, _) = resolve(&manifest(), &config("", dir.path())).expect("resolves");
    assert!(none.http.secrets.is_empty());
    let cfg = config(
        r#"[grants.probe]
secrets = { API_TOKEN = { value = "s3cret", hosts = ["http://127.0.0.1:*"] } }"#,
        dir.path(),
    );
    let (eff, rows) = resolve(&manifest(), &cfg).expect("resolves");
    assert_eq!(eff.http.secrets.len(), 1);
    assert!(eff.http.secrets[0].applies_to(&url("http://127.0.0.1:1234/")));
    assert!(!eff.http.secrets[0].applies_to(&url("https://api.example.com/")));
    assert!(
        !format!("{rows:?}{eff:?}").contains("s3cret"),
        "secret value leaked into a report"
    );
}

#[test]
fn missing_secret_source_is_an_error_naming_the_secret() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(
        r#"[grants.probe]
secrets = { API_TOKEN = { env = "GUILD_TEST_SURELY_UNSET_VARIABLE", hosts = ["http://127.0.0.1:*"] } }"#,
        dir.path(),
    );
    let msg = resolve(&manifest(), &cfg)
        .expect_err("unset env")
        .to_string();
    assert!(
        msg.contains("API_TOKEN") && msg.contains("GUILD_TEST_SURELY_UNSET_VARIABLE"),
        "{msg}"
    );
}

#[test]
fn operator_limits_only_lower() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(
        r#"[grants.probe]
limits = { memory_mb = 16, timeout_s = 999 }"#,
        dir.path(),
    );
    let (eff, _) = resolve(&manifest(), &cfg).expect("resolves");
    assert_eq!(eff.limits.memory_mb, 16);
    assert_eq!(
        eff.limits.timeout_s, 10,
        "an operator override cannot raise a limit"
    );
    assert_eq!(eff.limits.max_output_kb, 64);
}

#[test]
fn report_channel_needs_request_and_grant() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (eff, _) = resolve(
        &manifest(),
        &config("[grants.probe]\nreport = true", dir.path()),
    )
    .expect("resolves");
    assert!(eff.report);
    let plain = FULL.replace("report = true\n", "");
    let m = Manifest::parse(&plain, Path::new("/plugins/probe")).expect("parses");
    let (eff, rows) =
        resolve(&m, &config("[grants.probe]\nreport = true", dir.path())).expect("resolves");
    assert!(!eff.report, "granted but not requested");
    assert!(
        rows.iter()
            .any(|r| r.capability == "report" && r.status == RowStatus::Unused)
    );
}

#[test]
fn http_rows_show_exactly_what_is_enforced() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(
        r#"[grants.probe]
http = ["http://127.0.0.1:8080", "https://api.example.com", "https://other.org"]"#,
        dir.path(),
    );
    let (eff, rows) = resolve(&manifest(), &cfg).expect("resolves");
    let http: Vec<_> = rows.iter().filter(|r| r.capability == "http").collect();
    // Requested `http://127.0.0.1:*` is granted on one port only, and the row says which.
    assert!(
        http.iter().any(|r| r.target == "http://127.0.0.1:*"
            && r.status == RowStatus::Granted("http://127.0.0.1:8080".to_owned())),
        "{http:#?}"
    );
    assert!(
        http.iter().any(|r| r.target == "https://*.example.com"
            && r.status == RowStatus::Granted("https://api.example.com".to_owned())),
        "{http:#?}"
    );
    assert!(
        http.iter()
            .any(|r| r.target == "https://other.org" && r.status == RowStatus::Unused),
        "{http:#?}"
    );
    // What the rows show granted is exactly what the policy lets through.
    let shown: Vec<guild_http::HostPattern> = http
        .iter()
        .filter_map(|r| match &r.status {
            RowStatus::Granted(d) => Some(d.split(", ").map(|p| p.parse().expect("pattern"))),
            _ => None,
        })
        .flatten()
        .collect();
    for u in [
        "http://127.0.0.1:8080/x",
        "http://127.0.0.1:9090/x",
        "https://api.example.com/",
        "https://www.example.com/",
        "https://other.org/",
        "http://api.example.com/",
    ] {
        let u = url(u);
        assert_eq!(
            shown.iter().any(|p| p.matches(&u)),
            eff.http.check_url(&u).is_ok(),
            "report and enforcement disagree on {u}"
        );
    }
}

#[test]
fn http_row_denied_when_the_grant_does_not_overlap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config("[grants.probe]\nhttp = [\"https://other.org\"]", dir.path());
    let (eff, rows) = resolve(&manifest(), &cfg).expect("resolves");
    let granted = rows
        .iter()
        .filter(|r| r.capability == "http" && matches!(r.status, RowStatus::Granted(_)))
        .count();
    assert_eq!(granted, 0, "{rows:#?}");
    assert!(eff.http.check_url(&url("https://other.org/")).is_err());
}

#[test]
fn secret_hosts_are_the_operators() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A manifest that asks for nothing in particular: the grant decides.
    let m = Manifest::parse(
        &FULL.replace(r#"hosts = ["http://127.0.0.1:*"], "#, ""),
        Path::new("/plugins/probe"),
    )
    .expect("parses");
    let cfg = config(
        r#"[grants.probe.secrets.API_TOKEN]
value = "s3cret"
hosts = ["https://api.example.com"]"#,
        dir.path(),
    );
    let (eff, _) = resolve(&m, &cfg).expect("resolves");
    assert!(eff.http.secrets[0].applies_to(&url("https://api.example.com/")));
    assert!(!eff.http.secrets[0].applies_to(&url("http://127.0.0.1:1234/")));
    // The full manifest asks for 127.0.0.1:*, which that grant does not name: refused.
    let msg = resolve(&manifest(), &cfg)
        .expect_err("request outside the grant")
        .to_string();
    assert!(
        msg.contains("http://127.0.0.1:*")
            && msg.contains("https://api.example.com")
            && msg.contains("[grants.probe.secrets.API_TOKEN] hosts"),
        "{msg}"
    );
}

#[test]
fn secret_grant_shape_is_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (text, want) in [
        ("[grants.probe.secrets.T]\nvalue = \"v\"\n", "hosts"),
        (
            "[grants.probe.secrets.T]\nvalue = \"v\"\nenv = \"V\"\nhosts = [\"https://a.org\"]\n",
            "exactly one",
        ),
        (
            "[grants.probe.secrets.T]\nvalue = \"v\"\nhosts = []\n",
            "lists no hosts",
        ),
        (
            "[grants.probe.secrets.T]\nvalue = \"v\"\nhosts = [\"https://*\"]\n",
            "grants.probe.secrets.T.hosts",
        ),
        (
            "[grants.probe.secrets.T]\nvalue = \"v\"\nhosts = [\"https://a.org\"]\nheader = \"X\"\n",
            "header",
        ),
    ] {
        let msg = Config::parse(text, &dir.path().join("guild.toml"), dir.path())
            .expect_err(text)
            .to_string();
        assert!(msg.contains(want), "{text}: {msg}");
    }
}

#[test]
fn fs_grant_resolving_to_root_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(
        r#"[host]
data_dir = "state"
[grants.probe]
fs = [{ guest = "/data", host = "/tmp/..", mode = "ro" }]"#,
        dir.path(),
    );
    let msg = resolve(&manifest(), &cfg).expect_err("root").to_string();
    assert!(
        msg.contains("[grants.probe] fs[0].host") && msg.contains("root folder"),
        "{msg}"
    );
}

/// A refused tool says which side is missing and which file and key would allow it.
#[test]
fn tool_refusal_names_the_missing_side_and_the_fix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(
        r#"[grants.probe]
tools = ["echo.echo", "echo.delete"]"#,
        dir.path(),
    );
    let (eff, _) = resolve(&manifest(), &cfg).expect("resolves");
    let cases: &[(&str, Option<&[&str]>)] = &[
        ("echo.echo", None),
        (
            "echo.create",
            Some(&[
                "requested but not granted",
                "`[grants.probe] tools` in guild.toml",
            ]),
        ),
        (
            "echo.delete",
            Some(&[
                "granted by the operator but not requested",
                "`[capabilities] tools` in the plugin.toml of plugin 'probe'",
            ]),
        ),
        (
            "echo.other",
            Some(&[
                "not requested by the plugin and not granted",
                "`[capabilities] tools`",
                "`[grants.probe] tools`",
            ]),
        ),
    ];
    for (tool, expected) in cases {
        let refusal = eff.tool_refusal("probe", tool);
        match expected {
            None => assert_eq!(refusal, None, "{tool} is granted"),
            Some(parts) => {
                let text = refusal.unwrap_or_else(|| panic!("{tool} must be refused"));
                for part in *parts {
                    assert!(text.contains(part), "{tool}: {text:?} lacks {part:?}");
                }
            }
        }
    }
    let none = Effective::none("probe", eff.limits);
    assert!(none.tool_refusal("probe", "echo.echo").is_some());
}

const SKILLS: &str = r#"
[plugin]
name = "probe"
version = "1.0.0"
kind = "specialist"
component = "probe.wasm"

[capabilities]
skills = ["skills/", "shared:team", "loader:team-skills"]
"#;

fn skill_rows(rows: &[CapabilityRow]) -> Vec<(String, RowStatus)> {
    rows.iter()
        .filter(|r| r.capability == "skills")
        .map(|r| (r.target.clone(), r.status.clone()))
        .collect()
}

#[test]
fn skill_sources_are_requested_and_granted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = Manifest::parse(SKILLS, Path::new("/plugins/probe")).expect("manifest");
    let granted =
        "[grants.probe]\nskills = [\"skills\", \"loader:team-skills\", \"loader:other\"]\n";
    let (eff, rows) = resolve(&manifest, &config(granted, dir.path())).expect("resolves");
    assert_eq!(
        eff.skills,
        vec![
            SourceRequest::Own("skills".into()),
            SourceRequest::Loader("team-skills".into())
        ],
        "\"skills\" grants \"skills/\"; shared:team is not granted"
    );
    let granted_row = RowStatus::Granted("granted".into());
    assert_eq!(
        skill_rows(&rows),
        vec![
            ("skills/".to_owned(), granted_row.clone()),
            (
                "shared:team".to_owned(),
                RowStatus::Denied("not granted".into())
            ),
            ("loader:team-skills".to_owned(), granted_row),
            ("loader:other".to_owned(), RowStatus::Unused),
        ]
    );
}

#[test]
fn empty_grant_denies_every_skill_source() {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = Manifest::parse(SKILLS, Path::new("/plugins/probe")).expect("manifest");
    for text in ["", "[grants.probe]\nskills = []\n"] {
        let (eff, rows) = resolve(&manifest, &config(text, dir.path())).expect("resolves");
        assert!(eff.skills.is_empty(), "{text:?}: {:?}", eff.skills);
        let rows = skill_rows(&rows);
        assert_eq!(rows.len(), 3);
        assert!(
            rows.iter().all(|(_, s)| matches!(s, RowStatus::Denied(_))),
            "{rows:?}"
        );
    }
}

#[test]
fn skill_grant_entries_are_typed_when_the_config_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    for bad in ["../other", "/abs", "", "loader:Bad Name", "shared:"] {
        let text = format!("[grants.probe]\nskills = [{bad:?}]\n");
        let err = Config::parse(&text, &dir.path().join("guild.toml"), dir.path())
            .expect_err("malformed skill grant accepted")
            .to_string();
        assert!(err.contains("skills"), "{bad:?}: {err}");
    }
}

#[test]
fn only_a_specialist_may_be_marked_retryable() {
    let path = Path::new("/plugins/probe");
    assert!(!manifest().plugin.retryable, "not retryable unless marked");
    let marked = FULL.replace(
        "component = \"probe.wasm\"\n",
        "component = \"probe.wasm\"\nretryable = true\n",
    );
    assert!(
        Manifest::parse(&marked, path)
            .expect("a specialist may be")
            .plugin
            .retryable
    );
    let connector = "[plugin]\nname = \"echo\"\nversion = \"1.0.0\"\nkind = \"connector\"\n\
                     component = \"echo.wasm\"\nretryable = true\n";
    let refused = Manifest::parse(connector, path)
        .expect_err("a connector may not be")
        .to_string();
    assert!(
        refused.contains("plugin.retryable") && refused.contains("connector"),
        "{refused}"
    );
}
