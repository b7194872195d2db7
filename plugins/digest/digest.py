"""Pure digest logic for the `digest` specialist.

Nothing here imports the WIT bindings, so it runs (and is unit-tested) under plain CPython.
`app.py` maps these plain values onto the generated `wit_world` types.
"""

import json
from dataclasses import dataclass, field
from typing import List, Optional

DESCRIPTION = "Summarises tracker issues matching a query into a markdown digest grouped by label"
SEARCH_TOOL = "tracker.search_issues"
UNLABELLED = "unlabelled"

# Outcome names, mirroring the WIT enum `outcome`.
SATISFIED = "satisfied"
PARTIAL = "partial"
FAILED = "failed"


@dataclass
class Digest:
    """What the specialist reports, in plain Python values."""

    summary: str
    outcome: str
    details: str
    hard_passed: bool
    open_issues: List[str] = field(default_factory=list)


@dataclass
class Issue:
    number: Optional[int]
    title: str
    state: str
    labels: List[str]
    url: str


def query_from_brief(description: str) -> Optional[str]:
    """The search query: the brief's first non-blank line, trimmed. None when there is none."""
    text = (description or "").strip()
    if not text:
        return None
    return text.splitlines()[0].strip() or None


def search_input(query: str) -> str:
    return json.dumps({"query": query})


def _label_name(label) -> Optional[str]:
    if isinstance(label, str):
        name = label
    elif isinstance(label, dict):
        name = label.get("name")
    else:
        return None
    if not isinstance(name, str):
        return None
    name = name.strip()
    return name or None


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def parse_issues(items) -> List[Issue]:
    issues = []
    for item in items:
        if not isinstance(item, dict):
            continue
        number = item.get("number")
        if not isinstance(number, int) or isinstance(number, bool):
            number = None
        labels = []
        for label in item.get("labels") or []:
            name = _label_name(label)
            if name is not None and name not in labels:
                labels.append(name)
        issues.append(
            Issue(
                number=number,
                title=_one_line(item.get("title") or "(untitled)"),
                state=_one_line(item.get("state") or ""),
                labels=labels,
                url=str(item.get("html_url") or ""),
            )
        )
    return issues


def summary_line(query: str, total: int, shown: int) -> str:
    if total == 0:
        text = f"No issues match '{query}'"
    elif total == 1:
        text = f"1 issue matches '{query}'"
    else:
        text = f"{total} issues match '{query}'"
    if shown < total:
        text += f" (showing {shown})"
    return text


def _escape_link_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _issue_line(issue: Issue) -> str:
    ref = f"#{issue.number}" if issue.number is not None else "#?"
    title = _escape_link_text(issue.title)
    head = f"[{ref} {title}]({issue.url})" if issue.url else f"{ref} {title}"
    state = f" — {issue.state}" if issue.state else ""
    return f"- {head}{state}"


def format_digest(query: str, total: int, issues: List[Issue]) -> str:
    """Markdown digest: one section per label (alphabetical), unlabelled issues last.

    An issue with several labels is listed under each of them.
    """
    lines = [f"# Digest: {_one_line(query)}", "", summary_line(query, total, len(issues)) + "."]
    groups = {}
    unlabelled = []
    for issue in issues:
        if not issue.labels:
            unlabelled.append(issue)
        for label in issue.labels:
            groups.setdefault(label, []).append(issue)
    ordered = sorted(groups.items(), key=lambda kv: (kv[0].casefold(), kv[0]))
    if unlabelled:
        ordered.append((UNLABELLED, unlabelled))
    for label, members in ordered:
        lines += ["", f"## {label} ({len(members)})", ""]
        lines += [_issue_line(issue) for issue in members]
    return "\n".join(lines) + "\n"


def digest_from_output(query: str, output: str) -> Digest:
    """Turns a successful tracker.search_issues output document into a digest."""
    try:
        doc = json.loads(output)
    except (TypeError, ValueError) as err:
        return _partial(query, f"{SEARCH_TOOL} returned output that is not JSON: {err}")
    if not isinstance(doc, dict) or not isinstance(doc.get("items", []), list):
        return _partial(query, f"{SEARCH_TOOL} returned an unexpected document (no 'items' list)")
    issues = parse_issues(doc.get("items") or [])
    total = doc.get("total_count")
    if not isinstance(total, int) or isinstance(total, bool) or total < len(issues):
        total = len(issues)
    return Digest(
        summary=summary_line(query, total, len(issues)),
        outcome=SATISFIED,
        details=format_digest(query, total, issues),
        hard_passed=True,
    )


def tool_failed(query: str, error: Optional[str], status: str = "failed") -> Digest:
    """The tool ran but reported status failed (or pending): no digest, error kept verbatim."""
    text = error if error else f"{SEARCH_TOOL} returned status {status} without an error message"
    return _partial(query, text)


def host_error(query: str, kind: str, text: str) -> Digest:
    """The host refused or failed the call (denied, invalid-input, limit-exceeded, failed)."""
    return Digest(
        summary=f"Could not search issues for '{query}': the host refused or failed the call ({kind})",
        outcome=FAILED,
        details="",
        hard_passed=False,
        # The host's text usually names its kind already ("denied: ..."); do not repeat it.
        open_issues=[text if text.startswith(kind) else f"{kind}: {text}"],
    )


def _partial(query: str, problem: str) -> Digest:
    return Digest(
        summary=f"Search for '{query}' did not produce a digest",
        outcome=PARTIAL,
        details="",
        hard_passed=False,
        open_issues=[problem],
    )
