// Unit tests under plain Node with the SDK's FakeHost: `npm test` in this folder. They find the
// tools through what the connector lists, so renaming them keeps the tests working.
import assert from "node:assert/strict";
import { test } from "node:test";
import { FakeHost, withHost } from "guild-sdk/testing";
import { connectorApi } from "./app.js";

/** The first read-only (or mutating) tool's spec. */
const tool = (mutating) => connectorApi.tools().find((spec) => spec.mutating === mutating);
const call = (name, input) => withHost(new FakeHost(), () => connectorApi.call(name, input));

test("tools are listed with their schemas", () => {
  assert.match(tool(false).inputSchema, /"text"/);
  assert.deepEqual([tool(true).receiptType, tool(true).operation], ["note", "create"]);
});

test("the read-only tool answers with the text", async () => {
  const outcome = await call(tool(false).name, '{"text": "hi"}');
  assert.equal(outcome.status.tag, "success");
  assert.ok(Object.values(JSON.parse(outcome.output)).includes("hi"));
});

test("the mutating tool returns an external id", async () => {
  const first = await call(tool(true).name, '{"text": "hi"}');
  const again = await call(tool(true).name, '{"text": "hi"}');
  assert.equal(first.status.tag, "success");
  assert.ok(first.externalId);
  assert.equal(first.externalId, again.externalId);
  assert.equal(JSON.parse(first.output).id, first.externalId);
});

test("a missing field is named", async () => {
  const outcome = await call(tool(false).name, "{}");
  assert.equal(outcome.status.tag, "failed");
  assert.match(outcome.status.val, /`text`/);
});

test("an unknown tool names the tools", async () => {
  const outcome = await call("nope", "{}");
  assert.ok(outcome.status.val.includes(tool(false).name));
});
