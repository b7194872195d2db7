//! The smallest useful specialist: greets whoever the brief names.
use guild_sdk::{Brief, Report, RunError, Specialist, SpecialistInfo, config, log};

struct Greeter;

impl Specialist for Greeter {
    fn describe() -> SpecialistInfo {
        SpecialistInfo::new("Greets whoever the brief names.")
    }

    fn run(brief: Brief) -> Result<Report, RunError> {
        let name = brief.description.trim();
        if name.is_empty() {
            return Err(RunError::InvalidBrief("name someone to greet".into()));
        }
        let greeting = config::get("greeting").unwrap_or_else(|_| "Hello".into());
        log::info(format!("greeting {name}"));
        Ok(Report::satisfied(format!("greeted {name}")).details(format!("{greeting}, {name}!")))
    }
}

guild_sdk::export_specialist!(Greeter);
