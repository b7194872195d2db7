//! Raw WIT bindings for the three Guild worlds; nothing outside this crate uses them directly.
//!
//! Each world is generated in its own module. The specialist world generates every shared
//! interface (`types`, `log`, `config`, `http`, `tools`, `progress`, `skills`, `memory`, `llm`,
//! `definition`); the connector and skill-loader worlds reuse those through `with`, so a host
//! error or a tool spec is one Rust type whichever world a plugin exports. `pub_export_macro`
//! makes wit-bindgen put the full world description (with its exports) only where a plugin
//! invokes an export macro; the library-level sections describe imports only and are dropped by
//! the componentizer when unused, so one crate can hold all three worlds and a plugin still
//! exports exactly one.
#![allow(missing_docs, unreachable_pub, unsafe_code, clippy::all)]

/// The `specialist` world and every shared interface.
pub mod specialist {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "guild:plugin/specialist",
        generate_all,
        pub_export_macro: true,
        export_macro_name: "export",
        runtime_path: "::guild_sdk::__private::wit_bindgen::rt",
    });
}

/// The `connector` world; shared interfaces come from [`specialist`].
pub mod connector {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "guild:plugin/connector",
        with: {
            "guild:plugin/types@0.3.0": crate::bindings::specialist::guild::plugin::types,
            "guild:plugin/log@0.3.0": crate::bindings::specialist::guild::plugin::log,
            "guild:plugin/config@0.3.0": crate::bindings::specialist::guild::plugin::config,
            "guild:plugin/http@0.3.0": crate::bindings::specialist::guild::plugin::http,
        },
        pub_export_macro: true,
        export_macro_name: "export",
        runtime_path: "::guild_sdk::__private::wit_bindgen::rt",
    });
}

/// The `skill-loader` world; shared interfaces come from [`specialist`].
pub mod skill_loader {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "guild:plugin/skill-loader",
        with: {
            "guild:plugin/types@0.3.0": crate::bindings::specialist::guild::plugin::types,
            "guild:plugin/log@0.3.0": crate::bindings::specialist::guild::plugin::log,
            "guild:plugin/config@0.3.0": crate::bindings::specialist::guild::plugin::config,
            "guild:plugin/http@0.3.0": crate::bindings::specialist::guild::plugin::http,
        },
        pub_export_macro: true,
        export_macro_name: "export",
        runtime_path: "::guild_sdk::__private::wit_bindgen::rt",
    });
}
