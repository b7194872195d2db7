/* Connector {{name}}: `echo` returns the text it is given; `save` is a mutating tool (the host
 * writes a receipt for every call) that answers with an external id. Add tools to `tools` and a
 * branch to `call`; callers name a tool `{{name}}.TOOL`. Helpers: guild.h in the Guild C SDK
 * (strings from guild_fmt / guild_quote / guild_json_string are freed when `call` returns).
 * Unit tests: test_app.c, run natively by ./test.sh. */
#include <stdint.h>
#include <string.h>

#include "guild.h"

static const char TEXT_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"description\":"
    "\"The text.\"}},\"required\":[\"text\"],\"additionalProperties\":false}";

static void tools(guild_tools_t *tools) {
    guild_tools_add(tools, "echo", "Returns the `text` it is given, unchanged.", TEXT_SCHEMA);
    guild_tools_add_mutating(tools, "save", "Saves the `text` as a note and returns its id.", TEXT_SCHEMA,
                             "note", "create");
}

/* The id the external system gave the note (this template stands one in: FNV-1a of the text). */
static const char *note_id(const char *text) {
    uint32_t hash = 2166136261u;
    for (; *text; text++) hash = (hash ^ (uint8_t)*text) * 16777619u;
    return guild_fmt("note-%08x", hash);
}

static void call(const char *tool, const char *input, guild_outcome_t *out) {
    /* The host checked the input against TEXT_SCHEMA; this names the field for other callers. */
    const char *text = guild_json_string(input, "text");
    if (!text) {
        guild_outcome_failed(out, "field `text` is required and must be a string");
    } else if (strcmp(tool, "echo") == 0) {
        guild_outcome_success(out, guild_fmt("{\"echo\":%s}", guild_quote(text)));
    } else if (strcmp(tool, "save") == 0) {
        guild_log(GUILD_INFO, "saving %zu bytes", strlen(text));
        const char *id = note_id(text);
        guild_outcome_success(out, guild_fmt("{\"id\":\"%s\",\"saved\":%s}", id, guild_quote(text)));
        guild_outcome_external_id(out, id);
    } else {
        guild_outcome_failedf(out, "unknown tool `%s`; tools: echo, save", tool);
    }
}

GUILD_CONNECTOR(tools, call)
