// A small tool-calling loop for specialists that mix model calls with their own logic, the same
// shape as the Rust kit's `agent::ToolLoop`, the Python kit's `agent.ToolLoop` and the C kit's
// `guild_chat_run`: offer connector tools to a model, run the calls it asks for with
// `tools.callOutcome`, send it the results, and stop at its answer or at the step limit (one
// step is one completion). Every connector call is kept in `calls`, for the report's claims.
//
//   import { agent } from "guild-sdk";
//   const chat = new agent.ToolLoop("fast", { maxSteps: 6 }).system("You file bugs.").user(brief.description);
//   const answer = chat.offerGranted().run();   // the model's text; throws StepLimit or an LlmError
//   for (const call of chat.calls) if (call.outcome?.externalId) report.claim(call.tool, call.outcome.externalId, "filed it");
//
// A connector tool `connector.tool` is offered as `connector__tool` (OpenAI-compatible endpoints
// accept only `[a-zA-Z0-9_-]{1,64}`) and mapped back through the loop's own table: a name the
// loop did not offer is never called; the model reads why instead.

import { GuildError, HostError } from "./errors.js";
import { callTool, tools } from "./host.js";
import * as llm from "./llm.js";

/** The name `connector.tool` is offered under. */
export function functionName(tool) {
  return tool.replaceAll(".", "__").replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "tool";
}

/** The model still asked for tools after `maxSteps` completions. */
export class StepLimit extends GuildError {}

export class ToolLoop {
  constructor(model, { maxSteps = 10, maxTokens } = {}) {
    Object.assign(this, { model, maxSteps, maxTokens, messages: [], calls: [], steps: 0 });
    this.offered = new Map(); // function name -> [connector.tool, tool definition]
    this.usage = { promptTokens: 0, completionTokens: 0 };
  }
  system(text) {
    this.messages.push(llm.system(text));
    return this;
  }
  user(text) {
    this.messages.push(llm.user(text));
    return this;
  }
  /** Offers connector tool `tool` (`connector.tool`) with its parameters' JSON Schema. */
  offer(tool, description = "", parameters = { type: "object" }) {
    const name = functionName(tool);
    this.offered.set(name, [tool, { name, description, parameters }]);
    return this;
  }
  /** Offers every tool granted to this specialist, with its description and schema. */
  offerGranted() {
    for (const g of tools.granted()) this.offer(g.name, g.spec?.description ?? "", g.spec?.inputSchema || undefined);
    return this;
  }
  /** Runs until the model answers without tool calls (its text); throws StepLimit or an LlmError. */
  run() {
    const offered = [...this.offered.values()].map(([, definition]) => definition);
    while (this.steps < this.maxSteps) {
      this.steps++;
      const answer = llm.complete(this.model, [...this.messages], { tools: offered, maxTokens: this.maxTokens });
      this.usage.promptTokens += answer.usage.promptTokens;
      this.usage.completionTokens += answer.usage.completionTokens;
      this.messages.push(llm.assistant(answer.content, answer.toolCalls));
      if (!answer.toolCalls.length) return answer.content ?? "";
      for (const call of answer.toolCalls) this.messages.push(llm.tool(call.id, JSON.stringify(this.#dispatch(call))));
    }
    throw new StepLimit(`step-limit: no answer within ${this.maxSteps} steps`);
  }
  /** Runs one tool call; returns what the model reads. */
  #dispatch(call) {
    if (!this.offered.has(call.name)) {
      return { error: `no tool named \`${call.name}\` is available to you; call one of: ${[...this.offered.keys()].join(", ")}` };
    }
    let args;
    try {
      args = call.arguments.trim() ? JSON.parse(call.arguments) : {};
    } catch {
      args = undefined;
    }
    if (args === null || typeof args !== "object" || Array.isArray(args)) {
      return { error: `the arguments of \`${call.name}\` are not a JSON object; call it again with arguments that match its parameters schema` };
    }
    const record = { callId: call.id, tool: this.offered.get(call.name)[0], input: args };
    this.calls.push(record);
    let outcome;
    try {
      outcome = record.outcome = callTool(record.tool, args);
    } catch (e) {
      if (!(e instanceof HostError)) throw e;
      record.error = e.message;
      return { call_id: call.id, status: "refused", error: e.message };
    }
    let output;
    try {
      output = JSON.parse(outcome.output);
    } catch {
      output = outcome.output;
    }
    const message = { call_id: call.id, status: outcome.status, output };
    if (outcome.status === "failed") message.error = outcome.error;
    if (outcome.externalId) message.external_id = outcome.externalId;
    if (outcome.verifiableUrl) message.url = outcome.verifiableUrl;
    return message;
  }
}
