"""The three plugin kinds and how a component exports them.

Write the logic as a subclass of `Specialist`, `Connector` or `SkillLoader` working on this
SDK's plain values (unit-testable under CPython), then export it from the module componentize-py
builds, under the name the world's export interface has::

    SpecialistApi = guild_sdk.export_specialist(Digest)     # world `specialist`
    ConnectorApi = guild_sdk.export_connector(Tracker)      # world `connector`
    SkillLoaderApi = guild_sdk.export_skill_loader(Loader)  # world `skill-loader`

The exported class converts to and from the generated bindings. An exception escaping a
specialist's `run` ends the task with a `run-error` carrying its text and the line of the
plugin's own source it came from (`... (at app.py:12)`; the traceback goes to the log); escaping
a connector tool, it becomes a failed outcome saying the same.
"""

import json
import os
import sys
import traceback
from typing import Any, Callable, List, Optional

from . import _backend, log
from .errors import GuildError, HostError, InvalidInput, RunError, ToolError
from .types import Brief, Report, SkillMeta, ToolOutcome, ToolSpec


def _author_line(err: BaseException, cls: type) -> str:
    """` (at app.py:12)`: the innermost frame of `err`'s traceback in the folder of the module
    that defines `cls` (the plugin's own files, not the SDK's nor the standard library's)."""
    home = os.path.dirname(getattr(sys.modules.get(cls.__module__), "__file__", None) or "")
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if home and os.path.dirname(frame.filename) == home:
            return f" (at {os.path.basename(frame.filename)}:{frame.lineno})"
    return ""


class Specialist:
    """Takes a brief, does the work through its granted capabilities, reports.

    Set `description` (the one-line roster entry) and implement `run(brief) -> Report`. Raise
    `InvalidBrief` or `RunFailed` to end the task without a report.
    """

    description: str = ""

    def describe(self) -> str:
        return self.description

    def run(self, brief: Brief) -> Report:
        raise NotImplementedError(f"{type(self).__name__} must implement run(brief)")


def tool(
    description: str,
    input_schema: Any = None,
    *,
    name: Optional[str] = None,
    mutating: Any = False,
    receipt_type: Optional[str] = None,
    operation: Optional[str] = None,
    requires_skill: Optional[str] = None,
    approval: str = "never",
):
    """Marks a `Connector` method as a tool. The method takes the parsed JSON input and returns
    a `ToolOutcome` or any JSON value (a success); raising `ToolError` reports a failure.

    A mutating tool names its receipt type and operation, as in every kit:
    `mutating=("issue", "create")` (or `mutating=True, receipt_type=..., operation=...`)."""
    if isinstance(mutating, (tuple, list)):
        if len(mutating) != 2:
            raise TypeError("mutating=(receipt_type, operation), e.g. mutating=(\"issue\", \"create\")")
        receipt_type, operation = mutating
        mutating = True

    def mark(method: Callable) -> Callable:
        method.__guild_tool__ = ToolSpec(
            name=name or method.__name__,
            description=description,
            input_schema=input_schema if input_schema is not None else {"type": "object"},
            mutating=mutating,
            receipt_type=receipt_type,
            operation=operation,
            requires_skill=requires_skill,
            approval=approval,
        )
        return method

    return mark


def field(input: Any, name: str, kind: type = str) -> Any:
    """Member `name` of a tool's input, which must be a `kind` (a string by default); raises
    `ToolError` naming the member otherwise. The host has checked the input against the tool's
    schema; this names the member for other callers."""
    value = input.get(name) if isinstance(input, dict) else None
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise ToolError(f"field `{name}` is required and must be a {_KINDS.get(kind, kind.__name__)}")
    return value


_KINDS = {str: "string", int: "whole number", float: "number", bool: "boolean", list: "list", dict: "object"}


