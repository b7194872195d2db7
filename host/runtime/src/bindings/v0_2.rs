//! `guild:plugin@0.2.0`, frozen in `wit/frozen/guild-plugin@0.2.0/`, adapted onto the latest
//! version: every 0.2.0 host function calls the latest one and converts its arguments and
//! answer; every 0.2.0 export is called and its answer converted to the latest types. The host's
//! behaviour (grants, receipts, texts) is the latest version's, unchanged.
//!
//! 0.3.0 only added interfaces (`llm`, `definition`), so every record here has the same fields
//! as its latest twin: `bindgen!` makes them distinct Rust types, and each conversion copies
//! field by field.

#![allow(missing_docs, unreachable_pub)]

use std::time::Instant;

use guild_core::manifest::PluginKind;
use wasmtime::Store;

use super::api::{Bindings, Call, ConnectorApi, LoaderApi, SpecialistApi};
use crate::state::StoreState;

super::worlds!("../../wit/frozen/guild-plugin@0.2.0");

use specialist::guild::plugin::{config, http, log, memory, progress, skills, tools, types};

/// The latest version's bindings, which 0.2.0 is adapted onto.
mod latest {
    pub(super) use crate::bindings::{config, http, log, memory, progress, skills, tools, types};
}

/// `guild:plugin@0.2.0`.
pub(crate) const BINDINGS: Bindings = Bindings {
    version: "0.2.0",
    add_to_linker,
    wrap,
    exports: |kind| match kind {
        PluginKind::Specialist => &["guild:plugin/specialist-api@0.2.0"],
        PluginKind::Connector => &["guild:plugin/connector-api@0.2.0"],
        PluginKind::SkillLoader => &["guild:plugin/skill-loader-api@0.2.0"],
    },
    imports: |kind| match kind {
        PluginKind::Specialist => &[
            "types", "log", "config", "http", "tools", "progress", "skills", "memory",
        ],
        PluginKind::Connector | PluginKind::SkillLoader => &["types", "log", "config", "http"],
    },
};

// ---- host functions: each calls the latest one -------------------------------------------

impl types::Host for StoreState {}

impl log::Host for StoreState {
    async fn log(&mut self, level: log::Level, message: String) -> wasmtime::Result<()> {
        let level = match level {
            log::Level::Trace => latest::log::Level::Trace,
            log::Level::Debug => latest::log::Level::Debug,
            log::Level::Info => latest::log::Level::Info,
            log::Level::Warn => latest::log::Level::Warn,
            log::Level::Error => latest::log::Level::Error,
        };
        <Self as latest::log::Host>::log(self, level, message).await
    }
}

impl config::Host for StoreState {
    async fn get(&mut self, key: String) -> wasmtime::Result<Result<String, types::HostError>> {
        let answer = <Self as latest::config::Host>::get(self, key).await?;
        Ok(answer.map_err(Into::into))
    }
}

impl http::Host for StoreState {
    async fn send(
        &mut self,
        r: http::Request,
    ) -> wasmtime::Result<Result<http::Response, types::HostError>> {
        let request = latest::http::Request {
            method: r.method,
            url: r.url,
            headers: r.headers,
            body: r.body,
        };
        let answer = <Self as latest::http::Host>::send(self, request).await?;
        Ok(answer
            .map(|r| http::Response {
                status: r.status,
                headers: r.headers,
                body: r.body,
            })
            .map_err(Into::into))
    }
}

impl tools::Host for StoreState {
    async fn granted(&mut self) -> wasmtime::Result<Vec<tools::GrantedTool>> {
        let granted = <Self as latest::tools::Host>::granted(self).await?;
        Ok(granted
            .into_iter()
            .map(|t| tools::GrantedTool {
                name: t.name,
                spec: t.spec.into(),
            })
            .collect())
    }

