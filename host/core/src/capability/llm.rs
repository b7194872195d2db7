//! Model access: the manifest's `[capabilities] llm` ∩ the operator's `[grants.NAME.llm]`.
//!
//! `llm = true` asks for whatever aliases the operator grants; a list asks for those aliases
//! only. The effective aliases are requested ∩ granted; budgets and concurrency are the
//! grant's. No grant (or an empty `models` list) denies every call.

use super::report::CapabilityRow;
use crate::config::Config;
use crate::llm::{LlmGrant, LlmRequest, ModelGrant};

/// The effective grant plus one row per requested or granted alias.
pub(super) fn resolve(
    requested: &LlmRequest,
    grant: Option<&LlmGrant>,
    config: &Config,
    rows: &mut Vec<CapabilityRow>,
) -> ModelGrant {
    let mut out = ModelGrant {
        requested: requested.is_requested(),
        concurrency: grant.map_or(0, |g| g.concurrency),
        tokens_per_task: grant.and_then(|g| g.tokens_per_task),
        tokens_per_day: grant.and_then(|g| g.tokens_per_day),
        ..ModelGrant::default()
    };
    let granted: &[String] = grant.map_or(&[], |g| &g.models);
    for alias in granted {
        if requested.covers(alias) {
            out.models.insert(alias.clone());
            rows.push(CapabilityRow::granted(
                "llm",
                alias,
                &detail(alias, &out, config),
            ));
        } else {
            rows.push(CapabilityRow::unused("llm", alias));
        }
    }
    match requested {
        LlmRequest::Aliases(aliases) => {
            for alias in aliases.iter().filter(|a| !granted.contains(a)) {
                rows.push(CapabilityRow::denied("llm", alias, "not granted"));
            }
        }
        LlmRequest::Any(true) if out.models.is_empty() => {
            rows.push(CapabilityRow::denied("llm", "*", "no model granted"));
        }
        _ => {}
    }
    out
}

/// `model gpt-4o-mini at openai; 20000 tokens/task, 200000 tokens/day, 2 at once`.
fn detail(alias: &str, grant: &ModelGrant, config: &Config) -> String {
    let target = config.llm.models.get(alias).map_or_else(String::new, |m| {
        format!("model {} at {}; ", m.model, m.endpoint)
    });
    let cap = |v: Option<u64>| v.map_or_else(|| "unlimited".to_owned(), |v| v.to_string());
    format!(
        "{target}{} tokens/task, {} tokens/day, {} at once",
        cap(grant.tokens_per_task),
        cap(grant.tokens_per_day),
        grant.concurrency
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::capability::RowStatus;

    const LLM: &str = r#"
[llm.endpoints.local]
base_url = "http://127.0.0.1:9/v1"
[llm.models]
fast = { endpoint = "local", model = "m-fast" }
smart = { endpoint = "local", model = "m-smart" }
"#;

    fn config(grant: &str) -> Config {
        let text = format!("{LLM}\n{grant}");
        Config::parse(&text, Path::new("/g/guild.toml"), Path::new("/g")).expect("config")
    }

    fn run(req: LlmRequest, grant: &str) -> (ModelGrant, Vec<CapabilityRow>) {
        let cfg = config(grant);
        let mut rows = Vec::new();
        let g = resolve(
            &req,
            cfg.grants.get("p").and_then(|g| g.llm.as_ref()),
            &cfg,
            &mut rows,
        );
        (g, rows)
    }

    #[test]
    fn any_gets_every_granted_alias_and_a_list_only_its_own() {
        let grant = "[grants.p.llm]\nmodels = [\"fast\", \"smart\"]\ntokens_per_task = 100\n";
        let (g, rows) = run(LlmRequest::Any(true), grant);
        assert_eq!(g.models.len(), 2);
        assert_eq!(g.tokens_per_task, Some(100));
        assert!(
            rows[0].to_owned().status
                == RowStatus::Granted(
                    "model m-fast at local; 100 tokens/task, unlimited tokens/day, 2 at once"
                        .into()
                ),
            "{rows:?}"
        );
        let (g, rows) = run(
            LlmRequest::Aliases(vec!["fast".into(), "other".into()]),
            grant,
        );
        assert_eq!(g.models.iter().collect::<Vec<_>>(), ["fast"]);
        assert!(
            rows.iter()
                .any(|r| r.target == "smart" && r.status == RowStatus::Unused)
        );
        assert!(
            rows.iter()
                .any(|r| r.target == "other" && matches!(r.status, RowStatus::Denied(_)))
        );
    }

    #[test]
    fn no_grant_or_no_request_denies() {
        let (g, rows) = run(LlmRequest::Any(true), "");
        assert!(g.models.is_empty() && g.requested);
        assert!(matches!(rows[0].status, RowStatus::Denied(_)), "{rows:?}");
        let (g, _) = run(LlmRequest::Any(true), "[grants.p.llm]\nmodels = []\n");
        assert!(g.models.is_empty());
        let (g, rows) = run(LlmRequest::None, "[grants.p.llm]\nmodels = [\"fast\"]\n");
        assert!(g.models.is_empty() && !g.requested);
        assert_eq!(rows[0].status, RowStatus::Unused);
        assert!(
            g.refusal("p", "fast")
                .is_some_and(|m| m.contains("[grants.p.llm]"))
        );
    }

    #[test]
    fn a_grant_of_an_unconfigured_alias_is_a_config_error() {
        let text = format!("{LLM}\n[grants.p.llm]\nmodels = [\"nope\"]\n");
        let e = Config::parse(&text, Path::new("/g/guild.toml"), Path::new("/g"))
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains("grants.p.llm.models") && e.contains("nope"),
            "{e}"
        );
    }
}
