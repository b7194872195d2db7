//! Caps on every plugin-supplied text field that reaches the receipts ledger, a task result or
//! a terminal, besides the answer itself (which `max_output_kb` bounds).
//!
//! Each field is decided on its own, by what a cut value would mean:
//! - free text — a connector's `error`, a specialist's `RunError` — is cut at
//!   [`MAX_ERROR_BYTES`] and ends with a visible `…[truncated: N bytes]` marker, so a reader
//!   knows it is not the whole message;
//! - `preview` is cut at [`MAX_PREVIEW_BYTES`] with the same marker;
//! - identifiers — `external_id` ([`MAX_EXTERNAL_ID_BYTES`]) and `verifiable_url`
//!   ([`MAX_URL_BYTES`]) — are refused rather than cut: a shortened id or URL would name a
//!   different object, so an oversized one is dropped (the receipt then has nothing to verify
//!   against, which validation reports) and the drop is logged with the plugin's name.

use guild_core::text::truncate;
use guild_core::types::ToolOutcome;

/// Longest error text kept (a connector's `error`, a specialist's `RunError`), bytes.
pub(crate) const MAX_ERROR_BYTES: usize = 4 * 1024;
/// Longest `preview` kept, bytes.
pub(crate) const MAX_PREVIEW_BYTES: usize = 200;
/// Longest `external_id` accepted, bytes; a longer one is dropped.
pub(crate) const MAX_EXTERNAL_ID_BYTES: usize = 256;
/// Longest `verifiable_url` accepted, bytes; a longer one is dropped.
pub(crate) const MAX_URL_BYTES: usize = 2 * 1024;

/// `text` cut to at most `max` bytes plus a marker naming the original size.
pub(crate) fn capped(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    format!("{}…[truncated: {} bytes]", truncate(text, max), text.len())
}

/// `value`, or `None` (logged) when it is longer than `max`.
fn refused_if_long(plugin: &str, field: &str, value: Option<String>, max: usize) -> Option<String> {
    match value {
        Some(v) if v.len() > max => {
            tracing::warn!(
                plugin,
                "dropped a {field} of {} bytes: over the limit of {max} bytes",
                v.len()
            );
            None
        }
        v => v,
    }
}

/// Applies every field cap to a connector's outcome.
pub(crate) fn cap_outcome(plugin: &str, mut o: ToolOutcome) -> ToolOutcome {
    o.error = o.error.map(|e| capped(&e, MAX_ERROR_BYTES));
    o.preview = o.preview.map(|p| capped(&p, MAX_PREVIEW_BYTES));
    o.external_id = refused_if_long(plugin, "external_id", o.external_id, MAX_EXTERNAL_ID_BYTES);
    o.verifiable_url = refused_if_long(plugin, "verifiable_url", o.verifiable_url, MAX_URL_BYTES);
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_with_a_marker_and_short_text_kept() {
        assert_eq!(capped("short", 10), "short");
        let cut = capped(&"e".repeat(10_000), MAX_ERROR_BYTES);
        assert!(cut.len() < MAX_ERROR_BYTES + 40, "{}", cut.len());
        assert!(cut.ends_with("…[truncated: 10000 bytes]"), "{cut}");
    }

    #[test]
    fn oversized_identifiers_are_dropped_and_fitting_ones_kept() {
        let o = ToolOutcome {
            output: String::new(),
            status: guild_core::types::CallStatus::Success,
            external_id: Some("i".repeat(MAX_EXTERNAL_ID_BYTES + 1)),
            verifiable_url: Some("http://x/".to_owned()),
            preview: None,
            error: None,
        };
        let o = cap_outcome("echo@0.1.0", o);
        assert_eq!(o.external_id, None);
        assert_eq!(o.verifiable_url.as_deref(), Some("http://x/"));
    }
}
