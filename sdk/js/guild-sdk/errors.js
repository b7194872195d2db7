// Every failure a Guild plugin can see, as typed exceptions. The host's refusals (the WIT
// `host-error` variant) become HostError subclasses whose message is the host's text verbatim
// (it names plugin, capability and target).

/** Base of every error this SDK throws. */
export class GuildError extends Error {
  constructor(message) {
    super(message);
    this.name = new.target.name;
  }
}

/** The host refused or failed a call; `kind` is the WIT variant's tag. */
export class HostError extends GuildError {
  get kind() {
    return "failed";
  }
}
/** The capability was not requested in plugin.toml or not granted by the operator. */
export class Denied extends HostError {
  get kind() {
    return "denied";
  }
}
/** Malformed input: bad URL, bad JSON, unknown tool or skill, ... */
export class InvalidInput extends HostError {
  get kind() {
    return "invalid-input";
  }
}
/** A size or time limit was hit. */
export class LimitExceeded extends HostError {
  get kind() {
    return "limit-exceeded";
  }
}
/** Allowed, but failed (network error, the tool's plugin trapped, ...). */
export class HostFailed extends HostError {}

const HOST_ERRORS = {
  denied: Denied,
  "invalid-input": InvalidInput,
  "limit-exceeded": LimitExceeded,
  failed: HostFailed,
};

/** The typed error for a raw `host-error` variant (`{tag, val}`). */
export function hostError(variant) {
  const Cls = HOST_ERRORS[variant?.tag] ?? HostFailed;
  return new Cls(String(variant?.val ?? variant));
}

/** The connector ran and reported status `failed`; `error` is its text, verbatim. */
export class ToolFailed extends GuildError {
  constructor(tool, error, outcome) {
    super(`${tool} failed: ${error}`);
    this.tool = tool;
    this.error = error;
    this.outcome = outcome;
  }
}

/** The connector started the work but has not finished it: do not call again hoping it does. */
export class ToolPending extends GuildError {
  constructor(tool, outcome) {
    super(`${tool} is pending: started, not finished`);
    this.tool = tool;
    this.outcome = outcome;
  }
}

/** The host's memory validator refused the text; the stored version is unchanged. */
export class MemoryRefused extends GuildError {
  constructor(errors, usage) {
    const where = usage ? ` (${usage.chars} / ${usage.limit} characters)` : "";
    super(`memory update refused${where}: ${errors.join(" ")}`);
    this.errors = errors;
    this.usage = usage;
  }
}

/** A progress report was not delivered: the task's parent is not live. The run goes on. */
export class ParentGone extends GuildError {
  constructor(message = "direct parent is not live; report was not delivered") {
    super(message);
  }
}

/** Throw from a specialist's run to end the task without a report: the brief can't be acted on. */
export class InvalidBrief extends GuildError {}
/** Throw from a specialist's run to end the task without a report: the work failed. */
export class RunFailed extends GuildError {}

/** Throw from a connector tool to report the call as failed with this text. */
export class ToolError extends GuildError {
  constructor(error, output) {
    super(error);
    this.error = error;
    this.output = output;
  }
}
