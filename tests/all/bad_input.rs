//! Bad input gets a clear error naming what and where; nothing else is affected.
//!
//! Each case is a data folder `tests/cases/<name>/` with a `plugin.toml`, optional files, and
//! `expected_error.txt` holding fragments (one per line) the load error must contain. A file
//! `component.from` names a built plugin whose component is copied in as `component.wasm`; a
//! file `component.sparse_mb` holding N makes `component.wasm` an N MiB sparse file (generated
//! here, never committed).

use std::path::Path;

use guild_host::{Config, Host};
use guild_tests::{engine, plugin_dir, repo_root};

fn copy_case(case: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(case).expect("case folder") {
        let entry = entry.expect("entry");
        let name = entry.file_name();
        if name == "component.from" {
            let from = std::fs::read_to_string(entry.path()).expect("read");
            let dir = plugin_dir(from.trim());
            let plugin = dir
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_owned();
            std::fs::copy(
                dir.join(format!("{plugin}.wasm")),
                to.join("component.wasm"),
            )
            .expect("copy");
        } else if name == "component.sparse_mb" {
            let mb: u64 = std::fs::read_to_string(entry.path())
                .expect("read")
                .trim()
                .parse()
                .expect("component.sparse_mb holds a number");
            sparse_file(&to.join("component.wasm"), mb * 1024 * 1024);
        } else {
            std::fs::copy(entry.path(), to.join(name)).expect("copy");
        }
    }
}

/// A file of `len` bytes that takes no disk space (its size is all the check reads).
fn sparse_file(path: &Path, len: u64) {
    let file = std::fs::File::create(path).expect("create");
    file.set_len(len).expect("set_len");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn component_size_ceiling_is_the_operators() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bloated = dir.path().join("bloated");
    std::fs::create_dir_all(&bloated).expect("mkdir");
    // The manifest asks for more than the operator allows: the operator's ceiling wins.
    std::fs::write(
        bloated.join("plugin.toml"),
        "[plugin]\nname = \"bloated\"\nversion = \"0.1.0\"\nkind = \"specialist\"\ncomponent = \"c.wasm\"\n\n[limits]\ncomponent_mb = 100\n",
    )
    .expect("write");
    sparse_file(&bloated.join("c.wasm"), 2 * 1024 * 1024);
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}]\ndata_dir = \"data\"\nmax_component_mb = 1\n",
        bloated.display().to_string(),
        plugin_dir("testing/echo").display().to_string()
    );
    let config = Config::parse(&text, &dir.path().join("guild.toml"), dir.path()).expect("config");
    let host = Host::with_engine(config, engine())
        .await
        .expect("host starts");
    let errors = host.load_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("c.wasm")
            && errors[0].contains("is 2097152 bytes")
            && errors[0].contains("limit of 1 MiB")
            && errors[0].contains("max_component_mb"),
        "{}",
        errors[0]
    );
    // Allowed: the echo component (well under 1 MiB) loads under the same ceiling.
    assert!(host.plugin("echo").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_case_fails_with_its_expected_error_and_others_still_load() {
    let cases = repo_root().join("tests").join("cases");
    let mut names: Vec<_> = std::fs::read_dir(&cases)
        .expect("tests/cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    names.sort();
    assert!(
        names.len() >= 6,
        "expected the bad-input cases, found {names:?}"
    );
    for case in names {
        let dir = tempfile::tempdir().expect("tempdir");
        let plugin = dir.path().join("plugin");
        copy_case(&case, &plugin);
        let good = plugin_dir("testing/echo");
        let text = format!(
            "[host]\nplugins = [{:?}, {:?}]\ndata_dir = \"data\"\n",
            plugin.display().to_string(),
            good.display().to_string()
        );
        let config =
            Config::parse(&text, &dir.path().join("guild.toml"), dir.path()).expect("config");
        let host = Host::with_engine(config, engine())
            .await
            .expect("host starts despite a bad plugin");
        let errors = host.load_errors();
        let name = case
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        assert_eq!(errors.len(), 1, "{name}: {errors:?}");
        let expected =
            std::fs::read_to_string(case.join("expected_error.txt")).expect("expected_error.txt");
        for fragment in expected.lines().filter(|l| !l.trim().is_empty()) {
            assert!(
                errors[0].contains(fragment.trim()),
                "{name}: error {:?} lacks {fragment:?}",
                errors[0]
            );
        }
        assert!(
            host.plugin("echo").is_some(),
            "{name}: the good plugin did not load"
        );
    }
}

#[test]
fn config_with_unknown_key_names_file_and_key() {
    let err = Config::parse(
        "[host]\nplugins_dir = \"p\"\n\n[grants.kb]\nfilesystem = []\n",
        Path::new("/etc/guild/guild.toml"),
        Path::new("/etc/guild"),
    )
    .expect_err("unknown key");
    let msg = err.to_string();
    assert!(
        msg.contains("/etc/guild/guild.toml")
            && msg.contains("filesystem")
            && msg.contains("grants.kb"),
        "{msg}"
    );
}

#[test]
fn two_pasted_host_tables_name_the_repeated_table_and_its_line() {
    let text =
        "[host]\nplugins = [\"notes\"]\n\n[grants.notes]\n\n[host]\nplugins = [\"helper\"]\n";
    let err = Config::parse(text, Path::new("guild.toml"), Path::new(".")).expect_err("twice");
    let msg = err.to_string();
    assert!(
        msg.contains("guild.toml")
            && msg.contains("`[host]`")
            && msg.contains("line 6")
            && !msg.contains("grants.notes"),
        "{msg}"
    );
    // A wrong value still names its key path and line.
    let err = Config::parse(
        "[host]\nplugins = [\"a\"]\n\n[serve]\nload_wait_ms = \"soon\"\n",
        Path::new("guild.toml"),
        Path::new("."),
    )
    .expect_err("wrong type");
    let msg = err.to_string();
    assert!(
        msg.contains("serve.load_wait_ms") && msg.contains("line 5"),
        "{msg}"
    );
}

#[test]
fn config_granting_root_refused() {
    let err = Config::parse(
        "[grants.kb]\nfs = [{ guest = \"/w\", host = \"/\", mode = \"rw\" }]\n",
        Path::new("guild.toml"),
        Path::new("."),
    )
    .expect_err("root grant");
    assert!(err.to_string().contains("never '/'"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_specialist_lists_the_roster() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = guild_tests::host(dir.path(), &["testing/probe", "testing/echo"], "").await;
    let err = h.task("nobody", "do it").await.expect_err("unknown");
    let msg = err.to_string();
    assert!(
        msg.contains("unknown specialist 'nobody'") && msg.contains("probe"),
        "{msg}"
    );
    let err = h
        .task("echo", "do it")
        .await
        .expect_err("a connector is not a specialist");
    assert!(
        err.to_string().contains("unknown specialist 'echo'"),
        "{err}"
    );
    let err = h.task("probe", "  ").await.expect_err("empty");
    assert!(err.to_string().contains("empty"), "{err}");
}
