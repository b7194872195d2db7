"""The `digest` specialist's component entry point (componentize-py builds this module; see
build.sh). The specialist itself is `digest.DigestSpecialist`, written with the Python SDK."""

import guild_sdk as guild

from digest import DigestSpecialist

SpecialistApi = guild.export_specialist(DigestSpecialist)
