// The tool-calling loop against a scripted model and the fake host, under plain Node.
// Run from sdk/js/guild-sdk: node --test test/
import assert from "node:assert/strict";
import { test } from "node:test";
import { Denied, ToolOutcome, agent, llm } from "../index.js";
import { FakeHost, withHost } from "../testing.js";

const ask = (id, name, args) => ({ toolCalls: [{ id, name, arguments: args }], finishReason: "tool-calls" });

test("the loop runs offered tools and ends at the answer", async () => {
  const host = new FakeHost({ tools: { "notes.save": ToolOutcome.success({ id: "n-7" }, { externalId: "n-7" }) } });
  const script = [ask("c1", "notes__nope", "{}"), ask("c2", "notes__save", "[1]"), ask("c3", "notes__save", '{"text":"hi"}'), { content: "saved as n-7" }];
  const model = new llm.ScriptedModel(script);
  const chat = new agent.ToolLoop("fast").user("save hi");
  const answer = await withHost(host, () => llm.withModel(model, () => chat.offerGranted().run()));
  assert.equal(answer, "saved as n-7");
  assert.deepEqual(host.calls, [["notes.save", { text: "hi" }]]);
  assert.equal(model.requests[0].tools[0].name, "notes__save");
  const read = model.requests[3].messages.filter((m) => m.tag === "tool").map((m) => JSON.parse(m.val.content));
  assert.match(read[0].error, /no tool named `notes__nope`/);
  assert.match(read[1].error, /not a JSON object/);
  assert.deepEqual([read[2].status, read[2].external_id, read[2].output], ["success", "n-7", { id: "n-7" }]);
  assert.deepEqual(chat.calls.map((c) => [c.tool, c.outcome.externalId]), [["notes.save", "n-7"]]);
  assert.equal(chat.steps, 4);
});

test("a refused call is recorded and read by the model", async () => {
  const model = new llm.ScriptedModel([ask("c1", "notes__save", '{"text":"hi"}'), { content: "could not" }]);
  const chat = new agent.ToolLoop("fast").user("save hi").offer("notes.save", "Saves.");
  const answer = await withHost(new FakeHost({ plugin: "writer" }), () => llm.withModel(model, () => chat.run()));
  assert.equal(answer, "could not");
  assert.match(chat.calls[0].error, /^denied/);
  assert.equal(JSON.parse(model.requests[1].messages.at(-1).val.content).status, "refused");
});

test("the step limit and model errors end the loop", async () => {
  const looping = new llm.ScriptedModel([ask("c1", "x__y", "{}")]);
  await assert.rejects(() => withHost(new FakeHost(), () => llm.withModel(looping, () => new agent.ToolLoop("fast", { maxSteps: 1 }).user("loop").run())), agent.StepLimit);
  const denied = new llm.ScriptedModel([llm.llmError({ tag: "denied", val: "denied: plugin 'writer' capability llm is not granted" })]);
  await assert.rejects(
    () => withHost(new FakeHost(), () => llm.withModel(denied, () => new agent.ToolLoop("fast").user("hi").run())),
    (e) => e instanceof llm.LlmError && e.kind === "denied" && e.message.split("denied").length === 2,
  );
  assert.ok(!(Denied.prototype instanceof llm.LlmError));
});

test("function names are what endpoints accept", () => {
  assert.equal(agent.functionName("tracker.create_issue"), "tracker__create_issue");
  assert.equal(agent.functionName("a.b c"), "a__b_c");
  assert.equal(agent.functionName("x".repeat(100)).length, 64);
});
