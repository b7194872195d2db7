// The host functions with typed values and errors. Inside a component they call the WIT
// bindings that sdk/js/componentize.sh hands to `installBindings` (only the interfaces the
// world imports); in unit tests a FakeHost from `guild-sdk/testing` stands in.

import { Denied, HostError, LimitExceeded, MemoryRefused, ParentGone, InvalidInput, ToolFailed, ToolPending, hostError } from "./errors.js";
import { ToolOutcome } from "./report.js";
import { authorFrame } from "./stack.js";

const installed = [];
let bindings;

/** Called by the generated entry module with the world's imported interfaces. */
export function installBindings(interfaces) {
  bindings = interfaces;
}

/** The raw WIT interface `name` (for the SDK's own modules); `Denied` when the world lacks it. */
export function witInterface(name) {
  if (!bindings) {
    throw new Error(
      `guild-sdk: not running inside a Guild component (no WIT bindings were installed); in unit tests, use the test double of \`${name}\``,
    );
  }
  return need(name);
}

/** For guild-sdk/testing: push or remove a test double. */
export function installHost(host) {
  installed.push(host);
}
export function uninstallHost(host) {
  const i = installed.lastIndexOf(host);
  if (i >= 0) installed.splice(i, 1);
}

function current() {
  if (installed.length) return installed[installed.length - 1];
  if (!bindings) {
    throw new Error(
      "guild-sdk: not running inside a Guild component (no WIT bindings were installed); " +
        "build with sdk/js/componentize.sh, or in unit tests wrap the code in `withHost(new FakeHost(...), ...)`",
    );
  }
  return witHost;
}

// A raw import call: a WIT `result` error is thrown by the bindings; turn it into a typed error.
function raw(fn) {
  try {
    return fn();
  } catch (e) {
    throw hostError(e?.payload ?? e);
  }
}

function need(name) {
  const iface = bindings[name];
  if (!iface) throw new Denied(`denied: this plugin's world does not import \`${name}\` (only specialists have it)`);
  return iface;
}

const usage = (u) => ({ chars: u.chars, softLimit: u.softLimit, limit: u.limit });

/** The real host over the WIT bindings. */
const witHost = {
  log: (level, message) => need("log").log(level, message),
  configGet: (key) => raw(() => need("config").get(key)),
  httpSend: (method, url, headers, body) => {
    const r = raw(() => need("http").send({ method, url, headers, body }));
    return { status: r.status, headers: r.headers, body: r.body };
  },
  toolsGranted: () => need("tools").granted(),
  toolsCall: (name, input, key) => ToolOutcome.fromWit(raw(() => need("tools").call(name, input, key))),
  progressSend: (text) => {
    try {
      return need("progress").send(text);
    } catch (e) {
      const v = e?.payload ?? e;
      if (v?.tag === "parent-gone") throw new ParentGone();
      if (v?.tag === "denied") throw new Denied(String(v.val));
      throw new LimitExceeded(String(v?.val ?? v));
    }
  },
  skillsCatalog: () => need("skills").catalog(),
  skillsLoad: (name) => raw(() => need("skills").load(name)),
  skillsRead: (name, path) => raw(() => need("skills").read(name, path)),
  memoryRead: (scope) => {
    const d = raw(() => need("memory").read(scope));
    return { text: d.text, version: Number(d.version), usage: usage(d.usage) };
  },
  memoryUpdate: (scope, text) => {
    let r;
    try {
      r = need("memory").update(scope, text);
    } catch (e) {
      const v = e?.payload ?? e;
      if (v?.tag === "refused") throw new MemoryRefused(v.val.errors, usage(v.val.usage));
      throw hostError(v?.tag === "host" ? v.val : v);
    }
    const stored = r.outcome.tag === "stored" ? Number(r.outcome.val) : undefined;
    const noOp = r.outcome.tag === "no-op" ? r.outcome.val : undefined;
    return { stored, noOp, warnings: r.warnings, usage: usage(r.usage) };
  },
};

