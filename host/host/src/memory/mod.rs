//! Team and private memory, the host's side (docs/memory.md): [`Memory`] reads, validates, stores,
//! lists and restores the documents of the workspace and user the operator named. The CLI
//! calls it directly; a task reaches it through `TaskScope::memory_read` / `memory_update`,
//! which check the plugin's grant and receipt every update.
//!
//! The rules live in `guild_memory` (re-exported here); storage is a
//! [`MemoryStore`], SQLite by default ([`SqliteMemoryStore`]). SQLite is only ever touched on
//! blocking threads (`spawn_blocking`), never on a tokio worker.

#[cfg(test)]
mod tests;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use guild_memory::*;
pub use guild_memory::{APPLICATION_ID, MEMORY_FILE, SqliteMemoryStore};

use crate::config::{Config, MemorySettings};

/// Who writes a version: the supervisor (CLI, MCP) or a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// The agent driving the host, through the CLI or (later) MCP.
    Supervisor,
    /// A plugin, as `name@version`.
    Plugin(String),
}

impl Actor {
    /// `supervisor`, or the plugin's `name@version`.
    pub fn as_str(&self) -> &str {
        match self {
            Actor::Supervisor => "supervisor",
            Actor::Plugin(ident) => ident,
        }
    }
}

/// A document as read: its newest version (none yet: empty text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryDoc {
    /// Which document.
    pub doc: DocId,
    /// The newest version, if there is one.
    pub version: Option<VersionInfo>,
    /// Its text (empty when there is no version).
    pub text: String,
    /// Its size against the limits.
    pub usage: Usage,
}

/// What an update did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum UpdateOutcome {
    /// A new version was stored.
    Stored {
        /// Which document.
        doc: DocId,
        /// The new version.
        version: VersionInfo,
        /// What the writer should know.
        warnings: Vec<String>,
        /// The stored size against the limits.
        usage: Usage,
    },
    /// Nothing changed (a sentinel, an empty text, or the stored text itself).
    NoOp {
        /// Which document.
        doc: DocId,
        /// Why.
        reason: String,
        /// The stored size against the limits.
        usage: Usage,
    },
    /// The write was refused; the stored version is unchanged.
    Refused {
        /// Which document.
        doc: DocId,
        /// Every rule the text broke.
        errors: Vec<String>,
        /// The refused text's size against the limits.
        usage: Usage,
    },
}

/// Why a memory operation could not run (a refused write is an [`UpdateOutcome`], not this).
#[derive(Debug, Error)]
pub enum MemoryError {
    /// The operator named no workspace (team) or user (private).
    #[error("no {who} is named for {scope} memory: set `{key}` in guild.toml or pass --{who}")]
    NotNamed {
        /// The scope asked for.
        scope: Scope,
        /// `workspace` or `user`.
        who: &'static str,
        /// The `guild.toml` key.
        key: &'static str,
    },
    /// The plugin may not read or write this scope (the message names the missing side).
    #[error("{0}")]
    Denied(String),
    /// The task reached a limit (e.g. `[dispatch] max_tool_calls`).
    #[error("{0}")]
    LimitExceeded(String),
    /// No such version.
    #[error("{doc} has no version {version} (its newest is {newest}): see `guild memory history`")]
    NoVersion {
        /// The document.
        doc: DocId,
        /// The version asked for.
        version: u64,
        /// Its newest version (0: none).
        newest: u64,
    },
    /// The update was written against a version that is no longer the newest: another writer
    /// stored one since. Nothing was stored; the writer reads again and merges.
    #[error(
        "{doc} changed since this update's base was read: the update is based on version \
         {base}, but version {current} is stored now. Nothing was stored: read it again, merge \
         your changes into version {current} and send the full document with base {current}"
    )]
    Conflict {
        /// The document.
        doc: DocId,
        /// The version the writer read and based its update on (0: it read no version).
        base: u64,
        /// The newest version now (0: none).
        current: u64,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] MemoryStoreError),
    /// The blocking task running the store call ended abnormally.
    #[error("the memory store task failed: {0}")]
    Join(String),
    /// The store `[store]` names could not be opened.
    #[error(transparent)]
    Open(Box<crate::stores::StoreOpenError>),
}

