/* Unit tests of {{name}}, natively with the Guild C SDK's fake host (testing/guild_test.h
 * there): `./test.sh` in this folder. Each check calls an export of app.c as the host would. */
#include <stdlib.h>

#include "guild_test.h"

/* Calls `tool` with `input` as the host would; the caller frees *out. */
static void call(const char *tool, const char *input, guild_plugin_types_tool_outcome_t *out) {
    guild_string_t name, json;
    guild_string_from(&name, tool);
    guild_string_from(&json, input);
    exports_guild_plugin_connector_api_call(&name, &json, out);
}

int main(void) {
    exports_guild_plugin_connector_api_list_tool_spec_t tools;
    exports_guild_plugin_connector_api_tools(&tools);
    GUILD_CHECK("echo is the one tool", tools.len == 1 && guild_string_eq(&tools.ptr[0].name, "echo"));
    GUILD_CHECK("echo's schema asks for `text`",
                tools.len == 1 && guild_test_contains(&tools.ptr[0].input_schema, "\"text\""));
    GUILD_CHECK("echo is read-only", tools.len == 1 && !tools.ptr[0].mutating);
    exports_guild_plugin_connector_api_list_tool_spec_free(&tools);

    guild_plugin_types_tool_outcome_t out;
    call("echo", "{\"text\":\"hi\"}", &out);
    GUILD_CHECK("echo succeeds", out.status.tag == GUILD_PLUGIN_TYPES_CALL_STATUS_SUCCESS);
    GUILD_CHECK("echo returns its input", guild_string_eq(&out.output, "{\"text\":\"hi\"}"));
    GUILD_CHECK("echo logs what it did", guild_test_logged("echo: 13 bytes"));
    guild_plugin_types_tool_outcome_free(&out);

    call("nope", "{}", &out);
    GUILD_CHECK("an unknown tool fails", out.status.tag == GUILD_PLUGIN_TYPES_CALL_STATUS_FAILED);
    GUILD_CHECK("an unknown tool's failure names it and the tools",
                out.status.tag == GUILD_PLUGIN_TYPES_CALL_STATUS_FAILED &&
                    guild_test_contains(&out.status.val.failed, "`nope`") &&
                    guild_test_contains(&out.status.val.failed, "tools: echo"));
    guild_plugin_types_tool_outcome_free(&out);

    return guild_test_finish();
}