    async fn call(
        &mut self,
        name: String,
        input: String,
        idempotency_key: Option<String>,
    ) -> wasmtime::Result<Result<types::ToolOutcome, types::HostError>> {
        let answer =
            <Self as latest::tools::Host>::call(self, name, input, idempotency_key).await?;
        Ok(answer.map(Into::into).map_err(Into::into))
    }
}

impl progress::Host for StoreState {
    async fn send(
        &mut self,
        output: String,
    ) -> wasmtime::Result<Result<String, types::ProgressError>> {
        let answer = <Self as latest::progress::Host>::send(self, output).await?;
        Ok(answer.map_err(|e| match e {
            latest::types::ProgressError::ParentGone => types::ProgressError::ParentGone,
            latest::types::ProgressError::Denied(m) => types::ProgressError::Denied(m),
            latest::types::ProgressError::LimitExceeded(m) => {
                types::ProgressError::LimitExceeded(m)
            }
        }))
    }
}

impl skills::Host for StoreState {
    async fn catalog(&mut self) -> wasmtime::Result<Vec<types::SkillMeta>> {
        let catalog = <Self as latest::skills::Host>::catalog(self).await?;
        Ok(catalog
            .into_iter()
            .map(|m| types::SkillMeta {
                name: m.name,
                description: m.description,
            })
            .collect())
    }

    async fn load(&mut self, name: String) -> wasmtime::Result<Result<String, types::HostError>> {
        let answer = <Self as latest::skills::Host>::load(self, name).await?;
        Ok(answer.map_err(Into::into))
    }

    async fn read(
        &mut self,
        name: String,
        path: String,
    ) -> wasmtime::Result<Result<Vec<u8>, types::HostError>> {
        let answer = <Self as latest::skills::Host>::read(self, name, path).await?;
        Ok(answer.map_err(Into::into))
    }
}

fn memory_scope(scope: memory::Scope) -> latest::memory::Scope {
    match scope {
        memory::Scope::Team => latest::memory::Scope::Team,
        memory::Scope::Private => latest::memory::Scope::Private,
    }
}

fn memory_usage(u: latest::memory::Usage) -> memory::Usage {
    memory::Usage {
        chars: u.chars,
        soft_limit: u.soft_limit,
        limit: u.limit,
    }
}

impl memory::Host for StoreState {
    async fn read(
        &mut self,
        scope: memory::Scope,
    ) -> wasmtime::Result<Result<memory::Document, types::HostError>> {
        let answer = <Self as latest::memory::Host>::read(self, memory_scope(scope)).await?;
        Ok(answer
            .map(|d| memory::Document {
                text: d.text,
                version: d.version,
                usage: memory_usage(d.usage),
            })
            .map_err(Into::into))
    }

    async fn update(
        &mut self,
        scope: memory::Scope,
        text: String,
    ) -> wasmtime::Result<Result<memory::UpdateResult, memory::UpdateError>> {
        let answer =
            <Self as latest::memory::Host>::update(self, memory_scope(scope), text).await?;
        Ok(answer
            .map(|r| memory::UpdateResult {
                outcome: match r.outcome {
                    latest::memory::UpdateOutcome::Stored(v) => memory::UpdateOutcome::Stored(v),
                    latest::memory::UpdateOutcome::NoOp(m) => memory::UpdateOutcome::NoOp(m),
                },
                warnings: r.warnings,
                usage: memory_usage(r.usage),
            })
            .map_err(|e| match e {
                latest::memory::UpdateError::Refused(r) => {
                    memory::UpdateError::Refused(memory::Refusal {
                        errors: r.errors,
                        usage: memory_usage(r.usage),
                    })
                }
                latest::memory::UpdateError::Host(e) => memory::UpdateError::Host(e.into()),
            }))
    }
}

// ---- exports: each is called and its answer converted ------------------------------------

