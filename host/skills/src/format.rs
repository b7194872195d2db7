//! The Agent Skills file format: `SKILL.md` = YAML frontmatter between `---` fences + a markdown
//! body, validated in one of two [`Mode`]s.
//!
//! **Strict** is the specification exactly (used by `guild skills check` and bundle packing):
//! every rule broken is an error and the skill does not load. **Lenient** is what a client loads
//! in practice: a name that does not match its folder, an over-long or oddly spelled name or
//! description, an unknown key or a badly typed optional field only warn; a missing fence, YAML
//! that does not parse or is not a mapping, and a missing or empty description skip the skill.
//! Every problem names the file, the field and the reason.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_yaml_ng::Value;

use super::safe_text::{disguising, first_disguising, neutralize};

/// File name of a skill's entry point inside its folder.
pub const SKILL_FILE: &str = "SKILL.md";
/// Longest `name`, characters.
pub const MAX_NAME: usize = 64;
/// Longest `description`, characters.
pub const MAX_DESCRIPTION: usize = 1024;
/// Longest `compatibility`, characters.
pub const MAX_COMPATIBILITY: usize = 500;
/// The top-level keys the specification allows.
pub const ALLOWED_KEYS: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// A client extension (not in the specification): `true` keeps the skill out of the model's
/// catalog; it can still be loaded by name.
pub const DISABLE_MODEL_INVOCATION: &str = "disable-model-invocation";

/// How closely a skill must follow the specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The specification exactly: any violation is an error and the skill does not load.
    Strict,
    /// What a client loads in practice: cosmetic violations warn, fatal ones skip the skill.
    Lenient,
}

/// How bad a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The skill still loads.
    Warning,
    /// The skill does not load (or, in strict mode, violates the specification).
    Error,
}

/// One thing wrong with one skill (or source): the file, the field and the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The file (or source label) the problem is in.
    pub file: PathBuf,
    /// The frontmatter field, or empty for the file as a whole.
    pub field: String,
    /// What is wrong, and what was expected.
    pub reason: String,
    /// Whether the skill still loads.
    pub severity: Severity,
}

impl Problem {
    pub(crate) fn new(file: &Path, field: &str, reason: impl Into<String>, sev: Severity) -> Self {
        Self {
            file: file.to_owned(),
            field: field.to_owned(),
            reason: reason.into(),
            severity: sev,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        if self.field.is_empty() {
            write!(f, "{sev}: {}: {}", self.file.display(), self.reason)
        } else {
            write!(
                f,
                "{sev}: {}: field `{}`: {}",
                self.file.display(),
                self.field,
                self.reason
            )
        }
    }
}

/// The frontmatter of a skill that loaded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SkillMeta {
    /// The skill's name (in lenient mode possibly not equal to its folder name).
    pub name: String,
    /// What the skill does and when to use it.
    pub description: String,
    /// Licence name or file.
    pub license: Option<String>,
    /// Environment requirements.
    pub compatibility: Option<String>,
    /// Free string → string map.
    pub metadata: BTreeMap<String, String>,
    /// `allowed-tools`, split on whitespace; `None` when the field is absent.
    pub allowed_tools: Option<Vec<String>>,
    /// `disable-model-invocation: true`: not listed in the model's catalog, still loadable by
    /// name.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub disable_model_invocation: bool,
}

/// A parsed `SKILL.md`.
#[derive(Debug, Clone)]
pub struct ParsedSkill {
    /// The frontmatter.
    pub meta: SkillMeta,
    /// The markdown body, frontmatter stripped.
    pub body: String,
}

/// Checks a skill name as the specification's reference validator does: after NFKC
/// normalisation, 1–64 characters, each a letter, digit or `-` (Unicode letters are allowed:
/// `技能`, `навык`), nothing that changes when lowercased, no leading or trailing `-`, no `--`.
pub fn validate_skill_name(name: &str) -> Result<(), String> {
    let norm = nfkc(name);
    let len = norm.chars().count();
    if len == 0 || len > MAX_NAME {
        return Err(format!(
            "{name:?} has {len} characters; expected 1 to {MAX_NAME}"
        ));
    }
    if norm.to_lowercase() != norm {
        return Err(format!(
            "{name:?} must be lowercase (letters, digits and '-')"
        ));
    }
    if !norm.chars().all(|c| c.is_alphanumeric() || c == '-') {
        return Err(format!(
            "{name:?} may contain only lowercase letters, digits and '-'"
        ));
    }
    if norm.starts_with('-') || norm.ends_with('-') {
        return Err(format!("{name:?} must not start or end with '-'"));
    }
    if norm.contains("--") {
        return Err(format!("{name:?} must not contain '--'"));
    }
    Ok(())
}

