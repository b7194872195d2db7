/* Unit tests of {{name}}, natively with the Guild C SDK's fake host (testing/guild_test.h
 * there): `./test.sh` in this folder. Each case sets what the tool answers, runs the brief as
 * the host would and checks the call made and the report (or error) returned. */
#include <string.h>

#include "guild_test.h"

extern const char TOOL[]; /* app.c's: the tool it calls */
#define TOOL_NAME TOOL

/* Runs a brief with `description` as the host would; the caller frees *report or *err. */
static bool run(const char *description, guild_plugin_types_report_t *report,
                guild_plugin_types_run_error_t *err) {
    guild_plugin_types_brief_t brief;
    guild_string_from(&brief.task_id, "t1");
    guild_string_from(&brief.description, description);
    memset(report, 0, sizeof *report);
    memset(err, 0, sizeof *err);
    return exports_guild_plugin_specialist_api_run(&brief, report, err);
}

int main(void) {
    guild_plugin_types_report_t report;
    guild_plugin_types_run_error_t err;

    guild_plugin_types_specialist_info_t info;
    exports_guild_plugin_specialist_api_describe(&info);
    GUILD_CHECK("describe names the tool", guild_test_contains(&info.description, TOOL_NAME));
    guild_plugin_types_specialist_info_free(&info);

    /* The tool answers: the brief goes to it and its answer is the report's details. */
    guild_test_tool_answer(TOOL_NAME, "{\"text\":\"hi\"}");
    bool ok = run("hi", &report, &err);
    GUILD_CHECK("with an answer the run succeeds", ok);
    GUILD_CHECK("the brief goes to the tool once",
                guild_test_call_count() == 1 && strcmp(guild_test_call_tool(0), TOOL_NAME) == 0 &&
                    strcmp(guild_test_call_input(0), "{\"text\":\"hi\"}") == 0);
    GUILD_CHECK("the report is satisfied and hard-passed",
                ok && report.outcome == GUILD_PLUGIN_TYPES_OUTCOME_SATISFIED && report.hard_passed);
    GUILD_CHECK("the report's details are the tool's answer",
                ok && guild_string_eq(&report.details, "{\"text\":\"hi\"}"));
    GUILD_CHECK("an answer without an external id claims nothing", ok && report.claims.len == 0);
    if (ok) guild_plugin_types_report_free(&report);
    else guild_plugin_types_run_error_free(&err);
    guild_test_reset();

    /* The tool reports an external id: the report claims that effect. */
    guild_test_tool_answer_id(TOOL_NAME, "{\"id\":\"n1\"}", "n1");
    ok = run("hi", &report, &err);
    GUILD_CHECK("an external id is claimed with its tool",
                ok && report.claims.len == 1 && guild_string_eq(&report.claims.ptr[0].tool, TOOL_NAME) &&
                    report.claims.ptr[0].external_id.is_some &&
                    guild_string_eq(&report.claims.ptr[0].external_id.val, "n1"));
    if (ok) guild_plugin_types_report_free(&report);
    else guild_plugin_types_run_error_free(&err);
    guild_test_reset();

    /* The tool runs and fails: the report fails and says why in an open issue. */
    guild_test_tool_fail(TOOL_NAME, "no such thing");
    ok = run("hi", &report, &err);
    GUILD_CHECK("a failed tool still gives a report", ok);
    GUILD_CHECK("a failed tool fails the report",
                ok && report.outcome == GUILD_PLUGIN_TYPES_OUTCOME_FAILED && !report.hard_passed);
    GUILD_CHECK("the open issue says the tool failed and why",
                ok && report.open_issues.len == 1 &&
                    guild_test_contains(&report.open_issues.ptr[0], "failed: no such thing"));
    if (ok) guild_plugin_types_report_free(&report);
    else guild_plugin_types_run_error_free(&err);
    guild_test_reset();

    /* No answer set: the fake host denies the tool, as a host does an ungranted one. */
    ok = run("hi", &report, &err);
    GUILD_CHECK("an ungranted tool fails the run", !ok && err.tag == GUILD_PLUGIN_TYPES_RUN_ERROR_FAILED);
    GUILD_CHECK("the run error says the tool was denied",
                !ok && guild_test_contains(&err.val.failed, "was refused: denied: ") &&
                    !guild_test_contains(&err.val.failed, "denied: denied"));
    if (ok) guild_plugin_types_report_free(&report);
    else guild_plugin_types_run_error_free(&err);
    guild_test_reset();

    /* An empty brief is refused before any call. */
    ok = run("  \n", &report, &err);
    GUILD_CHECK("an empty brief is an invalid brief",
                !ok && err.tag == GUILD_PLUGIN_TYPES_RUN_ERROR_INVALID_BRIEF);
    GUILD_CHECK("an empty brief calls no tool", guild_test_call_count() == 0);
    if (ok) guild_plugin_types_report_free(&report);
    else guild_plugin_types_run_error_free(&err);

    return guild_test_finish();
}
