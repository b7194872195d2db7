//! What the plugin's folder defines beside its component (the `definition` interface): its
//! name, its `prompt.md` and the manifest's `[agent]` table. A specialist defined by a prompt
//! (one shared component, many folders) reads who it is from here. Always available.
//!
//! ```no_run
//! use guild_sdk::definition;
//!
//! let settings = definition::settings();
//! let model = settings["model"].as_str().unwrap_or("default");
//! let prompt = definition::prompt().unwrap_or_default();
//! guild_sdk::log::info(format!("{} on {model}: {} chars of prompt", definition::name(), prompt.len()));
//! ```

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::bindings::specialist::guild::plugin::definition as raw;

/// The plugin's name (`[plugin] name` in `plugin.toml`).
pub fn name() -> String {
    raw::name()
}

/// The text of `prompt.md` in the plugin's folder, if there is one.
pub fn prompt() -> Option<String> {
    raw::prompt()
}

/// The manifest's `[agent]` table as a JSON object (an empty object when there is none, or when
/// the host's text is not a JSON object).
pub fn settings() -> Value {
    match serde_json::from_str(&raw::settings()) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => Value::Object(serde_json::Map::new()),
    }
}

/// The `[agent]` table deserialized as `T`; the error names what did not fit.
pub fn settings_as<T: DeserializeOwned>() -> Result<T, serde_json::Error> {
    serde_json::from_value(settings())
}
