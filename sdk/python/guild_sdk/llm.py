"""Chat completions through the models the operator configured (`llm = true` in plugin.toml,
granted by the operator). Specialists only. The same shape as the Rust SDK's `guild_sdk::llm`:
a plugin names a model by the alias the operator gave it; the host holds every key, enforces
the grant and token budgets, and accounts every call to the task::

    from guild_sdk import llm

    answer = llm.complete("fast", [llm.system("Answer in one sentence."), llm.user("Why?")],
                          max_tokens=200)
    answer.content, answer.tool_calls, answer.finish_reason, answer.usage

A refused or failed completion raises an `LlmError` subclass; `is_final` says whether calling
again within the task can help. In unit tests, `with llm.ScriptedModel([llm.Answer.text("hi")])
as model:` answers from a script and records `model.requests`.
"""

import importlib
import json
from dataclasses import dataclass, field
from typing import Any, List, Optional

from .errors import GuildError

# Finish reasons (the WIT enum `finish-reason`).
STOP = "stop"
LENGTH = "length"
TOOL_CALLS = "tool-calls"
CONTENT_FILTER = "content-filter"
OTHER = "other"

# Budgets (the WIT enum `budget`).
TASK_TOKENS = "task-tokens"
DAILY_TOKENS = "daily-tokens"


@dataclass
class ToolCall:
    """A tool call the model asked for; `arguments` is the JSON text the model wrote."""

    id: str = ""
    name: str = ""
    arguments: str = "{}"

    def parsed(self) -> Any:
        """The arguments as a JSON value; raises `ValueError` when they are not JSON."""
        return json.loads(self.arguments or "{}")


@dataclass
class Message:
    """One message: role `system`, `user`, `assistant` (with `tool_calls`) or `tool` (with
    `call_id`)."""

    role: str
    content: Optional[str] = None
    tool_calls: List[ToolCall] = field(default_factory=list)
    call_id: str = ""


def system(text: str) -> Message:
    return Message("system", text)


def user(text: str) -> Message:
    return Message("user", text)


def assistant(content: Optional[str] = None, tool_calls: Optional[List[ToolCall]] = None) -> Message:
    return Message("assistant", content, list(tool_calls or []))


def tool(call_id: str, content: str) -> Message:
    """The answer to tool call `call_id`."""
    return Message("tool", content, call_id=call_id)


@dataclass
class ToolDefinition:
    """A tool the model may call: `name` is `[a-zA-Z0-9_-]{1,64}`, `parameters` a JSON Schema."""

    name: str
    description: str = ""
    parameters: Any = field(default_factory=lambda: {"type": "object"})

    def parameters_json(self) -> str:
        p = self.parameters
        return p if isinstance(p, str) else json.dumps(p)


@dataclass
class Request:
    model: str
    messages: List[Message] = field(default_factory=list)
    tools: List[ToolDefinition] = field(default_factory=list)
    max_tokens: Optional[int] = None
    temperature: Optional[float] = None
    stop: List[str] = field(default_factory=list)


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class Answer:
    content: Optional[str] = None
    tool_calls: List[ToolCall] = field(default_factory=list)
    finish_reason: str = STOP
    usage: Usage = field(default_factory=Usage)

    @classmethod
    def text(cls, content: str) -> "Answer":
        return cls(content=content)

    @classmethod
    def calls(cls, tool_calls: List[ToolCall]) -> "Answer":
        return cls(tool_calls=list(tool_calls), finish_reason=TOOL_CALLS)

    def message(self) -> Message:
        """This answer as the assistant message to send back in the next request."""
        return assistant(self.content, self.tool_calls)


class LlmError(GuildError):
    """A completion did not happen. `kind` is the WIT variant's name."""

    kind = "failed"
    is_final = False

    def __init__(self, message: str):
        # The host may start its text with the kind; it is shown once.
        for prefix in (f"{self.kind}:", f"{self.kind.replace('-', ' ')}:"):
            if message.startswith(prefix):
                message = message[len(prefix):].lstrip()
        super().__init__(f"{self.kind}: {message}")
        self.message = message


class LlmDenied(LlmError):
    kind = "denied"
    is_final = True


class ModelNotGranted(LlmError):
    kind = "model-not-granted"
    is_final = True


class BudgetExceeded(LlmError):
    kind = "budget-exceeded"
    is_final = True

    def __init__(self, budget: str, limit: int, used: int):
        which = "task" if budget == TASK_TOKENS else "daily"
        super().__init__(f"{which} token budget spent ({used} of {limit} tokens)")
        self.budget, self.limit, self.used = budget, limit, used


class RateLimited(LlmError):
    kind = "rate-limited"

    def __init__(self, retry_after_ms: Optional[int] = None):
        why = f"retry after {retry_after_ms} ms" if retry_after_ms is not None else "the endpoint is rate limiting"
        super().__init__(why)
        self.retry_after_ms = retry_after_ms


class Upstream(LlmError):
    kind = "upstream"

    def __init__(self, status: int, message: str):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class LlmTimeout(LlmError):
    kind = "timeout"
    is_final = True


