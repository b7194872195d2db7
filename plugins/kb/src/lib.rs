//! Specialist `kb`: a markdown knowledge base in its `/workspace`. Runs the commands of a brief
//! in order and reports each result in markdown, with an artifact for every file it wrote. It
//! also keeps the team's decisions in team memory (`remember team`, `recall team`), which the
//! host validates and receipts.

mod command;
mod store;

use std::fmt::Write as _;

use guild_sdk::memory::{self, MemoryError, Scope};
use guild_sdk::{ArtifactRef, Brief, Report, RunError, Specialist, SpecialistInfo, log};

use command::Command;

/// Reads longer than this are cut in the report (the file itself is untouched).
const MAX_READ_BYTES: usize = 128 * 1024;

struct Kb;

impl Specialist for Kb {
    fn describe() -> SpecialistInfo {
        SpecialistInfo::new(
            "Knowledge base: saves, reads, lists and searches markdown documents. Brief: one \
             command per block: `save PATH` + content lines, `read PATH`, `list [DIR]`, \
             `search WORDS`, `remember team` + the whole team memory document, `recall team`.",
        )
    }

    fn run(brief: Brief) -> Result<Report, RunError> {
        let commands = command::parse(&brief.description).map_err(RunError::InvalidBrief)?;
        let mut details = String::new();
        let mut artifacts = Vec::new();
        let mut problems = Vec::new();
        for command in &commands {
            match execute(command, &mut details) {
                Ok(Some(artifact)) => artifacts.push(artifact),
                Ok(None) => {}
                Err(problem) => {
                    let _ = writeln!(details, "**error:** {problem}\n");
                    problems.push(problem);
                }
            }
        }
        let done = commands.len() - problems.len();
        let summary = format!(
            "ran {done} of {} kb command(s); wrote {} file(s)",
            commands.len(),
            artifacts.len()
        );
        let mut report = if problems.is_empty() {
            Report::satisfied(summary)
        } else if done > 0 {
            Report::partial(summary)
        } else {
            Report::failed(summary)
        };
        report = report.details(details.trim_end());
        for artifact in artifacts {
            report = report.artifact(artifact);
        }
        for problem in problems {
            report = report.open_issue(problem);
        }
        Ok(report)
    }
}

/// Runs one command, appending its markdown section; returns the artifact of a written file.
fn execute(command: &Command, out: &mut String) -> Result<Option<ArtifactRef>, String> {
    match command {
        Command::Save { path, content } => {
            store::save(path, content).map_err(|e| format!("cannot save `{path}`: {e}"))?;
            log::info(format!("saved {path} ({} bytes)", content.len()));
            let _ = writeln!(out, "### saved `{path}`\n\n{} bytes\n", content.len());
            Ok(Some(ArtifactRef::file(
                path.as_str(),
                "text/markdown",
                content.as_bytes(),
            )))
        }
        Command::Read { path } => {
            let text = store::read(path).map_err(|e| format!("cannot read `{path}`: {e}"))?;
            let shown = cut(&text, MAX_READ_BYTES);
            let _ = writeln!(out, "### `{path}`\n\n{shown}");
            if shown.len() < text.len() {
                let _ = writeln!(out, "\n_(cut at {MAX_READ_BYTES} bytes of {})_", text.len());
            }
            out.push('\n');
            Ok(None)
        }
        Command::List { dir } => {
            let shown = if dir.is_empty() { "." } else { dir.as_str() };
            let (files, truncated) =
                store::list(dir).map_err(|e| format!("cannot list `{shown}`: {e}"))?;
            let _ = writeln!(out, "### files in `{shown}` ({})\n", files.len());
            for (path, size) in &files {
                let _ = writeln!(out, "- `{path}` ({size} bytes)");
            }
            if files.is_empty() {
                out.push_str("_(none)_\n");
            }
            if truncated {
                let _ = writeln!(out, "- _(cut at {} files)_", store::MAX_ENTRIES);
            }
            out.push('\n');
            Ok(None)
        }
        Command::Remember { content } => {
            let update = memory::update(Scope::Team, content).map_err(|e| match e {
                MemoryError::Refused { errors, usage } => {
                    format!(
                        "team memory refused the update ({usage}): {}",
                        errors.join(" ")
                    )
                }
                MemoryError::Host(e) => format!("cannot update team memory: {e}"),
            })?;
            match (update.stored, &update.no_op) {
                (Some(version), _) => {
                    let _ = writeln!(out, "### team memory: stored version {version}\n");
                }
                (None, reason) => {
                    let reason = reason.as_deref().unwrap_or_default();
                    let _ = writeln!(out, "### team memory: unchanged ({reason})\n");
                }
            }
            for warning in &update.warnings {
                let _ = writeln!(out, "- warning: {warning}");
            }
            let _ = writeln!(out, "- usage: {}\n", update.usage);
            Ok(None)
        }
        Command::Recall => {
            let doc =
                memory::read(Scope::Team).map_err(|e| format!("cannot read team memory: {e}"))?;
            let _ = writeln!(
                out,
                "### team memory (version {}, {})\n\n{}",
                doc.version,
                doc.usage,
                doc.text.trim_end()
            );
            out.push('\n');
            Ok(None)
        }
        Command::Search { words } => {
            let query = words.join(" ");
            let (hits, truncated) =
                store::search(words).map_err(|e| format!("cannot search for `{query}`: {e}"))?;
            let _ = writeln!(out, "### search `{query}`: {} match(es)\n", hits.len());
            for hit in &hits {
                let _ = writeln!(out, "- `{}:{}`: {}", hit.path, hit.line, hit.text);
            }
            if truncated {
                let _ = writeln!(out, "- _(cut at {} matches)_", store::MAX_ENTRIES);
            }
            out.push('\n');
            Ok(None)
        }
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

guild_sdk::export_specialist!(Kb);
