// Unit tests under plain Node with the SDK's FakeHost: `npm test` in this folder.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Denied, InvalidBrief, ToolOutcome } from "guild-sdk";
import { FakeHost, withHost } from "guild-sdk/testing";
import { TOOL, run } from "./app.js";

test("the brief goes to the tool and the answer is reported", async () => {
  const host = new FakeHost({ tools: { [TOOL]: (input) => ({ echo: input.text }) } });
  const report = await withHost(host, () => run({ taskId: "t1", description: " hi " }));
  assert.deepEqual(host.calls, [[TOOL, { text: "hi" }]]);
  assert.equal(report.outcome, "satisfied");
  assert.deepEqual(JSON.parse(report.details), { echo: "hi" });
  assert.deepEqual(report.claims, []);
});

test("an external id is claimed", async () => {
  const host = new FakeHost({ tools: { [TOOL]: ToolOutcome.success({ id: "n1" }, { externalId: "n1" }) } });
  const report = await withHost(host, () => run({ taskId: "t1", description: "hi" }));
  assert.deepEqual(report.claims.map((c) => [c.tool, c.externalId]), [[TOOL, "n1"]]);
});

test("a failed tool fails the report", async () => {
  const host = new FakeHost({ tools: { [TOOL]: ToolOutcome.failed("no such thing") } });
  const report = await withHost(host, () => run({ taskId: "t1", description: "hi" }));
  assert.equal(report.outcome, "failed");
  assert.deepEqual(report.openIssues, [`${TOOL} failed: no such thing`]);
});

test("an ungranted tool is denied", async () => {
  await assert.rejects(withHost(new FakeHost(), () => run({ taskId: "t1", description: "hi" })), Denied);
});

test("an empty brief is refused", async () => {
  await assert.rejects(withHost(new FakeHost(), () => run({ taskId: "t1", description: "  " })), InvalidBrief);
});
