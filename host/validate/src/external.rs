//! External confirmation of a receipt (`verify_receipt`, docs/receipts-and-validation.md), the pure part: which URL to
//! fetch, and what a fetched answer means. The caller does the fetch through the guarded HTTP
//! client (public http(s) only, no credentials), which also refuses private addresses.

use url::Url;

use super::{Check, CheckStatus};
use guild_receipts::Receipt;

/// Name of the checks this module produces.
pub const CHECK_NAME: &str = "verify_receipt";

/// The URL to fetch for `receipt`, or the check to report when there is nothing to fetch
/// (no URL: unknown) or the URL must not be fetched (not http(s), credentials, no host: error).
pub fn target(receipt: &Receipt) -> Result<Url, Check> {
    let Some(raw) = receipt
        .verifiable_url
        .as_deref()
        .filter(|u| !u.trim().is_empty())
    else {
        return Err(Check::new(
            CHECK_NAME,
            CheckStatus::Unknown,
            format!(
                "receipt {} has no verifiable_url: nothing to confirm externally",
                receipt.id
            ),
        ));
    };
    let refuse = |why: String| {
        Err(Check::new(
            CHECK_NAME,
            CheckStatus::Error,
            format!(
                "receipt {}: verifiable_url {raw:?} will not be fetched: {why}",
                receipt.id
            ),
        ))
    };
    let url = match Url::parse(raw) {
        Ok(u) => u,
        Err(e) => return refuse(format!("not a URL ({e})")),
    };
    if !matches!(url.scheme(), "http" | "https") {
        return refuse(format!("scheme {:?} is not http or https", url.scheme()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return refuse("it carries credentials".into());
    }
    if url.host().is_none() {
        return refuse("it has no host".into());
    }
    Ok(url)
}

/// What a fetched answer says: 2xx ⇒ passed (found), 404/410 ⇒ failed (not there), anything
/// else ⇒ unknown.
pub fn interpret(receipt: &Receipt, url: &Url, status: u16, body: &[u8]) -> Check {
    let (check_status, message) = match status {
        200..=299 => {
            let mentions = receipt
                .external_id
                .as_deref()
                .filter(|id| !id.is_empty() && contains(body, id.as_bytes()))
                .map(|id| format!("; the page mentions {id}"))
                .unwrap_or_default();
            (
                CheckStatus::Passed,
                format!(
                    "found: {url} answered {status} for receipt {} ({}){mentions}",
                    receipt.id, receipt.tool
                ),
            )
        }
        404 | 410 => (
            CheckStatus::Failed,
            format!(
                "not found: {url} answered {status} for receipt {} ({}), which the ledger \
                 records as {}",
                receipt.id, receipt.tool, receipt.status
            ),
        ),
        _ => (
            CheckStatus::Unknown,
            format!(
                "cannot confirm receipt {}: {url} answered {status}",
                receipt.id
            ),
        ),
    };
    Check::new(CHECK_NAME, check_status, message)
}

/// The check when the fetch itself failed (refused by the guard, network error, timeout).
pub fn fetch_failed(receipt: &Receipt, url: &Url, error: &str) -> Check {
    Check::new(
        CHECK_NAME,
        CheckStatus::Unknown,
        format!(
            "cannot confirm receipt {}: fetching {url} failed: {error}",
            receipt.id
        ),
    )
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
