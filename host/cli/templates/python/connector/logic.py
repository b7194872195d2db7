"""Connector `{{name}}`: one tool, `echo`, that returns the text it is given. Add a tool by
adding a method marked `@guild.tool(description, input_schema)`."""

import guild_sdk as guild

ECHO_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "What to echo."}},
    "required": ["text"],
    "additionalProperties": False,
}


class Echo(guild.Connector):
    @guild.tool("Returns the `text` it is given, unchanged.", ECHO_SCHEMA)
    def echo(self, input):
        # The host checked the input against ECHO_SCHEMA; this names the field for other callers.
        text = input.get("text") if isinstance(input, dict) else None
        if not isinstance(text, str):
            raise guild.ToolError("field `text` is required and must be a string")
        guild.log.info(f"echoing {len(text)} characters")
        return {"echo": text}
