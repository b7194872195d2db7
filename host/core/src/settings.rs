//! `[dispatch]` settings of `guild.toml`, each overridable by an environment variable of the
//! host process (read once, when the config file is loaded).

use serde::{Deserialize, Serialize};

/// How progress reports reach whoever started a task. A deployment setting, not a per-call choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Delivery {
    /// Kept for the next `check_task`.
    #[default]
    Quiet,
    /// Kept, and also pushed to subscribers as they arrive.
    Wakeup,
}

/// `[dispatch]`.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DispatchSettings {
    /// Wall-clock budget of one task, seconds; 0 turns it off (plugin limits still apply).
    #[serde(default = "d_timeout")]
    pub task_timeout_s: u32,
    /// Largest batch accepted.
    #[serde(default = "d_batch_max")]
    pub batch_max_size: usize,
    /// Batch children running at once; the rest queue.
    #[serde(default = "d_concurrency")]
    pub batch_concurrency: usize,
    /// After this many task invocations in one session, results carry a one-time warning; 0 = off.
    #[serde(default = "d_billable")]
    pub billable_threshold: u32,
    /// Report delivery mode.
    #[serde(default)]
    pub delivery: Delivery,
    /// Tool calls one task may make, refused ones included; past it every call is refused.
    #[serde(default = "d_max_tool_calls")]
    pub max_tool_calls: u32,
    /// Tasks (specialist instances) running at once in this host, every front door and
    /// background tasks together; the next ones wait in the queue.
    #[serde(default = "d_max_running_tasks")]
    pub max_running_tasks: usize,
    /// Tasks that may wait for a running slot; past it a task is refused as busy at once.
    #[serde(default = "d_max_queued_tasks")]
    pub max_queued_tasks: usize,
    /// How long a mutating call's outcome may wait, milliseconds, for the task's next write of
    /// the receipts ledger to share its commit (one fsync per call instead of two) before it
    /// is committed alone; 0 commits it at once. The task's result always waits for it.
    #[serde(default = "d_outcome_linger_ms")]
    pub outcome_linger_ms: u32,
}

/// The largest `outcome_linger_ms`: an effect may stand that long without a durable outcome.
pub const MAX_OUTCOME_LINGER_MS: u32 = 10_000;

fn d_timeout() -> u32 {
    300
}
fn d_batch_max() -> usize {
    8
}
fn d_concurrency() -> usize {
    3
}
fn d_billable() -> u32 {
    15
}
fn d_max_tool_calls() -> u32 {
    256
}
fn d_max_running_tasks() -> usize {
    8
}
fn d_max_queued_tasks() -> usize {
    32
}
fn d_outcome_linger_ms() -> u32 {
    20
}

impl Default for DispatchSettings {
    fn default() -> Self {
        Self {
            task_timeout_s: d_timeout(),
            batch_max_size: d_batch_max(),
            batch_concurrency: d_concurrency(),
            billable_threshold: d_billable(),
            delivery: Delivery::Quiet,
            max_tool_calls: d_max_tool_calls(),
            max_running_tasks: d_max_running_tasks(),
            max_queued_tasks: d_max_queued_tasks(),
            outcome_linger_ms: d_outcome_linger_ms(),
        }
    }
}

/// The environment variables that override `[dispatch]`, with the key each one replaces.
pub const ENV_OVERRIDES: [(&str, &str); 6] = [
    ("GUILD_TASK_TIMEOUT_S", "task_timeout_s"),
    ("GUILD_BATCH_MAX_SIZE", "batch_max_size"),
    ("GUILD_BATCH_CONCURRENCY", "batch_concurrency"),
    ("GUILD_BILLABLE_THRESHOLD", "billable_threshold"),
    ("GUILD_REPORT_DELIVERY", "delivery"),
    ("GUILD_MAX_TOOL_CALLS", "max_tool_calls"),
];

