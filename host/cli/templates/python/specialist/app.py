"""Specialist `{{name}}`: the `specialist` world of guild:plugin@0.2.0 in Python
(componentize-py). Sends its brief to `{{tool}}` and reports the answer."""

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import log, tools, types

import logic


def _report(summary: str, outcome: types.Outcome, details: str, open_issues: list[str]) -> types.Report:
    # Every field of a WIT record must be given, or the run traps.
    return types.Report(
        summary=summary,
        outcome=outcome,
        details=details,
        hard_passed=outcome == types.Outcome.SATISFIED,
        open_issues=open_issues,
        remaining_issues=[],
        next_step=None,
        artifacts=[],
        claims=[],
    )


class SpecialistApi(exports.SpecialistApi):
    def describe(self) -> types.SpecialistInfo:
        return types.SpecialistInfo(description="Sends its brief to {{tool}} and reports the answer.")

    def run(self, brief: types.Brief) -> types.Report:
        try:
            tool_input = logic.tool_input(brief.description)
        except ValueError as err:
            raise Err(types.RunError_InvalidBrief(str(err)))
        log.log(log.Level.INFO, f"calling {logic.TOOL}")
        try:
            outcome = tools.call(logic.TOOL, tool_input, None)
        except Err as err:
            raise Err(types.RunError_Failed(f"{logic.TOOL} was refused: {err.value}"))
        if isinstance(outcome.status, types.CallStatus_Failed):
            error = outcome.status.value
            return _report(f"{logic.TOOL} failed", types.Outcome.FAILED, error, [f"{logic.TOOL} failed: {error}"])
        return _report(f"{logic.TOOL} answered", types.Outcome.SATISFIED, outcome.output, [])
