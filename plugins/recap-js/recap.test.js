// Unit tests under plain Node with the SDK's FakeHost. Run from the repository root:
//   node --import ./sdk/js/guild-sdk/register.js --test plugins/recap-js/
import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidBrief, ToolOutcome } from "guild-sdk";
import { FakeHost, withHost } from "guild-sdk/testing";
import { SEARCH, run, withLine } from "./recap.js";

const FOUND = { total_count: 2, items: [{ title: "Crash on start" }, { title: "Crash on exit" }] };

test("searches, records in team memory and reports", async () => {
  const host = new FakeHost({ tools: { [SEARCH]: FOUND }, memory: { team: "## Decisions\n- 2026-01-01: x\n" } });
  const report = await withHost(host, () => run({ taskId: "t1", description: "crash" }));
  assert.equal(report.outcome, "satisfied");
  assert.equal(report.summary, "2 issues match 'crash'");
  assert.equal(report.details, "- Crash on start\n- Crash on exit");
  assert.equal(report.claims[0].tool, "memory.update");
  assert.match(host.memory.team, /^## Decisions\n- 2026-01-01: x\n\n## Issue recaps\n- \d{4}-\d\d-\d\d: 2 issues match 'crash'\n$/);
});

test("a denied tool fails the report naming it", async () => {
  const host = new FakeHost({ plugin: "recap-js" });
  const report = await withHost(host, () => run({ taskId: "t1", description: "crash" }));
  assert.equal(report.outcome, "failed");
  assert.match(report.openIssues[0], /denied.*tracker\.search_issues/);
  assert.equal(host.memory.team, undefined);
});

test("a failed tool keeps its error", async () => {
  const host = new FakeHost({ tools: { [SEARCH]: ToolOutcome.failed("HTTP 502") } });
  const report = await withHost(host, () => run({ taskId: "t1", description: "crash" }));
  assert.equal(report.outcome, "failed");
  assert.equal(report.openIssues[0], "tracker.search_issues failed: HTTP 502");
});

test("memory denied is partial credit", async () => {
  const host = new FakeHost({ tools: { [SEARCH]: FOUND }, memoryRights: [] });
  const report = await withHost(host, () => run({ taskId: "t1", description: "crash" }));
  assert.equal(report.hardPassed, false);
  assert.match(report.openIssues[0], /^not recorded in team memory: denied/);
});

test("the line goes at the end of its section", () => {
  assert.equal(withLine("## Issue recaps\n- a\n\n## Other\n- b\n", "- c"), "## Issue recaps\n- a\n- c\n\n## Other\n- b\n");
  assert.equal(withLine("", "- c"), "## Issue recaps\n- c\n");
});

test("an empty brief is invalid", async () => {
  await assert.rejects(withHost(new FakeHost(), () => run({ taskId: "t1", description: " " })), InvalidBrief);
});