impl SpecialistApi for specialist::SpecialistPre<StoreState> {
    fn describe<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
    ) -> Call<'a, latest::types::SpecialistInfo> {
        Box::pin(async move {
            let instance = self.instantiate_async(&mut *store).await?;
            let info = instance
                .guild_plugin_specialist_api()
                .call_describe(&mut *store)
                .await?;
            Ok(latest::types::SpecialistInfo {
                description: info.description,
            })
        })
    }

    fn run<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        brief: &'a latest::types::Brief,
        instantiated: &'a mut Instant,
    ) -> Call<'a, Result<latest::types::Report, latest::types::RunError>> {
        Box::pin(async move {
            let brief = types::Brief {
                task_id: brief.task_id.clone(),
                description: brief.description.clone(),
            };
            let instance = self.instantiate_async(&mut *store).await?;
            *instantiated = Instant::now();
            let answer = instance
                .guild_plugin_specialist_api()
                .call_run(&mut *store, &brief)
                .await?;
            Ok(answer.map(Into::into).map_err(|e| match e {
                types::RunError::InvalidBrief(m) => latest::types::RunError::InvalidBrief(m),
                types::RunError::Failed(m) => latest::types::RunError::Failed(m),
            }))
        })
    }
}

impl ConnectorApi for connector::ConnectorPre<StoreState> {
    fn tools<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
    ) -> Call<'a, Vec<latest::types::ToolSpec>> {
        Box::pin(async move {
            let instance = self.instantiate_async(&mut *store).await?;
            let tools = instance
                .guild_plugin_connector_api()
                .call_tools(&mut *store)
                .await?;
            Ok(tools.into_iter().map(Into::into).collect())
        })
    }

    fn call<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        tool: &'a str,
        input: &'a str,
    ) -> Call<'a, latest::types::ToolOutcome> {
        Box::pin(async move {
            let instance = self.instantiate_async(&mut *store).await?;
            Ok(instance
                .guild_plugin_connector_api()
                .call_call(&mut *store, tool, input)
                .await?
                .into())
        })
    }
}

impl LoaderApi for skill_loader::SkillLoaderPre<StoreState> {
    fn list<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        instantiated: &'a mut Instant,
    ) -> Call<'a, Vec<latest::types::SkillMeta>> {
        Box::pin(async move {
            let instance = self.instantiate_async(&mut *store).await?;
            *instantiated = Instant::now();
            let list = instance
                .guild_plugin_skill_loader_api()
                .call_list(&mut *store)
                .await?;
            Ok(list
                .into_iter()
                .map(|m| latest::types::SkillMeta {
                    name: m.name,
                    description: m.description,
                })
                .collect())
        })
    }

    fn load<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        name: &'a str,
    ) -> Call<'a, Result<String, latest::types::HostError>> {
        Box::pin(async move {
            let instance = self.instantiate_async(&mut *store).await?;
            Ok(instance
                .guild_plugin_skill_loader_api()
                .call_load(&mut *store, name)
                .await?
                .map_err(Into::into))
        })
    }

    fn read<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        name: &'a str,
        path: &'a str,
    ) -> Call<'a, Result<Vec<u8>, latest::types::HostError>> {
        Box::pin(async move {
            let instance = self.instantiate_async(&mut *store).await?;
            Ok(instance
                .guild_plugin_skill_loader_api()
                .call_read(&mut *store, name, path)
                .await?
                .map_err(Into::into))
        })
    }
}

// ---- record conversions ------------------------------------------------------------------

impl From<latest::types::HostError> for types::HostError {
    fn from(e: latest::types::HostError) -> Self {
        use latest::types::HostError as L;
        match e {
            L::Denied(m) => Self::Denied(m),
            L::InvalidInput(m) => Self::InvalidInput(m),
            L::LimitExceeded(m) => Self::LimitExceeded(m),
            L::Failed(m) => Self::Failed(m),
        }
    }
}

