/* guild.c: the helpers declared in guild.h, over the generated bindings of the world being
 * built (sdk/c/build.sh compiles it once per plugin with that world's GUILD_WORLD_* define). */
#include "guild.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Out of memory inside a helper: nothing sensible is left to do in a plugin instance. */
static void *must(void *p) {
    if (!p) abort();
    return p;
}

void guild_string_from(guild_string_t *out, const char *text) {
    guild_string_from_n(out, text, strlen(text));
}

void guild_string_from_n(guild_string_t *out, const char *text, size_t len) {
    /* A zero-length string may keep a NULL pointer; the ABI copies nothing then. */
    out->ptr = len ? must(malloc(len)) : NULL;
    if (len) memcpy(out->ptr, text, len);
    out->len = len;
}

char *guild_string_to_cstr(const guild_string_t *s) {
    char *copy = malloc(s->len + 1);
    if (!copy) return NULL;
    if (s->len) memcpy(copy, s->ptr, s->len);
    copy[s->len] = '\0';
    return copy;
}

bool guild_string_eq(const guild_string_t *s, const char *text) {
    size_t len = strlen(text);
    return s->len == len && (len == 0 || memcmp(s->ptr, text, len) == 0);
}

void guild_string_free(guild_string_t *s) {
    free(s->ptr);
    s->ptr = NULL;
    s->len = 0;
}

char *guild_json_quote(const char *text, size_t len) {
    /* Worst case every byte becomes \u00XX (6 bytes), plus quotes and NUL. */
    char *out = must(malloc(len * 6 + 3));
    size_t n = 0;
    out[n++] = '"';
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        switch (c) {
        case '"': out[n++] = '\\'; out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; out[n++] = '\\'; break;
        case '\n': out[n++] = '\\'; out[n++] = 'n'; break;
        case '\r': out[n++] = '\\'; out[n++] = 'r'; break;
        case '\t': out[n++] = '\\'; out[n++] = 't'; break;
        default:
            if (c < 0x20) {
                n += (size_t)snprintf(out + n, 7, "\\u%04x", c);
            } else {
                out[n++] = (char)c;
            }
        }
    }
    out[n++] = '"';
    out[n] = '\0';
    return out;
}

static char *vformat(const char *fmt, va_list args) {
    va_list again;
    va_copy(again, args);
    int len = vsnprintf(NULL, 0, fmt, args);
    char *out = NULL;
    if (len >= 0 && (out = malloc((size_t)len + 1))) vsnprintf(out, (size_t)len + 1, fmt, again);
    va_end(again);
    return out;
}

char *guild_format(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    char *out = vformat(fmt, args);
    va_end(args);
    return out;
}

void guild_log(enum guild_log_level level, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    char *text = vformat(fmt, args);
    va_end(args);
    if (!text) return;
    guild_string_t message = {(uint8_t *)text, strlen(text)};
    guild_plugin_log_log((guild_plugin_log_level_t)level, &message);
    free(text);
}

/* The text of a host-error (every case carries one), as a new C string. */
static char *host_error_text(const guild_plugin_types_host_error_t *e) {
    static const char *const kinds[] = {"denied", "invalid input", "limit exceeded", "failed"};
    const char *kind = e->tag < 4 ? kinds[e->tag] : "error";
    char *text = guild_string_to_cstr(&e->val.denied);
    char *out = guild_format("%s: %s", kind, text ? text : "");
    free(text);
    return out;
}

bool guild_config_get(const char *key, char **value, char **error) {
    guild_string_t k = {(uint8_t *)key, strlen(key)};
    guild_string_t v = {0};
    guild_plugin_types_host_error_t e;
    if (guild_plugin_config_get(&k, &v, &e)) {
        *value = must(guild_string_to_cstr(&v));
        guild_string_free(&v);
        return true;
    }
    *value = NULL;
    if (error) *error = host_error_text(&e);
    guild_plugin_types_host_error_free(&e);
    return false;
}

#if defined(GUILD_WORLD_CONNECTOR)

void guild_tool_spec(guild_plugin_types_tool_spec_t *spec, const char *name, const char *description,
                     const char *input_schema) {
    memset(spec, 0, sizeof *spec);
    guild_string_from(&spec->name, name);
    guild_string_from(&spec->description, description);
    guild_string_from(&spec->input_schema, input_schema);
    spec->mutating = false;
    spec->approval = GUILD_PLUGIN_TYPES_APPROVAL_NEVER;
}

