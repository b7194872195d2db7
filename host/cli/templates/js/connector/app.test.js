// Unit tests under plain Node with the SDK's FakeHost: `npm test` in this folder.
import assert from "node:assert/strict";
import { test } from "node:test";
import { FakeHost, withHost } from "guild-sdk/testing";
import { connectorApi } from "./app.js";

test("echo is listed with its schema", () => {
  const [spec] = connectorApi.tools();
  assert.equal(spec.name, "echo");
  assert.match(spec.inputSchema, /"text"/);
});

test("echo returns the text", async () => {
  const outcome = await withHost(new FakeHost(), () => connectorApi.call("echo", '{"text": "hi"}'));
  assert.equal(outcome.status.tag, "success");
  assert.deepEqual(JSON.parse(outcome.output), { echo: "hi" });
});

test("a missing field is named", async () => {
  const outcome = await withHost(new FakeHost(), () => connectorApi.call("echo", "{}"));
  assert.equal(outcome.status.tag, "failed");
  assert.match(outcome.status.val, /`text`/);
});

test("an unknown tool names the tools", async () => {
  const outcome = await withHost(new FakeHost(), () => connectorApi.call("nope", "{}"));
  assert.match(outcome.status.val, /echo/);
});
