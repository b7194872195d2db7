// Chat completions through the models the operator configured (`llm = true` in plugin.toml,
// granted by the operator). Specialists only. The same shape as the Rust SDK's `guild_sdk::llm`:
// a plugin names a model by the alias the operator gave it; the host holds every key, enforces
// the grant and token budgets, and accounts every call to the task.
//
//   import { llm } from "guild-sdk";
//   const answer = llm.complete("fast", [llm.system("Answer in one sentence."), llm.user("Why?")], { maxTokens: 200 });
//   answer.content; answer.toolCalls; answer.finishReason; answer.usage
//
// A refused or failed completion throws an LlmError subclass; `isFinal` says whether calling
// again within the task can help. In unit tests, `withModel(new ScriptedModel([...]), fn)`
// answers from a script and records `model.requests`.

import { GuildError } from "./errors.js";
import { witInterface } from "./host.js";

/** A completion did not happen; `kind` is the WIT variant's tag. */
export class LlmError extends GuildError {
  constructor(kind, message, isFinal = false) {
    const text = String(message);
    const shown = [`${kind}:`, `${kind.replaceAll("-", " ")}:`].reduce(
      (t, p) => (t.startsWith(p) ? t.slice(p.length).trimStart() : t),
      text,
    );
    super(`${kind}: ${shown}`);
    this.kind = kind;
    this.isFinal = isFinal;
  }
}
/** A token budget is spent; nothing was sent. */
export class BudgetExceeded extends LlmError {
  constructor(budget, limit, used) {
    const which = budget === "daily-tokens" ? "daily" : "task";
    super("budget-exceeded", `${which} token budget spent (${used} of ${limit} tokens)`, true);
    Object.assign(this, { budget, limit: Number(limit), used: Number(used) });
  }
}
/** The endpoint is rate limiting and the host's retries ran out. */
export class RateLimited extends LlmError {
  constructor(retryAfterMs) {
    super("rate-limited", retryAfterMs === undefined ? "the endpoint is rate limiting" : `retry after ${retryAfterMs} ms`);
    this.retryAfterMs = retryAfterMs === undefined ? undefined : Number(retryAfterMs);
  }
}
/** The endpoint answered with an error. */
export class Upstream extends LlmError {
  constructor(status, message) {
    super("upstream", `HTTP ${status}: ${message}`);
    this.status = status;
  }
}

const FINAL = new Set(["denied", "model-not-granted", "timeout"]);

/** The typed error for a raw `llm-error` variant (`{tag, val}`). */
export function llmError(variant) {
  const tag = variant?.tag;
  const val = variant?.val;
  if (tag === "budget-exceeded") return new BudgetExceeded(val.budget, val.limit, val.used);
  if (tag === "rate-limited") return new RateLimited(val);
  if (tag === "upstream") return new Upstream(val.status, val.message);
  const kind = typeof tag === "string" ? tag : "malformed-answer";
  return new LlmError(kind, String(val ?? variant), FINAL.has(kind));
}

export const system = (text) => ({ tag: "system", val: String(text) });
export const user = (text) => ({ tag: "user", val: String(text) });
export const assistant = (content, toolCalls = []) => ({ tag: "assistant", val: { content, toolCalls } });
/** The answer to tool call `callId`. */
export const tool = (callId, content) => ({ tag: "tool", val: { callId, content: String(content) } });

/** Answers completions from a script: each entry an answer object or an LlmError to throw. */
export class ScriptedModel {
  constructor(script, models = ["test-model"]) {
    this.script = [...script];
    this.aliases = [...models];
    this.requests = [];
  }
  models() {
    return [...this.aliases];
  }
  complete(request) {
    this.requests.push(request);
    if (!this.script.length) throw new LlmError("timeout", "the script has no more answers", true);
    const step = this.script.shift();
    if (step instanceof LlmError) throw step;
    return { content: undefined, toolCalls: [], finishReason: "stop", usage: { promptTokens: 0, completionTokens: 0 }, ...step };
  }
}

const scripted = [];

/** Runs `fn` with `model` answering every completion; returns (or awaits) what `fn` returns. */
export function withModel(model, fn) {
  scripted.push(model);
  const done = () => scripted.splice(scripted.lastIndexOf(model), 1);
  let result;
  try {
    result = fn();
  } catch (e) {
    done();
    throw e;
  }
  if (result && typeof result.then === "function") return result.finally(done);
  done();
  return result;
}

function host() {
  if (scripted.length) return scripted[scripted.length - 1];
  const raw = witInterface("llm");
  return {
    models: () => raw.models(),
    complete(request) {
      let a;
      try {
        a = raw.complete(request);
      } catch (e) {
        throw llmError(e?.payload ?? e);
      }
      return { ...a, usage: { promptTokens: a.usage.promptTokens, completionTokens: a.usage.completionTokens } };
    },
  };
}

/** The model aliases this plugin may use (requested and granted). */
export function models() {
  return host().models();
}

/**
 * One chat completion with model alias `model`. `tools` are `{name, description, parameters}`
 * (`parameters` a JSON Schema, object or text). Throws an LlmError when refused or failed.
 */
export function complete(model, messages, { tools = [], maxTokens, temperature, stop = [] } = {}) {
  const request = {
    model,
    messages,
    tools: tools.map((t) => ({
      name: t.name,
      description: t.description ?? "",
      parameters: typeof t.parameters === "string" ? t.parameters : JSON.stringify(t.parameters ?? { type: "object" }),
    })),
    maxTokens,
    temperature,
    stop,
  };
  return host().complete(request);
}
