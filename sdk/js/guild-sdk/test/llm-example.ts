// Type-checked by test/types.test.js (never run): the llm wrapper
// against the SDK's hand-written types and the WIT's generated ones.
import { llm } from "guild-sdk";

export function ask(question: string): string {
  const model = new llm.ScriptedModel([{ content: "yes" }]);
  return llm.withModel(model, () => {
    try {
      const answer = llm.complete("fast", [llm.system("Answer briefly."), llm.user(question)], {
        tools: [{ name: "kb__search", parameters: { type: "object" } }],
        maxTokens: 64,
      });
      const calls: string[] = answer.toolCalls.map((c) => c.name);
      return answer.content ?? calls.join(", ");
    } catch (e) {
      if (e instanceof llm.BudgetExceeded) return `spent ${e.used} of ${e.limit}`;
      throw e;
    }
  });
}

// The tool-calling loop, and the kit's input and hashing helpers.
import { agent, field, sha256Hex } from "guild-sdk";

export function fileBug(description: string): string {
  const chat = new agent.ToolLoop("fast", { maxSteps: 4 }).system("You file bugs.").user(description).offerGranted();
  const text: string = chat.run();
  const ids: string[] = chat.calls.flatMap((c) => (c.outcome?.externalId ? [c.outcome.externalId] : []));
  const title: string = field({ title: text }, "title");
  return `${title} ${ids.join(",")} ${sha256Hex(text).slice(0, 8)} ${agent.functionName("a.b")}`;
}
