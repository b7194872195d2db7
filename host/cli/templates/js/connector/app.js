// Connector `{{name}}`: the `connector` world of guild:plugin@0.2.0 in JavaScript (jco).
// One tool, `echo`; add yours to `tools()` and `call()`. Test with `node --test`.

const ECHO_SCHEMA = {
  type: "object",
  properties: { text: { type: "string", description: "What to echo." } },
  required: ["text"],
  additionalProperties: false,
};

/** `{"text": T}` in, `{"echo": T}` out; throws an Error naming what was wrong. */
export function echo(inputJson) {
  let input;
  try {
    input = JSON.parse(inputJson);
  } catch (e) {
    throw new Error(`input is not valid JSON: ${e.message}`);
  }
  if (typeof input?.text !== "string") {
    throw new Error("field `text` is required and must be a string");
  }
  return { echo: input.text };
}

function tools() {
  return [
    {
      name: "echo",
      description: "Returns the `text` it is given, unchanged.",
      inputSchema: JSON.stringify(ECHO_SCHEMA),
      mutating: false,
      receiptType: undefined,
      operation: undefined,
      requiresSkill: undefined,
      approval: "never",
    },
  ];
}

// Every field of a WIT record must be given.
function outcome(output, error) {
  return {
    output: JSON.stringify(error === undefined ? output : { error }),
    status: error === undefined ? { tag: "success" } : { tag: "failed", val: error },
    externalId: undefined,
    verifiableUrl: undefined,
    preview: undefined,
  };
}

function call(tool, input) {
  if (tool !== "echo") {
    return outcome(undefined, `unknown tool \`${tool}\`; tools: echo`);
  }
  try {
    return outcome(echo(input));
  } catch (e) {
    return outcome(undefined, e.message);
  }
}

// guild:plugin@0.2.0 exports one interface per world: the connector's is `connector-api`.
export const connectorApi = { tools, call };