/// True when `name` can key a catalog and be echoed into messages: not blank, no whitespace,
/// no control or invisible format character.
fn usable_name(name: &str) -> bool {
    !name.is_empty()
        && !name
            .chars()
            .any(|c| c.is_whitespace() || disguising(c, None))
}

/// The NFKC form of `s`: names and folder names are compared in this form, as the
/// specification's reference validator does.
pub fn nfkc(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    if s.is_ascii() {
        return s.to_owned(); // ASCII is its own NFKC form
    }
    s.nfkc().collect()
}

/// Splits `SKILL.md` text into (frontmatter YAML, body). The first line must be `---`; the
/// frontmatter ends at the next line that is exactly `---` (trailing spaces and `\r` ignored).
pub fn split_frontmatter(text: &str) -> Result<(&str, &str), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err("missing frontmatter: the file must start with a `---` line".to_owned());
    }
    let start = first.len();
    let mut offset = start;
    for line in lines {
        if line.trim_end() == "---" {
            return Ok((&text[start..offset], &text[offset + line.len()..]));
        }
        offset += line.len();
    }
    Err("missing closing `---` fence after the frontmatter".to_owned())
}

/// The frontmatter of `SKILL.md` text as a JSON object, verbatim: every field the author wrote,
/// as YAML reads it (what the MCP skills extension hands clients, so they can compare it with
/// the file). Bounded like every frontmatter read ([`super::bounds`]); an error says what is wrong.
pub fn frontmatter_json(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let (yaml, _) = split_frontmatter(text)?;
    super::bounds::check(yaml)?;
    let value = match super::plain_yaml::mapping(yaml) {
        Some(map) => Value::Mapping(map),
        None => serde_yaml_ng::from_str::<Value>(yaml).map_err(|e| {
            format!(
                "frontmatter is not valid YAML: {}",
                shift_line_numbers(&e.to_string(), 1)
            )
        })?,
    };
    match serde_json::to_value(&value) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err(format!(
            "frontmatter is {}, expected a mapping of keys to values",
            kind(&value)
        )),
        Err(e) => Err(format!("frontmatter has no JSON form: {e}")),
    }
}

/// Strips a frontmatter block if the text has one (bodies served by loaders may or may not).
pub fn strip_frontmatter(text: &str) -> &str {
    split_frontmatter(text).map_or(text, |(_, body)| body)
}

/// Parses and validates `SKILL.md` text. `file` is used in problems; `folder` is the name of
/// the skill's folder (`None` when the skill has no folder, as with skill-loader plugins).
/// Returns the skill when it loads in `mode`, and every problem found either way.
pub fn parse_skill_md(
    text: &str,
    file: &Path,
    folder: Option<&str>,
    mode: Mode,
) -> (Option<ParsedSkill>, Vec<Problem>) {
    let (parsed, problems) = check_skill_md(text, file, folder, mode);
    let skill = parsed.map(|(meta, body)| ParsedSkill {
        meta,
        body: body.to_owned(),
    });
    (skill, problems)
}

/// [`parse_skill_md`] with the body borrowed from `text` (a catalog scan needs no copy).
pub(crate) fn check_skill_md<'t>(
    text: &'t str,
    file: &Path,
    folder: Option<&str>,
    mode: Mode,
) -> (Option<(SkillMeta, &'t str)>, Vec<Problem>) {
    let mut p = Checker {
        file,
        mode,
        problems: Vec::new(),
    };
    let parsed = p.parse(text, folder);
    let fatal = p.problems.iter().any(|x| x.severity == Severity::Error);
    (if fatal { None } else { parsed }, p.problems)
}

struct Checker<'a> {
    file: &'a Path,
    mode: Mode,
    problems: Vec<Problem>,
}

