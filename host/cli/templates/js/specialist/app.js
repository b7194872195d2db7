// Specialist `{{name}}`: sends its brief to the `{{tool}}` tool and reports what came back.
// Test with `npm test` (plain Node, the SDK's FakeHost).
import { InvalidBrief, Report, ToolFailed, log, specialist, tools } from "guild-sdk";

// The tool this specialist calls: requested in plugin.toml, granted in guild.toml.
export const TOOL = "{{tool}}";

export function run(brief) {
  const text = brief.description.trim();
  if (!text) throw new InvalidBrief(`the brief is empty: say what to send to ${TOOL}`);
  log.info(`calling ${TOOL}`);
  let answer;
  try {
    answer = tools.call(TOOL, { text });
  } catch (e) {
    if (e instanceof ToolFailed) return Report.failed(`${TOOL} failed`, e.error).openIssue(e.message);
    // A refusal by the host (Denied, ...) ends the task with its text.
    throw e;
  }
  return Report.satisfied(`${TOOL} answered`, JSON.stringify(answer));
}

// guild:plugin@0.2.0 exports one interface per world: the specialist's is `specialist-api`.
export const specialistApi = specialist({ describe: "Sends its brief to {{tool}} and reports the answer.", run });
