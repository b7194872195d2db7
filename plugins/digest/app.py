"""The `digest` specialist: the `specialist` world of guild:plugin@0.2.0, written in Python.

Built with componentize-py (see build.sh). The formatting logic lives in `digest.py`, which
imports nothing from the generated bindings.
"""

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import log, tools, types

import digest

_OUTCOMES = {
    digest.SATISFIED: types.Outcome.SATISFIED,
    digest.PARTIAL: types.Outcome.PARTIAL,
    digest.FAILED: types.Outcome.FAILED,
}

_HOST_ERROR_KINDS = {
    types.HostError_Denied: "denied",
    types.HostError_InvalidInput: "invalid-input",
    types.HostError_LimitExceeded: "limit-exceeded",
    types.HostError_Failed: "failed",
}


def _log(level, message: str) -> None:
    log.log(level, message)


def _status(status: types.CallStatus) -> tuple[str, str | None]:
    """The status as a word and, for a failed call, its verbatim error."""
    if isinstance(status, types.CallStatus_Failed):
        return "failed", status.value
    if isinstance(status, types.CallStatus_Pending):
        return "pending", None
    return "success", None


def _report(d: digest.Digest) -> types.Report:
    return types.Report(
        summary=d.summary,
        outcome=_OUTCOMES[d.outcome],
        details=d.details,
        hard_passed=d.hard_passed,
        open_issues=list(d.open_issues),
        remaining_issues=[],
        next_step=None,
        artifacts=[],
        claims=[],  # searching is read-only: nothing external was changed
    )


class SpecialistApi(exports.SpecialistApi):
    def describe(self) -> types.SpecialistInfo:
        return types.SpecialistInfo(description=digest.DESCRIPTION)

    def run(self, brief: types.Brief) -> types.Report:
        query = digest.query_from_brief(brief.description)
        if query is None:
            _log(log.Level.WARN, f"task {brief.task_id}: empty brief")
            raise Err(types.RunError_InvalidBrief(
                "the brief is empty: its first line must be the issue search query"))

        _log(log.Level.INFO, f"task {brief.task_id}: searching issues for {query!r}")
        try:
            outcome = tools.call(digest.SEARCH_TOOL, digest.search_input(query), None)
        except Err as err:
            kind = _HOST_ERROR_KINDS.get(type(err.value), "error")
            text = getattr(err.value, "value", repr(err.value))
            result = digest.host_error(query, kind, text)
            _log(log.Level.WARN, f"{digest.SEARCH_TOOL} refused by host: {result.open_issues[0]}")
            return _report(result)

        if not isinstance(outcome.status, types.CallStatus_Success):
            status, error = _status(outcome.status)
            _log(log.Level.WARN, f"{digest.SEARCH_TOOL} returned status {status}: {error}")
            return _report(digest.tool_failed(query, error, status))

        result = digest.digest_from_output(query, outcome.output)
        if result.outcome == digest.SATISFIED:
            _log(log.Level.INFO, result.summary)
        else:
            _log(log.Level.WARN, f"{result.summary}: {'; '.join(result.open_issues)}")
        return _report(result)
