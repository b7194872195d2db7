/* guild_llm.c: the C kit's model helpers (guild.h, "Models"): a conversation (guild_chat_t)
 * built message by message, one completion (guild_llm_complete, guild_llm_ask) and the small
 * tool-calling loop (guild_chat_run), over the generated `llm` and `tools` imports. The same
 * shape as the Rust kit's `llm` and `agent::ToolLoop`, the Python and JavaScript kits' `llm`:
 * a model is named by the operator's alias, errors come back typed with their kind in front of
 * the host's text once, and a connector tool `connector.tool` is offered to the model as
 * `connector__tool` and mapped back through the loop's own table (a name it did not offer is
 * never called). Specialists only (the `llm` import is the specialist world's). */
#include "guild.h"

#if defined(GUILD_WORLD_SPECIALIST)

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *must(void *p) {
    if (!p) guild_abort_at(__FILE__, __LINE__, "out of memory in a guild.h model helper");
    return p;
}

static guild_string_t wit(const char *text) {
    guild_string_t s;
    guild_string_from(&s, text ? text : "");
    return s;
}

static char *cstr(const guild_string_t *s) {
    return must(guild_string_to_cstr(s));
}

/* ---- Building the conversation ---- */

void guild_chat_init(guild_chat_t *chat, const char *model) {
    memset(chat, 0, sizeof *chat);
    chat->request.model = wit(model);
    chat->max_steps = 10;
}

static guild_plugin_llm_message_t *push(guild_chat_t *chat, uint8_t tag) {
    guild_plugin_llm_list_message_t *list = &chat->request.messages;
    list->ptr = must(realloc(list->ptr, (list->len + 1) * sizeof *list->ptr));
    guild_plugin_llm_message_t *m = &list->ptr[list->len++];
    memset(m, 0, sizeof *m);
    m->tag = tag;
    return m;
}

void guild_chat_system(guild_chat_t *chat, const char *text) {
    push(chat, GUILD_PLUGIN_LLM_MESSAGE_SYSTEM)->val.system = wit(text);
}

void guild_chat_user(guild_chat_t *chat, const char *text) {
    push(chat, GUILD_PLUGIN_LLM_MESSAGE_USER)->val.user = wit(text);
}

void guild_chat_tool_result(guild_chat_t *chat, const char *call_id, const char *content) {
    guild_plugin_llm_message_t *m = push(chat, GUILD_PLUGIN_LLM_MESSAGE_TOOL);
    m->val.tool.call_id = wit(call_id);
    m->val.tool.content = wit(content);
}

void guild_chat_max_tokens(guild_chat_t *chat, uint32_t max_tokens) {
    chat->request.max_tokens.is_some = true;
    chat->request.max_tokens.val = max_tokens;
}

/* The function name `connector.tool` is offered under: `.` becomes `__`, any character outside
 * [a-zA-Z0-9_-] becomes `_`, at most 64 characters. */
static char *function_name(const char *tool) {
    char *out = must(malloc(65));
    size_t n = 0;
    for (const char *p = tool; *p && n < 64; p++) {
        bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                     *p == '_' || *p == '-';
        if (*p == '.') {
            out[n++] = '_';
            if (n < 64) out[n++] = '_';
        } else {
            out[n++] = plain ? *p : '_';
        }
    }
    out[n] = '\0';
    return out;
}

void guild_chat_offer(guild_chat_t *chat, const char *tool, const char *description,
                      const char *parameters) {
    guild_plugin_llm_list_tool_definition_t *list = &chat->request.tools;
    list->ptr = must(realloc(list->ptr, (list->len + 1) * sizeof *list->ptr));
    chat->offered = must(realloc(chat->offered, (list->len + 1) * sizeof *chat->offered));
    guild_plugin_llm_tool_definition_t *d = &list->ptr[list->len];
    char *name = function_name(tool);
    d->name = wit(name);
    d->description = wit(description);
    d->parameters = wit(parameters ? parameters : "{\"type\":\"object\"}");
    free(name);
    chat->offered[list->len++] = must(guild_format("%s", tool));
}

