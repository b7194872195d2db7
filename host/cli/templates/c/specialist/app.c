/* Specialist {{name}}: sends its brief to the `{{tool}}` tool and reports what came back. When
 * the tool reports an external id (a mutating tool's note, issue, message ...), the report claims
 * that effect; the host checks every claim against the call's receipt.
 * Helpers: guild.h in the Guild C SDK; the world's exports and types:
 * bindings/specialist/specialist.h there. Unit tests: test_app.c, run natively by ./test.sh
 * with the SDK's fake host answering the tool. */
#include <stdlib.h>
#include <string.h>

#include "guild.h"

/* The tool this specialist calls: requested in plugin.toml, granted in guild.toml (not static:
 * the unit tests read it, so they follow when it changes). */
const char TOOL[] = "{{tool}}";

void exports_guild_plugin_specialist_api_describe(guild_plugin_types_specialist_info_t *ret) {
    guild_string_from(&ret->description, "Sends its brief to {{tool}} and reports the answer.");
}

bool exports_guild_plugin_specialist_api_run(guild_plugin_types_brief_t *brief,
                                             guild_plugin_types_report_t *ret,
                                             guild_plugin_types_run_error_t *err) {
    char *text = guild_string_to_cstr(&brief->description);
    guild_plugin_types_brief_free(brief);
    if (!text || strspn(text, " \t\r\n") == strlen(text)) {
        free(text);
        return guild_run_error(err, true, "the brief is empty: say what to send to {{tool}}");
    }
    /* The tool's input: {"text": brief}. */
    char *quoted = guild_json_quote(text, strlen(text));
    char *input = guild_format("{\"text\":%s}", quoted);
    free(quoted);
    free(text);
    if (!input) GUILD_ABORT("no memory for the tool input");

    guild_log(GUILD_INFO, "calling %s", TOOL);
    guild_call_t call;
    guild_call_status_t status = guild_tool_call(TOOL, input, &call);
    free(input);
    if (status == GUILD_CALL_OK) {
        guild_report(ret, GUILD_PLUGIN_TYPES_OUTCOME_SATISFIED, "{{tool}} answered", call.output);
        if (call.external_id) {
            char *claim = guild_format("%s recorded the brief as %s", TOOL, call.external_id);
            guild_report_add_claim(ret, TOOL, call.external_id, claim ? claim : TOOL);
            free(claim);
        }
    } else if (status == GUILD_CALL_FAILED || status == GUILD_CALL_PENDING) {
        char *issue = guild_format("%s %s: %s", TOOL, guild_call_status_name(status),
                                   call.error ? call.error : "");
        guild_report(ret, GUILD_PLUGIN_TYPES_OUTCOME_FAILED, "{{tool}} did not succeed",
                     call.output ? call.output : "");
        guild_report_add_open_issue(ret, issue ? issue : TOOL);
        free(issue);
    } else {
        /* Refused by the host (denied, invalid input, limit, connector failure). */
        char *message = guild_format("%s was refused (%s): %s", TOOL, guild_call_status_name(status),
                                     call.error ? call.error : "");
        guild_call_free(&call);
        bool ok = guild_run_error(err, false, message ? message : TOOL);
        free(message);
        return ok;
    }
    guild_call_free(&call);
    return true;
}
