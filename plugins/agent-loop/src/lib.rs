//! `agent-loop`: the one component every prompt-defined specialist runs. A specialist is then a
//! folder: `plugin.toml` naming this component, `prompt.md`, optional `[agent]` settings and
//! skills (docs/plugin-authors.md, "Specialists without code"). Everything specific comes from
//! the host's `definition` interface; the model is the operator's, through `llm`.

mod answer;
mod delegate;
mod env;
mod prompt;
mod run;
mod settings;
mod skills;

use guild_sdk::llm::HostModel;
use guild_sdk::{Brief, Report, RunError, Specialist, SpecialistInfo, definition};

use env::HostEnv;
use run::Definition;
use settings::Settings;

struct AgentLoop;

impl Specialist for AgentLoop {
    fn describe() -> SpecialistInfo {
        let configured = Settings::parse(definition::settings())
            .ok()
            .and_then(|s| s.description);
        SpecialistInfo::new(prompt::description(
            &definition::name(),
            definition::prompt().as_deref(),
            configured.as_deref(),
        ))
    }

    fn run(brief: Brief) -> Result<Report, RunError> {
        let definition = Definition {
            name: definition::name(),
            prompt: definition::prompt(),
            settings: definition::settings(),
        };
        run::run(&brief, &definition, &mut HostEnv, &mut HostModel)
    }
}

guild_sdk::export_specialist!(AgentLoop);
