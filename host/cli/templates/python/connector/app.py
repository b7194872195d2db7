"""Connector `{{name}}`: `echo` returns the text it is given; `save` is a mutating tool (the host
writes a receipt for every call) that answers with an external id. Add a tool by adding a method
marked `@guild.tool(description, input_schema)`; callers name it `{{name}}.TOOL`."""

import hashlib

import guild_sdk as guild

TEXT_SCHEMA = {"type": "object", "properties": {"text": {"type": "string", "description": "The text."}},
               "required": ["text"], "additionalProperties": False}


class Notes(guild.Connector):
    @guild.tool("Returns the `text` it is given, unchanged.", TEXT_SCHEMA)
    def echo(self, input):
        return {"echo": guild.field(input, "text")}  # names a missing `text` for callers

    @guild.tool("Saves the `text` as a note and returns the note's id.", TEXT_SCHEMA, mutating=("note", "create"))
    def save(self, input):
        text = guild.field(input, "text")
        guild.log.info(f"saving {len(text)} characters")
        # The id the external system gave the note (this template stands one in).
        note_id = "note-" + hashlib.sha256(text.encode()).hexdigest()[:12]
        return guild.ToolOutcome.success({"id": note_id, "saved": text}, external_id=note_id)


# The component's entry point: build.sh builds this module into {{name}}.wasm.
ConnectorApi = guild.export_connector(Notes)
