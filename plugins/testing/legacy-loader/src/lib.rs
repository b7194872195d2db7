//! Test skill loader `legacy-loader`, built against the frozen `guild:plugin@0.1.0`
//! (`wit/frozen/guild-plugin@0.1.0/`) with plain wit-bindgen, as a plugin written for the first
//! host would be. It exports 0.1.0's bare `list`, `load` and `read-file` and serves one built-in
//! skill, `legacy-guide`, with one resource, `notes.txt`.

// wit-bindgen's generated glue is unsafe by nature; the plugin's own code is not.
#[allow(unsafe_code)]
mod bindings {
    wit_bindgen::generate!({
        path: "../../../wit/frozen/guild-plugin@0.1.0",
        world: "skill-loader",
    });
}

use bindings::guild::plugin::types::{HostError, SkillMeta};

const NAME: &str = "legacy-guide";
const DESCRIPTION: &str = "How a skill served by a guild:plugin@0.1.0 loader reads.";
const BODY: &str = "---\nname: legacy-guide\ndescription: How a skill served by a guild:plugin@0.1.0 loader reads.\n---\n# Legacy guide\n\nServed by a loader built against guild:plugin@0.1.0.\n";
const NOTES: &str = "legacy notes\n";

struct Legacy;

fn unknown(name: &str) -> HostError {
    HostError::InvalidInput(format!("no skill `{name}`; this loader serves `{NAME}`"))
}

impl bindings::Guest for Legacy {
    fn list() -> Vec<SkillMeta> {
        vec![SkillMeta {
            name: NAME.to_owned(),
            description: DESCRIPTION.to_owned(),
        }]
    }

    fn load(name: String) -> Result<String, HostError> {
        if name == NAME {
            Ok(BODY.to_owned())
        } else {
            Err(unknown(&name))
        }
    }

    fn read_file(name: String, path: String) -> Result<Vec<u8>, HostError> {
        match (name == NAME, path.as_str()) {
            (true, "notes.txt") => Ok(NOTES.as_bytes().to_vec()),
            (true, other) => Err(HostError::InvalidInput(format!(
                "`{NAME}` has no resource `{other}`; it has notes.txt"
            ))),
            (false, _) => Err(unknown(&name)),
        }
    }
}

#[allow(unsafe_code)]
const _: () = {
    bindings::export!(Legacy with_types_in bindings);
};
