//! Test specialist `unsupported`: exports the specialist world like any other, and imports
//! `guild:testing/missing`, which no Guild host provides. The import is used (for the brief
//! `ping`), so it stays in the component; a host must refuse the component at load.

use guild_sdk::{Brief, Report, RunError, Specialist, SpecialistInfo};

mod missing {
    wit_bindgen::generate!({
        inline: "
            package guild:testing;

            interface missing {
                ping: func() -> u32;
            }

            world uses-missing {
                import missing;
            }
        ",
    });
}

struct Unsupported;

impl Specialist for Unsupported {
    fn describe() -> SpecialistInfo {
        SpecialistInfo::new("Test guest importing an interface the host does not provide.")
    }

    fn run(brief: Brief) -> Result<Report, RunError> {
        if brief.description == "ping" {
            let answer = missing::guild::testing::missing::ping();
            return Ok(Report::satisfied(format!("ping: {answer}")));
        }
        Ok(Report::satisfied("nothing asked"))
    }
}

guild_sdk::export_specialist!(Unsupported);