impl Checker<'_> {
    /// A rule whose violation only warns in lenient mode.
    fn soft(&mut self, field: &str, reason: impl Into<String>) {
        let sev = match self.mode {
            Mode::Strict => Severity::Error,
            Mode::Lenient => Severity::Warning,
        };
        self.problems
            .push(Problem::new(self.file, field, reason, sev));
    }

    /// A rule whose violation skips the skill in either mode.
    fn hard(&mut self, field: &str, reason: impl Into<String>) {
        self.problems
            .push(Problem::new(self.file, field, reason, Severity::Error));
    }

    fn parse<'t>(&mut self, text: &'t str, folder: Option<&str>) -> Option<(SkillMeta, &'t str)> {
        let (yaml, body) = match split_frontmatter(text) {
            Ok(parts) => parts,
            Err(reason) => {
                self.hard("", reason);
                return None;
            }
        };
        // Before any parser: libyaml's time grows with the square of the nesting depth.
        if let Err(reason) = super::bounds::check(yaml) {
            self.hard("", reason);
            return None;
        }
        let read = match super::plain_yaml::mapping(yaml) {
            Some(map) => Ok(Value::Mapping(map)),
            None => serde_yaml_ng::from_str::<Value>(yaml),
        };
        let map = match read {
            Ok(Value::Mapping(map)) => map,
            Ok(other) => {
                self.hard(
                    "",
                    format!(
                        "frontmatter is {}, expected a mapping of keys to values",
                        kind(&other)
                    ),
                );
                return None;
            }
            Err(e) => {
                // The YAML starts on the file's second line (after `---`): count from the file.
                let reason = shift_line_numbers(&e.to_string(), 1);
                self.hard("", format!("frontmatter is not valid YAML: {reason}"));
                return None;
            }
        };
        let mut meta = SkillMeta::default();
        for (key, value) in &map {
            let Some(key) = key.as_str() else {
                let shown = scalar(key).unwrap_or_else(|| kind(key).to_owned());
                self.soft(
                    &shown,
                    format!("key {shown} is {}; keys must be strings", kind(key)),
                );
                continue;
            };
            match key {
                "name" => self.name(value, folder, &mut meta),
                "description" => self.description(value, &mut meta),
                "license" => meta.license = self.string(key, value, None),
                "compatibility" => {
                    meta.compatibility = self.string(key, value, Some(MAX_COMPATIBILITY));
                    if meta.compatibility.as_deref() == Some("") {
                        self.soft(
                            key,
                            format!("is empty; when present it must have 1 to {MAX_COMPATIBILITY} characters (or leave the key out)"),
                        );
                    }
                }
                DISABLE_MODEL_INVOCATION => self.disable_model_invocation(value, &mut meta),
                "metadata" => meta.metadata = self.metadata(value),
                "allowed-tools" => meta.allowed_tools = self.allowed_tools(value),
                other => self.soft(
                    other,
                    format!(
                        "unknown top-level key; the specification allows only {}",
                        ALLOWED_KEYS.join(", ")
                    ),
                ),
            }
        }
        if !map.contains_key("name") {
            match folder {
                Some(folder) => {
                    self.soft("name", format!("missing; using the folder name {folder:?}"));
                    meta.name = self.folder_name(folder).unwrap_or_default();
                }
                None => self.hard("name", "missing"),
            }
        }
        if !map.contains_key("description") {
            self.hard(
                "description",
                "missing; a skill without a description cannot be chosen",
            );
        }
        Some((meta, body))
    }

    fn name(&mut self, value: &Value, folder: Option<&str>, meta: &mut SkillMeta) {
        let Some(name) = value.as_str() else {
            match folder {
                Some(folder) => {
                    self.soft(
                        "name",
                        format!(
                            "is {}, expected a string; using the folder name",
                            kind(value)
                        ),
                    );
                    meta.name = self.folder_name(folder).unwrap_or_default();
                }
                None => self.hard("name", format!("is {}, expected a string", kind(value))),
            }
            return;
        };
        if let Err(reason) = validate_skill_name(name) {
            self.soft("name", reason);
        }
        // A name is echoed into catalogs and messages: never one that could break a line,
        // drive a terminal or hide what it says.
        meta.name = match (usable_name(name), folder) {
            (true, _) => name.to_owned(),
            (false, Some(folder)) => match self.folder_name(folder) {
                Some(folder) => folder,
                None => return,
            },
            (false, None) => {
                self.hard("name", format!("{name:?} cannot be used as a skill name"));
                return;
            }
        };
        if let Some(folder) = folder
            && nfkc(name) != nfkc(folder)
        {
            self.soft(
                "name",
                format!("{name:?} does not match its folder name {folder:?}"),
            );
        }
    }

    fn description(&mut self, value: &Value, meta: &mut SkillMeta) {
        let Some(text) = value.as_str() else {
            self.hard(
                "description",
                format!("is {}, expected a string", kind(value)),
            );
            return;
        };
        if text.trim().is_empty() {
            self.hard(
                "description",
                "is empty; a skill without a description cannot be chosen",
            );
            return;
        }
        let len = text.chars().count();
        // Lenient: a catalog lists the first MAX_DESCRIPTION characters and says so (see
        // `catalog::listed_description`).
        if len > MAX_DESCRIPTION && self.mode == Mode::Strict {
            self.soft(
                "description",
                format!("has {len} characters; expected at most {MAX_DESCRIPTION}"),
            );
        }
        meta.description = self.text("description", text);
    }

    /// The folder name as the skill's name, or a problem when it cannot be one.
    fn folder_name(&mut self, folder: &str) -> Option<String> {
        if usable_name(folder) {
            return Some(folder.to_owned());
        }
        self.hard(
            "name",
            format!("the folder name {folder:?} cannot be used as a skill name"),
        );
        None
    }

    /// `text` of field `key`, neutralized: a control or invisible format character is a
    /// violation (an error in strict mode) and is escaped (see [`super::safe_text`]).
    fn text(&mut self, key: &str, text: &str) -> String {
        if let Some(reason) = first_disguising(text, true) {
            self.soft(
                key,
                format!("{reason}; such characters can drive a terminal or disguise text (shown escaped)"),
            );
        }
        neutralize(text).into_owned()
    }

    fn string(&mut self, key: &str, value: &Value, max: Option<usize>) -> Option<String> {
        let Some(text) = value.as_str() else {
            self.soft(key, format!("is {}, expected a string", kind(value)));
            return scalar(value);
        };
        let len = text.chars().count();
        if let Some(max) = max
            && len > max
        {
            self.soft(key, format!("has {len} characters; expected at most {max}"));
        }
        Some(self.text(key, text))
    }

    fn metadata(&mut self, value: &Value) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let Value::Mapping(map) = value else {
            self.soft(
                "metadata",
                format!("is {}, expected a map of strings to strings", kind(value)),
            );
            return out;
        };
        for (k, v) in map {
            match (k.as_str(), v.as_str()) {
                (Some(k), Some(v)) => {
                    let field = format!("metadata.{}", neutralize(k));
                    let (k, v) = (self.text(&field, k), self.text(&field, v));
                    out.insert(k, v);
                }
                (None, _) => {
                    let key = scalar(k).unwrap_or_else(|| kind(k).to_owned());
                    self.soft(
                        &format!("metadata.{key}"),
                        format!("key {key} is {}; keys must be strings", kind(k)),
                    );
                    if let (Some(k), Some(v)) = (scalar(k), scalar(v)) {
                        out.insert(k, v);
                    }
                }
                (Some(_), None) => {
                    let key = scalar(k).unwrap_or_else(|| kind(k).to_owned());
                    self.soft(
                        &format!("metadata.{key}"),
                        format!("is {}, expected a string", kind(v)),
                    );
                    if let (Some(k), Some(v)) = (scalar(k), scalar(v)) {
                        out.insert(k, v);
                    }
                }
            }
        }
        out
    }

    fn disable_model_invocation(&mut self, value: &Value, meta: &mut SkillMeta) {
        if self.mode == Mode::Strict {
            self.soft(
                DISABLE_MODEL_INVOCATION,
                format!(
                    "is a client extension, not in the specification (which allows only {}); Guild honours it when it loads skills",
                    ALLOWED_KEYS.join(", ")
                ),
            );
        }
        match value {
            Value::Bool(b) => meta.disable_model_invocation = *b,
            other => self.soft(
                DISABLE_MODEL_INVOCATION,
                format!("is {}, expected true or false", kind(other)),
            ),
        }
    }

    fn allowed_tools(&mut self, value: &Value) -> Option<Vec<String>> {
        match value {
            Value::String(s) => Some(
                self.text("allowed-tools", s)
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect(),
            ),
            Value::Sequence(items) => {
                // Some clients write a YAML list; lenient mode accepts it.
                self.soft(
                    "allowed-tools",
                    "is a list, expected a space-separated string",
                );
                let tools: Vec<String> = items.iter().filter_map(scalar).collect();
                Some(
                    tools
                        .iter()
                        .map(|t| self.text("allowed-tools", t))
                        .collect(),
                )
            }
            other => {
                self.soft(
                    "allowed-tools",
                    format!("is {}, expected a space-separated string", kind(other)),
                );
                None
            }
        }
    }
}

/// Adds `offset` to every `line N` in a YAML error message (libyaml counts from the start of
/// the frontmatter, people count from the start of the file).
fn shift_line_numbers(message: &str, offset: u64) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("line ") {
        let (before, after) = rest.split_at(at + "line ".len());
        out.push_str(before);
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        match after[..digits].parse::<u64>() {
            Ok(n) => out.push_str(&(n + offset).to_string()),
            Err(_) => out.push_str(&after[..digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a map",
        Value::Tagged(_) => "a tagged value",
    }
}
