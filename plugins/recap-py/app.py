"""The component's entry point: componentize-py builds this module (see build.sh)."""

import guild_sdk as guild

from recap import Recap

SpecialistApi = guild.export_specialist(Recap)
