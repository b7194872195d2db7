//! The traits a plugin implements and the `export_*!` macros that wire one of them to its world.
//!
//! Each macro declares a hidden type that implements the raw bindings' `Guest` trait by
//! converting between raw records and this crate's types, then calls wit-bindgen's export macro
//! for that world, which also places the world's full type description in the plugin.

use crate::bindings::specialist::guild::plugin::types as raw;
use crate::tool::ToolOutcome;
use crate::types::{Brief, HostError, RunError, SkillMeta, SpecialistInfo};
use crate::{Report, ToolSpec};

/// A specialist: takes a brief, does the work through its granted capabilities, reports.
/// Export it with [`export_specialist!`](crate::export_specialist).
pub trait Specialist {
    /// One line on what the specialist does: what [`Specialist::describe`] says by default.
    const DESCRIPTION: &'static str = "";

    /// What the specialist says about itself (shown in the roster): by default its
    /// [`Specialist::DESCRIPTION`].
    fn describe() -> SpecialistInfo {
        SpecialistInfo::new(Self::DESCRIPTION)
    }
    /// Does the work of one brief. Every call runs in a fresh instance.
    fn run(brief: Brief) -> Result<Report, RunError>;
}

/// A connector: a set of tools over an external system.
/// Export it with [`export_connector!`](crate::export_connector).
pub trait Connector {
    /// The tools this connector offers.
    fn tools() -> Vec<ToolSpec>;
    /// Runs `tool` with a JSON input document. Failures are outcomes with status failed.
    fn call(tool: String, input: String) -> ToolOutcome;
}

/// A skill loader: a source of Agent Skills.
/// Export it with [`export_skill_loader!`](crate::export_skill_loader).
pub trait SkillLoader {
    /// The catalog.
    fn list() -> Vec<SkillMeta>;
    /// The body (`SKILL.md`) of skill `name`.
    fn load(name: String) -> Result<String, HostError>;
    /// A resource file of skill `name`, by path relative to the skill folder.
    fn read(name: String, path: String) -> Result<Vec<u8>, HostError>;
}

/// Exports a type implementing [`Specialist`] as the plugin's `specialist` world.
///
/// Use it once per crate, at the top level: `guild_sdk::export_specialist!(MySpecialist);`.
#[macro_export]
macro_rules! export_specialist {
    ($ty:ty) => {
        #[allow(unsafe_code)]
        const _: () = {
            struct GuildSpecialistExport;
            impl $crate::__private::specialist::exports::guild::plugin::specialist_api::Guest
                for GuildSpecialistExport
            {
                fn describe() -> $crate::__private::raw::SpecialistInfo {
                    $crate::__private::describe::<$ty>()
                }
                fn run(
                    brief: $crate::__private::raw::Brief,
                ) -> ::core::result::Result<
                    $crate::__private::raw::Report,
                    $crate::__private::raw::RunError,
                > {
                    $crate::__private::run::<$ty>(brief)
                }
            }
            $crate::__private::specialist::export!(
                GuildSpecialistExport with_types_in $crate::__private::specialist
            );
        };
    };
}

/// Exports a type implementing [`Connector`] as the plugin's `connector` world.
///
/// Use it once per crate, at the top level: `guild_sdk::export_connector!(MyConnector);`.
#[macro_export]
macro_rules! export_connector {
    ($ty:ty) => {
        #[allow(unsafe_code)]
        const _: () = {
            struct GuildConnectorExport;
            impl $crate::__private::connector::exports::guild::plugin::connector_api::Guest
                for GuildConnectorExport
            {
                fn tools() -> ::std::vec::Vec<$crate::__private::raw::ToolSpec> {
                    $crate::__private::tools::<$ty>()
                }
                fn call(
                    tool: ::std::string::String,
                    input: ::std::string::String,
                ) -> $crate::__private::raw::ToolOutcome {
                    $crate::__private::call::<$ty>(tool, input)
                }
            }
            $crate::__private::connector::export!(
                GuildConnectorExport with_types_in $crate::__private::connector
            );
        };
    };
}

/// Exports a type implementing [`SkillLoader`] as the plugin's `skill-loader` world.
///
/// Use it once per crate, at the top level: `guild_sdk::export_skill_loader!(MyLoader);`.
#[macro_export]
macro_rules! export_skill_loader {
    ($ty:ty) => {
        #[allow(unsafe_code)]
        const _: () = {
            struct GuildSkillLoaderExport;
            impl $crate::__private::skill_loader::exports::guild::plugin::skill_loader_api::Guest
                for GuildSkillLoaderExport {
                fn list() -> ::std::vec::Vec<$crate::__private::raw::SkillMeta> {
                    $crate::__private::list::<$ty>()
                }
                fn load(
                    name: ::std::string::String,
                ) -> ::core::result::Result<
                    ::std::string::String,
                    $crate::__private::raw::HostError,
                > {
                    $crate::__private::load::<$ty>(name)
                }
                fn read(
                    name: ::std::string::String,
                    path: ::std::string::String,
                ) -> ::core::result::Result<
                    ::std::vec::Vec<u8>,
                    $crate::__private::raw::HostError,
                > {
                    $crate::__private::read::<$ty>(name, path)
                }
            }
            $crate::__private::skill_loader::export!(
                GuildSkillLoaderExport with_types_in $crate::__private::skill_loader
            );
        };
    };
}

/// Conversions called by the export macros' generated code.
pub fn describe<T: Specialist>() -> raw::SpecialistInfo {
    T::describe().into_raw()
}

/// See [`describe`].
pub fn run<T: Specialist>(brief: raw::Brief) -> Result<raw::Report, raw::RunError> {
    T::run(Brief::from_raw(brief))
        .map(raw::Report::from)
        .map_err(RunError::into_raw)
}

/// See [`describe`].
pub fn tools<T: Connector>() -> Vec<raw::ToolSpec> {
    T::tools().into_iter().map(raw::ToolSpec::from).collect()
}

/// See [`describe`].
pub fn call<T: Connector>(tool: String, input: String) -> raw::ToolOutcome {
    T::call(tool, input).into_raw()
}

/// See [`describe`].
pub fn list<T: SkillLoader>() -> Vec<raw::SkillMeta> {
    T::list().into_iter().map(SkillMeta::into_raw).collect()
}

/// See [`describe`].
pub fn load<T: SkillLoader>(name: String) -> Result<String, raw::HostError> {
    T::load(name).map_err(HostError::into_raw)
}

/// See [`describe`].
pub fn read<T: SkillLoader>(name: String, path: String) -> Result<Vec<u8>, raw::HostError> {
    T::read(name, path).map_err(HostError::into_raw)
}
