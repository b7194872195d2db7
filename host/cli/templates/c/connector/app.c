/* Connector {{name}}: `echo` returns the text it is given; `save` is a mutating tool (the host
 * writes a receipt for every call) that answers with an external id. Add tools to
 * exports_..._tools and a branch to exports_..._call; callers name a tool `{{name}}.TOOL`.
 * Helpers: guild.h in the Guild C SDK; the world's exports and types:
 * bindings/connector/connector.h there. Unit tests: test_app.c, run natively by ./test.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guild.h"

static const char TEXT_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"description\":"
    "\"The text.\"}},\"required\":[\"text\"],\"additionalProperties\":false}";

void exports_guild_plugin_connector_api_tools(exports_guild_plugin_connector_api_list_tool_spec_t *ret) {
    ret->len = 2;
    ret->ptr = calloc(ret->len, sizeof *ret->ptr);
    if (!ret->ptr) GUILD_ABORT("no memory for %zu tool specs", ret->len);
    guild_tool_spec(&ret->ptr[0], "echo", "Returns the `text` it is given, unchanged.", TEXT_SCHEMA);
    guild_tool_spec_mutating(&ret->ptr[1], "save", "Saves the `text` as a note and returns its id.",
                             TEXT_SCHEMA, "note", "create");
}

/* The id the external system gave the note (this template stands one in: FNV-1a of the text). */
static char *note_id(const char *text) {
    uint32_t hash = 2166136261u;
    for (; *text; text++) hash = (hash ^ (uint8_t)*text) * 16777619u;
    return guild_format("note-%08x", hash);
}

void exports_guild_plugin_connector_api_call(guild_string_t *tool, guild_string_t *input,
                                             guild_plugin_types_tool_outcome_t *ret) {
    char *json = guild_string_to_cstr(input);
    /* The host checked the input against TEXT_SCHEMA; this names the field for other callers. */
    char *text = guild_json_get_string(json, "text");
    char *quoted = text ? guild_json_quote(text, strlen(text)) : NULL;
    if (!text) {
        guild_outcome_failed(ret, "field `text` is required and must be a string");
    } else if (guild_string_eq(tool, "echo")) {
        char *output = guild_format("{\"echo\":%s}", quoted);
        guild_outcome_success(ret, output);
        free(output);
    } else if (guild_string_eq(tool, "save")) {
        guild_log(GUILD_INFO, "saving %zu bytes", strlen(text));
        char *id = note_id(text);
        char *output = guild_format("{\"id\":\"%s\",\"saved\":%s}", id, quoted);
        guild_outcome_success(ret, output);
        guild_outcome_external_id(ret, id);
        free(output);
        free(id);
    } else {
        char *name = guild_string_to_cstr(tool);
        char *message = guild_format("unknown tool `%s`; tools: echo, save", name ? name : "");
        guild_outcome_failed(ret, message ? message : "unknown tool");
        free(message);
        free(name);
    }
    free(quoted);
    free(text);
    free(json);
    guild_string_free(tool);
    guild_string_free(input);
}
