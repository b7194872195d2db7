// A test double of the host, so plugin logic runs under plain `node --test`. Deny by default
// like the host: a tool, config key, memory right, origin or skill not given raises Denied.
//
//   const host = new FakeHost({ tools: { "tracker.search_issues": (input) => ({ items: [] }) } });
//   const report = await withHost(host, () => run({ taskId: "t1", description: "crash" }));
//   host.calls // [["tracker.search_issues", { query: "crash" }]]

import { Denied, InvalidInput, MemoryRefused, ParentGone, ToolError } from "./errors.js";
import { installHost, uninstallHost } from "./host.js";
import { ToolOutcome } from "./report.js";

const HARD_LIMIT = 25000;
const SOFT_LIMIT = 18000;

export class FakeHost {
  constructor({
    tools = {},
    config = {},
    memory = {},
    memoryRights = ["team:read", "team:write", "private:read", "private:write"],
    http,
    skills = {},
    progress = true,
    plugin = "test-plugin",
  } = {}) {
    Object.assign(this, { tools, config, memory: { ...memory }, http, skills, plugin });
    this.memoryRights = new Set(memoryRights);
    this.versions = Object.fromEntries(Object.keys(memory).map((k) => [k, 1]));
    this.progressGranted = progress;
    this.parentLive = true;
    this.calls = [];
    this.logs = [];
    this.progress = [];
    this.requests = [];
  }

  denied(capability, target) {
    return new Denied(`denied: plugin \`${this.plugin}\` has no \`${capability}\` grant for ${target}`);
  }

  log(level, message) {
    this.logs.push([level, message]);
  }
  configGet(key) {
    if (!(key in this.config)) throw this.denied("config", `key \`${key}\``);
    return this.config[key];
  }
  httpSend(method, url, headers, body) {
    this.requests.push([method, url]);
    if (!this.http) throw this.denied("http", url);
    return this.http(method, url, headers, body);
  }
  toolsGranted() {
    return Object.keys(this.tools).sort().map((name) => ({ name, spec: { name: name.split(".").pop(), description: "" } }));
  }
  toolsCall(name, inputText, _key) {
    let input;
    try {
      input = JSON.parse(inputText);
    } catch (e) {
      throw new InvalidInput(`invalid-input: input of ${name} is not JSON: ${e.message}`);
    }
    this.calls.push([name, input]);
    if (!(name in this.tools)) throw this.denied("tools", `tool \`${name}\``);
    let answer = this.tools[name];
    if (typeof answer === "function") {
      try {
        answer = answer(input);
      } catch (e) {
        if (e instanceof ToolError) return ToolOutcome.failed(e.error, e.output);
        throw e;
      }
    }
    if (answer instanceof Error) throw answer;
    if (answer instanceof ToolOutcome) return answer;
    return ToolOutcome.success(answer);
  }
  progressSend(text) {
    if (!this.progressGranted) throw this.denied("report", "progress reports");
    if (!this.parentLive) throw new ParentGone();
    this.progress.push(text);
    return `msg-${this.progress.length}`;
  }
  skillsCatalog() {
    return Object.keys(this.skills).sort().map((name) => ({ name, description: this.skills[name].description }));
  }
  skillsLoad(name) {
    if (!(name in this.skills)) throw new InvalidInput(`invalid-input: unknown skill \`${name}\``);
    return this.skills[name].body;
  }
  skillsRead(name, path) {
    const files = this.skills[name]?.files ?? {};
    if (!(path in files)) throw new InvalidInput(`invalid-input: skill \`${name}\` has no resource \`${path}\``);
    return files[path];
  }
  usage(text) {
    return { chars: [...text].length, softLimit: SOFT_LIMIT, limit: HARD_LIMIT };
  }
  memoryRead(scope) {
    if (!this.memoryRights.has(`${scope}:read`)) throw this.denied("memory", `\`${scope}:read\``);
    const text = this.memory[scope] ?? "";
    return { text, version: this.versions[scope] ?? 0, usage: this.usage(text) };
  }
  /** Checks the size limit and the heading rule only; the host validates fully. */
  memoryUpdate(scope, text) {
    if (!this.memoryRights.has(`${scope}:write`)) throw this.denied("memory", `\`${scope}:write\``);
    const errors = [];
    if ([...text].length > HARD_LIMIT) errors.push(`Memory exceeds the ${HARD_LIMIT} character limit.`);
    if (text.trim().length > 40 && !`\n${text}`.includes("\n## ")) {
      errors.push("Memory must be markdown with at least one ## heading.");
    }
    if (errors.length) throw new MemoryRefused(errors, this.usage(text));
    if (["", "NO_UPDATE", "NO CHANGE"].includes(text.trim()) || text === this.memory[scope]) {
      return { noOp: "nothing changed", warnings: [], usage: this.usage(this.memory[scope] ?? "") };
    }
    const warnings = [...text].length > SOFT_LIMIT ? [`Memory is over ${SOFT_LIMIT} characters: consolidate.`] : [];
    this.memory[scope] = text;
    this.versions[scope] = (this.versions[scope] ?? 0) + 1;
    return { stored: this.versions[scope], warnings, usage: this.usage(text) };
  }
}

/** Runs `fn` (sync or async) with `host` standing in for the real one; returns its result. */
export async function withHost(host, fn) {
  installHost(host);
  try {
    return await fn();
  } finally {
    uninstallHost(host);
  }
}
