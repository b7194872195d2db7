// Run with `node --test` in this folder.
import { test } from "node:test";
import assert from "node:assert/strict";

import { echo } from "./app.js";

test("echo returns the text", () => {
  assert.deepEqual(echo('{"text": "hi"}'), { echo: "hi" });
});

test("a missing field is named", () => {
  assert.throws(() => echo("{}"), /`text`/);
});
