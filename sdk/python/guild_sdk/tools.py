"""Calls to the connector tools granted to this specialist (`tools = ["tracker.search_issues"]`
in plugin.toml, granted by the operator). Specialists only.

`call` returns the tool's output parsed as JSON and raises typed exceptions: `Denied` (not
granted), `InvalidInput` (unknown tool, input not an object, ...), `LimitExceeded`,
`HostFailed` (the connector trapped), `ToolFailed` (the connector reported failure; its text
verbatim) and `ToolPending`. `call_outcome` returns every fact the connector reported instead.

A refusal's text ends with the caller's file and line (`... (at keeper.py:12)`), as in every
kit: a misspelled tool name is then reported at the line that wrote it (docs/kits.md).
"""

import json
import os
import sys
from typing import Any, List, Optional

from . import _backend
from .errors import HostError, InvalidInput, ToolFailed, ToolPending
from .types import FAILED, PENDING, GrantedTool, ToolOutcome


def granted() -> List[GrantedTool]:
    """The tools this specialist may call, as `connector.tool` with their specs."""
    return _backend.current().tools_granted()


def _input_json(input: Any) -> str:
    if isinstance(input, str):
        return input
    try:
        return json.dumps(input)
    except (TypeError, ValueError) as err:
        raise InvalidInput(f"tool input is not JSON-serialisable: {err}") from None


def _caller() -> str:
    """`file.py:LINE` of the innermost frame outside this SDK: the author's call."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "guild_sdk":
        frame = frame.f_back
    if frame is None:
        return ""
    # A plugin's modules sit flat in its folder (sdk/python/componentize.sh), so the file's
    # name is where to look, whatever path the build saw.
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def _placed(err: HostError) -> HostError:
    """`err` with ` (at file.py:LINE)` after its text, same type."""
    at = _caller()
    return type(err)(f"{err.message} (at {at})") if at else err


def _call(name: str, input: Any, idempotency_key: Optional[str]) -> ToolOutcome:
    """The host's answer, a refusal without a caller's line (the agent loop runs calls a model
    chose, which no line of the author's wrote)."""
    return _backend.current().tools_call(name, _input_json({} if input is None else input), idempotency_key)


def call_outcome(name: str, input: Any = None, idempotency_key: Optional[str] = None) -> ToolOutcome:
    """Calls `connector.tool` and returns the outcome whatever its status. `input` is a JSON
    value (a str is taken as a JSON document already). Raises only the host's refusals, their
    text ending with the caller's file and line."""
    try:
        return _call(name, input, idempotency_key)
    except HostError as err:
        raise _placed(err) from None


def call(name: str, input: Any = None, idempotency_key: Optional[str] = None) -> Any:
    """Calls `connector.tool` and returns its output parsed as JSON; raises `ToolFailed` or
    `ToolPending` when the connector did not report success."""
    outcome = call_outcome(name, input, idempotency_key)
    if outcome.status == FAILED:
        raise ToolFailed(name, outcome.error or "no error text", outcome)
    if outcome.status == PENDING:
        raise ToolPending(name, outcome)
    try:
        return outcome.value()
    except ValueError as err:
        raise ToolFailed(name, f"output is not JSON: {err}", outcome) from None
