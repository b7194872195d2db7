"""A small tool-calling loop for specialists that mix model calls with their own logic, the same
shape as the Rust kit's `agent::ToolLoop` and the C kit's `guild_chat_run`: offer connector
tools to a model, run the calls it asks for with `tools.call_outcome`, send it the results, and
stop at its answer or at the step limit (one step is one completion). Every connector call is
kept in `calls`, so a report can claim exactly what happened::

    from guild_sdk import agent

    chat = agent.ToolLoop("fast", max_steps=6).system("You file bugs.").user(brief.description)
    answer = chat.offer_granted().run()     # the model's text; raises StepLimit or an LlmError
    for call in chat.calls:
        if call.outcome and call.outcome.external_id:
            report.claim(call.tool, call.outcome.external_id, f"filed {call.outcome.external_id}")

A connector tool `connector.tool` is offered as `connector__tool` (OpenAI-compatible endpoints
accept only `[a-zA-Z0-9_-]{1,64}`) and mapped back through the loop's own table: a name the loop
did not offer is never called; the model reads why instead.
"""

import json
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from . import llm, tools
from .errors import GuildError, HostError
from .types import FAILED, ToolOutcome


def function_name(tool: str) -> str:
    """The name `connector.tool` is offered under: `connector__tool`, any character outside
    `[a-zA-Z0-9_-]` as `_`, at most 64 characters."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", tool.replace(".", "__"))[:64] or "tool"


@dataclass
class CallRecord:
    """One connector call the loop ran for the model: `outcome` as the connector reported it, or
    `error`, the host's refusal."""

    call_id: str
    tool: str
    input: Any
    outcome: Optional[ToolOutcome] = None
    error: Optional[str] = None


class StepLimit(GuildError):
    """The model still asked for tools after `max_steps` completions."""


class ToolLoop:
    """A conversation with model alias `model` that may call the offered tools."""

    def __init__(self, model: str, max_steps: int = 10, max_tokens: Optional[int] = None):
        self.model, self.max_steps, self.max_tokens = model, max_steps, max_tokens
        self.messages: List[llm.Message] = []
        self.offered: Dict[str, Tuple[str, llm.ToolDefinition]] = {}
        self.calls: List[CallRecord] = []
        self.steps = 0
        self.usage = llm.Usage()

    def system(self, text: str) -> "ToolLoop":
        self.messages.append(llm.system(text))
        return self

    def user(self, text: str) -> "ToolLoop":
        self.messages.append(llm.user(text))
        return self

    def offer(self, tool: str, description: str = "", parameters: Any = None) -> "ToolLoop":
        """Offers connector tool `tool` (`connector.tool`) with its parameters' JSON Schema."""
        name = function_name(tool)
        self.offered[name] = (tool, llm.ToolDefinition(name, description, parameters or {"type": "object"}))
        return self

    def offer_granted(self) -> "ToolLoop":
        """Offers every tool granted to this specialist, with its description and schema."""
        for granted in tools.granted():
            self.offer(granted.name, granted.spec.description, granted.spec.input_schema)
        return self

    def run(self) -> str:
        """Asks the model, runs the tool calls it wants, and again, until it answers without tool
        calls (its text), a completion fails (an `llm.LlmError`) or the step limit (`StepLimit`)."""
        definitions = [definition for _, definition in self.offered.values()]
        while self.steps < self.max_steps:
            self.steps += 1
            answer = llm.complete(self.model, self.messages, definitions, self.max_tokens)
            self.usage.prompt_tokens += answer.usage.prompt_tokens
            self.usage.completion_tokens += answer.usage.completion_tokens
            self.messages.append(answer.message())
            if not answer.tool_calls:
                return answer.content or ""
            for call in answer.tool_calls:
                self.messages.append(llm.tool(call.id, json.dumps(self._dispatch(call))))
        raise StepLimit(f"step-limit: no answer within {self.max_steps} steps")

    def _dispatch(self, call: llm.ToolCall) -> Dict[str, Any]:
        """Runs one tool call; returns what the model reads."""
        if call.name not in self.offered:
            return {"error": f"no tool named `{call.name}` is available to you; call one of: {', '.join(self.offered)}"}
        try:
            arguments = json.loads(call.arguments) if call.arguments.strip() else {}
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            return {"error": f"the arguments of `{call.name}` are not a JSON object; call it again with "
                             "arguments that match its parameters schema"}
        record = CallRecord(call.id, self.offered[call.name][0], arguments)
        self.calls.append(record)
        try:
            record.outcome = outcome = tools._call(record.tool, arguments, None)
        except HostError as err:
            record.error = str(err)
            return {"call_id": call.id, "status": "refused", "error": record.error}
        try:
            output = outcome.value()
        except ValueError:
            output = outcome.output
        message = {"call_id": call.id, "status": outcome.status, "output": output}
        if outcome.status == FAILED:
            message["error"] = outcome.error
        for key, value in (("external_id", outcome.external_id), ("url", outcome.verifiable_url)):
            if value:
                message[key] = value
        return message
