// Connector `{{name}}`: one tool, `echo`, that returns the text it is given. Add a tool by adding
// an entry to `tools`. Test with `npm test` (plain Node, the SDK's FakeHost).
import { ToolError, connector, log } from "guild-sdk";

const ECHO_SCHEMA = {
  type: "object",
  properties: { text: { type: "string", description: "What to echo." } },
  required: ["text"],
  additionalProperties: false,
};

/** `{"text": T}` in, `{"echo": T}` out. */
export function echo(input) {
  // The host checked the input against ECHO_SCHEMA; this names the field for other callers.
  if (typeof input?.text !== "string") throw new ToolError("field `text` is required and must be a string");
  log.info(`echoing ${input.text.length} characters`);
  return { echo: input.text };
}

// guild:plugin@0.2.0 exports one interface per world: the connector's is `connector-api`.
export const connectorApi = connector({
  tools: {
    echo: { description: "Returns the `text` it is given, unchanged.", inputSchema: ECHO_SCHEMA, run: echo },
  },
});