const LEVELS = ["trace", "debug", "info", "warn", "error"];

/** Structured logging into the host's tracing, tagged with the plugin. Always available. */
export const log = {
  log(level, message) {
    if (!LEVELS.includes(level)) throw new TypeError(`log level must be one of ${LEVELS.join(", ")}`);
    if (!installed.length && !bindings) {
      console.error(`[${level}] ${message}`);
      return;
    }
    current().log(level, String(message));
  },
  trace: (m) => log.log("trace", m),
  debug: (m) => log.log("debug", m),
  info: (m) => log.log("info", m),
  warn: (m) => log.log("warn", m),
  error: (m) => log.log("error", m),
};

/** Operator-granted configuration values; `Denied` for a key not requested and granted. */
export const config = {
  get: (key) => current().configGet(key),
  getOr(key, fallback) {
    try {
      return config.get(key);
    } catch (e) {
      if (e instanceof Denied) return fallback;
      throw e;
    }
  },
};

/** Outbound HTTP through the host's guarded client (the `http` capability). */
export const http = {
  send(method, url, { headers = [], body } = {}) {
    const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
    const r = current().httpSend(method.toUpperCase(), url, headers, bytes);
    return {
      ...r,
      text: () => new TextDecoder().decode(r.body),
      json: () => JSON.parse(new TextDecoder().decode(r.body)),
    };
  },
  get: (url, options) => http.send("GET", url, options),
};

function inputJson(input) {
  if (typeof input === "string") return input;
  try {
    return JSON.stringify(input ?? {});
  } catch (e) {
    throw new InvalidInput(`tool input is not JSON-serialisable: ${e.message}`);
  }
}

/**
 * A tool call and the host's answer, a refusal without a caller's line: for the agent loop,
 * which runs calls a model chose (no line of the author's wrote them).
 */
export function callTool(name, input, { idempotencyKey } = {}) {
  return current().toolsCall(name, inputJson(input), idempotencyKey);
}

/** Connector tools granted to this specialist (`tools = ["connector.tool"]`). */
export const tools = {
  granted: () => current().toolsGranted(),
  /**
   * Every fact the connector reported, whatever the status; throws only the host's refusals,
   * their text ending with the caller's file and line (` (at app.js:12)`), as in every kit.
   */
  callOutcome(name, input, options) {
    try {
      return callTool(name, input, options);
    } catch (e) {
      if (!(e instanceof HostError)) throw e;
      const at = authorFrame(new Error());
      throw at ? new e.constructor(`${e.message}${at}`) : e;
    }
  },
  /** The tool's output parsed as JSON; `ToolFailed`/`ToolPending` when it did not succeed. */
  call(name, input, options) {
    const outcome = tools.callOutcome(name, input, options);
    if (outcome.status === "failed") throw new ToolFailed(name, outcome.error ?? "no error text", outcome);
    if (outcome.status === "pending") throw new ToolPending(name, outcome);
    try {
      return outcome.value();
    } catch (e) {
      throw new ToolFailed(name, `output is not JSON: ${e.message}`, outcome);
    }
  },
};

/** Progress reports to whoever started the task (`report = true`). */
export const progress = {
  send: (text) => current().progressSend(String(text)),
};

/** The skills this specialist declared: catalog, body, resources. */
export const skills = {
  catalog: () => current().skillsCatalog(),
  load: (name) => current().skillsLoad(name),
  read: (name, path) => current().skillsRead(name, path),
};

function scopeOf(scope) {
  if (scope !== "team" && scope !== "private") {
    throw new TypeError(`memory scope must be "team" or "private", not ${JSON.stringify(scope)}`);
  }
  return scope;
}

/** Team and private memory, validated by the host; every update replaces the whole document. */
export const memory = {
  read: (scope = "team") => current().memoryRead(scopeOf(scope)),
  update: (scope, text) => current().memoryUpdate(scopeOf(scope), String(text)),
};
