/* Test specialist in C (plugins/testing/cask), written with sdk/c/guild.h's model helpers. Its
 * brief is one JSON object {"op", "model", "user"}:
 *   ask   one completion (guild_llm_complete); details: status, content, finish reason, tokens,
 *         or the typed error as C code got it.
 *   loop  the kit's loop (guild_chat_run) over the granted tools; details as `ask` plus every
 *         connector call it ran; a successful call with an external id becomes a claim.
 * or {"op": "tool", "name", "input"?}: one guild_tool_call of that tool (input `{}` when
 *         absent); details: its status and error (a refusal's names this file's line). */
#include <stdlib.h>
#include <string.h>

#include "guild.h"

void exports_guild_plugin_specialist_api_describe(guild_plugin_types_specialist_info_t *ret) {
    guild_string_from(&ret->description, "Test specialist in C: asks the model its brief.");
}

/* `"key":VALUE` for text that may be NULL (then `null`). */
static char *member(const char *key, const char *text) {
    char *quoted = text ? guild_json_quote(text, strlen(text)) : NULL;
    char *out = guild_format("\"%s\":%s", key, quoted ? quoted : "null");
    free(quoted);
    return out;
}

/* The calls the loop ran, as a JSON array; each successful one with an id is claimed. */
static char *calls_json(const guild_chat_t *chat, guild_plugin_types_report_t *report) {
    char *out = guild_format("[");
    for (size_t i = 0; i < chat->calls_len; i++) {
        const guild_chat_call_t *c = &chat->calls[i];
        char *tool = member("tool", c->tool);
        char *id = member("external_id", c->call.external_id);
        char *error = member("error", c->call.error);
        char *longer = guild_format("%s%s{%s,\"status\":\"%s\",%s,%s}", out, i ? "," : "", tool,
                                    guild_call_status_name(c->call.status), id, error);
        free(out);
        out = longer;
        if (c->call.status == GUILD_CALL_OK && c->call.external_id)
            guild_report_add_claim(report, c->tool, c->call.external_id, "saved a note the model asked for");
        free(tool);
        free(id);
        free(error);
    }
    char *closed = guild_format("%s]", out);
    free(out);
    return closed;
}

/* `tool`: one call, as an author writes it; its status and error as details. */
static bool call_tool(const char *name, const char *input, guild_plugin_types_report_t *ret) {
    guild_call_t call;
    guild_tool_call(name, input ? input : "{}", &call);
    char *error = member("error", call.error);
    char *details = guild_format("{\"status\":\"%s\",%s}", guild_call_status_name(call.status), error);
    guild_report(ret, GUILD_PLUGIN_TYPES_OUTCOME_SATISFIED, guild_call_status_name(call.status), details);
    free(details);
    free(error);
    guild_call_free(&call);
    return true;
}

bool exports_guild_plugin_specialist_api_run(guild_plugin_types_brief_t *brief,
                                             guild_plugin_types_report_t *ret,
                                             guild_plugin_types_run_error_t *err) {
    char *json = guild_string_to_cstr(&brief->description);
    guild_plugin_types_brief_free(brief);
    char *op = guild_json_get_string(json, "op");
    char *tool = guild_json_get_string(json, "name");
    if (op && tool && strcmp(op, "tool") == 0) {
        char *input = guild_json_get_raw(json, "input");
        bool done = call_tool(tool, input, ret);
        free(input);
        free(tool);
        free(op);
        free(json);
        return done;
    }
    free(tool);
    char *model = guild_json_get_string(json, "model");
    char *user = guild_json_get_string(json, "user");
    free(json);
    bool loop = op && strcmp(op, "loop") == 0;
    if (!model || !user || !(loop || (op && strcmp(op, "ask") == 0))) {
        free(op);
        free(model);
        free(user);
        return guild_run_error(err, true,
                               "the brief must be {\"op\": \"ask\"|\"loop\", \"model\", \"user\"} or "
                               "{\"op\": \"tool\", \"name\"}");
    }

    guild_chat_t chat;
    guild_chat_init(&chat, model);
    guild_chat_system(&chat, "Be brief.");
    guild_chat_user(&chat, user);
    guild_llm_answer_t answer;
    if (loop) {
        guild_chat_offer_granted(&chat);
        chat.max_steps = 4;
        guild_chat_run(&chat, &answer);
    } else {
        guild_llm_complete(&chat, &answer);
    }
    guild_report(ret, GUILD_PLUGIN_TYPES_OUTCOME_SATISFIED, guild_llm_status_name(answer.status), "");
    char *content = member("content", answer.content);
    char *error = member("error", answer.error);
    char *calls = calls_json(&chat, ret);
    char *details = guild_format("{\"status\":\"%s\",%s,%s,\"finish_reason\":\"%s\",\"prompt_tokens\":%u,"
                                 "\"completion_tokens\":%u,\"steps\":%u,\"calls\":%s}",
                                 guild_llm_status_name(answer.status), content, error, answer.finish_reason,
                                 (unsigned)chat.prompt_tokens, (unsigned)chat.completion_tokens, chat.steps,
                                 calls);
    guild_string_free(&ret->details);
    guild_string_from(&ret->details, details);
    free(details);
    free(calls);
    free(error);
    free(content);
    guild_llm_answer_free(&answer);
    guild_chat_free(&chat);
    free(op);
    free(model);
    free(user);
    return true;
}
