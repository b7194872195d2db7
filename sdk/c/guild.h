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

/* A read-only tool's spec: name (`[a-z0-9_]{1,64}`), description, JSON Schema of its input.
 * For a mutating tool set spec->mutating and the receipt type and operation afterwards. */
void guild_tool_spec(guild_plugin_types_tool_spec_t *spec, const char *name, const char *description,
                     const char *input_schema);
/* A successful outcome with `output_json` (a JSON document) as its output. */
void guild_outcome_success(guild_plugin_types_tool_outcome_t *out, const char *output_json);
/* A failed outcome: status `failed(message)`, output `{"error": message}`. */
void guild_outcome_failed(guild_plugin_types_tool_outcome_t *out, const char *message);

#endif

/* ---- Specialists ---- */
#if defined(GUILD_WORLD_SPECIALIST)

/* A report with the defaults filled in: no issues, next step, artifacts or claims;
 * hard-passed when `outcome` is satisfied. */
void guild_report(guild_plugin_types_report_t *report, guild_plugin_types_outcome_t outcome,
                  const char *summary, const char *details);
/* Appends one open issue (a problem of this task left unresolved) to a report. */
void guild_report_add_open_issue(guild_plugin_types_report_t *report, const char *text);
/* Fills a run error and returns false, for `return guild_run_error(err, true, "...")` from
 * `run`: `invalid_brief` for a brief that cannot be acted on, else a failure. */
bool guild_run_error(guild_plugin_types_run_error_t *err, bool invalid_brief, const char *message);

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

/* Calls `connector.tool` with a JSON input document (no idempotency key); returns out->status. */
guild_call_status_t guild_tool_call(const char *name, const char *input_json, guild_call_t *out);
/* `ok`, `pending`, `failed`, `denied`, `invalid-input`, `limit-exceeded`, `host-failed`. */
const char *guild_call_status_name(guild_call_status_t status);
void guild_call_free(guild_call_t *call);

#endif

#endif /* GUILD_H */
