//! What a plugin logs, as the operator's log shows it (docs/security.md): a message of several
//! lines (a Python traceback, a JavaScript stack) becomes one event per line, each escaped and
//! carrying the plugin, so the author reads the traceback as written and a guest still cannot
//! drive the terminal; a message of very many lines is cut with a count of the rest. Also the
//! capture of this test binary's log that tests/all/secret_echo.rs reads.

use guild_tests::{host, probe};
use serde_json::json;

/// Every log line of this test binary, as text (installed once, for all its tests).
pub(crate) fn captured_logs() -> &'static std::sync::Mutex<Vec<u8>> {
    static LOGS: std::sync::OnceLock<&'static std::sync::Mutex<Vec<u8>>> =
        std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let logs: &'static std::sync::Mutex<Vec<u8>> = Box::leak(Box::default());
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .with_writer(move || LogWriter(logs))
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
        logs
    })
}

struct LogWriter(&'static std::sync::Mutex<Vec<u8>>);

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut logs = self.0.lock().unwrap_or_else(|p| p.into_inner());
        logs.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The captured log lines that contain `tag`.
fn lines_with(tag: &str) -> Vec<String> {
    let logs = captured_logs().lock().unwrap_or_else(|p| p.into_inner());
    String::from_utf8_lossy(&logs)
        .lines()
        .filter(|l| l.contains(tag))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_traceback_is_logged_line_by_line_each_escaped() {
    captured_logs();
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), &["testing/probe"], "").await;
    let traceback = "tb-lines-1 run raised:\n\
                     tb-lines-2 Traceback (most recent call last):\r\n\
                     tb-lines-3   File \"app.py\", line 3, in run\n\
                     tb-lines-4 \u{1b}[31mTypeError: boom\u{7}\n";
    let p = probe(
        &h,
        json!({"op": "log", "text": traceback, "level": "error"}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    let lines = lines_with("tb-lines-");
    assert_eq!(lines.len(), 4, "{lines:#?}");
    for (i, line) in lines.iter().enumerate() {
        assert!(
            line.contains(&format!("tb-lines-{} ", i + 1))
                && line.contains("ERROR")
                && line.contains("probe"),
            "{line}"
        );
        assert!(!line.contains("\\n") && !line.contains("\\r"), "{line}");
    }
    assert!(
        lines[2].contains("  File \"app.py\", line 3, in run"),
        "{}",
        lines[2]
    );
    // Control characters are escaped: the guest cannot recolour the operator's terminal.
    assert!(
        lines[3].contains("\\x1b[31mTypeError: boom\\x07") && !lines[3].contains('\u{1b}'),
        "{}",
        lines[3]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_of_very_many_lines_is_cut_with_a_count() {
    captured_logs();
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), &["testing/probe"], "").await;
    let p = probe(
        &h,
        json!({"op": "log", "text": "many-lines-x\n", "repeat": 250}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    assert_eq!(lines_with("many-lines-x").len(), 200);
    let rest = lines_with("more lines not shown");
    assert!(
        rest.iter()
            .any(|l| l.contains("[50 more lines not shown]") && l.contains("probe")),
        "{rest:#?}"
    );
}
