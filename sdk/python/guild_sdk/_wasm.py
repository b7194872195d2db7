"""The real host: the SDK's calls mapped onto the bindings componentize-py generates.

Importable only inside a component (it imports `wit_world`). Every import interface the world
has is imported here, at build time (componentize-py snapshots the interpreter after importing
the app); one module serves every world: a connector's bindings have no `tools` or `memory`.
"""

import importlib

from componentize_py_types import Err
from wit_world.imports import types as raw

from . import errors
from . import types as t

_RAW_HOST_ERRORS = {
    raw.HostError_Denied: errors.Denied,
    raw.HostError_InvalidInput: errors.InvalidInput,
    raw.HostError_LimitExceeded: errors.LimitExceeded,
    raw.HostError_Failed: errors.HostFailed,
}


def _try_import(name: str):
    try:
        return importlib.import_module(f"wit_world.imports.{name}")
    except ImportError:
        return None


_IMPORTS = {
    name: _try_import(name) for name in ("log", "config", "http", "tools", "progress", "skills", "memory")
}


def _imports(name: str):
    module = _IMPORTS.get(name)
    if module is None:
        raise errors.Denied(f"denied: this plugin's world does not import `{name}` (only specialists have it)")
    return module


def host_error(value) -> errors.HostError:
    """A raw `host-error` as its typed exception."""
    cls = _RAW_HOST_ERRORS.get(type(value), errors.HostFailed)
    return cls(getattr(value, "value", repr(value)))


def raw_host_error(err: errors.HostError):
    """A typed exception as a raw `host-error` (skill loaders return them)."""
    cls = {
        "denied": raw.HostError_Denied,
        "invalid-input": raw.HostError_InvalidInput,
        "limit-exceeded": raw.HostError_LimitExceeded,
    }.get(err.kind, raw.HostError_Failed)
    return cls(err.message)


def _usage(u) -> t.Usage:
    return t.Usage(chars=u.chars, soft_limit=u.soft_limit, limit=u.limit)


def tool_spec_from_raw(s) -> t.ToolSpec:
    return t.ToolSpec(
        name=s.name,
        description=s.description,
        input_schema=s.input_schema,
        mutating=s.mutating,
        receipt_type=s.receipt_type,
        operation=s.operation,
        requires_skill=s.requires_skill,
        approval="always" if s.approval == raw.Approval.ALWAYS else "never",
    )


def tool_spec_to_raw(s: t.ToolSpec):
    return raw.ToolSpec(
        name=s.name,
        description=s.description,
        input_schema=s.schema_json(),
        mutating=bool(s.mutating),
        receipt_type=s.receipt_type,
        operation=s.operation,
        requires_skill=s.requires_skill,
        approval=raw.Approval.ALWAYS if s.approval == "always" else raw.Approval.NEVER,
    )


def outcome_from_raw(o) -> t.ToolOutcome:
    status, error = t.SUCCESS, None
    if isinstance(o.status, raw.CallStatus_Failed):
        status, error = t.FAILED, o.status.value
    elif isinstance(o.status, raw.CallStatus_Pending):
        status = t.PENDING
    return t.ToolOutcome(o.output, status, error, o.external_id, o.verifiable_url, o.preview)


def outcome_to_raw(o: t.ToolOutcome):
    if o.status == t.FAILED:
        status = raw.CallStatus_Failed(o.error or "the tool failed without saying why")
    elif o.status == t.PENDING:
        status = raw.CallStatus_Pending()
    else:
        status = raw.CallStatus_Success()
    return raw.ToolOutcome(o.output, status, o.external_id, o.verifiable_url, o.preview)


_OUTCOMES = {t.SATISFIED: raw.Outcome.SATISFIED, t.PARTIAL: raw.Outcome.PARTIAL, t.FAILED: raw.Outcome.FAILED}
_ACTIONS = {
    t.STOP: raw.NextAction.STOP,
    t.DESCEND: raw.NextAction.DESCEND,
    t.REFINE: raw.NextAction.REFINE,
    t.ASCEND: raw.NextAction.ASCEND,
}


