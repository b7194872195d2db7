"""The component's entry point: build.sh builds this module into {{name}}.wasm."""

import guild_sdk as guild

from logic import Notes

ConnectorApi = guild.export_connector(Notes)
