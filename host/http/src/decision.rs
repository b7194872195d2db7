//! How a capability decision is worded and traced: one message format and one tracing target
//! (`guild::capability`, fields plugin, capability, target, outcome and, for a refusal, reason)
//! for every layer that allows or refuses something. `GUILD_LOG=guild::capability=debug` shows
//! every decision the host makes.

/// A refusal message: `denied: plugin 'P' capability C target 'T': why`.
pub fn denied(plugin: &str, capability: &str, target: &str, why: &str) -> String {
    format!("denied: plugin '{plugin}' capability {capability} target '{target}': {why}")
}

/// Traces one decision with plugin, capability, target and outcome.
pub fn trace_decision(plugin: &str, capability: &str, target: &str, allowed: bool) {
    tracing::debug!(
        target: "guild::capability",
        plugin,
        capability,
        target,
        outcome = if allowed { "allowed" } else { "denied" },
    );
}

/// Traces one refusal with its reason.
pub fn trace_refusal(plugin: &str, capability: &str, target: &str, reason: &str) {
    tracing::debug!(
        target: "guild::capability",
        plugin,
        capability,
        target,
        outcome = "denied",
        reason,
    );
}