def report_to_raw(r: t.Report):
    step = None
    if r.next_step is not None:
        step = raw.NextStep(_ACTIONS[r.next_step.action], r.next_step.suggested_task)
    return raw.Report(
        summary=str(r.summary),
        outcome=_OUTCOMES[r.outcome],
        details=str(r.details),
        hard_passed=bool(r.hard_passed),
        open_issues=[str(i) for i in r.open_issues],
        remaining_issues=[str(i) for i in r.remaining_issues],
        next_step=step,
        artifacts=[raw.ArtifactRef(a.id, a.kind, a.mime_type, a.sha256, a.version) for a in r.artifacts],
        claims=[raw.Claim(c.tool, c.external_id, c.text) for c in r.claims],
    )


def run_error_to_raw(err: Exception):
    if isinstance(err, errors.InvalidBrief):
        return raw.RunError_InvalidBrief(str(err))
    return raw.RunError_Failed(str(err) or type(err).__name__)


class WasmHost:
    """The host functions of guild:plugin@0.2.0, with typed values and exceptions."""

    def log(self, level: str, message: str) -> None:
        log = _imports("log")
        log.log(getattr(log.Level, level.upper(), log.Level.INFO), message)

    def config_get(self, key: str) -> str:
        try:
            return _imports("config").get(key)
        except Err as err:
            raise host_error(err.value) from None

    def http_send(self, method, url, headers, body) -> t.Response:
        http = _imports("http")
        try:
            r = http.send(http.Request(method, url, list(headers), body))
        except Err as err:
            raise host_error(err.value) from None
        return t.Response(r.status, list(r.headers), bytes(r.body))

    def tools_granted(self):
        return [t.GrantedTool(g.name, tool_spec_from_raw(g.spec)) for g in _imports("tools").granted()]

    def tools_call(self, name, input_json, idempotency_key) -> t.ToolOutcome:
        try:
            return outcome_from_raw(_imports("tools").call(name, input_json, idempotency_key))
        except Err as err:
            raise host_error(err.value) from None

    def progress_send(self, text: str) -> str:
        try:
            return _imports("progress").send(text)
        except Err as err:
            value = err.value
            if isinstance(value, raw.ProgressError_ParentGone):
                raise errors.ParentGone() from None
            if isinstance(value, raw.ProgressError_Denied):
                raise errors.Denied(value.value) from None
            raise errors.LimitExceeded(getattr(value, "value", repr(value))) from None

    def skills_catalog(self):
        return [t.SkillMeta(s.name, s.description) for s in _imports("skills").catalog()]

    def skills_load(self, name: str) -> str:
        try:
            return _imports("skills").load(name)
        except Err as err:
            raise host_error(err.value) from None

    def skills_read(self, name: str, path: str) -> bytes:
        try:
            return bytes(_imports("skills").read(name, path))
        except Err as err:
            raise host_error(err.value) from None

    def _scope(self, scope: str):
        memory = _imports("memory")
        return memory.Scope.PRIVATE if scope == t.PRIVATE else memory.Scope.TEAM

    def memory_read(self, scope: str) -> t.Document:
        try:
            d = _imports("memory").read(self._scope(scope))
        except Err as err:
            raise host_error(err.value) from None
        return t.Document(d.text, d.version, _usage(d.usage))

    def memory_update(self, scope: str, text: str) -> t.MemoryUpdate:
        memory = _imports("memory")
        try:
            r = memory.update(self._scope(scope), text)
        except Err as err:
            value = err.value
            if isinstance(value, memory.UpdateError_Refused):
                raise errors.MemoryRefused(list(value.value.errors), _usage(value.value.usage)) from None
            raise host_error(value.value) from None
        stored = no_op = None
        if isinstance(r.outcome, memory.UpdateOutcome_Stored):
            stored = r.outcome.value
        else:
            no_op = r.outcome.value
        return t.MemoryUpdate(stored, no_op, list(r.warnings), _usage(r.usage))
