"""Plain Python values for everything that crosses the WIT boundary.

These mirror the records of guild:plugin@0.2.0 with defaults for every optional field, so
leaving a field out never traps at run time. They import nothing from the generated bindings:
plugin logic built on them runs and is unit-tested under plain CPython.
"""

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

# Outcome of a report (the WIT enum `outcome`).
SATISFIED = "satisfied"
PARTIAL = "partial"
FAILED = "failed"
OUTCOMES = (SATISFIED, PARTIAL, FAILED)

# Next actions (the WIT enum `next-action`).
STOP = "stop"
DESCEND = "descend"
REFINE = "refine"
ASCEND = "ascend"
NEXT_ACTIONS = (STOP, DESCEND, REFINE, ASCEND)

# Tool call statuses (the WIT variant `call-status`).
SUCCESS = "success"
PENDING = "pending"
STATUSES = (SUCCESS, PENDING, FAILED)

# Memory scopes (the WIT enum `scope`).
TEAM = "team"
PRIVATE = "private"
SCOPES = (TEAM, PRIVATE)


def sha256_hex(data) -> str:
    """Hex sha256 of `data` (str is encoded as UTF-8), as artifact refs carry it."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


@dataclass
class Brief:
    """The work handed to a specialist; it carries all context."""

    task_id: str = ""
    description: str = ""


@dataclass
class NextStep:
    """A next-step suggestion; descend and refine need a suggested task."""

    action: str = STOP
    suggested_task: Optional[str] = None


@dataclass
class ArtifactRef:
    """A file or document the specialist produced, resolvable by the host."""

    id: str
    kind: str = "file"
    mime_type: str = "application/octet-stream"
    sha256: str = ""
    version: Optional[str] = None


@dataclass
class Claim:
    """An external effect the specialist claims: the tool and the external id it returned."""

    tool: str
    text: str
    external_id: Optional[str] = None


@dataclass
class Report:
    """The specialist's final report: a hypothesis the host validates against receipts.

    Every field has a default; the class methods and chained setters build one::

        Report.satisfied("filed 1 issue").with_details("- #12").claim("tracker.create_issue", "created #12", "12")
    """

    summary: str = ""
    outcome: str = SATISFIED
    details: str = ""
    hard_passed: Optional[bool] = None
    open_issues: List[str] = field(default_factory=list)
    remaining_issues: List[str] = field(default_factory=list)
    next_step: Optional[NextStep] = None
    artifacts: List[ArtifactRef] = field(default_factory=list)
    claims: List[Claim] = field(default_factory=list)

    def __post_init__(self):
        if self.outcome not in OUTCOMES:
            raise ValueError(f"report outcome must be one of {', '.join(OUTCOMES)}, not {self.outcome!r}")
        # True only for a satisfied report unless the author says otherwise.
        if self.hard_passed is None:
            self.hard_passed = self.outcome == SATISFIED

    @classmethod
    def satisfied(cls, summary: str, details: str = "") -> "Report":
        """Everything the brief asked for was done."""
        return cls(summary=summary, outcome=SATISFIED, details=details)

    @classmethod
    def partial(cls, summary: str, details: str = "") -> "Report":
        """Some of the work was done."""
        return cls(summary=summary, outcome=PARTIAL, details=details)

    @classmethod
    def failed(cls, summary: str, details: str = "") -> "Report":
        """The work was not done."""
        return cls(summary=summary, outcome=FAILED, details=details)

    def with_details(self, markdown: str) -> "Report":
        self.details = markdown
        return self

    def with_hard_passed(self, passed: bool) -> "Report":
        self.hard_passed = passed
        return self

    def open_issue(self, text: str) -> "Report":
        self.open_issues.append(text)
        return self

    def remaining_issue(self, text: str) -> "Report":
        self.remaining_issues.append(text)
        return self

    def claim(self, tool: str, external_id: Optional[str] = None, text: Optional[str] = None) -> "Report":
        """Claims an external effect of `tool`: `claim(tool, external_id, text)`, the order of
        every kit (the id the call returned, e.g. `outcome.external_id`). `claim(tool, text)`
        with two arguments claims without an id, as `claim_without_id` does."""
        if text is None:
            external_id, text = None, external_id
        self.claims.append(Claim(tool=tool, text=str(text), external_id=external_id))
        return self

    def claim_without_id(self, tool: str, text: str) -> "Report":
        """Claims an effect of a tool that returned no external id."""
        self.claims.append(Claim(tool=tool, text=text, external_id=None))
        return self

    def artifact(self, artifact: ArtifactRef) -> "Report":
        self.artifacts.append(artifact)
        return self

    def suggest(self, action: str, suggested_task: Optional[str] = None) -> "Report":
        if action not in NEXT_ACTIONS:
            raise ValueError(f"next action must be one of {', '.join(NEXT_ACTIONS)}, not {action!r}")
        self.next_step = NextStep(action=action, suggested_task=suggested_task)
        return self


@dataclass
class ToolSpec:
    """What a connector says about one of its tools. `input_schema` is a JSON Schema (a dict,
    or a JSON string)."""

    name: str
    description: str
    input_schema: Any = field(default_factory=lambda: {"type": "object"})
    mutating: bool = False
    receipt_type: Optional[str] = None
    operation: Optional[str] = None
    requires_skill: Optional[str] = None
    approval: str = "never"

    def schema_json(self) -> str:
        if isinstance(self.input_schema, str):
            return self.input_schema
        return json.dumps(self.input_schema)


@dataclass
class ToolOutcome:
    """Facts about one tool call. `output` is the JSON document as text; `value()` parses it.

    A connector returns one (or any JSON value, which becomes a success); a specialist gets one
    from `tools.call_outcome`.
    """

    output: str = "null"
    status: str = SUCCESS
    error: Optional[str] = None
    external_id: Optional[str] = None
    verifiable_url: Optional[str] = None
    preview: Optional[str] = None

    @classmethod
    def success(cls, output: Any = None, external_id=None, verifiable_url=None, preview=None) -> "ToolOutcome":
        return cls(json.dumps(output), SUCCESS, None, external_id, verifiable_url, preview)

    @classmethod
    def pending(cls, output: Any = None, external_id=None, verifiable_url=None, preview=None) -> "ToolOutcome":
        return cls(json.dumps(output), PENDING, None, external_id, verifiable_url, preview)

    @classmethod
    def failed(cls, error: str, output: Any = None) -> "ToolOutcome":
        return cls(json.dumps(output), FAILED, error)

    def value(self) -> Any:
        """The output parsed as JSON (None for an empty output)."""
        return json.loads(self.output) if self.output.strip() else None


@dataclass
class GrantedTool:
    """A tool this specialist may call: `connector.tool` and its spec."""

    name: str
    spec: ToolSpec


@dataclass
class SkillMeta:
    name: str
    description: str


@dataclass
class Usage:
    """A memory document's size against the limits, in characters."""

    chars: int = 0
    soft_limit: int = 18_000
    limit: int = 25_000

    def __str__(self) -> str:
        return f"{self.chars} / {self.limit} characters"


@dataclass
class Document:
    """A memory document as read: its newest version (0 and empty when nothing was stored)."""

    text: str = ""
    version: int = 0
    usage: Usage = field(default_factory=Usage)


@dataclass
class MemoryUpdate:
    """An accepted update: the stored version, or why nothing changed; warnings to act on."""

    stored: Optional[int] = None
    no_op: Optional[str] = None
    warnings: List[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


@dataclass
class Response:
    """An HTTP response from `http.send`."""

    status: int
    headers: List[Tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.body)
