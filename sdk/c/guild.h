/* guild.h: a small layer over the generated C bindings of guild:plugin@0.2.0 (sdk/c/bindings),
 * so a C plugin does not hand-build every WIT string, list and record.
 *
 * Build with sdk/c/build.sh WORLD OUT.wasm SOURCES..., which defines GUILD_WORLD_SPECIALIST,
 * GUILD_WORLD_CONNECTOR or GUILD_WORLD_SKILL_LOADER and compiles guild.c with the plugin. The
 * plugin still implements the world's exports itself (`exports_guild_plugin_..._api_...`, see
 * the world's header in sdk/c/bindings/WORLD/); everything here is a helper.
 *
 * Memory: the canonical ABI hands an export its arguments to own and frees what an export
 * returns after the host has read it. So free arguments when done (guild_string_free, or the
 * generated *_free functions) and fill return values with heap memory, as these helpers do.
 * Every `char *` these helpers return is malloc'd, NUL-terminated and the caller's to free().
 */
#ifndef GUILD_H
#define GUILD_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(GUILD_WORLD_SPECIALIST)
#include "specialist.h"
typedef specialist_string_t guild_string_t;
#elif defined(GUILD_WORLD_CONNECTOR)
#include "connector.h"
typedef connector_string_t guild_string_t;
#elif defined(GUILD_WORLD_SKILL_LOADER)
#include "skill_loader.h"
typedef skill_loader_string_t guild_string_t;
#else
#error "define GUILD_WORLD_SPECIALIST, GUILD_WORLD_CONNECTOR or GUILD_WORLD_SKILL_LOADER (sdk/c/build.sh does)"
#endif

/* ---- Strings: WIT strings are UTF-8 (pointer, length), not NUL-terminated. ---- */

/* Sets `out` to a heap copy of the C string `text`. */
void guild_string_from(guild_string_t *out, const char *text);
/* Sets `out` to a heap copy of `len` bytes of `text`. */
void guild_string_from_n(guild_string_t *out, const char *text, size_t len);
/* A NUL-terminated heap copy of `s` (to free()); NULL when out of memory. */
char *guild_string_to_cstr(const guild_string_t *s);
/* Whether `s` holds exactly the C string `text`. */
bool guild_string_eq(const guild_string_t *s, const char *text);
/* Frees the bytes of `s` and empties it. */
void guild_string_free(guild_string_t *s);

/* ---- JSON ---- */

/* `len` bytes of UTF-8 text as a JSON string literal, quotes included: `"a \"b\"\n"`. */
char *guild_json_quote(const char *text, size_t len);
/* printf into a new heap string; NULL when out of memory. */
char *guild_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reading a JSON object (a connector's input, a tool's output): the value of `key` among the
 * top-level members of the object `json`. Each returns NULL/false when `json` is not an object,
 * the key is missing, or its value has another type; nested values are read by getting them
 * raw and reading that in turn. */
/* A string member, unescaped, as a heap C string ("\u0000" ends it early). */
char *guild_json_get_string(const char *json, const char *key);
/* A number member. */
bool guild_json_get_number(const char *json, const char *key, double *out);
/* A true/false member. */
bool guild_json_get_bool(const char *json, const char *key, bool *out);
/* Any member as its JSON text (an object, an array, a string with its quotes, ...). */
char *guild_json_get_raw(const char *json, const char *key);

/* ---- Scratch strings: freed by the kit when the export that made them returns ----
 * For the short-lived text of one call (an output, an id, a message), so a plugin need not free
 * each one. Exports written with GUILD_CONNECTOR / GUILD_SPECIALIST free them on return; code
 * that implements the exports itself calls guild_scratch_free() at its end. Never store one. */
/* printf into a scratch string ("" when out of memory). */
const char *guild_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* `text` as a JSON string literal, quotes included, in a scratch string. */
const char *guild_quote(const char *text);
/* The string member `key` of the JSON object `json`, unescaped, in a scratch string; NULL as
 * guild_json_get_string. */
