// The llm wrapper against a scripted model, under plain Node. Run from sdk/js/guild-sdk: node --test test/
import assert from "node:assert/strict";
import { test } from "node:test";
import { GuildError, llm } from "../index.js";

test("a scripted model answers and records the requests", () => {
  const call = { id: "c1", name: "tracker__create_issue", arguments: '{"title":"x"}' };
  const model = new llm.ScriptedModel([{ toolCalls: [call], finishReason: "tool-calls" }, { content: "done" }], ["fast"]);
  llm.withModel(model, () => {
    assert.deepEqual(llm.models(), ["fast"]);
    const first = llm.complete("fast", [llm.system("be brief"), llm.user("file it")], {
      tools: [{ name: "tracker__create_issue", description: "Create.", parameters: { type: "object" } }],
      maxTokens: 100,
    });
    assert.equal(first.finishReason, "tool-calls");
    const history = [llm.user("file it"), llm.assistant(first.content, first.toolCalls), llm.tool("c1", '{"status":"success"}')];
    assert.equal(llm.complete("fast", history).content, "done");
  });
  assert.equal(model.requests[0].maxTokens, 100);
  assert.equal(model.requests[0].tools[0].parameters, '{"type":"object"}');
  assert.deepEqual(model.requests[1].messages.map((m) => m.tag), ["user", "assistant", "tool"]);
  assert.deepEqual(model.requests[1].messages[2].val, { callId: "c1", content: '{"status":"success"}' });
});

test("errors are typed and say whether to stop", () => {
  const spent = llm.llmError({ tag: "budget-exceeded", val: { budget: "task-tokens", limit: 1000n, used: 1200n } });
  assert.ok(spent instanceof llm.BudgetExceeded && spent instanceof GuildError && spent.isFinal);
  assert.equal(spent.message, "budget-exceeded: task token budget spent (1200 of 1000 tokens)");
  const slow = llm.llmError({ tag: "rate-limited", val: 500n });
  assert.equal(slow.retryAfterMs, 500);
  assert.equal(slow.isFinal, false);
  const denied = llm.llmError({ tag: "denied", val: "denied: plugin 'p' llm" });
  assert.equal(denied.message, "denied: plugin 'p' llm");
  assert.ok(denied.isFinal);
  const model = new llm.ScriptedModel([spent]);
  llm.withModel(model, () => {
    assert.throws(() => llm.complete("fast", [llm.user("hi")]), llm.BudgetExceeded);
    assert.throws(() => llm.complete("fast", [llm.user("hi")]), (e) => e.kind === "timeout");
  });
});

test("outside a component without a script the error names the fix", () => {
  assert.throws(() => llm.complete("fast", [llm.user("hi")]), /not running inside a Guild component/);
});
