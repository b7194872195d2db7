"""The `recap-py` specialist: counts the tracker issues matching the brief's first line, records
a dated line under `## Issue recaps` in team memory, and reports the matches. A line
`summarize with ALIAS` in the brief also asks that model (`llm`) for a one-sentence summary."""

import datetime

import guild_sdk as guild

SEARCH = "tracker.search_issues"
HEADING = "## Issue recaps"
SUMMARIZE = "summarize with "


def with_line(text: str, line: str) -> str:
    """`text` with `line` appended to its `## Issue recaps` section (created when missing)."""
    lines = text.rstrip("\n").split("\n") if text.strip() else []
    if HEADING not in lines:
        return "\n".join(lines + ([""] if lines else []) + [HEADING, line]) + "\n"
    end = lines.index(HEADING) + 1
    while end < len(lines) and not lines[end].startswith("## "):
        end += 1
    while lines[end - 1] == "":
        end -= 1
    return "\n".join(lines[:end] + [line] + lines[end:]) + "\n"


class Recap(guild.Specialist):
    description = "Counts tracker issues matching the brief's query and records the count in team memory"

    def run(self, brief):
        lines = brief.description.strip().split("\n")
        query = lines[0].strip()
        if not query:
            raise guild.InvalidBrief("the brief's first line must be a search query")
        try:
            found = guild.tools.call(SEARCH, {"query": query})
        except (guild.HostError, guild.ToolFailed) as err:
            return guild.Report.failed(f"could not search issues for '{query}'").open_issue(str(err))
        titles = [item.get("title", "") for item in found.get("items", [])]
        count = found.get("total_count", len(titles))
        line = f"- {datetime.date.today().isoformat()}: {count} issues match '{query}'"
        report = guild.Report.satisfied(f"{count} issues match '{query}'", "\n".join(f"- {t}" for t in titles))
        alias = next((l.strip()[len(SUMMARIZE):] for l in lines[1:] if l.strip().startswith(SUMMARIZE)), None)
        if alias:
            try:
                answer = guild.llm.complete(alias, [guild.llm.system("Summarize these issues in one sentence."),
                                                    guild.llm.user(report.details)], max_tokens=100)
                report.details += f"\n\nSummary: {answer.content or ''}"
            except guild.llm.LlmError as err:                       # LlmDenied, BudgetExceeded, ...
                report.with_hard_passed(False).open_issue(f"no summary: {err}")
        try:
            doc = guild.memory.read(guild.TEAM)
            saved = guild.memory.update(guild.TEAM, with_line(doc.text, line))
        except (guild.HostError, guild.MemoryRefused) as err:
            return report.with_hard_passed(False).open_issue(f"not recorded in team memory: {err}")
        for warning in saved.warnings:
            report.open_issue(f"memory: {warning}")
        return report.claim("memory.update", f"recorded '{line}' in team memory (version {saved.stored})")