/// The memory documents of one workspace and one user.
#[derive(Clone)]
pub struct Memory {
    store: Arc<dyn MemoryStore>,
    settings: MemorySettings,
    rewriter: Option<Arc<dyn LlmRewriter>>,
}

impl Memory {
    /// Opens the store `[store]` names — the SQLite file in the config's data dir (creating the
    /// folder and the file when missing) or the shared PostgreSQL database — for the workspace
    /// and user `[memory]` names.
    pub fn open(config: &Config) -> Result<Self, MemoryError> {
        let dir = config.data_dir();
        std::fs::create_dir_all(&dir).map_err(|e| {
            MemoryError::Store(MemoryStoreError::File(crate::receipts::DbFileError::Io {
                what: "memory store",
                path: dir.clone(),
                op: "create the folder of",
                source: e,
            }))
        })?;
        let store = crate::stores::open_memory(config, &dir).map_err(|e| match e {
            crate::stores::StoreOpenError::Memory(e) => MemoryError::Store(e),
            other => MemoryError::Open(Box::new(other)),
        })?;
        Ok(Self::new(store, config.memory.clone()))
    }

    /// Memory over any store, for the named workspace and user; no rewriter.
    pub fn new(store: Arc<dyn MemoryStore>, settings: MemorySettings) -> Self {
        Self {
            store,
            settings,
            rewriter: None,
        }
    }

    /// The same store (and rewriter) for the named workspace and user (`None`: that scope is
    /// unavailable, as without `[memory]`): how the host serves `guild memory update` for the
    /// owners the command names, whichever its MCP tools serve.
    pub fn with_owners(&self, workspace: Option<String>, user: Option<String>) -> Self {
        let mut other = self.clone();
        other.settings.workspace = workspace;
        other.settings.user = user;
        other
    }

    /// Uses `rewriter` for over-limit writes (see [`validate_with_rewrite`]).
    pub fn with_rewriter(mut self, rewriter: Arc<dyn LlmRewriter>) -> Self {
        self.rewriter = Some(rewriter);
        self
    }

    /// The document of `scope` for the named workspace or user.
    pub fn doc(&self, scope: Scope) -> Result<DocId, MemoryError> {
        let (name, who, key) = match scope {
            Scope::Team => (&self.settings.workspace, "workspace", "[memory] workspace"),
            Scope::Private => (&self.settings.user, "user", "[memory] user"),
        };
        name.as_ref()
            .map(|n| DocId::new(scope, n.clone()))
            .ok_or(MemoryError::NotNamed { scope, who, key })
    }