impl DispatchSettings {
    /// Applies overrides from `lookup` (the process environment in production); an unparsable
    /// value is an error naming the variable.
    pub fn apply_overrides(
        &mut self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<(), String> {
        for (var, key) in ENV_OVERRIDES {
            let Some(value) = lookup(var) else { continue };
            let bad = || format!("environment variable {var}={value:?} is not a valid `{key}`");
            match key {
                "task_timeout_s" => self.task_timeout_s = value.parse().map_err(|_| bad())?,
                "batch_max_size" => self.batch_max_size = value.parse().map_err(|_| bad())?,
                "batch_concurrency" => self.batch_concurrency = value.parse().map_err(|_| bad())?,
                "billable_threshold" => {
                    self.billable_threshold = value.parse().map_err(|_| bad())?
                }
                "max_tool_calls" => self.max_tool_calls = value.parse().map_err(|_| bad())?,
                _ => {
                    self.delivery = match value.as_str() {
                        "quiet" => Delivery::Quiet,
                        "wakeup" => Delivery::Wakeup,
                        _ => return Err(bad()),
                    }
                }
            }
        }
        self.validate()
    }

    /// Checks ranges.
    pub fn validate(&self) -> Result<(), String> {
        if self.batch_max_size == 0 || self.batch_max_size > 1024 {
            return Err("`batch_max_size` must be 1 to 1024".into());
        }
        if self.batch_concurrency == 0 || self.batch_concurrency > 64 {
            return Err("`batch_concurrency` must be 1 to 64".into());
        }
        if self.max_tool_calls == 0 || self.max_tool_calls > 100_000 {
            return Err("`max_tool_calls` must be 1 to 100000".into());
        }
        if self.max_running_tasks == 0 || self.max_running_tasks > 1024 {
            return Err("`max_running_tasks` must be 1 to 1024".into());
        }
        if self.max_queued_tasks > 100_000 {
            return Err("`max_queued_tasks` must be 0 to 100000".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_design() {
        let d = DispatchSettings::default();
        assert_eq!(
            (
                d.task_timeout_s,
                d.batch_max_size,
                d.batch_concurrency,
                d.billable_threshold
            ),
            (300, 8, 3, 15)
        );
        assert_eq!(d.delivery, Delivery::Quiet);
        assert_eq!(d.max_tool_calls, 256);
        assert_eq!((d.max_running_tasks, d.max_queued_tasks), (8, 32));
    }

    #[test]
    fn task_slots_must_allow_one_task_and_bound_the_queue() {
        let ok = DispatchSettings {
            max_running_tasks: 1,
            max_queued_tasks: 0,
            ..DispatchSettings::default()
        };
        assert!(ok.validate().is_ok());
        let none = DispatchSettings {
            max_running_tasks: 0,
            ..DispatchSettings::default()
        };
        assert!(
            none.validate()
                .expect_err("0")
                .contains("max_running_tasks")
        );
        let huge = DispatchSettings {
            max_queued_tasks: 1_000_000,
            ..DispatchSettings::default()
        };
        assert!(
            huge.validate()
                .expect_err("huge")
                .contains("max_queued_tasks")
        );
    }

    #[test]
    fn environment_overrides_every_setting() {
        let mut d = DispatchSettings::default();
        let env = |k: &str| match k {
            "GUILD_TASK_TIMEOUT_S" => Some("0".to_owned()),
            "GUILD_BATCH_MAX_SIZE" => Some("4".to_owned()),
            "GUILD_BATCH_CONCURRENCY" => Some("2".to_owned()),
            "GUILD_BILLABLE_THRESHOLD" => Some("1".to_owned()),
            "GUILD_REPORT_DELIVERY" => Some("wakeup".to_owned()),
            "GUILD_MAX_TOOL_CALLS" => Some("9".to_owned()),
            _ => None,
        };
        d.apply_overrides(env).expect("valid overrides");
        assert_eq!(
            (
                d.task_timeout_s,
                d.batch_max_size,
                d.batch_concurrency,
                d.billable_threshold
            ),
            (0, 4, 2, 1)
        );
        assert_eq!(d.delivery, Delivery::Wakeup);
        assert_eq!(d.max_tool_calls, 9);
    }

    #[test]
    fn bad_override_names_the_variable() {
        let mut d = DispatchSettings::default();
        let err = d
            .apply_overrides(|k| (k == "GUILD_BATCH_CONCURRENCY").then(|| "many".to_owned()))
            .expect_err("not a number");
        assert!(
            err.contains("GUILD_BATCH_CONCURRENCY") && err.contains("batch_concurrency"),
            "{err}"
        );
        let err = d
            .apply_overrides(|k| (k == "GUILD_BATCH_MAX_SIZE").then(|| "0".to_owned()))
            .expect_err("out of range");
        assert!(err.contains("batch_max_size"), "{err}");
        let err = DispatchSettings::default()
            .apply_overrides(|k| (k == "GUILD_MAX_TOOL_CALLS").then(|| "0".to_owned()))
            .expect_err("no tool calls at all is out of range");
        assert!(err.contains("max_tool_calls"), "{err}");
    }
}

/// `[delegate]`: the limits every delegation tree runs under (docs/delegation.md). The
/// defaults are small on purpose: a tree two levels deep, four children per task, and a
/// tree-wide budget of 16 tasks, 256 tool calls, 200,000 model tokens and 10 minutes.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DelegateSettings {
    /// Deepest level a task may sit at; the top task is level 0.
    #[serde(default = "d_max_depth")]
    pub max_depth: u32,
    /// Children one task may start (a revised child uses no new slot).
    #[serde(default = "d_max_children")]
    pub max_children: u32,
    /// The whole tree's budget.
    #[serde(default)]
    pub budget: TreeBudget,
}

/// `[delegate.budget]`: what one tree may spend, its top task included.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TreeBudget {
    /// Tasks (every node is one).
    #[serde(default = "d_tasks")]
    pub tasks: u64,
    /// Tool calls of the tree's children.
    #[serde(default = "d_tool_calls")]
    pub tool_calls: u64,
    /// Model tokens of the tree's children.
    #[serde(default = "d_tokens")]
    pub tokens: u64,
    /// Wall-clock milliseconds of the tree's children.
    #[serde(default = "d_wall_ms")]
    pub wall_ms: u64,
}

fn d_max_depth() -> u32 {
    2
}
fn d_max_children() -> u32 {
    4
}
fn d_tasks() -> u64 {
    16
}
fn d_tool_calls() -> u64 {
    256
}
fn d_tokens() -> u64 {
    200_000
}
fn d_wall_ms() -> u64 {
    600_000
}

impl Default for TreeBudget {
    fn default() -> Self {
        Self {
            tasks: d_tasks(),
            tool_calls: d_tool_calls(),
            tokens: d_tokens(),
            wall_ms: d_wall_ms(),
        }
    }
}

impl Default for DelegateSettings {
    fn default() -> Self {
        Self {
            max_depth: d_max_depth(),
            max_children: d_max_children(),
            budget: TreeBudget::default(),
        }
    }
}

impl DelegateSettings {
    /// Checks the ranges; `Err((key, message))` names the bad key.
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.max_depth > 16 {
            return Err((
                "delegate.max_depth".into(),
                format!("{} is out of range: expected 0 to 16", self.max_depth),
            ));
        }
        if self.max_children > 64 {
            return Err((
                "delegate.max_children".into(),
                format!("{} is out of range: expected 0 to 64", self.max_children),
            ));
        }
        Ok(())
    }
}
