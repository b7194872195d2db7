// Connector `{{name}}`: `echo` returns the text it is given; `save` is a mutating tool (the host
// writes a receipt for every call) that answers with an external id. Add a tool by adding an
// entry to `tools`; callers name it `{{name}}.TOOL`. Test with `npm test` (plain Node, FakeHost).
import { ToolError, ToolOutcome, connector, log } from "guild-sdk";

const TEXT_SCHEMA = {
  type: "object",
  properties: { text: { type: "string", description: "The text." } },
  required: ["text"],
  additionalProperties: false,
};

/** The `text` field. The host checked the input against the schema; this names the field for other callers. */
function textOf(input) {
  if (typeof input?.text !== "string") throw new ToolError("field `text` is required and must be a string");
  return input.text;
}

/** The id the external system gave the note (this template stands one in, derived from the text). */
function noteId(text) {
  let hash = 2166136261;
  for (const c of text) hash = Math.imul(hash ^ c.codePointAt(0), 16777619) >>> 0;
  return `note-${hash.toString(16)}`;
}

// guild:plugin@0.2.0 exports one interface per world: the connector's is `connector-api`.
export const connectorApi = connector({
  tools: {
    echo: {
      description: "Returns the `text` it is given, unchanged.",
      inputSchema: TEXT_SCHEMA,
      run: (input) => ({ echo: textOf(input) }),
    },
    save: {
      description: "Saves the `text` as a note and returns the note's id.",
      inputSchema: TEXT_SCHEMA,
      mutating: ["note", "create"],
      run(input) {
        const text = textOf(input);
        log.info(`saving ${text.length} characters`);
        const id = noteId(text);
        return ToolOutcome.success({ id, saved: text }, { externalId: id });
      },
    },
  },
});
