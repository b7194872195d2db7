// The three plugin kinds: build the object a component exports (`specialistApi`,
// `connectorApi`, `skillLoaderApi`) from plain functions working on this SDK's values.

import { GuildError, HostError, InvalidBrief, ToolError } from "./errors.js";
import { log } from "./host.js";
import { Report, ToolOutcome } from "./report.js";
import { authorFrame, authorStack } from "./stack.js";

export { authorStack };

// What a thrown value becomes in a WIT `result` error: componentize-js reads `payload` when the
// thrown value has one; the `tag`/`val` copy covers engines that take the value itself.
function witError(tag, val) {
  const err = new Error(val);
  err.payload = { tag, val };
  err.tag = tag;
  err.val = val;
  return err;
}

function describeText(describe) {
  return typeof describe === "function" ? String(describe()) : String(describe ?? "");
}

/**
 * `export const specialistApi = specialist({ describe: "One line.", run(brief) { return Report.satisfied("...") } })`.
 * `run` may be async. Throwing `InvalidBrief`/`RunFailed` (or anything else) ends the task with a
 * run-error carrying the message.
 */
export function specialist({ describe, run }) {
  if (typeof run !== "function") throw new TypeError("specialist({ describe, run }): run must be a function");
  return {
    describe: () => ({ description: describeText(describe) }),
    async run(brief) {
      let report;
      try {
        report = await run({ taskId: brief.taskId, description: brief.description });
      } catch (e) {
        // The SDK's own errors are expected; anything else is a bug worth its stack in the log.
        if (e instanceof GuildError) throw witError(e instanceof InvalidBrief ? "invalid-brief" : "failed", e.message);
        log.error(`run threw: ${authorStack(e?.stack) ?? e}`);
        throw witError("failed", `${e?.message ?? String(e)}${authorFrame(e)}`);
      }
      if (!(report instanceof Report)) {
        const what = report === null ? "null" : Array.isArray(report) ? "an array" : typeof report === "object" ? `a plain ${report.constructor?.name ?? "object"}` : typeof report;
        throw witError("failed", `specialist run() returned ${what}, not a Report: return Report.satisfied(summary), Report.partial(...) or Report.failed(...) from guild-sdk`);
      }
      return report.toWit();
    },
  };
}

// A mutating tool names its receipt type and operation, as in every kit:
// `mutating: ["issue", "create"]` (or `mutating: true, receiptType, operation`).
function specOf(name, tool) {
  const schema = tool.inputSchema ?? { type: "object" };
  let { mutating, receiptType, operation } = tool;
  if (Array.isArray(mutating)) {
    if (mutating.length !== 2) throw new TypeError(`tool ${name}: mutating: [receiptType, operation], e.g. ["issue", "create"]`);
    [receiptType, operation] = mutating;
  }
  return {
    name,
    description: String(tool.description ?? ""),
    inputSchema: typeof schema === "string" ? schema : JSON.stringify(schema),
    mutating: Boolean(mutating),
    receiptType,
    operation,
    requiresSkill: tool.requiresSkill,
    approval: tool.approval === "always" ? "always" : "never",
  };
}

/** Runs one connector call from its JSON input; every failure becomes a failed outcome. */
export async function runTool(handler, tool, inputText) {
  let input;
  try {
    input = inputText.trim() ? JSON.parse(inputText) : null;
  } catch (e) {
    return ToolOutcome.failed(`input of ${tool} is not JSON: ${e.message}`);
  }
  let result;
  try {
    result = await handler(input);
  } catch (e) {
    if (e instanceof ToolError) return ToolOutcome.failed(e.error, e.output);
    log.error(`tool ${tool} threw: ${authorStack(e?.stack) ?? e}`);
    return ToolOutcome.failed(`${tool} threw ${e?.name ?? "an error"}: ${e?.message ?? e}${authorFrame(e)}`);
  }
  if (result instanceof ToolOutcome) return result;
  try {
    return ToolOutcome.success(result);
  } catch (e) {
    return ToolOutcome.failed(`output of ${tool} is not JSON-serialisable: ${e.message}`);
  }
}

/**
 * `export const connectorApi = connector({ tools: { search: { description, inputSchema, run(input) {...} } } })`.
 * A tool's `run` returns a ToolOutcome or any JSON value (a success); throwing `ToolError` reports
 * a failure with its text.
 */
export function connector({ tools }) {
  const names = Object.keys(tools).sort();
  return {
    tools: () => names.map((name) => specOf(name, tools[name])),
    async call(tool, input) {
      const entry = tools[tool];
      if (!entry) return ToolOutcome.failed(`unknown tool ${JSON.stringify(tool)}; this connector has: ${names.join(", ")}`).toWit();
      return (await runTool((i) => entry.run(i), tool, input)).toWit();
    },
  };
}

/** `export const skillLoaderApi = skillLoader({ list() {...}, load(name) {...}, read(name, path) {...} })`. */
export function skillLoader({ list, load, read }) {
  const wrap = (fn) => (...args) => {
    try {
      return fn(...args);
    } catch (e) {
      if (e instanceof HostError) throw witError(e.kind, e.message);
      throw witError("failed", e?.message ?? String(e));
    }
  };
  return {
    list: () => (list ? list() : []).map((s) => ({ name: String(s.name), description: String(s.description) })),
    load: wrap((name) => String(load(name))),
    read: wrap((name, path) => read(name, path)),
  };
}

const KINDS = { string: "a string", number: "a number", boolean: "a boolean", object: "an object" };

/**
 * Member `name` of a tool's input, which must be of `kind` (`typeof`, "string" by default);
 * throws ToolError naming the member otherwise. The host has checked the input against the
 * tool's schema; this names the member for other callers.
 */
export function field(input, name, kind = "string") {
  const value = input?.[name];
  if (typeof value !== kind || value === null) {
    throw new ToolError(`field \`${name}\` is required and must be ${KINDS[kind] ?? kind}`);
  }
  return value;
}