class Connector:
    """A set of tools over an external system: methods marked with `@tool`, or override
    `tools()` and `call(tool, input)` yourself."""

    def tools(self) -> List[ToolSpec]:
        specs = []
        for attr in dir(type(self)):
            spec = getattr(getattr(type(self), attr), "__guild_tool__", None)
            if spec is not None:
                specs.append(spec)
        return sorted(specs, key=lambda s: s.name)

    def call(self, tool: str, input: Any) -> Any:
        for attr in dir(type(self)):
            spec = getattr(getattr(type(self), attr), "__guild_tool__", None)
            if spec is not None and spec.name == tool:
                return getattr(self, attr)(input)
        raise ToolError(f"unknown tool {tool!r}; this connector has: {', '.join(s.name for s in self.tools())}")

    def outcome(self, tool: str, input_json: str) -> ToolOutcome:
        """Runs one call from its JSON input; every failure becomes a failed outcome."""
        try:
            input = json.loads(input_json) if input_json.strip() else None
        except ValueError as err:
            return ToolOutcome.failed(f"input of {tool} is not JSON: {err}")
        try:
            result = self.call(tool, input)
        except ToolError as err:
            return ToolOutcome.failed(err.error, err.output)
        except Exception as err:  # a bug in the tool: report it, keep the instance answering
            log.error(f"tool {tool} raised:\n{traceback.format_exc()}")
            return ToolOutcome.failed(f"{tool} raised {type(err).__name__}: {err}{_author_line(err, type(self))}")
        if isinstance(result, ToolOutcome):
            return result
        try:
            return ToolOutcome.success(result)
        except (TypeError, ValueError) as err:
            return ToolOutcome.failed(f"output of {tool} is not JSON-serialisable: {err}")


class SkillLoader:
    """A source of Agent Skills. Raise `InvalidInput` (unknown skill or path) or another
    `HostError` subclass from `load`/`read`."""

    def list(self) -> List[SkillMeta]:
        return []

    def load(self, name: str) -> str:
        raise InvalidInput(f"unknown skill {name!r}")

    def read(self, name: str, path: str) -> bytes:
        raise InvalidInput(f"skill {name!r} has no resource {path!r}")


def specialist(description: str, run: Callable[[Brief], Report]):
    """The export class for a specialist written as one function: `SpecialistApi =
    specialist("Greets whoever the brief names.", run)`."""

    cls = type("FunctionSpecialist", (Specialist,), {"description": description, "run": staticmethod(run)})
    return export_specialist(cls)


def connector(tools: List[ToolSpec], call: Callable[[str, Any], Any]):
    """The export class for a connector written as a tool list and one function."""

    cls = type("FunctionConnector", (Connector,), {"tools": lambda self: list(tools), "call": staticmethod(call)})
    return export_connector(cls)


def _bindings():
    # Looked up on each call, so a module that exports a plugin still imports under CPython;
    # inside a component `_backend` imported them at build time.
    wasm = _backend.wasm_module()
    return wasm, wasm.Err


def export_specialist(cls):
    """The class componentize-py calls for the `specialist` world; name it `SpecialistApi`."""

    class SpecialistApi:
        def describe(self):
            wasm, _ = _bindings()
            return wasm.raw.SpecialistInfo(description=str(cls().describe()))

        def run(self, brief):
            wasm, Err = _bindings()
            try:
                report = cls().run(Brief(task_id=brief.task_id, description=brief.description))
                if not isinstance(report, Report):
                    raise RunError(
                        f"specialist run() returned {type(report).__name__}, not a Report: return "
                        "Report.satisfied(summary), Report.partial(...) or Report.failed(...) from guild_sdk"
                    )
                return wasm.report_to_raw(report)
            except Err:
                raise
            except RunError as err:
                raise Err(wasm.run_error_to_raw(err)) from None
            except Exception as err:
                log.error(f"run raised:\n{traceback.format_exc()}")
                if isinstance(err, GuildError):
                    text = str(err)  # the SDK's own errors (a refused call's names its line)
                else:
                    text = f"{type(err).__name__}: {err}{_author_line(err, cls)}"
                raise Err(wasm.raw.RunError_Failed(text)) from None

    SpecialistApi.implementation = cls
    return SpecialistApi


def export_connector(cls):
    """The class componentize-py calls for the `connector` world; name it `ConnectorApi`."""

    class ConnectorApi:
        def tools(self):
            wasm, _ = _bindings()
            return [wasm.tool_spec_to_raw(s) for s in cls().tools()]

        def call(self, tool, input):
            wasm, _ = _bindings()
            return wasm.outcome_to_raw(cls().outcome(tool, input))

    ConnectorApi.implementation = cls
    return ConnectorApi


def export_skill_loader(cls):
    """The class componentize-py calls for the `skill-loader` world; name it `SkillLoaderApi`."""

    class SkillLoaderApi:
        def list(self):
            wasm, _ = _bindings()
            return [wasm.raw.SkillMeta(s.name, s.description) for s in cls().list()]

        def load(self, name):
            wasm, Err = _bindings()
            try:
                return cls().load(name)
            except HostError as err:
                raise Err(wasm.raw_host_error(err)) from None

        def read(self, name, path):
            wasm, Err = _bindings()
            try:
                return bytes(cls().read(name, path))
            except HostError as err:
                raise Err(wasm.raw_host_error(err)) from None

    SkillLoaderApi.implementation = cls
    return SkillLoaderApi