size_t guild_chat_offer_granted(guild_chat_t *chat) {
    guild_plugin_tools_list_granted_tool_t granted;
    guild_plugin_tools_granted(&granted);
    for (size_t i = 0; i < granted.len; i++) {
        char *tool = cstr(&granted.ptr[i].name);
        char *description = cstr(&granted.ptr[i].spec.description);
        char *schema = cstr(&granted.ptr[i].spec.input_schema);
        guild_chat_offer(chat, tool, description, schema);
        free(tool);
        free(description);
        free(schema);
    }
    size_t n = granted.len;
    guild_plugin_tools_list_granted_tool_free(&granted);
    return n;
}

/* ---- One completion ---- */

static const char *const KINDS[] = {"ok",       "denied",           "model-not-granted", "budget-exceeded",
                                    "rate-limited", "upstream",     "timeout",           "malformed-answer",
                                    "invalid-request", "step-limit"};

const char *guild_llm_status_name(guild_llm_status_t status) {
    return (size_t)status < sizeof KINDS / sizeof *KINDS ? KINDS[status] : "error";
}

/* `text` led by `kind: ` once: a host text that already starts with the kind (`denied: ...`,
 * or with spaces for dashes) keeps it. */
static char *led_by_kind(const char *kind, const char *text) {
    size_t n = strlen(kind);
    bool same = strncmp(text, kind, n) == 0;
    if (!same) {
        same = true;
        for (size_t i = 0; i < n && same; i++) same = text[i] == (kind[i] == '-' ? ' ' : kind[i]);
    }
    if (same && text[n] == ':') return must(guild_format("%s:%s", kind, text + n + 1));
    return must(guild_format("%s: %s", kind, text));
}

/* The error's status (GUILD_LLM_* follows the WIT tags, shifted by one) and its text. */
static guild_llm_status_t llm_error(guild_plugin_llm_llm_error_t *e, char **text) {
    guild_llm_status_t status = e->tag <= GUILD_PLUGIN_LLM_LLM_ERROR_INVALID_REQUEST
                                    ? (guild_llm_status_t)(e->tag + 1)
                                    : GUILD_LLM_MALFORMED_ANSWER;
    char *why;
    switch (e->tag) {
    case GUILD_PLUGIN_LLM_LLM_ERROR_BUDGET_EXCEEDED:
        why = must(guild_format(
            "%s token budget spent (%llu of %llu tokens)",
            e->val.budget_exceeded.budget == GUILD_PLUGIN_LLM_BUDGET_DAILY_TOKENS ? "daily" : "task",
            (unsigned long long)e->val.budget_exceeded.used, (unsigned long long)e->val.budget_exceeded.limit));
        break;
    case GUILD_PLUGIN_LLM_LLM_ERROR_RATE_LIMITED:
        why = e->val.rate_limited.is_some
                  ? must(guild_format("retry after %llu ms", (unsigned long long)e->val.rate_limited.val))
                  : must(guild_format("the endpoint is rate limiting"));
        break;
    case GUILD_PLUGIN_LLM_LLM_ERROR_UPSTREAM: {
        char *message = cstr(&e->val.upstream.message);
        why = must(guild_format("HTTP %u: %s", (unsigned)e->val.upstream.status, message));
        free(message);
        break;
    }
    default: /* every other case carries its text */
        why = cstr(&e->val.denied);
    }
    *text = led_by_kind(guild_llm_status_name(status), why);
    free(why);
    return status;
}

static const char *finish_reason(guild_plugin_llm_finish_reason_t reason) {
    switch (reason) {
    case GUILD_PLUGIN_LLM_FINISH_REASON_STOP: return "stop";
    case GUILD_PLUGIN_LLM_FINISH_REASON_LENGTH: return "length";
    case GUILD_PLUGIN_LLM_FINISH_REASON_TOOL_CALLS: return "tool-calls";
    case GUILD_PLUGIN_LLM_FINISH_REASON_CONTENT_FILTER: return "content-filter";
    default: return "other";
    }
}

