// The `recap-js` specialist: counts the tracker issues matching the brief's first line, records
// a dated line under `## Issue recaps` in team memory, and reports the matches.
import { HostError, InvalidBrief, MemoryRefused, Report, ToolFailed, memory, specialist, tools } from "guild-sdk";

export const SEARCH = "tracker.search_issues";
const HEADING = "## Issue recaps";

/** `text` with `line` appended to its `## Issue recaps` section (created when missing). */
export function withLine(text, line) {
  const lines = text.trim() ? text.replace(/\n+$/, "").split("\n") : [];
  const at = lines.indexOf(HEADING);
  if (at < 0) return [...lines, ...(lines.length ? [""] : []), HEADING, line].join("\n") + "\n";
  let end = at + 1;
  while (end < lines.length && !lines[end].startsWith("## ")) end++;
  while (lines[end - 1] === "") end--;
  return [...lines.slice(0, end), line, ...lines.slice(end)].join("\n") + "\n";
}

export function run(brief) {
  const query = brief.description.trim().split("\n")[0].trim();
  if (!query) throw new InvalidBrief("the brief's first line must be a search query");
  let found;
  try {
    found = tools.call(SEARCH, { query });
  } catch (e) {
    if (e instanceof HostError || e instanceof ToolFailed) {
      return Report.failed(`could not search issues for '${query}'`).openIssue(e.message);
    }
    throw e;
  }
  const titles = (found.items ?? []).map((item) => item.title ?? "");
  const count = found.total_count ?? titles.length;
  const line = `- ${new Date().toISOString().slice(0, 10)}: ${count} issues match '${query}'`;
  const report = Report.satisfied(`${count} issues match '${query}'`, titles.map((t) => `- ${t}`).join("\n"));
  let saved;
  try {
    saved = memory.update("team", withLine(memory.read("team").text, line));
  } catch (e) {
    if (e instanceof HostError || e instanceof MemoryRefused) {
      return report.withHardPassed(false).openIssue(`not recorded in team memory: ${e.message}`);
    }
    throw e;
  }
  for (const warning of saved.warnings) report.openIssue(`memory: ${warning}`);
  return report.claim("memory.update", `recorded '${line}' in team memory (version ${saved.stored})`);
}

export const specialistApi = specialist({
  describe: "Counts tracker issues matching the brief's query and records the count in team memory",
  run,
});
