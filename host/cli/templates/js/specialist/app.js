// Specialist `{{name}}`: the `specialist` world of guild:plugin@0.2.0 in JavaScript (jco).
// Sends its brief to `{{tool}}` and reports the answer.

import { log } from "guild:plugin/log@0.2.0";
import { call } from "guild:plugin/tools@0.2.0";

const TOOL = "{{tool}}";

function describe() {
  return { description: "Sends its brief to {{tool}} and reports the answer." };
}

// Every field of a WIT record must be given, or the run traps.
function report(summary, outcome, details, openIssues) {
  return {
    summary,
    outcome,
    details,
    hardPassed: outcome === "satisfied",
    openIssues,
    remainingIssues: [],
    nextStep: undefined,
    artifacts: [],
    claims: [],
  };
}

function run(brief) {
  const text = brief.description.trim();
  if (text === "") {
    // A thrown { tag, val } is the run's typed error.
    throw { tag: "invalid-brief", val: `the brief is empty: say what to send to ${TOOL}` };
  }
  log("info", `calling ${TOOL}`);
  let result;
  try {
    result = call(TOOL, JSON.stringify({ text }), undefined);
  } catch (e) {
    const why = e?.payload ? `${e.payload.tag}: ${e.payload.val}` : `${e}`;
    throw { tag: "failed", val: `${TOOL} was refused (${why})` };
  }
  if (result.status.tag === "failed") {
    const error = result.status.val;
    return report(`${TOOL} failed`, "failed", error, [`${TOOL} failed: ${error}`]);
  }
  return report(`${TOOL} answered`, "satisfied", result.output, []);
}

// guild:plugin@0.2.0 exports one interface per world: the specialist's is `specialist-api`.
export const specialistApi = { describe, run };