const char *guild_json_string(const char *json, const char *key);
/* Frees every scratch string made so far. */
void guild_scratch_free(void);

/* ---- Aborting with a reason ----
 * A trap reaches the host as "wasm trap: wasm `unreachable` instruction executed"; the host puts
 * a trapped plugin's last stderr lines in its error, so the kit writes why first:
 * GUILD_ABORT("no memory for %zu rows", n) writes `FILE:LINE: aborted: no memory for 3 rows`;
 * a bare abort() in a file that includes guild.h writes `FILE:LINE: aborted: abort() called`;
 * an abort() anywhere else (a library, libc) writes `aborted: abort() called`. */
#define GUILD_ABORT(...) guild_abort_at(__FILE__, __LINE__, __VA_ARGS__)
__attribute__((noreturn, format(printf, 3, 4))) void guild_abort_at(const char *file, int line,
                                                                      const char *fmt, ...);
#include <stdlib.h> /* declares abort() before the macro below names it */
#ifndef GUILD_NO_ABORT_MACRO /* define it first if a name `abort(` of yours is not libc's */
#define abort() guild_abort_at(__FILE__, __LINE__, "abort() called")
#endif

/* ---- Logging (the `log` import: the host's tracing, tagged with the plugin). ---- */

enum guild_log_level {
    GUILD_TRACE = GUILD_PLUGIN_LOG_LEVEL_TRACE,
    GUILD_DEBUG = GUILD_PLUGIN_LOG_LEVEL_DEBUG,
    GUILD_INFO = GUILD_PLUGIN_LOG_LEVEL_INFO,
    GUILD_WARN = GUILD_PLUGIN_LOG_LEVEL_WARN,
    GUILD_ERROR = GUILD_PLUGIN_LOG_LEVEL_ERROR,
};
void guild_log(enum guild_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- Config (the `config` import): operator-granted values. ---- */

/* The value of a granted config key in *value (to free()), or false with the host's reason in
 * *error (to free(); may be NULL when not wanted), e.g. "denied: ..." for an ungranted key. */
bool guild_config_get(const char *key, char **value, char **error);

/* ---- Connectors ---- */
#if defined(GUILD_WORLD_CONNECTOR)

/* A read-only tool's spec: name, description, JSON Schema of its input. The name is the tool's
 * own ([a-z0-9_-]{1,64}, no dot): callers name it `CONNECTOR.NAME`. */
void guild_tool_spec(guild_plugin_types_tool_spec_t *spec, const char *name, const char *description,
                     const char *input_schema);
/* A mutating tool's spec: as guild_tool_spec, plus the receipt type and operation the host
 * records for every call (`"issue", "create"`). */
void guild_tool_spec_mutating(guild_plugin_types_tool_spec_t *spec, const char *name,
                              const char *description, const char *input_schema,
                              const char *receipt_type, const char *operation);
/* A successful outcome with `output_json` (one JSON document: the host refuses any other
 * output as a failure of this connector) as its output. */
void guild_outcome_success(guild_plugin_types_tool_outcome_t *out, const char *output_json);
/* A failed outcome: status `failed(message)`, output `{"error": message}`. */
void guild_outcome_failed(guild_plugin_types_tool_outcome_t *out, const char *message);
/* Sets what a call changed: its id in the external system, a URL to check it at, a short
 * preview. Each replaces any earlier value. */
void guild_outcome_external_id(guild_plugin_types_tool_outcome_t *out, const char *external_id);
void guild_outcome_verifiable_url(guild_plugin_types_tool_outcome_t *out, const char *url);
void guild_outcome_preview(guild_plugin_types_tool_outcome_t *out, const char *preview);


/* ---- A connector in two functions ----
 *   static void tools(guild_tools_t *tools) { guild_tools_add(tools, "echo", "…", SCHEMA); … }
 *   static void call(const char *tool, const char *input, guild_outcome_t *out) { … }
 *   GUILD_CONNECTOR(tools, call)
 * defines the world's two exports: `call` gets the tool's own name and its JSON input as C
 * strings (the kit frees them, and every scratch string, when it returns) and sets `out` with
 * guild_outcome_success / _failed (an outcome it never sets is empty output: a failed call). */
typedef exports_guild_plugin_connector_api_list_tool_spec_t guild_tools_t;
typedef guild_plugin_types_tool_outcome_t guild_outcome_t;
/* Appends a read-only tool (as guild_tool_spec) or a mutating one (guild_tool_spec_mutating). */
void guild_tools_add(guild_tools_t *tools, const char *name, const char *description, const char *input_schema);
void guild_tools_add_mutating(guild_tools_t *tools, const char *name, const char *description,
                              const char *input_schema, const char *receipt_type, const char *operation);
/* guild_outcome_failed with a printf message. */
void guild_outcome_failedf(guild_outcome_t *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void guild_connector_tools(guild_tools_t *ret, void (*tools)(guild_tools_t *));
void guild_connector_call(guild_string_t *tool, guild_string_t *input, guild_outcome_t *ret,
                          void (*call)(const char *, const char *, guild_outcome_t *));
#define GUILD_CONNECTOR(tools_fn, call_fn)                                                              \
    void exports_guild_plugin_connector_api_tools(guild_tools_t *ret) { guild_connector_tools(ret, tools_fn); } \
    void exports_guild_plugin_connector_api_call(guild_string_t *tool, guild_string_t *input,           \
                                                 guild_outcome_t *ret) {                                \
        guild_connector_call(tool, input, ret, call_fn);                                                \
    }

#endif

/* ---- Specialists ---- */
#if defined(GUILD_WORLD_SPECIALIST)

/* A report with the defaults filled in: no issues, next step, artifacts or claims;
 * hard-passed when `outcome` is satisfied. */
void guild_report(guild_plugin_types_report_t *report, guild_plugin_types_outcome_t outcome,
                  const char *summary, const char *details);
/* Appends one open issue (a problem of this task left unresolved) to a report. */
void guild_report_add_open_issue(guild_plugin_types_report_t *report, const char *text);
/* Appends a claim: an external effect this task caused with `tool`, the external id that call
 * returned (NULL when it returned none) and what was done. The host checks it against receipts. */
void guild_report_add_claim(guild_plugin_types_report_t *report, const char *tool,
                            const char *external_id, const char *text);
/* Fills a run error and returns false, for `return guild_run_error(err, true, "...")` from
 * `run`: `invalid_brief` for a brief that cannot be acted on, else a failure. */
bool guild_run_error(guild_plugin_types_run_error_t *err, bool invalid_brief, const char *message);

/* ---- A specialist in one function ----
 *   static bool run(const char *brief, guild_report_t *report, guild_run_error_t *err) { … }
 *   GUILD_SPECIALIST("What it does, for describe().", run)
 * defines the world's two exports: `run` gets the brief's text as a C string (the kit frees it,
 * and every scratch string, when it returns), fills `report` and returns true, or returns
 * guild_run_error(err, …). */
typedef guild_plugin_types_report_t guild_report_t;
typedef guild_plugin_types_run_error_t guild_run_error_t;
#define GUILD_SATISFIED GUILD_PLUGIN_TYPES_OUTCOME_SATISFIED
#define GUILD_PARTIAL GUILD_PLUGIN_TYPES_OUTCOME_PARTIAL
#define GUILD_FAILED GUILD_PLUGIN_TYPES_OUTCOME_FAILED
bool guild_specialist_run(guild_plugin_types_brief_t *brief, guild_report_t *ret, guild_run_error_t *err,
                          bool (*run)(const char *, guild_report_t *, guild_run_error_t *));
#define GUILD_SPECIALIST(description_text, run_fn)                                                     \
    void exports_guild_plugin_specialist_api_describe(guild_plugin_types_specialist_info_t *ret) {     \
        guild_string_from(&ret->description, (description_text));                                      \
    }                                                                                                  \
    bool exports_guild_plugin_specialist_api_run(guild_plugin_types_brief_t *brief, guild_report_t *ret, \
                                                 guild_run_error_t *err) {                             \
        return guild_specialist_run(brief, ret, err, run_fn);                                          \
    }

/* How a tool call went: the tool's own status, or why the host refused it. */
typedef enum guild_call_status {
    GUILD_CALL_OK,            /* the tool succeeded: `output` holds its JSON */
    GUILD_CALL_PENDING,       /* started, resolved later: `output` holds its JSON */
    GUILD_CALL_FAILED,        /* the tool ran and failed: `error` says why */
    GUILD_CALL_DENIED,        /* not requested or not granted: `error` names plugin and tool */
    GUILD_CALL_INVALID_INPUT, /* bad tool name or input JSON */
    GUILD_CALL_LIMIT_EXCEEDED,
    GUILD_CALL_HOST_FAILED, /* allowed, but the connector trapped or failed */
} guild_call_status_t;

/* What guild_tool_call answered; every string is NULL or heap memory (guild_call_free). */
typedef struct guild_call {
    guild_call_status_t status;
    char *output;      /* the tool's JSON output (OK, PENDING, FAILED) */
    char *error;       /* why it failed or was refused */
    char *external_id; /* the tool's external id, when it reported one */
} guild_call_t;

/* Calls `connector.tool` with a JSON input document (no idempotency key); returns out->status.
 * A macro, so that a refusal's `error` ends with the caller's file and line
 * (`... (at keeper.c:12)`), as in every kit: a misspelled tool is reported where it is written. */
#define guild_tool_call(name, input_json, out) guild_tool_call_at(__FILE__, __LINE__, (name), (input_json), (out))
/* guild_tool_call, placed at `file`:`line` (NULL: no place, for calls no author's line wrote,
 * such as the loop's). */
guild_call_status_t guild_tool_call_at(const char *file, int line, const char *name, const char *input_json,
                                       guild_call_t *out);
/* Sends one progress report to whoever started the task (`report = true`); false with the
 * host's reason in *error (to free(); may be NULL) when it was not delivered. */
bool guild_progress_send(const char *text, char **error);
/* The body of a skill visible to this specialist, or NULL with the reason in *error. */
char *guild_skills_load(const char *name, char **error);

/* Which memory document: the team's shared one or the user's own. */
typedef enum guild_memory_scope { GUILD_MEMORY_TEAM, GUILD_MEMORY_PRIVATE } guild_memory_scope_t;
/* The newest text of a memory document ("" when nothing was stored), or NULL with the reason. */
char *guild_memory_read(guild_memory_scope_t scope, char **error);
/* Replaces a memory document with `text`; false with the reason (every rule a refused text
 * broke, or the host's refusal) in *error. */
bool guild_memory_update(guild_memory_scope_t scope, const char *text, char **error);

/* `ok`, `pending`, `failed`, `denied`, `invalid-input`, `limit-exceeded`, `host-failed`. */
const char *guild_call_status_name(guild_call_status_t status);
void guild_call_free(guild_call_t *call);

/* ---- Models (the `llm` import: `llm = true` in plugin.toml, aliases granted by the operator;
 * sdk/c/guild_llm.c, docs/models.md). A model is named by its alias; the host holds the keys,
 * checks the grant and budgets and accounts every call's tokens to the task. ---- */

/* How a completion went: GUILD_LLM_OK, or the kind of the host's `llm-error` (in WIT order),
 * or GUILD_LLM_STEP_LIMIT (guild_chat_run only). */
typedef enum guild_llm_status {
    GUILD_LLM_OK,
    GUILD_LLM_DENIED,            /* `llm` not requested, or no alias granted */
    GUILD_LLM_MODEL_NOT_GRANTED, /* the text lists the granted aliases */
    GUILD_LLM_BUDGET_EXCEEDED,   /* nothing was sent */
    GUILD_LLM_RATE_LIMITED,
    GUILD_LLM_UPSTREAM,
    GUILD_LLM_TIMEOUT,
    GUILD_LLM_MALFORMED_ANSWER,
    GUILD_LLM_INVALID_REQUEST,
    GUILD_LLM_STEP_LIMIT, /* the model still asked for tools after max_steps completions */
} guild_llm_status_t;

/* A tool call the model asked for; `arguments` is the JSON text it wrote. */
typedef struct guild_llm_tool_call {
    char *id, *name, *arguments;
} guild_llm_tool_call_t;

/* One answer (guild_llm_answer_free); every string is NULL or heap memory. */
typedef struct guild_llm_answer {
    guild_llm_status_t status;
    char *content; /* the model's text; NULL when it wrote none */
    guild_llm_tool_call_t *tool_calls;
    size_t tool_calls_len;
    const char *finish_reason; /* "stop", "length", "tool-calls", "content-filter", "other" */
    uint32_t prompt_tokens, completion_tokens;
    char *error; /* why it failed, its kind in front once: "denied: plugin 'x' capability llm …" */
} guild_llm_answer_t;

/* A connector call guild_chat_run made for the model: `tool` is `connector.tool`. */
typedef struct guild_chat_call {
    char *tool;
    guild_call_t call; /* status, output, error, external_id (for a claim) */
} guild_chat_call_t;

/* A conversation with one model (guild_chat_free). Read `calls`, the tokens spent and `steps`;
 * set `max_steps` (default 10) before guild_chat_run. */
typedef struct guild_chat {
    guild_plugin_llm_request_t request; /* model, messages, offered tools, max_tokens */
    char **offered;                     /* per request.tools[i]: the `connector.tool` it runs */
    guild_chat_call_t *calls;
    size_t calls_len;
    unsigned max_steps, steps;
    uint32_t prompt_tokens, completion_tokens;
} guild_chat_t;

/* An empty conversation with model alias `model`. */
void guild_chat_init(guild_chat_t *chat, const char *model);
void guild_chat_system(guild_chat_t *chat, const char *text);
void guild_chat_user(guild_chat_t *chat, const char *text);
/* The answer to tool call `call_id`, for a conversation driven by guild_llm_complete. */
void guild_chat_tool_result(guild_chat_t *chat, const char *call_id, const char *content);
void guild_chat_max_tokens(guild_chat_t *chat, uint32_t max_tokens);
/* Offers connector tool `tool` (`connector.tool`) to the model, as `connector__tool`, with its
 * description and parameters' JSON Schema (NULL: any object). */
void guild_chat_offer(guild_chat_t *chat, const char *tool, const char *description, const char *parameters);
/* Offers every tool granted to this specialist, with its spec; returns how many. */
size_t guild_chat_offer_granted(guild_chat_t *chat);

/* One completion of the conversation; the answer is also appended as the assistant's turn.
 * Returns out->status (guild_llm_answer_free `out` either way). */
guild_llm_status_t guild_llm_complete(guild_chat_t *chat, guild_llm_answer_t *out);
/* The small loop: asks the model, runs the connector calls it asks for (guild_tool_call; each
 * is kept in chat->calls), sends it the results, and again, until it answers without tool
 * calls (GUILD_LLM_OK, its text in out->content), a completion fails, or chat->max_steps. */
guild_llm_status_t guild_chat_run(guild_chat_t *chat, guild_llm_answer_t *out);
/* One question, one text answer (to free()); NULL with the typed reason in *error (to free();
 * may be NULL) when it failed. `system` may be NULL. */
char *guild_llm_ask(const char *model, const char *system, const char *user, char **error);
/* The aliases this plugin may use, NULL-terminated (guild_strings_free). */
char **guild_llm_models(void);
void guild_strings_free(char **list);
/* `ok`, `denied`, `model-not-granted`, …, `step-limit`. */
const char *guild_llm_status_name(guild_llm_status_t status);
void guild_llm_answer_free(guild_llm_answer_t *answer);
void guild_chat_free(guild_chat_t *chat);

#endif

#endif /* GUILD_H */
