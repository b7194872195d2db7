//! The `[agent]` table of a prompt-defined specialist's `plugin.toml`, as the host hands it over
//! (`definition.settings`, a JSON object): which model alias, how many steps, sampling. Unknown
//! keys are refused so a misspelt setting is never silently ignored.

use serde::Deserialize;
use serde_json::Value;

/// Steps (completions) when `max_steps` is not set.
pub(crate) const DEFAULT_MAX_STEPS: u32 = 12;
/// The most steps a definition may ask for.
pub(crate) const MAX_STEPS: u32 = 50;

/// The settings, checked.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Settings {
    /// The model alias; the first granted alias when absent.
    #[serde(default)]
    pub(crate) model: Option<String>,
    /// Completions per run, 1 to [`MAX_STEPS`].
    #[serde(default = "default_steps")]
    pub(crate) max_steps: u32,
    /// Sampling temperature, 0 to 2.
    #[serde(default)]
    pub(crate) temperature: Option<f32>,
    /// A cap on each answer's tokens.
    #[serde(default)]
    pub(crate) max_tokens: Option<u32>,
    /// The one-line description the roster shows.
    #[serde(default)]
    pub(crate) description: Option<String>,
}

fn default_steps() -> u32 {
    DEFAULT_MAX_STEPS
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            model: None,
            max_steps: DEFAULT_MAX_STEPS,
            temperature: None,
            max_tokens: None,
            description: None,
        }
    }
}

impl Settings {
    /// Parses and checks the `[agent]` table; the error names the key and what was expected.
    pub(crate) fn parse(value: Value) -> Result<Self, String> {
        let settings: Self =
            serde_json::from_value(value).map_err(|e| format!("`[agent]` in plugin.toml: {e}"))?;
        if !(1..=MAX_STEPS).contains(&settings.max_steps) {
            return Err(format!(
                "`[agent] max_steps` in plugin.toml: expected 1 to {MAX_STEPS}, got {}",
                settings.max_steps
            ));
        }
        if settings
            .temperature
            .is_some_and(|t| !(0.0..=2.0).contains(&t))
        {
            return Err("`[agent] temperature` in plugin.toml: expected 0 to 2".to_owned());
        }
        if settings.max_tokens == Some(0) {
            return Err("`[agent] max_tokens` in plugin.toml: expected at least 1".to_owned());
        }
        if settings
            .model
            .as_deref()
            .is_some_and(|m| m.trim().is_empty())
        {
            return Err("`[agent] model` in plugin.toml: expected a model alias".to_owned());
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_values() {
        assert_eq!(Settings::parse(json!({})), Ok(Settings::default()));
        let s = Settings::parse(json!({"model": "fast", "max_steps": 4, "temperature": 0.2}))
            .expect("valid");
        assert_eq!((s.model.as_deref(), s.max_steps), (Some("fast"), 4));
    }

    #[test]
    fn refuses_what_does_not_fit() {
        let err = |v| Settings::parse(v).expect_err("refused");
        assert!(err(json!({"max_step": 4})).contains("unknown field `max_step`"));
        assert!(err(json!({"max_steps": 0})).contains("expected 1 to 50"));
        assert!(err(json!({"max_steps": 51})).contains("expected 1 to 50"));
        assert!(err(json!({"temperature": 3})).contains("temperature"));
        assert!(err(json!({"model": " "})).contains("model"));
        assert!(err(json!({"max_tokens": 0})).contains("max_tokens"));
    }
}
