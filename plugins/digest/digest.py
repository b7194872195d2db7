"""The `digest` specialist: searches tracker issues and reports a markdown digest grouped by
label.

Written with the Python SDK (sdk/python, `guild_sdk`), which imports nothing from the generated
bindings: all of this runs, and is unit-tested with `guild_sdk.testing.FakeHost`, under plain
CPython. `app.py` only exports it.
"""

import json
from dataclasses import dataclass
from typing import List, Optional

import guild_sdk as guild
from guild_sdk import FAILED, PARTIAL, SATISFIED, Report

DESCRIPTION = "Summarises tracker issues matching a query into a markdown digest grouped by label"
SEARCH_TOOL = "tracker.search_issues"
UNLABELLED = "unlabelled"

__all__ = ["SATISFIED", "PARTIAL", "FAILED", "DigestSpecialist"]


class DigestSpecialist(guild.Specialist):
    description = DESCRIPTION

    def run(self, brief: guild.Brief) -> Report:
        query = query_from_brief(brief.description)
        if query is None:
            guild.log.warn(f"task {brief.task_id}: empty brief")
            raise guild.InvalidBrief("the brief is empty: its first line must be the issue search query")
        guild.log.info(f"task {brief.task_id}: searching issues for {query!r}")
        try:
            output = guild.tools.call(SEARCH_TOOL, {"query": query})
        except guild.HostError as err:
            report = host_error(query, err.kind, err.message)
            guild.log.warn(f"{SEARCH_TOOL} refused by host: {report.open_issues[0]}")
            return report
        except guild.ToolPending:
            return tool_failed(query, None, "pending")
        except guild.ToolFailed as err:
            guild.log.warn(f"{SEARCH_TOOL} failed: {err.error}")
            return tool_failed(query, err.error)
        report = digest_from_document(query, output)
        if report.outcome == SATISFIED:
            guild.log.info(report.summary)
        else:
            guild.log.warn(f"{report.summary}: {'; '.join(report.open_issues)}")
        return report


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


def digest_from_output(query: str, output: str) -> Report:
    """Turns a successful tracker.search_issues output document (JSON text) into a digest."""
    try:
        doc = json.loads(output)
    except (TypeError, ValueError) as err:
        return _partial(query, f"{SEARCH_TOOL} returned output that is not JSON: {err}")
    return digest_from_document(query, doc)


def digest_from_document(query: str, doc) -> Report:
    """Turns a successful tracker.search_issues output (parsed JSON) into a digest."""
    if not isinstance(doc, dict) or not isinstance(doc.get("items", []), list):
        return _partial(query, f"{SEARCH_TOOL} returned an unexpected document (no 'items' list)")
    issues = parse_issues(doc.get("items") or [])
    total = doc.get("total_count")
    if not isinstance(total, int) or isinstance(total, bool) or total < len(issues):
        total = len(issues)
    # Searching is read-only: nothing external changed, so the report claims nothing.
    return Report.satisfied(summary_line(query, total, len(issues)), format_digest(query, total, issues))


def tool_failed(query: str, error: Optional[str], status: str = "failed") -> Report:
    """The tool ran but reported status failed (or pending): no digest, error kept verbatim."""
    text = error if error else f"{SEARCH_TOOL} returned status {status} without an error message"
    return _partial(query, text)


def host_error(query: str, kind: str, text: str) -> Report:
    """The host refused or failed the call (denied, invalid-input, limit-exceeded, failed)."""
    # The host's text usually names its kind already ("denied: ..."); do not repeat it.
    return Report.failed(
        f"Could not search issues for '{query}': the host refused or failed the call ({kind})"
    ).open_issue(text if text.startswith(kind) else f"{kind}: {text}")


def _partial(query: str, problem: str) -> Report:
    return Report.partial(f"Search for '{query}' did not produce a digest").open_issue(problem)
