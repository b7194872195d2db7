/* Unit tests of the C kit's own helpers (sdk/c/guild.c) with the fake host, for the specialist
 * and connector worlds: `sdk/c/testing/test.sh specialist|connector sdk/c/testing/kit_test.c`
 * (tests/all/c_plugins.rs runs both). */
#include <stdlib.h>
#include <string.h>

#include "guild_test.h"

/* The world's exports are not under test here: empty ones, so the program links. */
#if defined(GUILD_WORLD_SPECIALIST)
void exports_guild_plugin_specialist_api_describe(guild_plugin_types_specialist_info_t *ret) {
    guild_string_from(&ret->description, "kit test");
}
bool exports_guild_plugin_specialist_api_run(guild_plugin_types_brief_t *brief,
                                             guild_plugin_types_report_t *ret,
                                             guild_plugin_types_run_error_t *err) {
    guild_plugin_types_brief_free(brief);
    return guild_run_error(err, false, "not under test");
}
#else
void exports_guild_plugin_connector_api_tools(exports_guild_plugin_connector_api_list_tool_spec_t *ret) {
    ret->ptr = NULL;
    ret->len = 0;
}
void exports_guild_plugin_connector_api_call(guild_string_t *tool, guild_string_t *input,
                                             guild_plugin_types_tool_outcome_t *ret) {
    guild_string_free(tool);
    guild_string_free(input);
    guild_outcome_failed(ret, "not under test");
}
#endif

static void json_reader(void) {
    const char *j = "{\"a\":{\"x\":\"}\"},\"text\":\"h\\u00e9 \\\"q\\\" \\ud83d\\ude00\",\"n\":-4.5e1,"
                    "\"ok\":true,\"no\":false,\"list\":[1,[2],\"]\"]}";
    char *s = guild_json_get_string(j, "text");
    GUILD_CHECK("a string member is unescaped", s && strcmp(s, "h\xc3\xa9 \"q\" \xf0\x9f\x98\x80") == 0);
    free(s);
    double n = 0;
    GUILD_CHECK("a number member", guild_json_get_number(j, "n", &n) && n == -45.0);
    bool b = false;
    GUILD_CHECK("a true member", guild_json_get_bool(j, "ok", &b) && b);
    b = true;
    GUILD_CHECK("a false member", guild_json_get_bool(j, "no", &b) && !b);
    char *raw = guild_json_get_raw(j, "list");
    GUILD_CHECK("an array member, raw", raw && strcmp(raw, "[1,[2],\"]\"]") == 0);
    free(raw);
    raw = guild_json_get_raw(j, "a");
    GUILD_CHECK("an object member, raw", raw && strcmp(raw, "{\"x\":\"}\"}") == 0);
    free(raw);
    GUILD_CHECK("a nested member is not a top-level one", guild_json_get_string(j, "x") == NULL);
    GUILD_CHECK("a member of another type is not read",
                guild_json_get_string(j, "n") == NULL && !guild_json_get_number(j, "text", &n));
    GUILD_CHECK("not an object, or cut short: nothing",
                guild_json_get_string("[1]", "a") == NULL && guild_json_get_string("{\"a\":", "a") == NULL &&
                    guild_json_get_string("{\"a\":\"b", "a") == NULL && guild_json_get_string(NULL, "a") == NULL);
}

#if defined(GUILD_WORLD_SPECIALIST)
static void specialist_helpers(void) {
    guild_plugin_types_report_t r;
    guild_report(&r, GUILD_PLUGIN_TYPES_OUTCOME_SATISFIED, "s", "d");
    guild_report_add_claim(&r, "notes.save", "n-1", "saved");
    guild_report_add_claim(&r, "notes.echo", NULL, "echoed");
    GUILD_CHECK("claims keep tool, external id and text in that order",
                r.claims.len == 2 && guild_string_eq(&r.claims.ptr[0].tool, "notes.save") &&
                    r.claims.ptr[0].external_id.is_some && guild_string_eq(&r.claims.ptr[0].external_id.val, "n-1") &&
                    guild_string_eq(&r.claims.ptr[0].text, "saved") && !r.claims.ptr[1].external_id.is_some);
    guild_plugin_types_report_free(&r);

    guild_call_t call;
    guild_tool_call("x.y", "{}", &call);
    int line = __LINE__ - 1;
    GUILD_CHECK("a refusal's kind is said once", call.status == GUILD_CALL_DENIED && call.error &&
                                                      strncmp(call.error, "denied: ", 8) == 0 &&
                                                      strstr(call.error + 8, "denied:") == NULL);
    char *at = guild_format(" (at %s:%d)", __FILE__, line);
    size_t n = call.error ? strlen(call.error) : 0;
    GUILD_CHECK("a refusal ends with the caller's file and line",
                n > strlen(at) && strcmp(call.error + n - strlen(at), at) == 0);
    free(at);
    guild_call_free(&call);
    guild_test_tool_answer("x.y", "{\"ok\":true}");
    guild_tool_call("x.y", "{}", &call);
    GUILD_CHECK("a granted call has no error", call.status == GUILD_CALL_OK && call.error == NULL);
    guild_call_free(&call);

    char *error = NULL;
    GUILD_CHECK("progress is sent", guild_progress_send("half way", &error) && guild_test_progress_count() == 1 &&
                                        strcmp(guild_test_progress(0), "half way") == 0);
    GUILD_CHECK("a refused memory read says why",
                guild_memory_read(GUILD_MEMORY_TEAM, &error) == NULL && error && strncmp(error, "denied: ", 8) == 0);
    free(error);
    error = NULL;
    GUILD_CHECK("a refused skill says why", guild_skills_load("guide", &error) == NULL && error != NULL);
    free(error);
}

