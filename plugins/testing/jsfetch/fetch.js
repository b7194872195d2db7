// Test guest: a JavaScript specialist built with jco's default (StarlingMonkey) engine, whose
// standard `fetch()` goes out through the host's `wasi:http/outgoing-handler`. The brief is a URL;
// the report's details are JSON: {"ok": true, "status": N, "body": "..."} or
// {"ok": false, "error": "..."}.

function describe() {
  return { description: "Test guest: fetches the URL in its brief with fetch()." };
}

async function run(brief) {
  let answer;
  try {
    const response = await fetch(brief.description);
    answer = { ok: true, status: response.status, body: await response.text() };
  } catch (e) {
    // The host's refusal text (plugin, capability, origin) is in the error or its cause.
    const cause = e && e.cause ? ` (cause: ${e.cause})` : "";
    answer = { ok: false, error: `${e}${cause}` };
  }
  return {
    summary: answer.ok ? `fetched with status ${answer.status}` : "fetch failed",
    outcome: answer.ok ? "satisfied" : "failed",
    details: JSON.stringify(answer),
    hardPassed: answer.ok,
    openIssues: [],
    remainingIssues: [],
    nextStep: undefined,
    artifacts: [],
    claims: [],
  };
}

// guild:plugin@0.2.0 exports one interface per world: the specialist's is `specialist-api`.
export const specialistApi = { describe, run };
