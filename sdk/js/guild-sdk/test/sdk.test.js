// The SDK under plain Node: Report defaults, tools.call's typed errors, memory wrappers, the
// export builders. Run from sdk/js/guild-sdk: node --test test/
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import * as guild from "../index.js";
import { FakeHost, withHost } from "../testing.js";

const { Report, ToolOutcome } = guild;

test("a report has a default for every field", () => {
  const wit = new Report().toWit();
  assert.deepEqual(wit, {
    summary: "",
    outcome: "satisfied",
    details: "",
    hardPassed: true,
    openIssues: [],
    remainingIssues: [],
    nextStep: undefined,
    artifacts: [],
    claims: [],
  });
  assert.equal(Report.partial("half").hardPassed, false);
  assert.throws(() => new Report({ outcome: "done" }), TypeError);
  assert.throws(() => new Report().suggest("jump"), TypeError);
});

test("report builders chain into the WIT record", () => {
  const wit = Report.satisfied("filed", "- #12")
    .claim("tracker.create_issue", "12", "created #12")
    .claim("memory.update", "recorded a line")
    .claimWithoutId("notes.echo", "echoed")
    .openIssue("log truncated")
    .artifact({ id: "a.md", sha256: "ab" })
    .suggest("refine", "retry")
    .toWit();
  assert.deepEqual(wit.claims, [
    { tool: "tracker.create_issue", externalId: "12", text: "created #12" },
    { tool: "memory.update", externalId: undefined, text: "recorded a line" },
    { tool: "notes.echo", externalId: undefined, text: "echoed" },
  ]);
  assert.deepEqual(wit.artifacts, [{ id: "a.md", kind: "file", mimeType: "application/octet-stream", sha256: "ab", version: undefined }]);
  assert.deepEqual(wit.nextStep, { action: "refine", suggestedTask: "retry" });
});

test("tools.call returns parsed JSON for a granted tool", async () => {
  const host = new FakeHost({ tools: { "t.search": (input) => ({ items: [input.q] }) } });
  const out = await withHost(host, () => guild.tools.call("t.search", { q: "crash" }));
  assert.deepEqual(out, { items: ["crash"] });
  assert.deepEqual(host.calls, [["t.search", { q: "crash" }]]);
});

test("tools.call throws Denied naming an ungranted tool", async () => {
  const host = new FakeHost({ plugin: "me" });
  await assert.rejects(
    withHost(host, () => guild.tools.call("t.create", {})),
    (e) => e instanceof guild.Denied && e instanceof guild.HostError && e.kind === "denied" && /t\.create/.test(e.message),
  );
});

/** The source line `message` ends with (` (at …/sdk.test.js:N)`), from this file. */
function lineNamedBy(message) {
  const n = message.match(/ \(at (.*):(\d+)\)$/);
  assert.ok(n && n[1] === import.meta.filename, message);
  return readFileSync(import.meta.filename, "utf8").split("\n")[Number(n[2]) - 1];
}

test("a refused tool call names the caller's file and line; a failed outcome does not", async () => {
  const host = new FakeHost({ plugin: "me", tools: { "t.fail": ToolOutcome.failed("HTTP 502") } });
  await withHost(host, () => {
    for (const call of [guild.tools.call, guild.tools.callOutcome]) {
      assert.throws(() => call("weather.lokup", {}), (e) => e instanceof guild.Denied && lineNamedBy(e.message).includes('call("weather.lokup"'));
      assert.throws(() => call("t.x", { n: 1n }), (e) => e instanceof guild.InvalidInput && lineNamedBy(e.message).includes("{ n: 1n }"));
    }
    assert.throws(() => guild.tools.call("t.fail"), (e) => e.message === "t.fail failed: HTTP 502");
  });
});

