// Unit tests under plain Node: `npm test` in this folder.
import assert from "node:assert/strict";
import { test } from "node:test";
import { skillLoaderApi } from "./app.js";

test("the catalog lists hello", () => {
  assert.deepEqual(skillLoaderApi.list().map((s) => s.name), ["hello"]);
});

test("a known skill loads with its resource", () => {
  assert.match(skillLoaderApi.load("hello"), /# Hello/);
  assert.match(new TextDecoder().decode(skillLoaderApi.read("hello", "checklist.md")), /next step/);
});

test("an unknown skill or resource names what there is", () => {
  assert.throws(() => skillLoaderApi.load("nope"), (e) => e.payload?.tag === "invalid-input" && /hello/.test(e.message));
  assert.throws(() => skillLoaderApi.read("hello", "absent.md"), (e) => e.payload?.tag === "invalid-input" && /checklist\.md/.test(e.message));
});
