//! Error types at the library boundary.
//!
//! Every variant names what was wrong and where: the file and key for configuration, the plugin
//! (and capability or target) for everything that happens at run time.

use std::path::PathBuf;

use thiserror::Error;

/// A `plugin.toml` that cannot be used.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ManifestError {
    /// The file could not be read.
    #[error("{}: cannot read: {message}", file.display())]
    Io {
        /// The manifest file.
        file: PathBuf,
        /// The OS error.
        message: String,
    },
    /// TOML syntax error, unknown key or wrong type.
    #[error("{}: {}{message}", file.display(), key_prefix(key))]
    Syntax {
        /// The manifest file.
        file: PathBuf,
        /// Dotted key nearest the error, if known.
        key: String,
        /// What the parser expected.
        message: String,
    },
    /// Well-formed TOML with a value that breaks a rule.
    #[error("{}: key `{key}`: {message}", file.display())]
    Invalid {
        /// The manifest file.
        file: PathBuf,
        /// Dotted key.
        key: String,
        /// What was expected.
        message: String,
    },
}

/// A `guild.toml` that cannot be used.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{}: cannot read: {message}", file.display())]
    Io {
        /// The config file.
        file: PathBuf,
        /// The OS error.
        message: String,
    },
    /// TOML syntax error, unknown key or wrong type.
    #[error("{}: {}{message}", file.display(), key_prefix(key))]
    Syntax {
        /// The config file.
        file: PathBuf,
        /// Dotted key nearest the error, if known.
        key: String,
        /// What the parser expected.
        message: String,
    },
    /// A key no table of that name takes (usually a typo).
    #[error(
        "{}: unknown key `{key}` {}; {expected}",
        file.display(),
        table_name(table)
    )]
    UnknownKey {
        /// The config file.
        file: PathBuf,
        /// Dotted path of the table holding the key (empty: the top level).
        table: String,
        /// The unknown key.
        key: String,
        /// What the table takes, as the parser says it (``expected one of `tools`, `http`, ...``).
        expected: String,
    },
    /// A value that breaks a rule.
    #[error("{}: key `{key}`: {message}", file.display())]
    Invalid {
        /// The config file (or `<built-in>` for programmatic configs).
        file: PathBuf,
        /// Dotted key.
        key: String,
        /// What was expected.
        message: String,
    },
}

fn table_name(table: &str) -> String {
    if table.is_empty() {
        "at the top level".to_owned()
    } else {
        format!("in [{table}]")
    }
}

fn key_prefix(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!("key `{key}`: ")
    }
}

/// A plugin that could not be loaded. The host keeps serving the plugins that did load.
#[derive(Debug, Error)]
pub enum LoadError {
    /// The manifest is invalid.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The operator's grant for this plugin is invalid.
    #[error("plugin '{plugin}': grant: {message}")]
    Grant {
        /// Plugin name.
        plugin: String,
        /// What is wrong, naming the key.
        message: String,
    },
    /// The plugin folder itself may not be loaded (e.g. a link out of the plugins folder).
    #[error("{message}")]
    Folder {
        /// The plugin folder.
        dir: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The component file is missing, unreadable, not wasm, or does not compile.
    #[error("plugin '{plugin}': component {}: {message}", file.display())]
    Component {
        /// Plugin name.
        plugin: String,
        /// The component file.
        file: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The component does not implement the world its manifest declares.
    #[error(
        "plugin '{plugin}': component {} is not a {kind}: {message}",
        file.display()
    )]
    WrongWorld {
        /// Plugin name.
        plugin: String,
        /// The component file.
        file: PathBuf,
        /// Declared kind.
        kind: crate::manifest::PluginKind,
        /// Missing exports or imports that cannot be satisfied.
        message: String,
    },
    /// A file the plugin's folder defines beside its component (`prompt.md`) cannot be used.
    #[error("plugin '{plugin}': {}: {message}", file.display())]
    Definition {
        /// Plugin name.
        plugin: String,
        /// The file.
        file: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Two plugins (or a plugin and an alias) claim the same name.
    #[error("plugin '{plugin}': name is already taken by {other}")]
    Duplicate {
        /// Plugin name.
        plugin: String,
        /// Who has it.
        other: String,
    },
}

/// Why a task could not be started at all. Failures *inside* a task are results, not errors.
#[derive(Debug, Error)]
pub enum DispatchError {
    /// No specialist of that name; the message lists the roster.
    #[error("unknown specialist '{name}'; available: {}", roster_line(roster))]
    UnknownSpecialist {
        /// The requested name.
        name: String,
        /// Names on the roster.
        roster: Vec<String>,
    },
    /// The specialist exists but is not on the roster.
    #[error("specialist '{name}' is not available: {reason}")]
    Unavailable {
        /// The requested name.
        name: String,
        /// Why (e.g. a required connector is not loaded).
        reason: String,
    },
    /// The batch is empty, too large, or mixes single and batch fields.
    #[error("invalid batch: {0}")]
    InvalidBatch(String),
    /// The brief is empty or too large.
    #[error("invalid task description: {0}")]
    InvalidDescription(String),
    /// The caller's root anchor (completion criteria, constraints) breaks a rule; the message
    /// names the field and the item.
    #[error("invalid root anchor: {0}")]
    InvalidAnchor(String),
    /// Every task slot is taken and the queue is full: try again later.
    #[error(
        "the host is busy: {running} tasks are running (`[dispatch] max_running_tasks`) and \
         {queued} are waiting (`[dispatch] max_queued_tasks`); try again when one has finished, \
         or raise those settings in guild.toml"
    )]
    Busy {
        /// Tasks running (the setting's value).
        running: usize,
        /// Tasks waiting (the setting's value).
        queued: usize,
    },
}

fn roster_line(roster: &[String]) -> String {
    if roster.is_empty() {
        "(no specialists loaded)".to_owned()
    } else {
        roster.join(", ")
    }
}
