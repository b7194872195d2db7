//! Human-readable rendering of library results, and the progress spinner.
//!
//! Every value a plugin supplied (reports, tool outcomes, receipts, descriptions, manifests'
//! strings) is escaped here: [`one_line`] for a value inside a line, [`block`] for multi-line
//! text, so guest text can neither drive the terminal nor forge a line of the output.

use std::time::Duration;

use guild_host::PluginInfo;
use guild_host::capability::RowStatus;
use guild_host::text::{for_terminal, one_line};
use guild_host::types::{CallStatus, TaskResult, TaskStatus};
use guild_host::validate::CheckStatus;
use indicatif::{ProgressBar, ProgressStyle};

/// A spinner on stderr; hidden automatically when stderr is not a terminal.
pub fn spinner(message: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
        bar.set_style(style);
    }
    bar.set_message(message.to_owned());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// A task result as a person reads it: the headline, then the error, the specialist's report,
/// the validation, the receipts, the warning and the tool calls, each when there is one.
pub fn task_result(r: &TaskResult) -> String {
    let status = match r.status {
        TaskStatus::Succeeded => "succeeded",
        TaskStatus::Failed => "FAILED",
        TaskStatus::TimedOut => "TIMED OUT",
    };
    let mut out = format!(
        "task {} on {}: {status} in {} ms ({} tool call{})\n",
        r.task_id,
        r.specialist,
        r.usage.wall_ms,
        r.usage.tool_calls,
        if r.usage.tool_calls == 1 { "" } else { "s" }
    );
    if let Some(e) = &r.error {
        out.push_str(&format!("  error: {}\n", block(e, "    ")));
    }
    report_lines(r, &mut out);
    validation_lines(r, &mut out);
    receipt_lines(r, &mut out);
    if let Some(w) = &r.warning {
        out.push_str(&format!("  warning: {}\n", one_line(w)));
    }
    model_lines(r, &mut out);
    tool_call_lines(r, &mut out);
    out
}

/// One line per model alias the task called: calls and tokens (docs/models.md).
fn model_lines(r: &TaskResult, out: &mut String) {
    for (alias, u) in &r.usage.models {
        out.push_str(&format!(
            "  model {}: {} call{}, {} prompt + {} completion tokens\n",
            one_line(alias),
            u.calls,
            if u.calls == 1 { "" } else { "s" },
            u.prompt_tokens,
            u.completion_tokens
        ));
    }
}

/// The specialist's report: outcome, summary, details, artifacts, claims and open issues.
fn report_lines(r: &TaskResult, out: &mut String) {
    let Some(rep) = &r.report else { return };
    out.push_str(&format!(
        "  outcome: {:?}{}\n  summary: {}\n",
        rep.outcome,
        if rep.hard_passed {
            " (hard checks passed)"
        } else {
            ""
        },
        one_line(&rep.summary)
    ));
    if !rep.details.trim().is_empty() {
        out.push_str("  details:\n");
        for line in rep.details.lines() {
            out.push_str(&format!("    {}\n", for_terminal(line)));
        }
    }
    for a in &rep.artifacts {
        out.push_str(&format!(
            "  artifact: {} ({}, sha256 {})\n",
            one_line(&a.id),
            one_line(&a.mime_type),
            one_line(a.sha256.get(..12).unwrap_or(&a.sha256))
        ));
    }
    for c in &rep.claims {
        out.push_str(&format!(
            "  claim: {} {} — {}\n",
            one_line(&c.tool),
            one_line(c.external_id.as_deref().unwrap_or("-")),
            one_line(&c.text)
        ));
    }
    for i in &rep.open_issues {
        out.push_str(&format!("  open issue: {}\n", one_line(i)));
    }
}

/// The validation verdict and the checks that did not pass.
fn validation_lines(r: &TaskResult, out: &mut String) {
    let Some(v) = &r.validation else { return };
    out.push_str(&format!(
        "  validation: {}\n",
        v.verdict.as_str().to_uppercase()
    ));
    for c in v.checks.iter().filter(|c| c.status != CheckStatus::Passed) {
        out.push_str(&format!(
            "    {} {}: {}\n",
            c.status,
            c.name,
            one_line(&c.message)
        ));
    }
}

/// One line per receipt the task's calls left.
fn receipt_lines(r: &TaskResult, out: &mut String) {
    for rec in &r.receipts {
        out.push_str(&format!(
            "  receipt #{} {} {} {}{}\n",
            rec.sequence,
            rec.status.as_str(),
            one_line(&rec.operation),
            one_line(&rec.receipt_type),
            rec.external_id
                .as_deref()
                .map(|i| format!(" id={}", one_line(i)))
                .unwrap_or_default()
        ));
    }
}

/// One line per tool call: tool, plugin (or `refused`), status, and the outcome's id, URL and
/// error.
fn tool_call_lines(r: &TaskResult, out: &mut String) {
    for (i, c) in r.tool_calls.iter().enumerate() {
        let status = match c.outcome.status {
            CallStatus::Success => "success",
            CallStatus::Pending => "pending",
            CallStatus::Failed => "failed",
        };
        out.push_str(&format!(
            "  tool call {}: {} [{}{}] {status}",
            i + 1,
            one_line(&c.tool),
            if c.plugin.is_empty() {
                "refused"
            } else {
                &c.plugin
            },
            if c.mutating { ", mutating" } else { "" },
        ));
        if let Some(id) = &c.outcome.external_id {
            out.push_str(&format!(" id={}", one_line(id)));
        }
        if let Some(url) = &c.outcome.verifiable_url {
            out.push_str(&format!(" {}", one_line(url)));
        }
        if let Some(e) = &c.outcome.error {
            out.push_str(&format!(" error: {}", one_line(e)));
        }
        out.push('\n');
    }
}

