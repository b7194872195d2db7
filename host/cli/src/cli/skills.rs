//! `guild skills list [--for SPECIALIST] | show NAME | read NAME PATH | check DIR | stats`.
//!
//! Every command but `check` starts a host (skill-loader plugins and specialists' manifests
//! come from it) and asks the skills library for the caller's catalog: the supervisor's from
//! `[skills]` in `guild.toml`, or one specialist's own with `--for`.

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use guild_host::HostSkills;
use guild_host::skills::{Catalog, Severity, TaskSkills, approx_tokens, check_dir};
use guild_host::text::{for_terminal, one_line};

use super::{print_json, start_host};

/// Skills subcommands.
#[derive(Subcommand)]
pub(crate) enum SkillsCommand {
    /// The catalog (level 1): name, description and source of every visible skill.
    List {
        /// Whose catalog: a specialist's own declared sources (default: the supervisor's).
        #[arg(long = "for", value_name = "SPECIALIST")]
        for_: Option<String>,
    },
    /// One skill: its frontmatter, resources and body (level 2).
    Show {
        /// Skill name.
        name: String,
        /// Whose catalog to look in.
        #[arg(long = "for", value_name = "SPECIALIST")]
        for_: Option<String>,
    },
    /// One resource file of a skill (level 3), written to stdout.
    Read {
        /// Skill name.
        name: String,
        /// Path relative to the skill folder.
        path: String,
        /// Whose catalog to look in.
        #[arg(long = "for", value_name = "SPECIALIST")]
        for_: Option<String>,
    },
    /// Check a skill folder (or a folder of them) against the specification, strictly. Exits
    /// non-zero on any violation, and when the folder holds no skill at all; one line per
    /// problem.
    Check {
        /// The folder.
        dir: PathBuf,
    },
    /// What progressive disclosure saves: catalog bytes vs the full skills (SKILL.md and
    /// resources).
    Stats {
        /// Whose catalog.
        #[arg(long = "for", value_name = "SPECIALIST")]
        for_: Option<String>,
    },
}

pub(crate) async fn run(config: &Path, cmd: SkillsCommand, json: bool) -> anyhow::Result<ExitCode> {
    match cmd {
        SkillsCommand::Check { dir } => check(&dir, json),
        SkillsCommand::List { for_ } => list(config, for_.as_deref(), json).await,
        SkillsCommand::Show { name, for_ } => show(config, for_.as_deref(), &name, json).await,
        SkillsCommand::Read { name, path, for_ } => {
            read(config, for_.as_deref(), &name, &path, json).await
        }
        SkillsCommand::Stats { for_ } => stats(config, for_.as_deref(), json).await,
    }
}

/// `skills list`: the catalog, with the skills hidden from the model and the problems on
/// stderr.
async fn list(config: &Path, specialist: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let (_, catalog) = open(config, specialist).await?;
    if json {
        let out = serde_json::json!({
            "skills": catalog.items(),
            "omitted": catalog.omitted(),
            "problems": catalog.problems,
        });
        print_json(&out)?;
    } else {
        out!("{}", for_terminal(&catalog.render()))?;
        let hidden: Vec<String> = catalog
            .iter()
            .filter(|e| e.meta.disable_model_invocation)
            .map(|e| e.name.clone())
            .collect();
        if !hidden.is_empty() {
            eprintln!(
                "not listed for the model (disable-model-invocation), loadable by name: {}",
                one_line(&hidden.join(", "))
            );
        }
        print_problems(&catalog);
    }
    Ok(ExitCode::SUCCESS)
}

