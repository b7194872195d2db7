//! Test specialist `probe`: performs the one operation its brief describes as JSON
//! on its first line (`{"op": "read", "path": "/data/x"}`, ...) and reports `{"ok", "value", "error"}` in `details`,
//! with outcome satisfied when the operation succeeded and failed otherwise. The op
//! `report_as` returns the report its brief spells out instead; any other op with
//! `"claim": {"tool", "text"}` adds that claim (without an external id) to its report.

mod fs_ops;
mod memory_ops;
mod ops;

use guild_sdk::{Brief, Report, RunError, Specialist, SpecialistInfo};
use serde_json::{Value, json};

struct Probe;

impl Specialist for Probe {
    fn describe() -> SpecialistInfo {
        SpecialistInfo::new("Test probe: performs the one operation its JSON brief describes.")
    }

    fn run(brief: Brief) -> Result<Report, RunError> {
        // The first line is the JSON operation; anything after it (updates appended by the
        // host to a restarted background task) is available to the `brief` op.
        let first = brief.description.lines().next().unwrap_or_default();
        let mut request: Value = serde_json::from_str(first)
            .map_err(|e| RunError::InvalidBrief(format!("the first line is not JSON: {e}")))?;
        if let Some(obj) = request.as_object_mut() {
            obj.insert("_brief".into(), Value::String(brief.description.clone()));
        }
        let Some(op) = request.get("op").and_then(Value::as_str) else {
            return Err(RunError::InvalidBrief(format!(
                "brief must be a JSON object with a string `op`; ops: {}",
                ops::NAMES
            )));
        };
        if let Some(ms) = request.get("delay_ms").and_then(Value::as_u64) {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        if op == "report_as" {
            return Ok(report_as(&request));
        }
        if op == "fail_big" {
            return Err(RunError::Failed(
                ops::fail_big(&request).map_err(RunError::InvalidBrief)?,
            ));
        }
        let result = ops::perform(op, &request).map_err(RunError::InvalidBrief)?;
        let (report, doc) = match result {
            Ok(value) => (
                Report::satisfied(format!("{op}: ok")),
                json!({ "ok": true, "value": value, "error": null }),
            ),
            Err(error) => (
                Report::failed(format!("{op}: {error}")),
                json!({ "ok": false, "value": null, "error": error }),
            ),
        };
        let report = match request.get("claim") {
            Some(claim) => {
                let field = |f: &str| claim.get(f).and_then(Value::as_str).unwrap_or_default();
                report.claim_without_id(field("tool"), field("text"))
            }
            None => report,
        };
        Ok(report.details(doc.to_string()))
    }
}

/// `{"op": "report_as", "summary", "details"?, "claim"?: {"tool", "text"}}`: a report whose
/// text is exactly what the brief says (hostile output tests), optionally claiming an
/// external effect through `tool` that no receipt backs.
fn report_as(request: &Value) -> Report {
    let text = |field: &str| {
        request
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let mut report = Report::satisfied(text("summary")).details(text("details"));
    if let Some(claim) = request.get("claim") {
        let field = |f: &str| claim.get(f).and_then(Value::as_str).unwrap_or_default();
        report = report.claim_without_id(field("tool"), field("text"));
    }
    report
}

guild_sdk::export_specialist!(Probe);