/// The plugin table of `guild plugins list`.
pub fn plugin_table(plugins: &[PluginInfo]) -> String {
    let mut out = format!(
        "{:<12} {:<9} {:<12} {:<10} {}\n",
        "NAME", "VERSION", "KIND", "STATUS", "DESCRIPTION"
    );
    for p in plugins {
        let status = if p.unavailable.is_some() {
            "unavailable"
        } else {
            "ready"
        };
        out.push_str(&format!(
            "{:<12} {:<9} {:<12} {:<10} {}\n",
            p.name,
            p.version,
            p.kind.to_string(),
            status,
            one_line(&p.description)
        ));
    }
    out
}

/// The requested / granted / denied view of `guild plugins show`.
pub fn plugin_detail(p: &PluginInfo) -> String {
    plugin_detail_with(p, &capability_rows(&p.capabilities))
}

/// [`plugin_detail`] with its capability section given: `guild build` without a configuration
/// shows what the plugin requests ([`requested_rows`]) instead of grants it cannot know.
pub fn plugin_detail_with(p: &PluginInfo, capabilities: &str) -> String {
    let mut out = format!(
        "{}@{} ({})\n  {}\n  folder: {}\n  component sha256: {}\n",
        p.name,
        p.version,
        p.kind,
        one_line(&p.description),
        p.dir.display(),
        p.sha256
    );
    if !p.aliases.is_empty() {
        out.push_str(&format!("  aliases: {}\n", p.aliases.join(", ")));
    }
    if let Some(why) = &p.unavailable {
        out.push_str(&format!("  NOT ON THE ROSTER: {}\n", one_line(why)));
    }
    out.push_str(capabilities);
    if !p.tools.is_empty() {
        out.push_str("  tools:\n");
        for t in &p.tools {
            out.push_str(&format!(
                "    {}.{}{} — {}\n",
                p.name,
                one_line(&t.name),
                if t.mutating {
                    format!(
                        " (mutating: {} {})",
                        one_line(t.operation.as_deref().unwrap_or("?")),
                        one_line(t.receipt_type.as_deref().unwrap_or("?"))
                    )
                } else {
                    String::new()
                },
                one_line(&t.description)
            ));
        }
    }
    out
}

/// Requested vs granted vs denied, as `plugins show`, `bundle inspect` and `bundle install`
/// print them.
pub fn capability_rows(rows: &[guild_host::capability::CapabilityRow]) -> String {
    let mut out = String::from("  capabilities:\n");
    out.push_str(&format!(
        "    {:<9} {:<8} {:<36} {}\n",
        "AREA", "STATUS", "REQUESTED", "DETAIL"
    ));
    for row in rows {
        let (status, detail) = match &row.status {
            RowStatus::Granted(d) => ("granted", d.as_str()),
            RowStatus::Denied(d) => ("DENIED", d.as_str()),
            RowStatus::Unused => ("unused", "granted by the operator but not requested"),
        };
        out.push_str(&format!(
            "    {:<9} {:<8} {:<36} {}\n",
            row.capability,
            status,
            one_line(&row.target),
            one_line(detail)
        ));
    }
    out
}

/// What a plugin requests, not judged against any grant; `why` says why not.
pub fn requested_rows(rows: &[guild_host::capability::CapabilityRow], why: &str) -> String {
    let mut out = format!("  capabilities: not checked: {}\n", one_line(why));
    let requested: Vec<_> = rows
        .iter()
        .filter(|row| !matches!(row.status, RowStatus::Unused))
        .collect();
    if !requested.is_empty() {
        out.push_str(&format!("    {:<9} {}\n", "AREA", "REQUESTED"));
    }
    for row in requested {
        // A row without a target (limits) says what is requested in its detail.
        let what = match &row.status {
            RowStatus::Granted(d) | RowStatus::Denied(d) if row.target.is_empty() => d,
            _ => &row.target,
        };
        out.push_str(&format!("    {:<9} {}\n", row.capability, one_line(what)));
    }
    out
}

/// Who signed a bundle, and its digest.
pub fn bundle_signers(signers: &[guild_host::bundle::Signer], digest: &str) -> String {
    let mut out = format!("  bundle digest: sha256:{digest}\n");
    if signers.is_empty() {
        out.push_str("  signed by: nobody trusted (unsigned bundles allowed by [trust])");
    }
    for (i, s) in signers.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!(
            "  signed by: {} ({}{})",
            one_line(&s.principals.join(", ")),
            s.fingerprint,
            s.certified_by
                .as_ref()
                .map(|ca| format!(", certificate by CA {ca}"))
                .unwrap_or_default()
        ));
    }
    out
}

/// One receipt as a line of the ledger listing.
pub fn receipt_line(r: &guild_host::receipts::Receipt) -> String {
    format!(
        "#{:<4} {:<8} {} {} via {} ({}) task {}{}{}",
        r.sequence,
        r.status.as_str(),
        one_line(&r.operation),
        one_line(&r.receipt_type),
        one_line(&r.tool),
        one_line(&r.plugin),
        r.task_id,
        r.external_id
            .as_deref()
            .map(|i| format!(" id={}", one_line(i)))
            .unwrap_or_default(),
        r.error
            .as_deref()
            .map(|e| format!(" error: {}", one_line(e)))
            .unwrap_or_default(),
    )
}

/// Multi-line text escaped for the terminal, every line after the first indented by
/// `indent` so that no line of it can pass for a line of the surrounding output.
pub fn block(text: &str, indent: &str) -> String {
    for_terminal(text).replace('\n', &format!("\n{indent}"))
}