guild_llm_status_t guild_llm_complete(guild_chat_t *chat, guild_llm_answer_t *out) {
    memset(out, 0, sizeof *out);
    out->finish_reason = "other";
    guild_plugin_llm_answer_t a;
    guild_plugin_llm_llm_error_t e;
    if (!guild_plugin_llm_complete(&chat->request, &a, &e)) {
        out->status = llm_error(&e, &out->error);
        guild_plugin_llm_llm_error_free(&e);
        return out->status;
    }
    out->status = GUILD_LLM_OK;
    out->content = a.content.is_some ? cstr(&a.content.val) : NULL;
    out->finish_reason = finish_reason(a.finish_reason);
    out->prompt_tokens = a.usage.prompt_tokens;
    out->completion_tokens = a.usage.completion_tokens;
    chat->prompt_tokens += a.usage.prompt_tokens;
    chat->completion_tokens += a.usage.completion_tokens;
    out->tool_calls_len = a.tool_calls.len;
    out->tool_calls = a.tool_calls.len ? must(calloc(a.tool_calls.len, sizeof *out->tool_calls)) : NULL;
    for (size_t i = 0; i < a.tool_calls.len; i++) {
        out->tool_calls[i].id = cstr(&a.tool_calls.ptr[i].id);
        out->tool_calls[i].name = cstr(&a.tool_calls.ptr[i].name);
        out->tool_calls[i].arguments = cstr(&a.tool_calls.ptr[i].arguments);
    }
    /* The answer becomes the conversation's assistant turn: its strings move into the chat. */
    guild_plugin_llm_message_t *m = push(chat, GUILD_PLUGIN_LLM_MESSAGE_ASSISTANT);
    m->val.assistant.content = a.content;
    m->val.assistant.tool_calls = a.tool_calls;
    return out->status;
}

char *guild_llm_ask(const char *model, const char *system, const char *user, char **error) {
    guild_chat_t chat;
    guild_chat_init(&chat, model);
    if (system) guild_chat_system(&chat, system);
    guild_chat_user(&chat, user);
    guild_llm_answer_t answer;
    char *text = NULL;
    if (guild_llm_complete(&chat, &answer) == GUILD_LLM_OK) {
        text = must(guild_format("%s", answer.content ? answer.content : ""));
    } else if (error) {
        *error = answer.error;
        answer.error = NULL;
    }
    guild_llm_answer_free(&answer);
    guild_chat_free(&chat);
    return text;
}

char **guild_llm_models(void) {
    specialist_list_string_t aliases;
    guild_plugin_llm_models(&aliases);
    char **out = must(calloc(aliases.len + 1, sizeof *out));
    for (size_t i = 0; i < aliases.len; i++) out[i] = cstr(&aliases.ptr[i]);
    specialist_list_string_free(&aliases);
    return out;
}

void guild_strings_free(char **list) {
    for (size_t i = 0; list && list[i]; i++) free(list[i]);
    free(list);
}

/* ---- The loop ---- */

/* What the model reads about one connector call: status, output, external id; or the refusal. */
static char *tool_message(const char *call_id, const guild_call_t *call) {
    char *id = guild_json_quote(call_id, strlen(call_id));
    char *text;
    if (call->status != GUILD_CALL_OK && call->status != GUILD_CALL_PENDING &&
        call->status != GUILD_CALL_FAILED) {
        char *error = guild_json_quote(call->error, strlen(call->error));
        text = must(guild_format("{\"call_id\":%s,\"status\":\"refused\",\"error\":%s}", id, error));
        free(error);
    } else {
        static const char *const names[] = {"success", "pending", "failed"};
        char *error = call->error ? guild_json_quote(call->error, strlen(call->error)) : NULL;
        char *ext = call->external_id ? guild_json_quote(call->external_id, strlen(call->external_id)) : NULL;
        const char *output = call->output && *call->output ? call->output : "null";
        text = must(guild_format("{\"call_id\":%s,\"status\":\"%s\",\"output\":%s%s%s%s%s}", id,
                                 names[call->status], output, error ? ",\"error\":" : "", error ? error : "",
                                 ext ? ",\"external_id\":" : "", ext ? ext : ""));
        free(error);
        free(ext);
    }
    free(id);
    return text;
}