/// `skills show`: one skill's frontmatter, size and body.
async fn show(
    config: &Path,
    specialist: Option<&str>,
    name: &str,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let (skills, catalog) = open(config, specialist).await?;
    let body = skills.load(&catalog, &TaskSkills::new(), name).await?;
    let entry = catalog.get(name).cloned();
    if json {
        let out = serde_json::json!({ "skill": entry.as_deref(), "body": body });
        print_json(&out)?;
    } else {
        if let Some(e) = entry {
            outln!("name:        {}", one_line(&e.name))?;
            outln!("description: {}", one_line(&e.description))?;
            outln!("source:      {}", one_line(&e.source))?;
            if let Some(l) = &e.meta.license {
                outln!("license:     {}", one_line(l))?;
            }
            if e.meta.disable_model_invocation {
                println!("disable-model-invocation: true (not in the model's catalog)");
            }
            if let Some(t) = &e.meta.allowed_tools {
                outln!("allowed-tools: {}", one_line(&t.join(" ")))?;
            }
            if e.full_bytes() > 0 {
                outln!(
                    "size:        {} bytes full ({} SKILL.md)",
                    e.full_bytes(),
                    e.skill_md_bytes
                )?;
            }
        }
        outln!(
            "body:        {} bytes, ~{} tokens\n",
            body.bytes,
            body.approx_tokens
        )?;
        out!("{}", for_terminal(&body.content))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `skills read`: one resource file, escaped for a terminal, exact bytes for a pipe.
async fn read(
    config: &Path,
    specialist: Option<&str>,
    name: &str,
    path: &str,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let (skills, catalog) = open(config, specialist).await?;
    let res = skills
        .read(&catalog, &TaskSkills::new(), name, path)
        .await?;
    if json {
        let out = serde_json::json!({
            "skill": name,
            "path": path,
            "bytes": res.bytes,
            "approx_tokens": res.approx_tokens,
            "text": String::from_utf8_lossy(&res.content),
        });
        print_json(&out)?;
    } else if std::io::stdout().is_terminal() {
        // A person reads it: escaped. A pipe or a file gets the exact bytes.
        let text = String::from_utf8_lossy(&res.content);
        out!("{}", for_terminal(&text))?;
    } else {
        std::io::stdout().write_all(&res.content)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `skills stats`: catalog bytes against the full skills.
async fn stats(config: &Path, specialist: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let (skills, catalog) = open(config, specialist).await?;
    let task = TaskSkills::new();
    let listing = skills.disclose_catalog(&catalog, &task);
    let full = catalog.full_bytes();
    let rows: Vec<_> = catalog
        .iter()
        .map(|e| {
            serde_json::json!({
                "name": e.name,
                "skill_md_bytes": e.skill_md_bytes,
                "full_bytes": e.full_bytes(),
            })
        })
        .collect();
    let ratio = if listing.bytes == 0 {
        0.0
    } else {
        full as f64 / listing.bytes as f64
    };
    if json {
        let out = serde_json::json!({
            "skills": rows,
            "catalog_bytes": listing.bytes,
            "catalog_tokens": listing.approx_tokens,
            "full_bytes": full,
            "full_tokens": approx_tokens(full),
            "full_to_catalog_ratio": ratio,
        });
        print_json(&out)?;
    } else {
        outln!("{:<40} {:>12} {:>12}", "skill", "SKILL.md", "full")?;
        for e in catalog.iter() {
            outln!(
                "{:<40} {:>12} {:>12}",
                one_line(&e.name),
                e.skill_md_bytes,
                e.full_bytes()
            )?;
        }
        outln!(
            "\n{} skills: catalog {} bytes (~{} tokens) vs full {} bytes (~{} tokens): {ratio:.1}x less up front",
            catalog.len(),
            listing.bytes,
            listing.approx_tokens,
            full,
            approx_tokens(full)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn open(config: &Path, specialist: Option<&str>) -> anyhow::Result<(HostSkills, Catalog)> {
    let host = start_host(config).await?;
    let skills = host.skills();
    let catalog = skills.catalog(specialist).await?;
    Ok((skills, catalog))
}

fn print_problems(catalog: &Catalog) {
    for p in &catalog.problems {
        eprintln!("{}", one_line(&p.to_string()));
    }
}

fn check(dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let report = check_dir(dir);
    if json {
        print_json(&serde_json::json!({
            "ok": report.ok(),
            "valid": report.valid,
            "problems": report.problems,
        }))?;
    } else {
        for p in &report.problems {
            outln!("{}", one_line(&p.to_string()))?;
        }
        let errors = report
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count();
        outln!(
            "{}: {} valid skill(s), {errors} violation(s)",
            if report.ok() { "ok" } else { "failed" },
            report.valid.len()
        )?;
    }
    Ok(if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
