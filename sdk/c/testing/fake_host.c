/* fake_host.c: the imports of the world being tested, answered natively from what the test set
 * up with guild_test.h, plus the checks. It defines the generated header's import functions
 * (`guild_plugin_log_log`, ...) in place of the bindings' canonical-ABI adapters, with the
 * header's own prototypes: a renamed or retyped import fails this file's compilation. */
#include "guild_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bindings' string helpers allocate with it (it is the ABI's allocator in wasm). */
void *cabi_realloc(void *ptr, size_t old_size, size_t align, size_t new_size);

void *cabi_realloc(void *ptr, size_t old_size, size_t align, size_t new_size) {
    (void)old_size;
    if (new_size == 0) return (void *)align;
    void *out = realloc(ptr, new_size);
    if (!out) abort();
    return out;
}

static void *must(void *p) {
    if (!p) {
        fprintf(stderr, "guild_test: out of memory\n");
        abort();
    }
    return p;
}

static char *copy(const char *text) {
    size_t len = strlen(text);
    char *out = must(malloc(len + 1));
    memcpy(out, text, len + 1);
    return out;
}

/* A growable list of heap C strings. */
typedef struct {
    char **items;
    size_t len;
} strings_t;

static void strings_push(strings_t *list, char *owned) {
    list->items = must(realloc(list->items, (list->len + 1) * sizeof *list->items));
    list->items[list->len++] = owned;
}

static const char *strings_get(const strings_t *list, size_t i) {
    return i < list->len ? list->items[i] : NULL;
}

static void strings_clear(strings_t *list) {
    for (size_t i = 0; i < list->len; i++) free(list->items[i]);
    free(list->items);
    list->items = NULL;
    list->len = 0;
}

/* ---- State ---- */

static strings_t logs;
static strings_t config_keys, config_values;
static size_t checks_run;
static strings_t checks_failed; /* their names, for the summary */

#if defined(GUILD_WORLD_SPECIALIST)
enum answer_kind { ANSWER_SUCCESS, ANSWER_FAILED, ANSWER_REFUSED };
typedef struct {
    char *tool, *text;
    enum answer_kind kind;
    uint8_t host_error;
    char *external_id; /* NULL: none */
} answer_t;
static answer_t *answers;
static size_t answer_count;
static strings_t call_tools, call_inputs, progress;
/* The model's script: one step per completion, each `T` (text), `C` (a tool call) or `D`
 * (denied) with up to three strings; and the last user or tool message of each request. */
static strings_t llm_kinds, llm_a, llm_b, llm_c, llm_seen;
static size_t llm_next;
#endif

void guild_test_reset(void) {
    strings_clear(&logs);
    strings_clear(&config_keys);
    strings_clear(&config_values);
#if defined(GUILD_WORLD_SPECIALIST)
    for (size_t i = 0; i < answer_count; i++) {
        free(answers[i].tool);
        free(answers[i].text);
        free(answers[i].external_id);
    }
    free(answers);
    answers = NULL;
    answer_count = 0;
    strings_clear(&call_tools);
    strings_clear(&call_inputs);
    strings_clear(&progress);
    strings_clear(&llm_kinds);
    strings_clear(&llm_a);
    strings_clear(&llm_b);
    strings_clear(&llm_c);
    strings_clear(&llm_seen);
    llm_next = 0;
#endif
}

/* ---- Checks ---- */

bool guild_test_check(const char *name, bool passed, const char *file, int line) {
    checks_run++;
    if (passed) {
        printf("ok: %s\n", name);
    } else {
        strings_push(&checks_failed, copy(name));
        printf("FAILED: %s (%s:%d)\n", name, file, line);
    }
    fflush(stdout);
    return passed;
}

int guild_test_finish(void) {
    guild_test_reset();
    size_t failed = checks_failed.len;
    if (failed == 0) {
        printf("all %zu checks passed\n", checks_run);
        return 0;
    }
    printf("%zu of %zu checks FAILED:", failed, checks_run);
    for (size_t i = 0; i < failed; i++) printf("%s %s", i ? ";" : "", checks_failed.items[i]);
    printf("\n");
    strings_clear(&checks_failed);
    return 1;
}

