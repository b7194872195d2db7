// The specialist's Report (every field defaulted, chained builders) and a tool's ToolOutcome.

const OUTCOMES = ["satisfied", "partial", "failed"];
const ACTIONS = ["stop", "descend", "refine", "ascend"];

/** The specialist's final report: a hypothesis the host validates against receipts. */
export class Report {
  constructor(fields = {}) {
    const outcome = fields.outcome ?? "satisfied";
    if (!OUTCOMES.includes(outcome)) {
      throw new TypeError(`report outcome must be one of ${OUTCOMES.join(", ")}, not ${JSON.stringify(outcome)}`);
    }
    this.summary = String(fields.summary ?? "");
    this.outcome = outcome;
    this.details = String(fields.details ?? "");
    this.hardPassed = fields.hardPassed ?? outcome === "satisfied";
    this.openIssues = [...(fields.openIssues ?? [])];
    this.remainingIssues = [...(fields.remainingIssues ?? [])];
    this.nextStep = fields.nextStep;
    this.artifacts = [...(fields.artifacts ?? [])];
    this.claims = [...(fields.claims ?? [])];
  }
  static satisfied(summary, details = "") {
    return new Report({ summary, details, outcome: "satisfied" });
  }
  static partial(summary, details = "") {
    return new Report({ summary, details, outcome: "partial" });
  }
  static failed(summary, details = "") {
    return new Report({ summary, details, outcome: "failed" });
  }
  withDetails(markdown) {
    this.details = String(markdown);
    return this;
  }
  withHardPassed(passed) {
    this.hardPassed = Boolean(passed);
    return this;
  }
  openIssue(text) {
    this.openIssues.push(String(text));
    return this;
  }
  remainingIssue(text) {
    this.remainingIssues.push(String(text));
    return this;
  }
  /**
   * Claims an external effect of `tool`: `claim(tool, externalId, text)`, the order of every kit
   * (the id the call returned, e.g. `outcome.externalId`). `claim(tool, text)` with two
   * arguments claims without an id, as `claimWithoutId` does.
   */
  claim(tool, externalId, text) {
    if (text === undefined) return this.claimWithoutId(tool, externalId);
    this.claims.push({ tool, externalId: externalId ?? undefined, text });
    return this;
  }
  /** Claims an effect of a tool that returned no external id. */
  claimWithoutId(tool, text) {
    this.claims.push({ tool, text, externalId: undefined });
    return this;
  }
  /** Adds an artifact: `{id, kind?, mimeType?, sha256, version?}`. */
  artifact(ref) {
    this.artifacts.push({ kind: "file", mimeType: "application/octet-stream", ...ref });
    return this;
  }
  /** Suggests a next step; descend and refine need a suggested task. */
  suggest(action, suggestedTask) {
    if (!ACTIONS.includes(action)) {
      throw new TypeError(`next action must be one of ${ACTIONS.join(", ")}, not ${JSON.stringify(action)}`);
    }
    this.nextStep = { action, suggestedTask };
    return this;
  }
  /** The WIT `report` record. */
  toWit() {
    return {
      summary: this.summary,
      outcome: this.outcome,
      details: this.details,
      hardPassed: Boolean(this.hardPassed),
      openIssues: this.openIssues.map(String),
      remainingIssues: this.remainingIssues.map(String),
      nextStep: this.nextStep ? { action: this.nextStep.action, suggestedTask: this.nextStep.suggestedTask } : undefined,
      artifacts: this.artifacts.map((a) => ({
        id: String(a.id),
        kind: String(a.kind),
        mimeType: String(a.mimeType),
        sha256: String(a.sha256 ?? ""),
        version: a.version,
      })),
      claims: this.claims.map((c) => ({ tool: String(c.tool), externalId: c.externalId, text: String(c.text) })),
    };
  }
}

/** Facts about one tool call. `output` is JSON text; `value()` parses it. */
export class ToolOutcome {
  constructor({ output = "null", status = "success", error, externalId, verifiableUrl, preview } = {}) {
    Object.assign(this, { output, status, error, externalId, verifiableUrl, preview });
  }
  static success(value = null, facts = {}) {
    return new ToolOutcome({ ...facts, output: JSON.stringify(value ?? null), status: "success" });
  }
  static pending(value = null, facts = {}) {
    return new ToolOutcome({ ...facts, output: JSON.stringify(value ?? null), status: "pending" });
  }
  static failed(error, value = null) {
    return new ToolOutcome({ output: JSON.stringify(value ?? null), status: "failed", error: String(error) });
  }
  value() {
    return this.output.trim() ? JSON.parse(this.output) : null;
  }
  /** From the WIT `tool-outcome` record. */
  static fromWit(o) {
    return new ToolOutcome({
      output: o.output,
      status: o.status.tag,
      error: o.status.tag === "failed" ? o.status.val : undefined,
      externalId: o.externalId,
      verifiableUrl: o.verifiableUrl,
      preview: o.preview,
    });
  }
  /** The WIT `tool-outcome` record. */
  toWit() {
    const status =
      this.status === "failed"
        ? { tag: "failed", val: String(this.error ?? "the tool failed without saying why") }
        : { tag: this.status === "pending" ? "pending" : "success" };
    return {
      output: String(this.output),
      status,
      externalId: this.externalId,
      verifiableUrl: this.verifiableUrl,
      preview: this.preview,
    };
  }
}
