//! `[serve]` settings of `guild.toml`: how `guild serve` bounds the clients it takes. Every
//! limit has a default written next to its field; the operator raises or lowers it here, never
//! through the environment.

use serde::Deserialize;

/// `[serve]`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ServeSettings {
    /// Serve streamable HTTP without a bearer token (default false: a token is generated into
    /// the data dir even on loopback). Only loopback addresses may go without one, and a
    /// server started so says it at warning level on every start.
    #[serde(default)]
    pub no_token: bool,
    /// MCP sessions open at once over HTTP (default 64); a new session past it is refused
    /// with 503 until an idle one expires or a client closes its own.
    #[serde(default = "d_max_sessions")]
    pub max_sessions: usize,
    /// Seconds an HTTP session may go without a request before it is closed (default 900).
    #[serde(default = "d_session_idle_s")]
    pub session_idle_s: u64,
    /// Largest request body (HTTP) or message line (stdio) accepted, KiB (default 4096).
    #[serde(default = "d_max_body_kb")]
    pub max_body_kb: u32,
    /// Deepest nesting of arrays and objects accepted in a request (default 64).
    #[serde(default = "d_max_json_depth")]
    pub max_json_depth: u32,
    /// Seconds a headless host (`guild serve --host`, what a stdio `guild serve` starts) stays
    /// up with no client attached and no task running (default 900; 0 = never exits on its own).
    #[serde(default = "d_idle_exit_s")]
    pub idle_exit_s: u64,
    /// While a host loads its plugins at start-up, how long a `tools/list` or `prompts/list`
    /// waits for the load before it answers with the specialists named as loading, ms (default
    /// 10000; 0 = answer at once). A warm start then lists the whole roster at once, also to
    /// clients that ignore `list_changed`; a long first compile does not hold a client up.
    #[serde(default = "d_load_wait_ms")]
    pub load_wait_ms: u64,
}

fn d_max_sessions() -> usize {
    64
}
fn d_session_idle_s() -> u64 {
    900
}
fn d_max_body_kb() -> u32 {
    4096
}
fn d_max_json_depth() -> u32 {
    64
}
fn d_idle_exit_s() -> u64 {
    900
}
fn d_load_wait_ms() -> u64 {
    10_000
}

impl Default for ServeSettings {
    fn default() -> Self {
        Self {
            no_token: false,
            max_sessions: d_max_sessions(),
            session_idle_s: d_session_idle_s(),
            max_body_kb: d_max_body_kb(),
            max_json_depth: d_max_json_depth(),
            idle_exit_s: d_idle_exit_s(),
            load_wait_ms: d_load_wait_ms(),
        }
    }
}

impl ServeSettings {
    /// Checks ranges; the error names the key (`(key, message)`).
    pub fn validate(&self) -> Result<(), (String, String)> {
        let out_of = |key: &str, value: u64, low: u64, high: u64| {
            (!(low..=high).contains(&value)).then(|| {
                (
                    format!("serve.{key}"),
                    format!("{value} is out of range: expected {low} to {high}"),
                )
            })
        };
        let checks = [
            out_of("max_sessions", self.max_sessions as u64, 1, 100_000),
            out_of("session_idle_s", self.session_idle_s, 1, 7 * 24 * 3600),
            out_of("max_body_kb", self.max_body_kb.into(), 64, 1024 * 1024),
            // serde_json itself stops at 128 levels.
            out_of("max_json_depth", self.max_json_depth.into(), 4, 128),
            out_of("idle_exit_s", self.idle_exit_s, 0, 30 * 24 * 3600),
            out_of("load_wait_ms", self.load_wait_ms, 0, 600_000),
        ];
        match checks.into_iter().flatten().next() {
            Some(bad) => Err(bad),
            None => Ok(()),
        }
    }

    /// The largest body or line accepted, bytes.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_kb as usize * 1024
    }
}

/// How deeply `bytes` (JSON text) nests arrays and objects, counted without parsing it, and
/// stopping as soon as `limit` is passed (so a hostile body costs one pass at most). Brackets
/// inside strings do not count.
pub fn json_depth_exceeds(bytes: &[u8], limit: u32) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0u32, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Whether a parsed JSON value nests arrays and objects more than `limit` levels deep (the
/// value itself counts as the first level when it is one).
pub fn value_depth_exceeds(value: &serde_json::Value, limit: u32) -> bool {
    use serde_json::Value;
    let children: Box<dyn Iterator<Item = &Value>> = match value {
        Value::Array(items) => Box::new(items.iter()),
        Value::Object(map) => Box::new(map.values()),
        _ => return false,
    };
    if limit == 0 {
        return true;
    }
    // serde_json parses at most 128 levels, so this recursion is bounded.
    children
        .into_iter()
        .any(|v| value_depth_exceeds(v, limit - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_documented_and_valid() {
        let d = ServeSettings::default();
        assert_eq!(
            (
                d.no_token,
                d.max_sessions,
                d.session_idle_s,
                d.max_body_kb,
                d.max_json_depth,
                d.idle_exit_s,
                d.load_wait_ms
            ),
            (false, 64, 900, 4096, 64, 900, 10_000)
        );
        assert!(d.validate().is_ok());
    }

    #[test]
    fn out_of_range_values_name_their_key() {
        for (bad, key) in [
            (
                ServeSettings {
                    max_sessions: 0,
                    ..ServeSettings::default()
                },
                "serve.max_sessions",
            ),
            (
                ServeSettings {
                    session_idle_s: 0,
                    ..ServeSettings::default()
                },
                "serve.session_idle_s",
            ),
            (
                ServeSettings {
                    max_body_kb: 0,
                    ..ServeSettings::default()
                },
                "serve.max_body_kb",
            ),
            (
                ServeSettings {
                    max_json_depth: 1000,
                    ..ServeSettings::default()
                },
                "serve.max_json_depth",
            ),
            (
                ServeSettings {
                    idle_exit_s: 365 * 24 * 3600,
                    ..ServeSettings::default()
                },
                "serve.idle_exit_s",
            ),
        ] {
            assert_eq!(bad.validate().expect_err("out of range").0, key);
        }
    }

    #[test]
    fn depth_counts_brackets_outside_strings_only() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(!json_depth_exceeds(nested(64).as_bytes(), 64));
        assert!(json_depth_exceeds(nested(65).as_bytes(), 64));
        assert!(!json_depth_exceeds(br#"{"a":{"b":[1,2,{"c":3}]}}"#, 4));
        assert!(json_depth_exceeds(br#"{"a":{"b":[1,2,{"c":3}]}}"#, 3));
        // Brackets in strings, escaped quotes included, are text.
        let text = format!(r#"{{"s":"\"{}"}}"#, "[".repeat(500));
        assert!(!json_depth_exceeds(text.as_bytes(), 1));
    }

    #[test]
    fn parsed_values_are_measured_the_same_way() {
        let nested = |n: usize| -> serde_json::Value {
            serde_json::from_str(&format!("{}{}", "[".repeat(n), "]".repeat(n))).expect("json")
        };
        assert!(!value_depth_exceeds(&nested(64), 64));
        assert!(value_depth_exceeds(&nested(65), 64));
        let doc = serde_json::json!({"a": {"b": [1, 2, {"c": 3}]}});
        assert!(!value_depth_exceeds(&doc, 4));
        assert!(value_depth_exceeds(&doc, 3));
        assert!(!value_depth_exceeds(&serde_json::json!("text"), 0));
    }
}