bool guild_test_contains(const guild_string_t *s, const char *needle) {
    size_t n = strlen(needle);
    if (n == 0) return true;
    for (size_t i = 0; i + n <= s->len; i++)
        if (memcmp(s->ptr + i, needle, n) == 0) return true;
    return false;
}

/* Sets `err` to a host error with a heap copy of `message` (the guest frees it). */
static void host_error(guild_plugin_types_host_error_t *err, uint8_t tag, const char *message) {
    err->tag = tag;
    guild_string_from(&err->val.denied, message); /* every case holds one string */
}

static char *cstr(const guild_string_t *s) {
    return must(guild_string_to_cstr(s));
}

/* ---- log ---- */

void guild_plugin_log_log(guild_plugin_log_level_t level, guild_string_t *message) {
    static const char *const names[] = {"trace", "debug", "info", "warn", "error"};
    char *text = cstr(message);
    strings_push(&logs, must(guild_format("%s: %s", level < 5 ? names[level] : "log", text)));
    free(text);
}

size_t guild_test_log_count(void) { return logs.len; }

const char *guild_test_log_line(size_t i) { return strings_get(&logs, i); }

bool guild_test_logged(const char *needle) {
    for (size_t i = 0; i < logs.len; i++)
        if (strstr(logs.items[i], needle)) return true;
    return false;
}

/* ---- config ---- */

void guild_test_config_set(const char *key, const char *value) {
    strings_push(&config_keys, copy(key));
    strings_push(&config_values, copy(value));
}

bool guild_plugin_config_get(guild_string_t *key, guild_string_t *ret,
                             guild_plugin_config_host_error_t *err) {
    /* The newest value set for a key wins. */
    for (size_t i = config_keys.len; i-- > 0;) {
        if (guild_string_eq(key, config_keys.items[i])) {
            guild_string_from(ret, config_values.items[i]);
            return true;
        }
    }
    char *name = cstr(key);
    char *message = must(guild_format(
        "config key `%s` is not granted in the fake host (set it with guild_test_config_set)", name));
    host_error(err, GUILD_PLUGIN_TYPES_HOST_ERROR_DENIED, message);
    free(message);
    free(name);
    return false;
}

/* ---- Not faked: refused with a text that says so. ---- */

static void not_faked(guild_plugin_types_host_error_t *err, const char *import) {
    char *message = must(guild_format("%s is not faked by guild_test.h: test that code in wasm "
                                      "with `guild dev`", import));
    host_error(err, GUILD_PLUGIN_TYPES_HOST_ERROR_DENIED, message);
    free(message);
}

bool guild_plugin_http_send(guild_plugin_http_request_t *request, guild_plugin_http_response_t *ret,
                            guild_plugin_http_host_error_t *err) {
    (void)request;
    (void)ret;
    not_faked(err, "http.send");
    return false;
}

#if defined(GUILD_WORLD_SPECIALIST)

/* ---- tools ---- */

static void set_answer(const char *tool, enum answer_kind kind, uint8_t host_error,
                       const char *text) {
    answers = must(realloc(answers, (answer_count + 1) * sizeof *answers));
    answers[answer_count++] = (answer_t){copy(tool), copy(text), kind, host_error, NULL};
}

void guild_test_tool_answer(const char *tool, const char *output_json) {
    set_answer(tool, ANSWER_SUCCESS, 0, output_json);
}

void guild_test_tool_answer_id(const char *tool, const char *output_json, const char *external_id) {
    set_answer(tool, ANSWER_SUCCESS, 0, output_json);
    answers[answer_count - 1].external_id = copy(external_id);
}

void guild_test_tool_fail(const char *tool, const char *message) {
    set_answer(tool, ANSWER_FAILED, 0, message);
}

void guild_test_tool_refuse(const char *tool, uint8_t host_error, const char *message) {
    set_answer(tool, ANSWER_REFUSED, host_error, message);
}

