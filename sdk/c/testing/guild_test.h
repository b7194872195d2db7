/* guild_test.h: a fake host, so a C plugin's unit tests run natively (cc on the build machine,
 * not wasm) and call the world's exports directly. sdk/c/testing/test.sh compiles the plugin's
 * sources, guild.c, fake_host.c and the generated bindings' helper functions (the `*_free` and
 * `*_string_*` functions of sdk/c/bindings/WORLD/WORLD.c) against the same headers as the wasm
 * build, so a WIT change that renames a function or type breaks the test build loudly.
 *
 *   sdk/c/testing/test.sh WORLD SOURCE.c...    (a scaffold's ./test.sh calls it)
 *
 * What the fake host does, by import:
 *   log       every line is kept: guild_test_log_line(i), guild_test_logged("text").
 *   config    keys set with guild_test_config_set answer; any other key is `denied`.
 *   tools     (specialist) a tool answers what guild_test_tool_answer / _fail / _refuse set;
 *             any other tool is `denied`, as an ungranted one is. Every call is kept:
 *             guild_test_call_tool(i), guild_test_call_input(i).
 *   progress  (specialist) every report is kept: guild_test_progress(i).
 *   llm       (specialist) each completion answers the next step of a script:
 *             guild_test_llm_text / _tool_call / _deny; guild_test_llm_last_message(i).
 *   http, skills, memory   refused with `denied` naming this header (not faked).
 *
 * Memory follows the canonical ABI, as in wasm: an export owns (and frees) its arguments, so
 * pass it heap strings (guild_string_from); the test owns what an export returns and frees it
 * with the generated *_free helpers (e.g. guild_plugin_types_tool_outcome_free). Strings this
 * header returns belong to the fake host and live until guild_test_reset.
 *
 * A test file has a main() that calls exports and checks what they returned:
 *
 *   GUILD_CHECK("echo returns its input", guild_string_eq(&out.output, "{\"text\":\"hi\"}"));
 *   ...
 *   return guild_test_finish();
 *
 * GUILD_CHECK prints `ok: NAME` or `FAILED: NAME (file:line)`; guild_test_finish prints the
 * count and the names of the failed checks, frees what the fake host holds and returns the
 * exit status (1 when a check failed).
 */
#ifndef GUILD_TEST_H
#define GUILD_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guild.h"

/* ---- Checks ---- */

#define GUILD_CHECK(name, passed) guild_test_check((name), (passed), __FILE__, __LINE__)
/* Records and prints one check; returns `passed`. */
bool guild_test_check(const char *name, bool passed, const char *file, int line);
/* Prints the summary, calls guild_test_reset, returns 0 when every check passed, else 1. */
int guild_test_finish(void);
/* Whether the WIT string `s` contains the C string `needle`. */
bool guild_test_contains(const guild_string_t *s, const char *needle);
/* Forgets every answer, config value, call, log line and progress report. */
void guild_test_reset(void);

/* ---- log ---- */

size_t guild_test_log_count(void);
/* Line i as `LEVEL: text` (`info: echo: 13 bytes`); NULL past the end. */
const char *guild_test_log_line(size_t i);
/* Whether any log line contains `needle`. */
bool guild_test_logged(const char *needle);

/* ---- config ---- */

/* `key` answers `value` from now on (a copy is kept). */
void guild_test_config_set(const char *key, const char *value);

/* ---- tools and progress (specialists) ---- */
#if defined(GUILD_WORLD_SPECIALIST)

/* `tool` (`connector.tool`) succeeds with the JSON document `output_json`. */
void guild_test_tool_answer(const char *tool, const char *output_json);
/* `tool` succeeds with `output_json` and reports `external_id` (what a mutating tool does). */
void guild_test_tool_answer_id(const char *tool, const char *output_json, const char *external_id);
/* `tool` runs and fails: status `failed(message)`, output `{"error": message}`. */
void guild_test_tool_fail(const char *tool, const char *message);
/* The host refuses `tool`: `host_error` is a GUILD_PLUGIN_TYPES_HOST_ERROR_* tag. */
void guild_test_tool_refuse(const char *tool, uint8_t host_error, const char *message);

/* The calls the plugin made, in order: tool name and JSON input; NULL past the end. */
size_t guild_test_call_count(void);
const char *guild_test_call_tool(size_t i);
const char *guild_test_call_input(size_t i);

/* The progress reports the plugin sent, in order; NULL past the end. */
size_t guild_test_progress_count(void);
const char *guild_test_progress(size_t i);

/* The model (`llm`) answers each completion with the next step scripted here, in order: a text
 * answer, one tool call, or a `denied` refusal; past the script, a `timeout`. Each answer
 * counts 10 prompt and 5 completion tokens. */
void guild_test_llm_text(const char *content);
void guild_test_llm_tool_call(const char *id, const char *name, const char *arguments);
void guild_test_llm_deny(const char *message);
/* Completions asked so far, and the text of the last user or tool message of request i. */
size_t guild_test_llm_count(void);
const char *guild_test_llm_last_message(size_t i);

#endif

#endif /* GUILD_TEST_H */
