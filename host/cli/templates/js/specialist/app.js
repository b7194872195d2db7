// Specialist `{{name}}`: sends its brief to the `{{tool}}` tool and reports what came back. When
// the tool reports an external id (a mutating tool's note, issue, message ...), the report claims
// that effect; the host checks every claim against the call's receipt. Test with `npm test`.
import { InvalidBrief, Report, progress, specialist, tools } from "guild-sdk";

// The tool this specialist calls: requested in plugin.toml, granted in guild.toml.
export const TOOL = "{{tool}}";

export function run(brief) {
  const text = brief.description.trim();
  if (!text) throw new InvalidBrief(`the brief is empty: say what to send to ${TOOL}`);
  progress.send(`calling ${TOOL}`); // seen while the task runs (report = true)
  // Every fact of the call; a refusal by the host (Denied, ...) ends the task with its text.
  const outcome = tools.callOutcome(TOOL, { text });
  if (outcome.status === "failed") {
    return Report.failed(`${TOOL} failed`, outcome.error).openIssue(`${TOOL} failed: ${outcome.error}`);
  }
  const report = Report.satisfied(`${TOOL} answered`, outcome.output);
  if (outcome.externalId) report.claim(TOOL, outcome.externalId, `${TOOL} recorded the brief as ${outcome.externalId}`);
  return report;
}

// guild:plugin@0.3.0 exports one interface per world: the specialist's is `specialist-api`.
export const specialistApi = specialist({ describe: "Sends its brief to {{tool}} and reports the answer.", run });
