"""A test double of the host, so plugin logic runs under plain `python -m unittest`.

    with FakeHost(tools={"tracker.search_issues": lambda input: {"items": []}},
                  memory={"team": "## Decisions\\n"}) as host:
        report = Digest().run(Brief("t1", "crash"))
    host.calls   # [("tracker.search_issues", {"query": "crash"})]

Deny by default, like the host: a tool, config key, memory right, origin or skill not given to
the double raises `Denied`. Tool values are a callable taking the parsed input (returning a JSON
value or a `ToolOutcome`, or raising `ToolError` or a `HostError`), a `ToolOutcome`, an exception
instance to raise, or any JSON value to return.
"""

import json
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from . import _backend
from .errors import Denied, InvalidInput, MemoryRefused, ParentGone, ToolError
from .types import Document, GrantedTool, MemoryUpdate, Response, SkillMeta, ToolOutcome, ToolSpec, Usage

HARD_LIMIT = 25_000
SOFT_LIMIT = 18_000


class FakeHost:
    """Stands in for the host while installed (`with FakeHost(...)`, or `install()`/`uninstall()`)."""

    def __init__(
        self,
        tools: Optional[Dict[str, Any]] = None,
        config: Optional[Dict[str, str]] = None,
        memory: Optional[Dict[str, str]] = None,
        memory_rights: Iterable[str] = ("team:read", "team:write", "private:read", "private:write"),
        http: Optional[Callable[[str, str, List[Tuple[str, str]], Optional[bytes]], Response]] = None,
        skills: Optional[Dict[str, Tuple[str, str, Dict[str, bytes]]]] = None,
        progress: bool = True,
        plugin: str = "test-plugin",
    ):
        self.plugin = plugin
        self.tools = dict(tools or {})
        self.config = dict(config or {})
        self.memory: Dict[str, str] = dict(memory or {})
        self.versions: Dict[str, int] = {scope: 1 for scope in self.memory}
        self.memory_rights = set(memory_rights)
        self.http = http
        self.skills = dict(skills or {})
        self.progress_granted = progress
        self.parent_live = True
        self.calls: List[Tuple[str, Any]] = []
        self.logs: List[Tuple[str, str]] = []
        self.progress: List[str] = []
        self.requests: List[Tuple[str, str]] = []

    def install(self) -> "FakeHost":
        _backend.install(self)
        return self

    def uninstall(self) -> None:
        _backend.uninstall(self)

    def __enter__(self) -> "FakeHost":
        return self.install()

    def __exit__(self, *exc) -> None:
        self.uninstall()

    def _denied(self, capability: str, target: str) -> Denied:
        return Denied(f"denied: plugin `{self.plugin}` has no `{capability}` grant for {target}")

    # The host functions, as guild_sdk's modules call them.

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))

    def config_get(self, key: str) -> str:
        if key not in self.config:
            raise self._denied("config", f"key `{key}`")
        return self.config[key]

    def http_send(self, method, url, headers, body) -> Response:
        self.requests.append((method, url))
        if self.http is None:
            raise self._denied("http", url)
        return self.http(method, url, headers, body)

    def tools_granted(self) -> List[GrantedTool]:
        return [GrantedTool(name, ToolSpec(name.split(".")[-1], "")) for name in sorted(self.tools)]

    def tools_call(self, name: str, input_json: str, idempotency_key) -> ToolOutcome:
        try:
            input = json.loads(input_json)
        except ValueError as err:
            raise InvalidInput(f"invalid-input: input of {name} is not JSON: {err}") from None
        self.calls.append((name, input))
        if name not in self.tools:
            raise self._denied("tools", f"tool `{name}`")
        answer = self.tools[name]
        if callable(answer) and not isinstance(answer, type):
            try:
                answer = answer(input)
            except ToolError as err:
                return ToolOutcome.failed(err.error, err.output)
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, ToolOutcome):
            return answer
        return ToolOutcome.success(answer)

    def progress_send(self, text: str) -> str:
        if not self.progress_granted:
            raise self._denied("report", "progress reports")
        if not self.parent_live:
            raise ParentGone()
        self.progress.append(text)
        return f"msg-{len(self.progress)}"

    def skills_catalog(self) -> List[SkillMeta]:
        return [SkillMeta(name, entry[0]) for name, entry in sorted(self.skills.items())]

    def skills_load(self, name: str) -> str:
        if name not in self.skills:
            raise InvalidInput(f"invalid-input: unknown skill `{name}`")
        return self.skills[name][1]

    def skills_read(self, name: str, path: str) -> bytes:
        files = self.skills.get(name, ("", "", {}))[2]
        if path not in files:
            raise InvalidInput(f"invalid-input: skill `{name}` has no resource `{path}`")
        return files[path]

    def _usage(self, text: str) -> Usage:
        return Usage(chars=len(text), soft_limit=SOFT_LIMIT, limit=HARD_LIMIT)

    def memory_read(self, scope: str) -> Document:
        if f"{scope}:read" not in self.memory_rights:
            raise self._denied("memory", f"`{scope}:read`")
        text = self.memory.get(scope, "")
        return Document(text, self.versions.get(scope, 0), self._usage(text))

    def memory_update(self, scope: str, text: str) -> MemoryUpdate:
        """Checks the size limits and the heading rule only; the host validates fully."""
        if f"{scope}:write" not in self.memory_rights:
            raise self._denied("memory", f"`{scope}:write`")
        usage = self._usage(text)
        errors = []
        if len(text) > HARD_LIMIT:
            errors.append(f"Memory exceeds the {HARD_LIMIT} character limit.")
        if len(text.strip()) > 40 and "\n## " not in f"\n{text}":
            errors.append("Memory must be markdown with at least one ## heading.")
        if errors:
            raise MemoryRefused(errors, usage)
        if text.strip() in ("", "NO_UPDATE", "NO CHANGE") or text == self.memory.get(scope):
            return MemoryUpdate(no_op="nothing changed", usage=self._usage(self.memory.get(scope, "")))
        warnings = [f"Memory is over {SOFT_LIMIT} characters: consolidate."] if len(text) > SOFT_LIMIT else []
        self.memory[scope] = text
        self.versions[scope] = self.versions.get(scope, 0) + 1
        return MemoryUpdate(stored=self.versions[scope], warnings=warnings, usage=usage)


__all__ = ["FakeHost"]
