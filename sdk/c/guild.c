/* guild.c: the helpers declared in guild.h, over the generated bindings of the world being
 * built (sdk/c/build.sh compiles it once per plugin with that world's GUILD_WORLD_* define). */
#include "guild.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Out of memory inside a helper: nothing sensible is left to do in a plugin instance. */
static void *must(void *p) {
    if (!p) guild_abort_at(__FILE__, __LINE__, "out of memory in a guild.h helper");
    return p;
}

static char *vformat(const char *fmt, va_list args);

void guild_abort_at(const char *file, int line, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    char *why = vformat(fmt, args);
    va_end(args);
    /* One write: the host keeps a trapped guest's last stderr lines, write by write. */
    char *text = guild_format("%s:%d: aborted: %s\n", file, line, why ? why : fmt);
    fputs(text ? text : "aborted (out of memory)\n", stderr);
    fflush(stderr);
    __builtin_trap();
}

#if defined(__wasm__)
/* Replaces wasi-libc's abort(), a bare trap, for callers that did not include guild.h (a
 * library, libc itself): the trap's error then says at least that abort() was called. */
void(abort)(void) {
    fputs("aborted: abort() called (use GUILD_ABORT(\"why\") to say why)\n", stderr);
    fflush(stderr);
    __builtin_trap();
}
#endif

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

