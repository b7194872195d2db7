/* Test connector in C (plugins/testing/cnotes), written with sdk/c/guild.h:
 *   echo     read-only: answers {"text": TEXT} with its input's `text`, read with the JSON reader.
 *   save     mutating (note/create): answers {"id": ID}, with ID as the call's external id.
 *   garbled  answers output that is not JSON (the host must refuse it, naming this plugin).
 *   abort    stops with GUILD_ABORT (the host's error must carry the reason); with
 *            {"bare": true} calls a bare abort() (the kit's macro names this file and line), with
 *            {"bare": "pointer"} calls it through a pointer, as a library would (the kit's abort). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guild.h"

static const char TEXT_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}";

void exports_guild_plugin_connector_api_tools(exports_guild_plugin_connector_api_list_tool_spec_t *ret) {
    ret->len = 4;
    ret->ptr = calloc(ret->len, sizeof *ret->ptr);
    if (!ret->ptr) GUILD_ABORT("no memory for %zu tool specs", ret->len);
    guild_tool_spec(&ret->ptr[0], "echo", "Answers with its input's text.", TEXT_SCHEMA);
    guild_tool_spec_mutating(&ret->ptr[1], "save", "Saves a note; its id is derived from the text.",
                             TEXT_SCHEMA, "note", "create");
    guild_tool_spec(&ret->ptr[2], "garbled", "Answers output that is not JSON.", "{\"type\":\"object\"}");
    guild_tool_spec(&ret->ptr[3], "abort", "Stops with a reason.", "{\"type\":\"object\"}");
}

/* FNV-1a of the text: every call runs in a fresh instance, so the id comes from the input. */
static uint32_t fnv1a(const char *text) {
    uint32_t h = 2166136261u;
    for (; *text; text++) h = (h ^ (uint8_t)*text) * 16777619u;
    return h;
}

void exports_guild_plugin_connector_api_call(guild_string_t *tool, guild_string_t *input,
                                             guild_plugin_types_tool_outcome_t *ret) {
    char *json = guild_string_to_cstr(input);
    char *text = guild_json_get_string(json, "text");
    if (guild_string_eq(tool, "echo") && text) {
        char *quoted = guild_json_quote(text, strlen(text));
        char *output = guild_format("{\"text\":%s}", quoted);
        guild_outcome_success(ret, output);
        free(output);
        free(quoted);
    } else if (guild_string_eq(tool, "save") && text) {
        char *id = guild_format("note-%08x", fnv1a(text));
        char *output = guild_format("{\"id\":\"%s\"}", id);
        guild_outcome_success(ret, output);
        guild_outcome_external_id(ret, id);
        guild_outcome_preview(ret, "saved a note");
        free(output);
        free(id);
    } else if (guild_string_eq(tool, "garbled")) {
        guild_outcome_success(ret, "saved it, all good");
    } else if (guild_string_eq(tool, "abort")) {
        bool bare = false;
        char *how = guild_json_get_string(json, "bare");
        if (how && strcmp(how, "pointer") == 0) {
            void (*volatile library_abort)(void) = abort;
            library_abort();
        }
        free(how);
        if (guild_json_get_bool(json, "bare", &bare) && bare) abort();
        GUILD_ABORT("asked to abort with input %s", json ? json : "?");
    } else {
        guild_outcome_failed(ret, "unknown tool or no `text` in the input");
    }
    free(text);
    free(json);
    guild_string_free(tool);
    guild_string_free(input);
}
