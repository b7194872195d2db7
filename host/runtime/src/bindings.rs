//! The bindings edge: host bindings generated from `wit/` (the latest `guild:plugin`, which the
//! host implements once) and, in [`v0_1`], the frozen older versions adapted onto it.
//!
//! A component's version is read from its export and import names before anything is
//! instantiated ([`version`]); preparing it picks that version's bindings, which hand the rest of
//! the runtime one object per world ([`api`]) speaking the latest version's types. Nothing
//! outside this module matches on versions. These types never leave the runtime.

#![allow(missing_docs, unreachable_pub)]

pub(crate) mod api;
pub(crate) mod v0_1;
pub(crate) mod version;

/// The `specialist` world; it imports every host interface, so its generated traits are the
/// ones the host implements once.
pub(crate) mod specialist {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "specialist",
        imports: { default: async | trappable },
        exports: { default: async },
    });
}

/// The `connector` world, reusing the specialist's interface bindings.
pub(crate) mod connector {
    wasmtime::component::bindgen!({
        path: "../../wit",
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
        path: "../../wit",
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

pub(crate) use specialist::guild::plugin::types;
pub(crate) use specialist::guild::plugin::{config, http, log, memory, progress, skills, tools};