class MalformedAnswer(LlmError):
    kind = "malformed-answer"


class InvalidRequest(LlmError):
    kind = "invalid-request"


_scripted: List["ScriptedModel"] = []


class ScriptedModel:
    """Answers completions from a script while installed (`with ScriptedModel([...]) as m:`).
    Each entry is an `Answer` to return or an `LlmError` to raise; `requests` records every
    request. Past the end of the script it raises `LlmTimeout`."""

    def __init__(self, script: List[Any], models: Optional[List[str]] = None):
        self.script = list(script)
        self.models = list(models or ["test-model"])
        self.requests: List[Request] = []

    def __enter__(self) -> "ScriptedModel":
        _scripted.append(self)
        return self

    def __exit__(self, *exc) -> None:
        if self in _scripted:
            _scripted.remove(self)

    def llm_complete(self, request: Request) -> Answer:
        self.requests.append(request)
        if not self.script:
            raise LlmTimeout("the script has no more answers")
        step = self.script.pop(0)
        if isinstance(step, LlmError):
            raise step
        return step

    def llm_models(self) -> List[str]:
        return list(self.models)


def _model():
    """The scripted model, else an installed test host that answers completions, else the host."""
    from . import _backend

    if _scripted:
        return _scripted[-1]
    if _backend._installed and hasattr(_backend.current(), "llm_complete"):
        return _backend.current()
    if _RAW is not None:
        return _WasmLlm()
    if _backend.in_component():
        raise LlmDenied("this plugin's world does not import `llm` (only specialists have it)")
    raise _backend.NotInComponent(
        "guild_sdk.llm: not running inside a Guild component; in unit tests, wrap the code in "
        "`with guild_sdk.llm.ScriptedModel([...])`"
    )


def models() -> List[str]:
    """The model aliases this plugin may use (requested and granted)."""
    return _model().llm_models()


def complete(
    model: str,
    messages: List[Message],
    tools: Optional[List[ToolDefinition]] = None,
    max_tokens: Optional[int] = None,
    temperature: Optional[float] = None,
    stop: Optional[List[str]] = None,
) -> Answer:
    """One chat completion with model alias `model`; raises an `LlmError` when refused or failed."""
    request = Request(model, list(messages), list(tools or []), max_tokens, temperature, list(stop or []))
    return _model().llm_complete(request)


# Inside a component: the generated bindings, imported now, while componentize-py snapshots.
try:
    _RAW = importlib.import_module("wit_world.imports.llm")
except ImportError:
    _RAW = None


class _WasmLlm:
    """The host's `llm` interface through the componentize-py bindings."""

    def llm_models(self) -> List[str]:
        return list(_RAW.models())

    def llm_complete(self, request: Request) -> Answer:
        from componentize_py_types import Err

        raw_request = _RAW.Request(
            request.model,
            [_raw_message(m) for m in request.messages],
            [_RAW.ToolDefinition(t.name, t.description, t.parameters_json()) for t in request.tools],
            request.max_tokens,
            request.temperature,
            list(request.stop),
        )
        try:
            a = _RAW.complete(raw_request)
        except Err as err:
            raise _error(err.value) from None
        reason = {
            _RAW.FinishReason.STOP: STOP,
            _RAW.FinishReason.LENGTH: LENGTH,
            _RAW.FinishReason.TOOL_CALLS: TOOL_CALLS,
            _RAW.FinishReason.CONTENT_FILTER: CONTENT_FILTER,
        }.get(a.finish_reason, OTHER)
        calls = [ToolCall(c.id, c.name, c.arguments) for c in a.tool_calls]
        return Answer(a.content, calls, reason, Usage(a.usage.prompt_tokens, a.usage.completion_tokens))


def _raw_message(m: Message):
    if m.role == "system":
        return _RAW.Message_System(m.content or "")
    if m.role == "user":
        return _RAW.Message_User(m.content or "")
    if m.role == "tool":
        return _RAW.Message_Tool(_RAW.ToolResult(m.call_id, m.content or ""))
    calls = [_RAW.ToolCall(c.id, c.name, c.arguments) for c in m.tool_calls]
    return _RAW.Message_Assistant(_RAW.AssistantTurn(m.content, calls))


def _error(value) -> LlmError:
    name = type(value).__name__
    inner = getattr(value, "value", None)
    if name == "LlmError_BudgetExceeded":
        budget = DAILY_TOKENS if inner.budget == _RAW.Budget.DAILY_TOKENS else TASK_TOKENS
        return BudgetExceeded(budget, inner.limit, inner.used)
    if name == "LlmError_RateLimited":
        return RateLimited(inner)
    if name == "LlmError_Upstream":
        return Upstream(inner.status, inner.message)
    simple = {
        "LlmError_Denied": LlmDenied,
        "LlmError_ModelNotGranted": ModelNotGranted,
        "LlmError_Timeout": LlmTimeout,
        "LlmError_MalformedAnswer": MalformedAnswer,
        "LlmError_InvalidRequest": InvalidRequest,
    }
    return simple.get(name, MalformedAnswer)(str(inner if inner is not None else value))
