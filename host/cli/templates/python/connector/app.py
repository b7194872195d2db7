"""Connector `{{name}}`: the `connector` world of guild:plugin@0.2.0 in Python (componentize-py).
One tool, `echo`; add yours to `tools()` and `call()`."""

import json

from wit_world import exports
from wit_world.imports import log, types

import logic


def _outcome(output: dict | None = None, error: str | None = None) -> types.ToolOutcome:
    # Every field of a WIT record must be given, or the call traps at run time.
    status = types.CallStatus_Failed(error) if error is not None else types.CallStatus_Success()
    body = {"error": error} if error is not None else output
    return types.ToolOutcome(
        output=json.dumps(body), status=status, external_id=None, verifiable_url=None, preview=None
    )


class ConnectorApi(exports.ConnectorApi):
    def tools(self) -> list[types.ToolSpec]:
        return [
            types.ToolSpec(
                name="echo",
                description="Returns the `text` it is given, unchanged.",
                input_schema=json.dumps(logic.ECHO_SCHEMA),
                mutating=False,
                receipt_type=None,
                operation=None,
                requires_skill=None,
                approval=types.Approval.NEVER,
            )
        ]

    def call(self, tool: str, input: str) -> types.ToolOutcome:
        if tool != "echo":
            return _outcome(error=f"unknown tool `{tool}`; tools: echo")
        try:
            output = logic.echo(input)
        except ValueError as err:
            return _outcome(error=str(err))
        log.log(log.Level.INFO, f"echoing {len(output['echo'])} characters")
        return _outcome(output)
