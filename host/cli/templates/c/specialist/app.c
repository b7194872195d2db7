/* Specialist {{name}}: sends its brief to the `{{tool}}` tool and reports what came back. When
 * the tool reports an external id (a mutating tool's note, issue, message ...), the report claims
 * that effect; the host checks every claim against the call's receipt. Helpers: guild.h in the
 * Guild C SDK (strings from guild_fmt / guild_quote are freed when `run` returns). Unit tests:
 * test_app.c, run natively by ./test.sh with the SDK's fake host answering the tool. */
#include <string.h>

#include "guild.h"

/* The tool this specialist calls: requested in plugin.toml, granted in guild.toml (not static:
 * the unit tests read it, so they follow when it changes). */
const char TOOL[] = "{{tool}}";

static bool run(const char *brief, guild_report_t *report, guild_run_error_t *err) {
    if (strspn(brief, " \t\r\n") == strlen(brief))
        return guild_run_error(err, true, "the brief is empty: say what to send to {{tool}}");
    guild_progress_send(guild_fmt("calling %s", TOOL), NULL); /* seen while it runs (report = true) */
    guild_call_t call;
    guild_call_status_t status = guild_tool_call(TOOL, guild_fmt("{\"text\":%s}", guild_quote(brief)), &call);
    const char *why = guild_fmt("%s %s: %s", TOOL, guild_call_status_name(status), call.error ? call.error : "");
    if (status == GUILD_CALL_OK) {
        guild_report(report, GUILD_SATISFIED, "{{tool}} answered", call.output);
        if (call.external_id)
            guild_report_add_claim(report, TOOL, call.external_id,
                                   guild_fmt("%s recorded the brief as %s", TOOL, call.external_id));
    } else if (status == GUILD_CALL_FAILED || status == GUILD_CALL_PENDING) {
        guild_report(report, GUILD_FAILED, "{{tool}} did not succeed", call.output ? call.output : "");
        guild_report_add_open_issue(report, why);
    } else { /* refused by the host: denied, invalid input, a limit, the connector failed */
        guild_run_error(err, false, guild_fmt("%s was refused: %s", TOOL, call.error)); /* "denied: ..." */
    }
    guild_call_free(&call);
    return status == GUILD_CALL_OK || status == GUILD_CALL_FAILED || status == GUILD_CALL_PENDING;
}

GUILD_SPECIALIST("Sends its brief to {{tool}} and reports the answer.", run)
