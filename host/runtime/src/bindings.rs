//! Host bindings generated from `wit/`. These types never leave the runtime module: the public
//! library API speaks in its own types ([`crate::dispatch`]).

#![allow(missing_docs, unreachable_pub)]

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
pub(crate) use specialist::guild::plugin::{config, http, log, report, skills, tools};
