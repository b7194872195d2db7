//! The host side of the `skills` interface: what a specialist may see of the skills it declared.

use super::bindings::skills;
use super::bindings::types::{HostError, SkillMeta};
use super::host_impl::denied;
use super::state::StoreState;

impl skills::Host for StoreState {
    async fn catalog(&mut self) -> wasmtime::Result<Vec<SkillMeta>> {
        Ok(Vec::new())
    }

    async fn load(&mut self, name: String) -> wasmtime::Result<Result<String, HostError>> {
        Ok(Err(HostError::Denied(denied(
            &self.name,
            "skills",
            &name,
            "no skill sources granted",
        ))))
    }

    async fn read(
        &mut self,
        name: String,
        path: String,
    ) -> wasmtime::Result<Result<Vec<u8>, HostError>> {
        let target = format!("{name}/{path}");
        Ok(Err(HostError::Denied(denied(
            &self.name,
            "skills",
            &target,
            "no skill sources granted",
        ))))
    }
}
