//! A prompt-defined specialist in a test folder (`writer`: a `prompt.md` run by the shared
//! agent-loop component, docs/plugin-authors.md "Specialists without code") and the scripted
//! OpenAI-compatible stand-in it calls on 127.0.0.1, with the `guild.toml` that grants it the
//! stand-in's alias `fast`.

use std::path::Path;

use guild_host::llm::standin::{Recorded, StandIn, Step};

use super::plugin;

/// The specialist's name (and its folder's, under the test folder).
pub(crate) const SPECIALIST: &str = "writer";

/// The model stand-in, served by a runtime of its own so that tests driving the `guild` binary
/// synchronously can use it; it stops when dropped.
pub(crate) struct Model {
    // Declared first: the server stops before its runtime goes.
    standin: StandIn,
    _runtime: tokio::runtime::Runtime,
}

impl Model {
    /// Serves `script` (its last step repeats).
    pub(crate) fn start(script: Vec<Step>) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime for the model stand-in");
        let standin = runtime
            .block_on(StandIn::start(script))
            .expect("the model stand-in starts");
        Self {
            standin,
            _runtime: runtime,
        }
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub(crate) fn base_url(&self) -> String {
        self.standin.base_url()
    }

    /// Every request so far.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.standin.requests()
    }

    /// The system message of every request so far, in order.
    pub(crate) fn system_prompts(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| {
                r.body["messages"][0]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect()
    }
}

/// The model's final answer: a satisfied report with `summary`, in the JSON shape agent-loop
/// asks for.
pub(crate) fn answer(summary: &str) -> Step {
    Step::Text(serde_json::json!({"summary": summary, "outcome": "satisfied"}).to_string())
}

/// Writes the specialist's folder under `dir` with `prompt` as its `prompt.md`, and a
/// `guild.toml` loading it (data in `data/`) with the stand-in at `model_url` as alias `fast`.
pub(crate) fn setup(dir: &Path, model_url: &str, prompt: &str) {
    let folder = dir.join(SPECIALIST);
    std::fs::create_dir_all(&folder).expect("specialist folder");
    std::fs::copy(
        plugin("agent-loop").join("agent-loop.wasm"),
        folder.join("agent-loop.wasm"),
    )
    .expect("copy agent-loop.wasm");
    std::fs::write(
        folder.join("plugin.toml"),
        format!(
            "[plugin]\nname = \"{SPECIALIST}\"\nversion = \"0.1.0\"\nkind = \"specialist\"\n\
             component = \"agent-loop.wasm\"\ndescription = \"Writes what the brief asks.\"\n\n\
             [capabilities]\nllm = true\n\n[agent]\nmax_steps = 3\n"
        ),
    )
    .expect("plugin.toml");
    std::fs::write(folder.join("prompt.md"), prompt).expect("prompt.md");
    std::fs::write(
        dir.join("guild.toml"),
        format!(
            "[host]\nplugins = [\"{SPECIALIST}\"]\ndata_dir = \"data\"\n\n\
             [llm.endpoints.standin]\nbase_url = \"{model_url}\"\n\n\
             [llm.models]\nfast = {{ endpoint = \"standin\", model = \"scripted\" }}\n\n\
             [grants.{SPECIALIST}.llm]\nmodels = [\"fast\"]\n"
        ),
    )
    .expect("guild.toml");
}
