//! Test specialist `probe`: performs the one operation its brief describes as JSON
//! (`{"op": "read", "path": "/data/x"}`, ...) and reports `{"ok", "value", "error"}` in `details`,
//! with outcome satisfied when the operation succeeded and failed otherwise.

mod ops;

use guild_sdk::{Brief, Report, RunError, Specialist, SpecialistInfo};
use serde_json::{Value, json};

struct Probe;

impl Specialist for Probe {
    fn describe() -> SpecialistInfo {
        SpecialistInfo::new("Test probe: performs the one operation its JSON brief describes.")
    }

    fn run(brief: Brief) -> Result<Report, RunError> {
        let request: Value = brief.json()?;
        let Some(op) = request.get("op").and_then(Value::as_str) else {
            return Err(RunError::InvalidBrief(format!(
                "brief must be a JSON object with a string `op`; ops: {}",
                ops::NAMES
            )));
        };
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
        Ok(report.details(doc.to_string()))
    }
}

guild_sdk::export_specialist!(Probe);
