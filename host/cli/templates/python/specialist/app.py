"""The component's entry point: build.sh builds this module into {{name}}.wasm."""

import guild_sdk as guild

from logic import Ask

SpecialistApi = guild.export_specialist(Ask)
