/* textstats: a guild:plugin specialist in C. Its brief is a text; its report gives the text's
 * line, word and character counts and its SHA-256, as JSON details. Built by build.sh with the
 * C SDK (sdk/c). */
#include <stdlib.h>
#include <string.h>

#include "guild.h"
#include "stats.h"

void exports_guild_plugin_specialist_api_describe(guild_plugin_types_specialist_info_t *ret) {
    guild_string_from(&ret->description,
                      "Counts the lines, words and characters of a text and gives its SHA-256.");
}

static bool blank(const uint8_t *text, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (!strchr(" \t\r\n\v\f", text[i])) return false;
    return true;
}

bool exports_guild_plugin_specialist_api_run(guild_plugin_types_brief_t *brief,
                                             guild_plugin_types_report_t *ret,
                                             guild_plugin_types_run_error_t *err) {
    const uint8_t *text = brief->description.ptr;
    size_t len = brief->description.len;
    if (blank(text, len)) {
        guild_plugin_types_brief_free(brief);
        return guild_run_error(err, true, "the brief is empty: give the text to measure");
    }
    struct stats s;
    stats_measure(text, len, &s);
    char sha[65];
    stats_sha256_hex(text, len, sha);
    guild_plugin_types_brief_free(brief);

    char *summary = guild_format("%zu lines, %zu words, %zu characters", s.lines, s.words, s.chars);
    char *details = guild_format("{\"bytes\":%zu,\"characters\":%zu,\"words\":%zu,\"lines\":%zu,"
                                 "\"longest_line\":%zu,\"sha256\":\"%s\"}",
                                 s.bytes, s.chars, s.words, s.lines, s.longest_line, sha);
    if (!summary || !details) abort();
    guild_log(GUILD_INFO, "measured %zu bytes", s.bytes);
    guild_report(ret, GUILD_PLUGIN_TYPES_OUTCOME_SATISFIED, summary, details);
    free(summary);
    free(details);
    return true;
}
