"""Calls to the connector tools granted to this specialist (`tools = ["tracker.search_issues"]`
in plugin.toml, granted by the operator). Specialists only.

`call` returns the tool's output parsed as JSON and raises typed exceptions: `Denied` (not
granted), `InvalidInput` (unknown tool, input not an object, ...), `LimitExceeded`,
`HostFailed` (the connector trapped), `ToolFailed` (the connector reported failure; its text
verbatim) and `ToolPending`. `call_outcome` returns every fact the connector reported instead.
"""

import json
from typing import Any, List, Optional

from . import _backend
from .errors import InvalidInput, ToolFailed, ToolPending
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


def call_outcome(name: str, input: Any = None, idempotency_key: Optional[str] = None) -> ToolOutcome:
    """Calls `connector.tool` and returns the outcome whatever its status. `input` is a JSON
    value (a str is taken as a JSON document already). Raises only the host's refusals."""
    return _backend.current().tools_call(name, _input_json({} if input is None else input), idempotency_key)


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
