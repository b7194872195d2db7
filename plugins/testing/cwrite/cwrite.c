/* cwrite: test guest in C. Its brief is `PATH BYTES`; it writes BYTES bytes to PATH with stdio
 * (fopen/fwrite/fclose, through wasi-libc and the WASI preview1 adapter) and reports
 * `{"done": N, "error": "strerror text" | null}` as its details. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guild.h"

void exports_guild_plugin_specialist_api_describe(guild_plugin_types_specialist_info_t *ret) {
    guild_string_from(&ret->description, "Writes BYTES bytes to PATH with fwrite (test guest).");
}

/* Writes `bytes` bytes to `path` in 64 KiB chunks; returns how many were accepted, with the
 * first failure's errno in *error (0 when none). */
static size_t write_file(const char *path, size_t bytes, int *error) {
    static char chunk[65536];
    memset(chunk, 'c', sizeof chunk);
    *error = 0;
    FILE *f = fopen(path, "wb");
    if (!f) {
        *error = errno;
        return 0;
    }
    size_t done = 0;
    while (done < bytes) {
        size_t want = bytes - done < sizeof chunk ? bytes - done : sizeof chunk;
        size_t wrote = fwrite(chunk, 1, want, f);
        done += wrote;
        if (wrote < want) {
            *error = errno;
            break;
        }
    }
    if (fclose(f) != 0 && *error == 0) *error = errno;
    return done;
}

bool exports_guild_plugin_specialist_api_run(guild_plugin_types_brief_t *brief,
                                             guild_plugin_types_report_t *ret,
                                             guild_plugin_types_run_error_t *err) {
    char *text = guild_string_to_cstr(&brief->description);
    guild_plugin_types_brief_free(brief);
    char path[256];
    unsigned long long bytes = 0;
    if (!text || sscanf(text, "%255s %llu", path, &bytes) != 2) {
        free(text);
        return guild_run_error(err, true, "the brief must be `PATH BYTES`");
    }
    free(text);
    int error = 0;
    size_t done = write_file(path, (size_t)bytes, &error);
    char *quoted = NULL;
    if (error) {
        const char *message = strerror(error);
        quoted = guild_json_quote(message, strlen(message));
    }
    char *details = guild_format("{\"done\":%zu,\"error\":%s}", done, quoted ? quoted : "null");
    free(quoted);
    if (!details) abort();
    guild_report(ret, GUILD_PLUGIN_TYPES_OUTCOME_SATISFIED, "wrote", details);
    free(details);
    return true;
}