size_t guild_test_call_count(void) { return call_tools.len; }

const char *guild_test_call_tool(size_t i) { return strings_get(&call_tools, i); }

const char *guild_test_call_input(size_t i) { return strings_get(&call_inputs, i); }

void guild_plugin_tools_granted(guild_plugin_tools_list_granted_tool_t *ret) {
    /* The tools with an answer, with a spec that names them and says nothing else. */
    ret->len = 0;
    ret->ptr = answer_count ? must(calloc(answer_count, sizeof *ret->ptr)) : NULL;
    for (size_t i = 0; i < answer_count; i++) {
        guild_plugin_tools_granted_tool_t *g = &ret->ptr[ret->len++];
        const char *dot = strchr(answers[i].tool, '.');
        guild_string_from(&g->name, answers[i].tool);
        guild_string_from(&g->spec.name, dot ? dot + 1 : answers[i].tool);
        guild_string_from(&g->spec.description, "a tool of the fake host");
        guild_string_from(&g->spec.input_schema, "{\"type\":\"object\"}");
    }
}

bool guild_plugin_tools_call(guild_string_t *name, guild_string_t *input,
                             guild_string_t *maybe_idempotency_key,
                             guild_plugin_tools_tool_outcome_t *ret,
                             guild_plugin_tools_host_error_t *err) {
    (void)maybe_idempotency_key;
    char *tool = cstr(name);
    strings_push(&call_tools, tool);
    strings_push(&call_inputs, cstr(input));
    /* The newest answer set for a tool wins. */
    const answer_t *answer = NULL;
    for (size_t i = answer_count; i-- > 0 && !answer;)
        if (strcmp(answers[i].tool, tool) == 0) answer = &answers[i];
    if (!answer) {
        char *message = must(guild_format(
            "tool `%s` is not granted in the fake host (answer it with guild_test_tool_answer)", tool));
        host_error(err, GUILD_PLUGIN_TYPES_HOST_ERROR_DENIED, message);
        free(message);
        return false;
    }
    memset(ret, 0, sizeof *ret);
    switch (answer->kind) {
    case ANSWER_SUCCESS:
        guild_string_from(&ret->output, answer->text);
        ret->status.tag = GUILD_PLUGIN_TYPES_CALL_STATUS_SUCCESS;
        if (answer->external_id) {
            ret->external_id.is_some = true;
            guild_string_from(&ret->external_id.val, answer->external_id);
        }
        return true;
    case ANSWER_FAILED: {
        char *quoted = guild_json_quote(answer->text, strlen(answer->text));
        char *output = must(guild_format("{\"error\":%s}", quoted));
        guild_string_from(&ret->output, output);
        free(output);
        free(quoted);
        ret->status.tag = GUILD_PLUGIN_TYPES_CALL_STATUS_FAILED;
        guild_string_from(&ret->status.val.failed, answer->text);
        return true;
    }
    default:
        host_error(err, answer->host_error, answer->text);
        return false;
    }
}

/* ---- progress ---- */

size_t guild_test_progress_count(void) { return progress.len; }

const char *guild_test_progress(size_t i) { return strings_get(&progress, i); }

bool guild_plugin_progress_send(guild_string_t *output, guild_string_t *ret,
                                guild_plugin_progress_progress_error_t *err) {
    (void)err;
    strings_push(&progress, cstr(output));
    char *id = must(guild_format("progress-%zu", progress.len));
    guild_string_from(ret, id);
    free(id);
    return true;
}

/* ---- skills and memory: not faked ---- */

void guild_plugin_skills_catalog(guild_plugin_skills_list_skill_meta_t *ret) {
    ret->ptr = NULL;
    ret->len = 0;
}

bool guild_plugin_skills_load(guild_string_t *name, guild_string_t *ret,
                              guild_plugin_skills_host_error_t *err) {
    (void)name;
    (void)ret;
    not_faked(err, "skills.load");
    return false;
}

bool guild_plugin_skills_read(guild_string_t *name, guild_string_t *path,
                              specialist_list_u8_t *ret, guild_plugin_skills_host_error_t *err) {
    (void)name;
    (void)path;
    (void)ret;
    not_faked(err, "skills.read");
    return false;
}

