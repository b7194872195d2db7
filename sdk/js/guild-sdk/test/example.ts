// Type-checked by test/types.test.js (never run): a TypeScript specialist and connector against
// the SDK's hand-written types and the WIT's generated ones.
import { Denied, Report, ToolOutcome, connector, memory, specialist, tools, type Brief } from "guild-sdk";
import { FakeHost, withHost } from "guild-sdk/testing";

function run(brief: Brief): Report {
  try {
    const found = tools.call("tracker.search_issues", { query: brief.description }) as { total_count: number };
    const doc = memory.read("team");
    const saved = memory.update("team", `${doc.text}- 2026-01-01: ${found.total_count} issues\n`);
    return Report.satisfied(`${found.total_count} issues`).claim("memory.update", `version ${saved.stored}`);
  } catch (e) {
    if (e instanceof Denied) return Report.failed("denied").openIssue(e.message);
    throw e;
  }
}

export const specialistApi = specialist({ describe: "Counts issues.", run });

export const connectorApi = connector({
  tools: {
    echo: { description: "Echoes.", inputSchema: { type: "object" }, run: (input: { text: string }) => ToolOutcome.success(input.text) },
  },
});

export const checked: Promise<Report> = withHost(new FakeHost({ tools: { "tracker.search_issues": { total_count: 1 } } }), () =>
  run({ taskId: "t", description: "crash" }),
);