test("failed and pending outcomes and host errors are typed", async () => {
  const host = new FakeHost({
    tools: {
      "t.fail": ToolOutcome.failed("HTTP 502"),
      "t.wait": ToolOutcome.pending({}, { externalId: "1" }),
      "t.big": new guild.LimitExceeded("too big"),
    },
  });
  await withHost(host, () => {
    assert.throws(() => guild.tools.call("t.fail"), (e) => e instanceof guild.ToolFailed && e.error === "HTTP 502");
    assert.equal(guild.tools.callOutcome("t.fail").status, "failed");
    assert.throws(() => guild.tools.call("t.wait"), guild.ToolPending);
    assert.throws(() => guild.tools.call("t.big"), guild.LimitExceeded);
  });
});

test("outside a component without a double the error names the fix", () => {
  assert.throws(() => guild.tools.call("t.x"), /FakeHost/);
});

test("raw host-error variants map to their classes", () => {
  assert.ok(guild.hostError({ tag: "denied", val: "no" }) instanceof guild.Denied);
  assert.ok(guild.hostError({ tag: "invalid-input", val: "bad" }) instanceof guild.InvalidInput);
  assert.ok(guild.hostError({ tag: "limit-exceeded", val: "big" }) instanceof guild.LimitExceeded);
  assert.ok(guild.hostError({ tag: "failed", val: "trap" }) instanceof guild.HostFailed);
});

const DOC = "## Decisions\n- 2026-03-01: releases go out on Tuesdays\n";

test("memory: read then update stores a new version; sentinel is a no-op", async () => {
  const host = new FakeHost({ memory: { team: DOC } });
  await withHost(host, () => {
    const doc = guild.memory.read("team");
    assert.equal(doc.version, 1);
    const saved = guild.memory.update("team", doc.text + "- 2026-03-02: freeze on Fridays\n");
    assert.equal(saved.stored, 2);
    assert.ok(guild.memory.update("team", "NO_UPDATE").noOp);
  });
});

test("memory: refusal and denial are typed; the stored text is unchanged", async () => {
  const host = new FakeHost({ memory: { team: DOC }, memoryRights: ["team:read"] });
  await withHost(host, () => {
    assert.throws(() => guild.memory.update("team", DOC), guild.Denied);
    assert.throws(() => guild.memory.read("private"), guild.Denied);
    assert.throws(() => guild.memory.read("everyone"), TypeError);
  });
  const writer = new FakeHost();
  await withHost(writer, () => {
    assert.throws(
      () => guild.memory.update("team", "a long note without any heading at all, so refused"),
      (e) => e instanceof guild.MemoryRefused && e.errors[0] === "Memory must be markdown with at least one ## heading.",
    );
  });
  assert.equal(writer.memory.team, undefined);
});

test("config, progress, http: granted and denied", async () => {
  const ok = { status: 200, headers: [], body: new TextEncoder().encode('{"ok":true}') };
  const host = new FakeHost({ config: { region: "eu" }, http: () => ok });
  await withHost(host, () => {
    assert.equal(guild.config.get("region"), "eu");
    assert.throws(() => guild.config.get("token"), guild.Denied);
    assert.equal(guild.config.getOr("token", "none"), "none");
    assert.equal(guild.progress.send("half"), "msg-1");
    host.parentLive = false;
    assert.throws(() => guild.progress.send("again"), guild.ParentGone);
    assert.deepEqual(guild.http.get("https://api.example.com").json(), { ok: true });
  });
  await withHost(new FakeHost({ progress: false }), () => {
    assert.throws(() => guild.progress.send("x"), guild.Denied);
    assert.throws(() => guild.http.get("https://api.example.com"), guild.Denied);
  });
});

test("specialist() converts the report and maps thrown errors to run-errors", async () => {
  const api = guild.specialist({
    describe: "Greets.",
    run: (brief) => {
      if (!brief.description) throw new guild.InvalidBrief("name someone");
      if (brief.description === "boom") throw new Error("bug");
      if (brief.description === "plain") return { summary: "not a Report" };
      return Report.satisfied(`greeted ${brief.description}`);
    },
  });
  assert.deepEqual(api.describe(), { description: "Greets." });
  const wit = await api.run({ taskId: "t", description: "Ada" });
  assert.equal(wit.summary, "greeted Ada");
  assert.equal(wit.claims.length, 0);
  await assert.rejects(api.run({ taskId: "t", description: "" }), (e) => e.payload.tag === "invalid-brief");
  const host = new FakeHost();
  await withHost(host, () =>
    assert.rejects(api.run({ taskId: "t", description: "boom" }), (e) => e.payload.tag === "failed" && lineNamedBy(e.payload.val).includes('throw new Error("bug")')),
  );
  assert.equal(host.logs[0][0], "error");
  // A run that returns anything but a Report is refused, as in the Python kit.
  await assert.rejects(
    api.run({ taskId: "t", description: "plain" }),
    (e) => e.payload.tag === "failed" && /returned a plain Object, not a Report: return Report.satisfied/.test(e.payload.val),
  );
});

