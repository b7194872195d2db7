"""What the specialist does with a brief, free of the generated bindings so that it runs in
plain Python (see test_logic.py)."""

import json

TOOL = "{{tool}}"


def tool_input(brief: str) -> str:
    """The tool's JSON input for a brief; a ValueError for an empty one."""
    text = brief.strip()
    if not text:
        raise ValueError(f"the brief is empty: say what to send to {TOOL}")
    return json.dumps({"text": text})
