/* Unit tests of {{name}}, natively with the Guild C SDK's fake host (testing/guild_test.h
 * there): `./test.sh` in this folder. Each check calls an export of app.c as the host would,
 * finding the tools by what they list, so renaming them keeps the tests working. */
#include <stdlib.h>
#include <string.h>

#include "guild_test.h"

static char read_only[65], mutating[65]; /* the first tool of each kind */

static void find_tools(void) {
    exports_guild_plugin_connector_api_list_tool_spec_t tools;
    exports_guild_plugin_connector_api_tools(&tools);
    for (size_t i = tools.len; i-- > 0;) {
        char *name = guild_string_to_cstr(&tools.ptr[i].name);
        strncpy(tools.ptr[i].mutating ? mutating : read_only, name, 64);
        free(name);
    }
    GUILD_CHECK("there is a read-only and a mutating tool", read_only[0] && mutating[0]);
    for (size_t i = 0; i < tools.len; i++) {
        GUILD_CHECK("every tool's schema asks for `text`", guild_test_contains(&tools.ptr[i].input_schema, "\"text\""));
        if (tools.ptr[i].mutating)
            GUILD_CHECK("the mutating tool has a receipt type and operation",
                        tools.ptr[i].receipt_type.is_some && tools.ptr[i].operation.is_some);
    }
    exports_guild_plugin_connector_api_list_tool_spec_free(&tools);
}

/* Calls `tool` with `input` as the host would; the caller frees *out. */
static void call(const char *tool, const char *input, guild_plugin_types_tool_outcome_t *out) {
    guild_string_t name, json;
    guild_string_from(&name, tool);
    guild_string_from(&json, input);
    exports_guild_plugin_connector_api_call(&name, &json, out);
}

int main(void) {
    find_tools();
    guild_plugin_types_tool_outcome_t out, again;

    call(read_only, "{\"text\":\"hi\"}", &out);
    GUILD_CHECK("the read-only tool succeeds", out.status.tag == GUILD_PLUGIN_TYPES_CALL_STATUS_SUCCESS);
    GUILD_CHECK("the read-only tool answers with the text", guild_test_contains(&out.output, "\"hi\""));
    guild_plugin_types_tool_outcome_free(&out);

    call(mutating, "{\"text\":\"hi\"}", &out);
    call(mutating, "{\"text\":\"hi\"}", &again);
    GUILD_CHECK("the mutating tool succeeds", out.status.tag == GUILD_PLUGIN_TYPES_CALL_STATUS_SUCCESS);
    GUILD_CHECK("the mutating tool returns an external id, the same for the same text",
                out.external_id.is_some && again.external_id.is_some &&
                    out.external_id.val.len == again.external_id.val.len &&
                    memcmp(out.external_id.val.ptr, again.external_id.val.ptr, out.external_id.val.len) == 0);
    GUILD_CHECK("the mutating tool logs what it did", guild_test_logged("saving 2 bytes"));
    guild_plugin_types_tool_outcome_free(&out);
    guild_plugin_types_tool_outcome_free(&again);

    call(read_only, "{}", &out);
    GUILD_CHECK("a missing field is named", out.status.tag == GUILD_PLUGIN_TYPES_CALL_STATUS_FAILED &&
                                                guild_test_contains(&out.status.val.failed, "`text`"));
    guild_plugin_types_tool_outcome_free(&out);

    call("nope", "{\"text\":\"hi\"}", &out);
    GUILD_CHECK("an unknown tool fails naming it and the tools",
                out.status.tag == GUILD_PLUGIN_TYPES_CALL_STATUS_FAILED &&
                    guild_test_contains(&out.status.val.failed, "`nope`") &&
                    guild_test_contains(&out.status.val.failed, read_only));
    guild_plugin_types_tool_outcome_free(&out);

    return guild_test_finish();
}