/* The model helpers (sdk/c/guild_llm.c): one question, a refusal, and the loop. */
static void model_helpers(void) {
    guild_test_reset();
    guild_test_llm_text("forty-two");
    guild_test_llm_deny("denied: plugin 'kit' capability llm is not granted");
    char *error = NULL;
    char *text = guild_llm_ask("fast", "Be brief.", "why?", &error);
    GUILD_CHECK("an answer's text comes back", text && strcmp(text, "forty-two") == 0 && error == NULL);
    free(text);
    text = guild_llm_ask("fast", NULL, "why?", &error);
    GUILD_CHECK("a refusal is typed and its kind said once",
                text == NULL && error && strcmp(error, "denied: plugin 'kit' capability llm is not granted") == 0);
    free(error);

    guild_test_reset();
    guild_test_tool_answer_id("notes.save", "{\"id\":\"n-7\"}", "n-7");
    guild_test_llm_tool_call("c1", "notes__nope", "{}");
    guild_test_llm_tool_call("c2", "notes__save", "[1]");
    guild_test_llm_tool_call("c3", "notes__save", "{\"text\":\"hi\"}");
    guild_test_llm_text("saved as n-7");
    guild_chat_t chat;
    guild_chat_init(&chat, "fast");
    guild_chat_user(&chat, "save hi");
    GUILD_CHECK("granted tools are offered", guild_chat_offer_granted(&chat) == 1 &&
                                                 guild_string_eq(&chat.request.tools.ptr[0].name, "notes__save"));
    guild_llm_answer_t answer;
    guild_llm_status_t status = guild_chat_run(&chat, &answer);
    GUILD_CHECK("the loop ends at the model's text",
                status == GUILD_LLM_OK && answer.content && strcmp(answer.content, "saved as n-7") == 0);
    GUILD_CHECK("an unoffered name and arguments that are not an object call nothing",
                guild_test_call_count() == 1 && strstr(guild_test_llm_last_message(1), "no tool named `notes__nope`") &&
                    strstr(guild_test_llm_last_message(2), "not a JSON object"));
    GUILD_CHECK("the offered name runs its connector tool, recorded with its external id",
                chat.calls_len == 1 && strcmp(chat.calls[0].tool, "notes.save") == 0 &&
                    chat.calls[0].call.external_id && strcmp(chat.calls[0].call.external_id, "n-7") == 0 &&
                    strcmp(guild_test_call_input(0), "{\"text\":\"hi\"}") == 0);
    GUILD_CHECK("the model reads the call's status, output and external id",
                strstr(guild_test_llm_last_message(3), "\"status\":\"success\",\"output\":{\"id\":\"n-7\"}") &&
                    strstr(guild_test_llm_last_message(3), "\"external_id\":\"n-7\""));
    GUILD_CHECK("tokens add up over the steps", chat.steps == 4 && chat.prompt_tokens == 40);
    guild_llm_answer_free(&answer);
    guild_chat_free(&chat);

    guild_test_llm_tool_call("c4", "x__y", "{}");
    guild_chat_init(&chat, "fast");
    guild_chat_user(&chat, "loop");
    chat.max_steps = 1;
    status = guild_chat_run(&chat, &answer);
    GUILD_CHECK("the step limit ends the loop", status == GUILD_LLM_STEP_LIMIT && answer.error &&
                                                    strstr(answer.error, "within 1 steps"));
    guild_llm_answer_free(&answer);
    guild_chat_free(&chat);
}
#else
static void connector_helpers(void) {
    guild_plugin_types_tool_spec_t spec;
    guild_tool_spec_mutating(&spec, "save", "Saves.", "{\"type\":\"object\"}", "note", "create");
    GUILD_CHECK("a mutating spec has its receipt type and operation",
                spec.mutating && spec.receipt_type.is_some && guild_string_eq(&spec.receipt_type.val, "note") &&
                    spec.operation.is_some && guild_string_eq(&spec.operation.val, "create"));
    guild_plugin_types_tool_spec_free(&spec);

    guild_plugin_types_tool_outcome_t out;
    guild_outcome_success(&out, "{\"id\":\"n-1\"}");
    guild_outcome_external_id(&out, "n-0");
    guild_outcome_external_id(&out, "n-1");
    guild_outcome_verifiable_url(&out, "http://127.0.0.1/n-1");
    GUILD_CHECK("an outcome's external id is the last one set",
                out.external_id.is_some && guild_string_eq(&out.external_id.val, "n-1") &&
                    out.verifiable_url.is_some && !out.preview.is_some);
    guild_plugin_types_tool_outcome_free(&out);
}
#endif

int main(void) {
    json_reader();
#if defined(GUILD_WORLD_SPECIALIST)
    specialist_helpers();
    model_helpers();
#else
    connector_helpers();
#endif
    return guild_test_finish();
}