void guild_outcome_success(guild_plugin_types_tool_outcome_t *out, const char *output_json) {
    memset(out, 0, sizeof *out);
    guild_string_from(&out->output, output_json);
    out->status.tag = GUILD_PLUGIN_TYPES_CALL_STATUS_SUCCESS;
}

void guild_outcome_failed(guild_plugin_types_tool_outcome_t *out, const char *message) {
    memset(out, 0, sizeof *out);
    char *quoted = guild_json_quote(message, strlen(message));
    char *output = must(guild_format("{\"error\":%s}", quoted));
    free(quoted);
    guild_string_from(&out->output, output);
    free(output);
    out->status.tag = GUILD_PLUGIN_TYPES_CALL_STATUS_FAILED;
    guild_string_from(&out->status.val.failed, message);
}

#endif

#if defined(GUILD_WORLD_SPECIALIST)

void guild_report(guild_plugin_types_report_t *report, guild_plugin_types_outcome_t outcome,
                  const char *summary, const char *details) {
    memset(report, 0, sizeof *report);
    guild_string_from(&report->summary, summary);
    guild_string_from(&report->details, details);
    report->outcome = outcome;
    report->hard_passed = outcome == GUILD_PLUGIN_TYPES_OUTCOME_SATISFIED;
}

void guild_report_add_open_issue(guild_plugin_types_report_t *report, const char *text) {
    size_t n = report->open_issues.len;
    report->open_issues.ptr = must(realloc(report->open_issues.ptr, (n + 1) * sizeof(guild_string_t)));
    guild_string_from(&report->open_issues.ptr[n], text);
    report->open_issues.len = n + 1;
}

bool guild_run_error(guild_plugin_types_run_error_t *err, bool invalid_brief, const char *message) {
    err->tag = invalid_brief ? GUILD_PLUGIN_TYPES_RUN_ERROR_INVALID_BRIEF : GUILD_PLUGIN_TYPES_RUN_ERROR_FAILED;
    guild_string_from(&err->val.invalid_brief, message);
    return false;
}

static char *opt_cstr(bool is_some, const guild_string_t *s) {
    return is_some ? must(guild_string_to_cstr(s)) : NULL;
}

guild_call_status_t guild_tool_call(const char *name, const char *input_json, guild_call_t *out) {
    memset(out, 0, sizeof *out);
    guild_string_t n = {(uint8_t *)name, strlen(name)};
    guild_string_t input = {(uint8_t *)input_json, strlen(input_json)};
    guild_plugin_types_tool_outcome_t outcome;
    guild_plugin_types_host_error_t e;
    if (!guild_plugin_tools_call(&n, &input, NULL, &outcome, &e)) {
        static const guild_call_status_t by_tag[] = {GUILD_CALL_DENIED, GUILD_CALL_INVALID_INPUT,
                                                     GUILD_CALL_LIMIT_EXCEEDED, GUILD_CALL_HOST_FAILED};
        out->status = e.tag < 4 ? by_tag[e.tag] : GUILD_CALL_HOST_FAILED;
        out->error = host_error_text(&e);
        guild_plugin_types_host_error_free(&e);
        return out->status;
    }
    out->output = must(guild_string_to_cstr(&outcome.output));
    out->external_id = opt_cstr(outcome.external_id.is_some, &outcome.external_id.val);
    switch (outcome.status.tag) {
    case GUILD_PLUGIN_TYPES_CALL_STATUS_SUCCESS: out->status = GUILD_CALL_OK; break;
    case GUILD_PLUGIN_TYPES_CALL_STATUS_PENDING: out->status = GUILD_CALL_PENDING; break;
    default:
        out->status = GUILD_CALL_FAILED;
        out->error = must(guild_string_to_cstr(&outcome.status.val.failed));
    }
    guild_plugin_types_tool_outcome_free(&outcome);
    return out->status;
}

const char *guild_call_status_name(guild_call_status_t status) {
    switch (status) {
    case GUILD_CALL_OK: return "ok";
    case GUILD_CALL_PENDING: return "pending";
    case GUILD_CALL_FAILED: return "failed";
    case GUILD_CALL_DENIED: return "denied";
    case GUILD_CALL_INVALID_INPUT: return "invalid-input";
    case GUILD_CALL_LIMIT_EXCEEDED: return "limit-exceeded";
    default: return "host-failed";
    }
}

void guild_call_free(guild_call_t *call) {
    free(call->output);
    free(call->error);
    free(call->external_id);
    memset(call, 0, sizeof *call);
}

#endif