    /// Runs a store call on a blocking thread.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn MemoryStore) -> Result<T, MemoryStoreError> + Send + 'static,
    ) -> Result<T, MemoryError> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || f(store.as_ref()))
            .await
            .map_err(|e| MemoryError::Join(e.to_string()))?
            .map_err(MemoryError::from)
    }

    /// The newest version of `scope`'s document (empty text when there is none).
    pub async fn read(&self, scope: Scope) -> Result<MemoryDoc, MemoryError> {
        let doc = self.doc(scope)?;
        let id = doc.clone();
        let current = self.blocking(move |s| s.current(&id)).await?;
        Ok(match current {
            Some(v) => MemoryDoc {
                doc,
                usage: Usage::of(&v.text),
                version: Some(v.info),
                text: v.text,
            },
            None => MemoryDoc {
                doc,
                version: None,
                text: String::new(),
                usage: Usage::of(""),
            },
        })
    }

    /// Replaces `scope`'s document with `text` if it passes validation (a full replacement).
    /// `base` is the version the writer read and merged into (`0`: it read an empty document):
    /// compare-and-swap, so of two writers that read the same version one stores and the other
    /// gets [`MemoryError::Conflict`] naming both versions, instead of silently losing the
    /// first one's change.
    pub async fn update(
        &self,
        scope: Scope,
        text: &str,
        base: u64,
        actor: &Actor,
    ) -> Result<UpdateOutcome, MemoryError> {
        self.write(scope, text, Some(base), actor, None).await
    }

    /// The `limit` newest versions of `scope`'s document, newest first.
    pub async fn history(
        &self,
        scope: Scope,
        limit: usize,
    ) -> Result<Vec<VersionInfo>, MemoryError> {
        let doc = self.doc(scope)?;
        self.blocking(move |s| s.history(&doc, limit)).await
    }

    /// One version of `scope`'s document.
    pub async fn version(&self, scope: Scope, version: u64) -> Result<StoredVersion, MemoryError> {
        let doc = self.doc(scope)?;
        let id = doc.clone();
        let (found, newest) = self
            .blocking(move |s| {
                let found = s.version(&id, version)?;
                let newest = s.history(&id, 1)?.first().map_or(0, |v| v.version);
                Ok((found, newest))
            })
            .await?;
        found.ok_or(MemoryError::NoVersion {
            doc,
            version,
            newest,
        })
    }

    /// Stores the text of `version` again as the newest version, validated like any update.
    pub async fn restore(
        &self,
        scope: Scope,
        version: u64,
        actor: &Actor,
    ) -> Result<UpdateOutcome, MemoryError> {
        let old = self.version(scope, version).await?;
        self.write(scope, &old.text, None, actor, Some(version))
            .await
    }

    /// Validates `text` against the newest version and appends it. With a `base`, the newest
    /// version must be that one; without (a restore, which names its own source), it is the
    /// one read here. Either way the append is conditional on it, so a writer that got in
    /// between is a [`MemoryError::Conflict`], never a lost update.
    async fn write(
        &self,
        scope: Scope,
        text: &str,
        base: Option<u64>,
        actor: &Actor,
        restored_from: Option<u64>,
    ) -> Result<UpdateOutcome, MemoryError> {
        let doc = self.doc(scope)?;
        let id = doc.clone();
        let current = self.blocking(move |s| s.current(&id)).await?;
        let head = current.as_ref().map_or(0, |v| v.info.version);
        let base = base.unwrap_or(head);
        if base != head {
            return Err(MemoryError::Conflict {
                doc,
                base,
                current: head,
            });
        }
        let stored = current.as_ref().map(|v| v.text.as_str());
        let checked = validate_with_rewrite(scope, text, stored, self.rewriter.as_deref()).await;
        let (text, warnings, usage) = match checked {
            Validation::Accepted {
                text,
                warnings,
                usage,
            } => (text, warnings, usage),
            Validation::NoOp { reason } => {
                return Ok(UpdateOutcome::NoOp {
                    doc,
                    reason,
                    usage: Usage::of(stored.unwrap_or("")),
                });
            }
            Validation::Refused { errors, usage } => {
                return Ok(UpdateOutcome::Refused { doc, errors, usage });
            }
        };
        let new = NewVersion {
            text,
            actor: actor.as_str().to_owned(),
            restored_from,
        };
        let id = doc.clone();
        let parent = (head > 0).then_some(head);
        match self.blocking(move |s| s.append(&id, parent, new)).await {
            Ok(version) => {
                tracing::info!(doc = %doc, version = version.version, actor = actor.as_str(), "memory updated");
                Ok(UpdateOutcome::Stored {
                    doc,
                    version,
                    warnings,
                    usage,
                })
            }
            Err(MemoryError::Store(MemoryStoreError::Conflict { found, .. })) => {
                Err(MemoryError::Conflict {
                    doc,
                    base,
                    current: found,
                })
            }
            Err(e) => Err(e),
        }
    }
}