/* `{"error": why}`: what the model reads when nothing was called. */
static char *refusal(const char *why) {
    char *quoted = guild_json_quote(why, strlen(why));
    char *text = must(guild_format("{\"error\":%s}", quoted));
    free(quoted);
    return text;
}

/* Runs one tool call the model asked for; returns what the model reads. */
static char *dispatch(guild_chat_t *chat, const guild_llm_tool_call_t *asked) {
    const guild_plugin_llm_list_tool_definition_t *offered = &chat->request.tools;
    size_t i = 0;
    while (i < offered->len && !guild_string_eq(&offered->ptr[i].name, asked->name)) i++;
    if (i == offered->len) {
        char *names = must(guild_format("%s", ""));
        for (size_t j = 0; j < offered->len; j++) {
            char *name = cstr(&offered->ptr[j].name);
            char *longer = must(guild_format("%s%s%s", names, j ? ", " : "", name));
            free(name);
            free(names);
            names = longer;
        }
        char *why = must(guild_format("no tool named `%s` is available to you; call one of: %s", asked->name, names));
        char *text = refusal(why);
        free(why);
        free(names);
        return text;
    }
    const char *args = asked->arguments;
    while (*args == ' ' || *args == '\n' || *args == '\t' || *args == '\r') args++;
    if (*args && *args != '{') {
        char *why = must(guild_format("the arguments of `%s` are not a JSON object; call it again with "
                                      "arguments that match its parameters schema",
                                      asked->name));
        char *text = refusal(why);
        free(why);
        return text;
    }
    chat->calls = must(realloc(chat->calls, (chat->calls_len + 1) * sizeof *chat->calls));
    guild_chat_call_t *record = &chat->calls[chat->calls_len++];
    record->tool = must(guild_format("%s", chat->offered[i]));
    guild_tool_call_at(NULL, 0, record->tool, *args ? args : "{}", &record->call); /* the model's call */
    return tool_message(asked->id, &record->call);
}

guild_llm_status_t guild_chat_run(guild_chat_t *chat, guild_llm_answer_t *out) {
    memset(out, 0, sizeof *out);
    while (chat->steps < chat->max_steps) {
        chat->steps++;
        guild_llm_answer_free(out);
        if (guild_llm_complete(chat, out) != GUILD_LLM_OK || out->tool_calls_len == 0) return out->status;
        for (size_t i = 0; i < out->tool_calls_len; i++) {
            char *content = dispatch(chat, &out->tool_calls[i]);
            guild_chat_tool_result(chat, out->tool_calls[i].id, content);
            free(content);
        }
    }
    out->status = GUILD_LLM_STEP_LIMIT;
    free(out->error);
    out->error = must(guild_format("step-limit: no answer within %u steps", chat->max_steps));
    return out->status;
}

void guild_llm_answer_free(guild_llm_answer_t *answer) {
    free(answer->content);
    for (size_t i = 0; i < answer->tool_calls_len; i++) {
        free(answer->tool_calls[i].id);
        free(answer->tool_calls[i].name);
        free(answer->tool_calls[i].arguments);
    }
    free(answer->tool_calls);
    free(answer->error);
    memset(answer, 0, sizeof *answer);
}

void guild_chat_free(guild_chat_t *chat) {
    for (size_t i = 0; i < chat->request.tools.len; i++) free(chat->offered[i]);
    free(chat->offered);
    for (size_t i = 0; i < chat->calls_len; i++) {
        free(chat->calls[i].tool);
        guild_call_free(&chat->calls[i].call);
    }
    free(chat->calls);
    guild_plugin_llm_request_free(&chat->request);
    memset(chat, 0, sizeof *chat);
}

#endif