bool guild_plugin_memory_read(guild_plugin_memory_scope_t scope, guild_plugin_memory_document_t *ret,
                              guild_plugin_memory_host_error_t *err) {
    (void)scope;
    (void)ret;
    not_faked(err, "memory.read");
    return false;
}

bool guild_plugin_memory_update(guild_plugin_memory_scope_t scope, guild_string_t *text,
                                guild_plugin_memory_update_result_t *ret,
                                guild_plugin_memory_update_error_t *err) {
    (void)scope;
    (void)text;
    (void)ret;
    err->tag = GUILD_PLUGIN_MEMORY_UPDATE_ERROR_HOST;
    not_faked(&err->val.host, "memory.update");
    return false;
}

/* ---- llm: answers from a script ---- */

static void llm_step(const char *kind, const char *a, const char *b, const char *c) {
    strings_push(&llm_kinds, copy(kind));
    strings_push(&llm_a, copy(a));
    strings_push(&llm_b, copy(b ? b : ""));
    strings_push(&llm_c, copy(c ? c : ""));
}

void guild_test_llm_text(const char *content) { llm_step("T", content, NULL, NULL); }

void guild_test_llm_tool_call(const char *id, const char *name, const char *arguments) {
    llm_step("C", id, name, arguments);
}

void guild_test_llm_deny(const char *message) { llm_step("D", message, NULL, NULL); }

size_t guild_test_llm_count(void) { return llm_seen.len; }

const char *guild_test_llm_last_message(size_t i) { return strings_get(&llm_seen, i); }

void guild_plugin_llm_models(specialist_list_string_t *ret) {
    ret->len = 1;
    ret->ptr = must(calloc(1, sizeof *ret->ptr));
    guild_string_from(&ret->ptr[0], "test-model");
}

bool guild_plugin_llm_complete(guild_plugin_llm_request_t *request, guild_plugin_llm_answer_t *ret,
                               guild_plugin_llm_llm_error_t *err) {
    const guild_plugin_llm_message_t *last = request->messages.len
                                                 ? &request->messages.ptr[request->messages.len - 1]
                                                 : NULL;
    const guild_string_t *text = !last                                        ? NULL
                                 : last->tag == GUILD_PLUGIN_LLM_MESSAGE_TOOL ? &last->val.tool.content
                                 : last->tag == GUILD_PLUGIN_LLM_MESSAGE_USER ? &last->val.user
                                                                              : NULL;
    strings_push(&llm_seen, text ? cstr(text) : copy(""));
    const char *kind = strings_get(&llm_kinds, llm_next);
    size_t i = llm_next++;
    memset(ret, 0, sizeof *ret);
    if (!kind || *kind == 'D') {
        err->tag = kind ? GUILD_PLUGIN_LLM_LLM_ERROR_DENIED : GUILD_PLUGIN_LLM_LLM_ERROR_TIMEOUT;
        guild_string_from(&err->val.denied, kind ? llm_a.items[i] : "the script has no more answers");
        return false;
    }
    ret->usage.prompt_tokens = 10;
    ret->usage.completion_tokens = 5;
    if (*kind == 'T') {
        ret->content.is_some = true;
        guild_string_from(&ret->content.val, llm_a.items[i]);
        ret->finish_reason = GUILD_PLUGIN_LLM_FINISH_REASON_STOP;
        return true;
    }
    ret->finish_reason = GUILD_PLUGIN_LLM_FINISH_REASON_TOOL_CALLS;
    ret->tool_calls.len = 1;
    ret->tool_calls.ptr = must(calloc(1, sizeof *ret->tool_calls.ptr));
    guild_string_from(&ret->tool_calls.ptr[0].id, llm_a.items[i]);
    guild_string_from(&ret->tool_calls.ptr[0].name, llm_b.items[i]);
    guild_string_from(&ret->tool_calls.ptr[0].arguments, llm_c.items[i]);
    return true;
}

#endif
