/* Connector {{name}}: one tool, `echo`, that answers with its input. Add tools to TOOLS and a
 * branch to `call`. Helpers: guild.h in the Guild C SDK; the world's exports and types:
 * bindings/connector/connector.h there. Unit tests: test_app.c, run natively by ./test.sh. */
#include <stdio.h>
#include <stdlib.h>

#include "guild.h"

static const char ECHO_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"description\":"
    "\"What to echo.\"}},\"required\":[\"text\"]}";

void exports_guild_plugin_connector_api_tools(exports_guild_plugin_connector_api_list_tool_spec_t *ret) {
    ret->len = 1;
    ret->ptr = calloc(ret->len, sizeof *ret->ptr);
    if (!ret->ptr) abort();
    guild_tool_spec(&ret->ptr[0], "echo", "Echoes its input back: use it to try the plumbing.",
                    ECHO_SCHEMA);
}

void exports_guild_plugin_connector_api_call(guild_string_t *tool, guild_string_t *input,
                                             guild_plugin_types_tool_outcome_t *ret) {
    if (guild_string_eq(tool, "echo")) {
        /* The host has checked the input against ECHO_SCHEMA; echo the JSON document back. */
        char *json = guild_string_to_cstr(input);
        guild_log(GUILD_INFO, "echo: %zu bytes", input->len);
        guild_outcome_success(ret, json ? json : "null");
        free(json);
    } else {
        char *name = guild_string_to_cstr(tool);
        char *message = guild_format("unknown tool `%s`; tools: echo", name ? name : "");
        guild_outcome_failed(ret, message ? message : "unknown tool");
        free(message);
        free(name);
    }
    guild_string_free(tool);
    guild_string_free(input);
}
