"""Every failure a Guild plugin can see, as typed exceptions.

The host's refusals (the WIT `host-error` variant) become `HostError` subclasses: `Denied`,
`InvalidInput`, `LimitExceeded`, `HostFailed`. Their text is the host's, verbatim: it names the
plugin, the capability and the target. A tool call the connector reports as failed raises
`ToolFailed`; a refused memory write `MemoryRefused`. A specialist ends its run early with
`InvalidBrief` or `RunFailed`.
"""

from typing import List, Optional


class GuildError(Exception):
    """Base of every exception this SDK raises."""


class HostError(GuildError):
    """The host refused or failed a call. `kind` is the WIT variant's name."""

    kind = "failed"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class Denied(HostError):
    """The capability was not requested in plugin.toml or not granted by the operator."""

    kind = "denied"


class InvalidInput(HostError):
    """The input was malformed: bad URL, bad JSON, unknown tool or skill, ..."""

    kind = "invalid-input"


class LimitExceeded(HostError):
    """A size or time limit was hit."""

    kind = "limit-exceeded"


class HostFailed(HostError):
    """The operation was allowed but failed (network error, the tool's plugin trapped, ...)."""

    kind = "failed"


HOST_ERRORS = {cls.kind: cls for cls in (Denied, InvalidInput, LimitExceeded, HostFailed)}


class ToolFailed(GuildError):
    """The connector ran and reported status `failed`; `error` is its text, verbatim."""

    def __init__(self, tool: str, error: str, outcome=None):
        super().__init__(f"{tool} failed: {error}")
        self.tool = tool
        self.error = error
        self.outcome = outcome


class ToolPending(GuildError):
    """The connector started the work but has not finished it (status `pending`). Do not call
    again hoping it completes: the host records the receipt and resolves it later."""

    def __init__(self, tool: str, outcome=None):
        super().__init__(f"{tool} is pending: started, not finished")
        self.tool = tool
        self.outcome = outcome


class MemoryRefused(GuildError):
    """The host's memory validator refused the text; the stored version is unchanged."""

    def __init__(self, errors: List[str], usage=None):
        where = f" ({usage})" if usage is not None else ""
        super().__init__(f"memory update refused{where}: {' '.join(errors)}")
        self.errors = list(errors)
        self.usage = usage


class ParentGone(GuildError):
    """A progress report was not delivered: the task's parent is not live. The run goes on."""

    def __init__(self, message: str = "direct parent is not live; report was not delivered"):
        super().__init__(message)


class RunError(GuildError):
    """Raise a subclass from a specialist's `run` to end the task without a report."""

    kind = "failed"


class InvalidBrief(RunError):
    """The brief cannot be acted on; the text says what is missing."""

    kind = "invalid-brief"


class RunFailed(RunError):
    """The work failed as a whole."""

    kind = "failed"


class ToolError(GuildError):
    """Raise from a connector tool to report the call as failed with this text (kept verbatim
    in the receipt). `output` is an optional JSON value returned alongside."""

    def __init__(self, error: str, output: Optional[object] = None):
        super().__init__(error)
        self.error = error
        self.output = output