impl From<types::HostError> for latest::types::HostError {
    fn from(e: types::HostError) -> Self {
        use types::HostError as O;
        match e {
            O::Denied(m) => Self::Denied(m),
            O::InvalidInput(m) => Self::InvalidInput(m),
            O::LimitExceeded(m) => Self::LimitExceeded(m),
            O::Failed(m) => Self::Failed(m),
        }
    }
}

impl From<latest::types::ToolSpec> for types::ToolSpec {
    fn from(s: latest::types::ToolSpec) -> Self {
        Self {
            name: s.name,
            description: s.description,
            input_schema: s.input_schema,
            mutating: s.mutating,
            receipt_type: s.receipt_type,
            operation: s.operation,
            requires_skill: s.requires_skill,
            approval: match s.approval {
                latest::types::Approval::Never => types::Approval::Never,
                latest::types::Approval::Always => types::Approval::Always,
            },
        }
    }
}

impl From<types::ToolSpec> for latest::types::ToolSpec {
    fn from(s: types::ToolSpec) -> Self {
        Self {
            name: s.name,
            description: s.description,
            input_schema: s.input_schema,
            mutating: s.mutating,
            receipt_type: s.receipt_type,
            operation: s.operation,
            requires_skill: s.requires_skill,
            approval: match s.approval {
                types::Approval::Never => latest::types::Approval::Never,
                types::Approval::Always => latest::types::Approval::Always,
            },
        }
    }
}

impl From<latest::types::ToolOutcome> for types::ToolOutcome {
    fn from(o: latest::types::ToolOutcome) -> Self {
        Self {
            output: o.output,
            status: match o.status {
                latest::types::CallStatus::Success => types::CallStatus::Success,
                latest::types::CallStatus::Pending => types::CallStatus::Pending,
                latest::types::CallStatus::Failed(e) => types::CallStatus::Failed(e),
            },
            external_id: o.external_id,
            verifiable_url: o.verifiable_url,
            preview: o.preview,
        }
    }
}

impl From<types::ToolOutcome> for latest::types::ToolOutcome {
    fn from(o: types::ToolOutcome) -> Self {
        Self {
            output: o.output,
            status: match o.status {
                types::CallStatus::Success => latest::types::CallStatus::Success,
                types::CallStatus::Pending => latest::types::CallStatus::Pending,
                types::CallStatus::Failed(e) => latest::types::CallStatus::Failed(e),
            },
            external_id: o.external_id,
            verifiable_url: o.verifiable_url,
            preview: o.preview,
        }
    }
}

impl From<types::Report> for latest::types::Report {
    fn from(r: types::Report) -> Self {
        use latest::types as l;
        Self {
            summary: r.summary,
            outcome: match r.outcome {
                types::Outcome::Satisfied => l::Outcome::Satisfied,
                types::Outcome::Partial => l::Outcome::Partial,
                types::Outcome::Failed => l::Outcome::Failed,
            },
            details: r.details,
            hard_passed: r.hard_passed,
            open_issues: r.open_issues,
            remaining_issues: r.remaining_issues,
            next_step: r.next_step.map(|n| l::NextStep {
                action: match n.action {
                    types::NextAction::Stop => l::NextAction::Stop,
                    types::NextAction::Descend => l::NextAction::Descend,
                    types::NextAction::Refine => l::NextAction::Refine,
                    types::NextAction::Ascend => l::NextAction::Ascend,
                },
                suggested_task: n.suggested_task,
            }),
            artifacts: r
                .artifacts
                .into_iter()
                .map(|a| l::ArtifactRef {
                    id: a.id,
                    kind: a.kind,
                    mime_type: a.mime_type,
                    sha256: a.sha256,
                    version: a.version,
                })
                .collect(),
            claims: r
                .claims
                .into_iter()
                .map(|c| l::Claim {
                    tool: c.tool,
                    external_id: c.external_id,
                    text: c.text,
                })
                .collect(),
        }
    }
}