/* ---- Reading JSON: a scanner over one document, enough to find a top-level member. ---- */

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* `p` at an opening quote: just past the closing one, or NULL. */
static const char *skip_string(const char *p) {
    for (p++; *p; p++) {
        if (*p == '\\') {
            if (!*++p) return NULL;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* `p` at a value: just past it, or NULL when it is malformed. */
static const char *skip_value(const char *p) {
    if (*p == '"') return skip_string(p);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (*p) {
            if (*p == '"') {
                if (!(p = skip_string(p))) return NULL;
                continue;
            }
            if (*p == '{' || *p == '[') depth++;
            if ((*p == '}' || *p == ']') && --depth == 0) return p + 1;
            p++;
        }
        return NULL;
    }
    const char *start = p;
    while (*p && !strchr(",}] \t\r\n", *p)) p++;
    return p > start ? p : NULL;
}

static void put_utf8(char **out, unsigned long c) {
    char *o = *out;
    if (c < 0x80) {
        *o++ = (char)c;
    } else if (c < 0x800) {
        *o++ = (char)(0xC0 | (c >> 6));
        *o++ = (char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        *o++ = (char)(0xE0 | (c >> 12));
        *o++ = (char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (char)(0x80 | (c & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (c >> 18));
        *o++ = (char)(0x80 | ((c >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (char)(0x80 | (c & 0x3F));
    }
    *out = o;
}

static bool hex4(const char *p, unsigned long *out) {
    char digits[5] = {0};
    for (int i = 0; i < 4; i++) {
        if (!p[i] || !strchr("0123456789abcdefABCDEF", p[i])) return false;
        digits[i] = p[i];
    }
    *out = strtoul(digits, NULL, 16);
    return true;
}

/* The string literal at `p` (quotes included, `end` just past it) unescaped; NULL if bad. */
static char *unescape(const char *p, const char *end) {
    char *out = must(malloc((size_t)(end - p)));
    char *o = out;
    for (p++; p < end - 1; p++) {
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        unsigned long c;
        switch (*++p) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u':
            if (!hex4(p + 1, &c)) goto bad;
            p += 4;
            if (c >= 0xD800 && c < 0xDC00) { /* a surrogate pair: \uD83D\uDE00 */
                unsigned long low;
                if (p[1] != '\\' || p[2] != 'u' || !hex4(p + 3, &low) || low < 0xDC00 || low > 0xDFFF)
                    goto bad;
                c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
                p += 6;
            }
            put_utf8(&o, c);
            break;
        default: *o++ = *p; /* \" \\ \/ */
        }
    }
    *o = '\0';
    return out;
bad:
    free(out);
    return NULL;
}

/* The start of the value of top-level member `key` of the object `json`, or NULL. */
static const char *member(const char *json, const char *key) {
    if (!json) return NULL;
    const char *p = skip_ws(json);
    if (*p++ != '{') return NULL;
    for (;;) {
        p = skip_ws(p);
        if (*p != '"') return NULL;
        const char *name_end = skip_string(p);
        if (!name_end) return NULL;
        char *name = unescape(p, name_end);
        p = skip_ws(name_end);
        if (!name || *p++ != ':') {
            free(name);
            return NULL;
        }
        p = skip_ws(p);
        bool found = strcmp(name, key) == 0;
        free(name);
        if (found) return p;
        if (!(p = skip_value(p))) return NULL;
        p = skip_ws(p);
        if (*p++ != ',') return NULL;
    }
}

char *guild_json_get_string(const char *json, const char *key) {
    const char *p = member(json, key);
    const char *end = p && *p == '"' ? skip_string(p) : NULL;
    return end ? unescape(p, end) : NULL;
}

bool guild_json_get_number(const char *json, const char *key, double *out) {
    const char *p = member(json, key);
    if (!p || !(*p == '-' || (*p >= '0' && *p <= '9'))) return false;
    char *end;
    double value = strtod(p, &end);
    if (end == p) return false;
    *out = value;
    return true;
}

bool guild_json_get_bool(const char *json, const char *key, bool *out) {
    const char *p = member(json, key);
    if (p && strncmp(p, "true", 4) == 0) return (*out = true);
    if (p && strncmp(p, "false", 5) == 0) return !(*out = false);
    return false;
}

char *guild_json_get_raw(const char *json, const char *key) {
    const char *p = member(json, key);
    const char *end = p ? skip_value(p) : NULL;
    if (!end) return NULL;
    char *out = must(malloc((size_t)(end - p) + 1));
    memcpy(out, p, (size_t)(end - p));
    out[end - p] = '\0';
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

/* ---- Scratch strings ---- */

static char **scratch;
static size_t scratch_len;

static const char *keep(char *text) {
    if (!text) return "";
    scratch = must(realloc(scratch, (scratch_len + 1) * sizeof *scratch));
    scratch[scratch_len++] = text;
    return text;
}

const char *guild_fmt(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    char *out = vformat(fmt, args);
    va_end(args);
    return keep(out);
}

const char *guild_quote(const char *text) {
    return keep(guild_json_quote(text, strlen(text)));
}

const char *guild_json_string(const char *json, const char *key) {
    char *value = guild_json_get_string(json, key);
    return value ? keep(value) : NULL;
}

void guild_scratch_free(void) {
    for (size_t i = 0; i < scratch_len; i++) free(scratch[i]);
    free(scratch);
    scratch = NULL;
    scratch_len = 0;
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

/* The text of a host-error (every case carries one), as a new C string, led by its kind
 * (`denied: ...`) unless the host's text already starts with it. */
static char *host_error_text(const guild_plugin_types_host_error_t *e) {
    static const char *const kinds[] = {"denied", "invalid input", "limit exceeded", "failed"};
    const char *kind = e->tag < 4 ? kinds[e->tag] : "error";
    char *text = must(guild_string_to_cstr(&e->val.denied));
    size_t n = strlen(kind);
    if (strncmp(text, kind, n) == 0 && text[n] == ':') return text;
    char *out = must(guild_format("%s: %s", kind, text));
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

void guild_tool_spec_mutating(guild_plugin_types_tool_spec_t *spec, const char *name,
                              const char *description, const char *input_schema,
                              const char *receipt_type, const char *operation) {
    guild_tool_spec(spec, name, description, input_schema);
    spec->mutating = true;
    spec->receipt_type.is_some = true;
    guild_string_from(&spec->receipt_type.val, receipt_type);
    spec->operation.is_some = true;
    guild_string_from(&spec->operation.val, operation);
}

static void set_option(connector_option_string_t *field, const char *text) {
    if (field->is_some) guild_string_free(&field->val);
    field->is_some = true;
    guild_string_from(&field->val, text);
}

void guild_outcome_external_id(guild_plugin_types_tool_outcome_t *out, const char *external_id) {
    set_option(&out->external_id, external_id);
}

void guild_outcome_verifiable_url(guild_plugin_types_tool_outcome_t *out, const char *url) {
    set_option(&out->verifiable_url, url);
}

void guild_outcome_preview(guild_plugin_types_tool_outcome_t *out, const char *preview) {
    set_option(&out->preview, preview);
}

void guild_outcome_success(guild_plugin_types_tool_outcome_t *out, const char *output_json) {
    memset(out, 0, sizeof *out);
    guild_string_from(&out->output, output_json);
    out->status.tag = GUILD_PLUGIN_TYPES_CALL_STATUS_SUCCESS;
}

void guild_tools_add(guild_tools_t *tools, const char *name, const char *description, const char *input_schema) {
    tools->ptr = must(realloc(tools->ptr, (tools->len + 1) * sizeof *tools->ptr));
    guild_tool_spec(&tools->ptr[tools->len++], name, description, input_schema);
}

void guild_tools_add_mutating(guild_tools_t *tools, const char *name, const char *description,
                              const char *input_schema, const char *receipt_type, const char *operation) {
    tools->ptr = must(realloc(tools->ptr, (tools->len + 1) * sizeof *tools->ptr));
    guild_tool_spec_mutating(&tools->ptr[tools->len++], name, description, input_schema, receipt_type, operation);
}

void guild_outcome_failedf(guild_outcome_t *out, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    char *message = vformat(fmt, args);
    va_end(args);
    guild_outcome_failed(out, message ? message : fmt);
    free(message);
}

void guild_connector_tools(guild_tools_t *ret, void (*tools)(guild_tools_t *)) {
    ret->ptr = NULL;
    ret->len = 0;
    tools(ret);
    guild_scratch_free();
}

void guild_connector_call(guild_string_t *tool, guild_string_t *input, guild_outcome_t *ret,
                          void (*call)(const char *, const char *, guild_outcome_t *)) {
    char *name = must(guild_string_to_cstr(tool));
    char *json = must(guild_string_to_cstr(input));
    guild_string_free(tool);
    guild_string_free(input);
    memset(ret, 0, sizeof *ret);
    call(name, json, ret);
    free(name);
    free(json);
    guild_scratch_free();
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

void guild_report_add_claim(guild_plugin_types_report_t *report, const char *tool,
                            const char *external_id, const char *text) {
    size_t n = report->claims.len;
    report->claims.ptr = must(realloc(report->claims.ptr, (n + 1) * sizeof *report->claims.ptr));
    guild_plugin_types_claim_t *claim = &report->claims.ptr[n];
    memset(claim, 0, sizeof *claim);
    guild_string_from(&claim->tool, tool);
    claim->external_id.is_some = external_id != NULL;
    if (external_id) guild_string_from(&claim->external_id.val, external_id);
    guild_string_from(&claim->text, text);
    report->claims.len = n + 1;
}

bool guild_run_error(guild_plugin_types_run_error_t *err, bool invalid_brief, const char *message) {
    err->tag = invalid_brief ? GUILD_PLUGIN_TYPES_RUN_ERROR_INVALID_BRIEF : GUILD_PLUGIN_TYPES_RUN_ERROR_FAILED;
    guild_string_from(&err->val.invalid_brief, message);
    return false;
}

bool guild_specialist_run(guild_plugin_types_brief_t *brief, guild_report_t *ret, guild_run_error_t *err,
                          bool (*run)(const char *, guild_report_t *, guild_run_error_t *)) {
    char *text = must(guild_string_to_cstr(&brief->description));
    guild_plugin_types_brief_free(brief);
    memset(ret, 0, sizeof *ret);
    bool ok = run(text, ret, err);
    free(text);
    guild_scratch_free();
    return ok;
}

static char *opt_cstr(bool is_some, const guild_string_t *s) {
    return is_some ? must(guild_string_to_cstr(s)) : NULL;
}

guild_call_status_t guild_tool_call_at(const char *file, int line, const char *name, const char *input_json,
                                       guild_call_t *out) {
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
        if (file) {
            char *placed = must(guild_format("%s (at %s:%d)", out->error, file, line));
            free(out->error);
            out->error = placed;
        }
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

/* Sets *error (when wanted) to `text`, else frees it; returns false. */
static bool refused(char **error, char *text) {
    if (error) {
        *error = text;
    } else {
        free(text);
    }
    return false;
}

bool guild_progress_send(const char *text, char **error) {
    guild_string_t output = {(uint8_t *)text, strlen(text)};
    guild_string_t id = {0};
    guild_plugin_progress_progress_error_t e;
    if (guild_plugin_progress_send(&output, &id, &e)) {
        guild_string_free(&id);
        return true;
    }
    char *why = e.tag == GUILD_PLUGIN_TYPES_PROGRESS_ERROR_PARENT_GONE
                    ? must(guild_format("parent gone: nobody reads this task's progress"))
                    : must(guild_string_to_cstr(&e.val.denied));
    guild_plugin_types_progress_error_free(&e);
    return refused(error, why);
}

char *guild_skills_load(const char *name, char **error) {
    guild_string_t n = {(uint8_t *)name, strlen(name)};
    guild_string_t body = {0};
    guild_plugin_types_host_error_t e;
    if (!guild_plugin_skills_load(&n, &body, &e)) {
        refused(error, host_error_text(&e));
        guild_plugin_types_host_error_free(&e);
        return NULL;
    }
    char *out = must(guild_string_to_cstr(&body));
    guild_string_free(&body);
    return out;
}

static guild_plugin_memory_scope_t wit_scope(guild_memory_scope_t scope) {
    return scope == GUILD_MEMORY_TEAM ? GUILD_PLUGIN_MEMORY_SCOPE_TEAM : GUILD_PLUGIN_MEMORY_SCOPE_PRIVATE;
}

char *guild_memory_read(guild_memory_scope_t scope, char **error) {
    guild_plugin_memory_document_t doc;
    guild_plugin_types_host_error_t e;
    if (!guild_plugin_memory_read(wit_scope(scope), &doc, &e)) {
        refused(error, host_error_text(&e));
        guild_plugin_types_host_error_free(&e);
        return NULL;
    }
    char *out = must(guild_string_to_cstr(&doc.text));
    guild_string_free(&doc.text);
    return out;
}

bool guild_memory_update(guild_memory_scope_t scope, const char *text, char **error) {
    guild_string_t t = {(uint8_t *)text, strlen(text)};
    guild_plugin_memory_update_result_t done;
    guild_plugin_memory_update_error_t e;
    if (guild_plugin_memory_update(wit_scope(scope), &t, &done, &e)) {
        guild_plugin_memory_update_result_free(&done);
        return true;
    }
    char *why;
    if (e.tag == GUILD_PLUGIN_MEMORY_UPDATE_ERROR_REFUSED) {
        why = must(guild_format("refused:"));
        for (size_t i = 0; i < e.val.refused.errors.len; i++) {
            char *rule = must(guild_string_to_cstr(&e.val.refused.errors.ptr[i]));
            char *longer = must(guild_format("%s%s %s", why, i ? ";" : "", rule));
            free(rule);
            free(why);
            why = longer;
        }
    } else {
        why = host_error_text(&e.val.host);
    }
    guild_plugin_memory_update_error_free(&e);
    return refused(error, why);
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
