"""What the `echo` tool does, free of the generated bindings so that it runs in plain Python
(see test_logic.py)."""

import json

ECHO_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "What to echo."}},
    "required": ["text"],
    "additionalProperties": False,
}


def echo(input_json: str) -> dict:
    """`{"text": T}` in, `{"echo": T}` out; a ValueError names what was wrong."""
    try:
        data = json.loads(input_json)
    except json.JSONDecodeError as err:
        raise ValueError(f"input is not valid JSON: {err}") from err
    text = data.get("text") if isinstance(data, dict) else None
    if not isinstance(text, str):
        raise ValueError("field `text` is required and must be a string")
    return {"echo": text}
