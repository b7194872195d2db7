//! The bindings edge: host bindings generated from `wit/` (the latest `guild:plugin`, which the
//! host implements once) and, in [`v0_1`] and [`v0_2`], the frozen older versions adapted onto it.
//!
//! A component's version is read from its export and import names before anything is
//! instantiated ([`version`]); preparing it picks that version's bindings, which hand the rest of
//! the runtime one object per world ([`api`]) speaking the latest version's types. Nothing
//! outside this module matches on versions. These types never leave the runtime.

#![allow(missing_docs, unreachable_pub)]

/// The host bindings of the three worlds of one `guild:plugin` version, generated from the WIT
/// folder `$path` (relative to this crate): `specialist`, which imports every host interface,
/// and `connector` and `skill_loader`, which reuse its interface bindings (so one host
/// implementation of an interface serves all three), with the `add_to_linker` and `wrap` of
/// that version's [`api::Bindings`] entry. Every version, the latest and each frozen one, is one
/// invocation.
macro_rules! worlds {
    ($path:literal) => {
        /// The `specialist` world; it imports every host interface, so its generated traits are
        /// the ones the host implements.
        pub(crate) mod specialist {
            wasmtime::component::bindgen!({
                path: $path,
                world: "specialist",
                imports: { default: async | trappable },
                exports: { default: async },
            });
        }

        /// The `connector` world, reusing the specialist's interface bindings.
        pub(crate) mod connector {
            wasmtime::component::bindgen!({
                path: $path,
                world: "connector",
                imports: { default: async | trappable },
                exports: { default: async },
                with: {
                    "guild:plugin/types": super::specialist::guild::plugin::types,
                    "guild:plugin/log": super::specialist::guild::plugin::log,
                    "guild:plugin/config": super::specialist::guild::plugin::config,
                    "guild:plugin/http": super::specialist::guild::plugin::http,
                },
            });
        }

        /// The `skill-loader` world, reusing the specialist's interface bindings.
        pub(crate) mod skill_loader {
            wasmtime::component::bindgen!({
                path: $path,
                world: "skill-loader",
                imports: { default: async | trappable },
                exports: { default: async },
                with: {
                    "guild:plugin/types": super::specialist::guild::plugin::types,
                    "guild:plugin/log": super::specialist::guild::plugin::log,
                    "guild:plugin/config": super::specialist::guild::plugin::config,
                    "guild:plugin/http": super::specialist::guild::plugin::http,
                },
            });
        }

        /// Adds this version's host interfaces for `kind`'s world to `linker` (WASI is added
        /// once, by the caller).
        pub(crate) fn add_to_linker(
            kind: guild_core::manifest::PluginKind,
            linker: &mut wasmtime::component::Linker<crate::state::StoreState>,
        ) -> wasmtime::Result<()> {
            use guild_core::manifest::PluginKind;
            use wasmtime::component::HasSelf;
            match kind {
                PluginKind::Specialist => {
                    specialist::Specialist::add_to_linker::<_, HasSelf<_>>(linker, |s| s)
                }
                PluginKind::Connector => {
                    connector::Connector::add_to_linker::<_, HasSelf<_>>(linker, |s| s)
                }
                PluginKind::SkillLoader => {
                    skill_loader::SkillLoader::add_to_linker::<_, HasSelf<_>>(linker, |s| s)
                }
            }
        }

        /// Checks a pre-instantiated component against `kind`'s world and wraps it.
        pub(crate) fn wrap(
            kind: guild_core::manifest::PluginKind,
            pre: wasmtime::component::InstancePre<crate::state::StoreState>,
        ) -> wasmtime::Result<crate::bindings::api::PluginPre> {
            use crate::bindings::api::PluginPre;
            use guild_core::manifest::PluginKind;
            Ok(match kind {
                PluginKind::Specialist => {
                    PluginPre::Specialist(Box::new(specialist::SpecialistPre::new(pre)?))
                }
                PluginKind::Connector => {
                    PluginPre::Connector(Box::new(connector::ConnectorPre::new(pre)?))
                }
                PluginKind::SkillLoader => {
                    PluginPre::SkillLoader(Box::new(skill_loader::SkillLoaderPre::new(pre)?))
                }
            })
        }
    };
}
use worlds;

pub(crate) mod api;
pub(crate) mod v0_1;
pub(crate) mod v0_2;
pub(crate) mod version;

// The latest version, which the host implements once.
worlds!("../../wit");

pub(crate) use specialist::guild::plugin::types;
pub(crate) use specialist::guild::plugin::{
    config, definition, delegate, http, llm, log, memory, progress, skills, tools,
};