test("connector() lists tools and turns every failure into a failed outcome", async () => {
  const api = guild.connector({
    tools: {
      search: { description: "Searches.", inputSchema: { type: "object" }, run: (i) => ({ items: [i.q] }) },
      create: {
        description: "Creates.",
        mutating: ["issue", "create"],
        run: (i) => {
          if (!i.title) throw new guild.ToolError("a title is required");
          return ToolOutcome.success({ number: 7 }, { externalId: "7" });
        },
      },
    },
  });
  const specs = api.tools();
  assert.deepEqual(specs.map((s) => s.name), ["create", "search"]);
  assert.deepEqual([specs[0].mutating, specs[0].receiptType, specs[0].operation], [true, "issue", "create"]);
  assert.equal(specs[1].inputSchema, '{"type":"object"}');
  assert.deepEqual(await api.call("search", '{"q":"x"}'), {
    output: '{"items":["x"]}',
    status: { tag: "success" },
    externalId: undefined,
    verifiableUrl: undefined,
    preview: undefined,
  });
  assert.equal((await api.call("create", '{"title":"t"}')).externalId, "7");
  assert.deepEqual((await api.call("create", "{}")).status, { tag: "failed", val: "a title is required" });
  assert.match((await api.call("nope", "{}")).status.val, /unknown tool/);
  assert.match((await api.call("search", "{")).status.val, /not JSON/);
});

test("stack frames in the component's bundle name the author's file and line", async () => {
  const { authorStack } = await import("../exports.js");
  const stack = "inner@bundle.js:3:2\nrun@/tmp/x/bundle.js:2:8\nfn@/tmp/x/sources/initializer.js:4338:36";
  assert.equal(authorStack(stack), stack, "no table outside a component");
  globalThis.__guildLines = { sources: ["../sdk/js/guild-sdk/exports.js", "app.js"], lines: [0, [0, 90], [1, 4]] };
  try {
    assert.equal(authorStack(stack), "inner@app.js:4\nrun@../sdk/js/guild-sdk/exports.js:90\nfn@/tmp/x/sources/initializer.js:4338:36");
    // A run that throws names the author's line in its run error.
    const api = guild.specialist({ describe: "", run: () => { const e = new TypeError("x is undefined"); e.stack = stack; throw e; } });
    await withHost(new FakeHost(), () =>
      assert.rejects(api.run({ taskId: "t", description: "" }), (e) => e.payload.val === "x is undefined (at app.js:4)"),
    );
  } finally {
    delete globalThis.__guildLines;
  }
});

test("field reads a tool input's member and names one that is missing or of another type", () => {
  assert.equal(guild.field({ text: "hi" }, "text"), "hi");
  assert.equal(guild.field({ n: 0 }, "n", "number"), 0);
  assert.throws(() => guild.field({}, "text"), (e) => e instanceof guild.ToolError && /field `text` is required and must be a string/.test(e.message));
  assert.throws(() => guild.field({ text: 3 }, "text"), guild.ToolError);
  assert.throws(() => guild.field(null, "text"), guild.ToolError);
  assert.throws(() => guild.field({ o: null }, "o", "object"), guild.ToolError);
});

test("sha256Hex matches the standard digests", () => {
  assert.equal(guild.sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert.equal(guild.sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert.equal(guild.sha256Hex(new Uint8Array([0x61, 0x62, 0x63])), guild.sha256Hex("abc"));
  assert.equal(guild.sha256Hex("a".repeat(56)), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
});
