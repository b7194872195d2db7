// Connector `{{name}}`: `echo` returns the text it is given; `save` is a mutating tool (the host
// writes a receipt for every call) that answers with an external id. Add a tool by adding an
// entry to `tools`; callers name it `{{name}}.TOOL`. Test with `npm test` (plain Node, FakeHost).
import { ToolOutcome, connector, field, log, sha256Hex } from "guild-sdk";

const TEXT_SCHEMA = { type: "object", properties: { text: { type: "string", description: "The text." } },
  required: ["text"], additionalProperties: false };

// guild:plugin@0.3.0 exports one interface per world: the connector's is `connector-api`.
export const connectorApi = connector({
  tools: {
    echo: {
      description: "Returns the `text` it is given, unchanged.",
      inputSchema: TEXT_SCHEMA,
      run: (input) => ({ echo: field(input, "text") }), // field() names a missing `text` for callers
    },
    save: {
      description: "Saves the `text` as a note and returns the note's id.",
      inputSchema: TEXT_SCHEMA,
      mutating: ["note", "create"],
      run(input) {
        const text = field(input, "text");
        log.info(`saving ${text.length} characters`);
        const id = `note-${sha256Hex(text).slice(0, 12)}`; // the id the external system gave it (a stand-in)
        return ToolOutcome.success({ id, saved: text }, { externalId: id });
      },
    },
  },
});
