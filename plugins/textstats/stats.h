/* Text statistics and the SHA-256 digest: plain C, no Guild types, so the logic can be compiled
 * and tested on its own. */
#ifndef TEXTSTATS_STATS_H
#define TEXTSTATS_STATS_H

#include <stddef.h>
#include <stdint.h>

/* What `stats_measure` counts. Characters are Unicode scalar values (UTF-8 sequences), words
 * runs of non-whitespace, lines the newline-terminated pieces plus an unterminated last one. */
struct stats {
    size_t bytes;
    size_t chars;
    size_t words;
    size_t lines;
    size_t longest_line; /* in characters */
};

void stats_measure(const uint8_t *text, size_t len, struct stats *out);

/* Writes the lower-case hex SHA-256 of `data` and a terminating NUL into `hex` (65 bytes). */
void stats_sha256_hex(const uint8_t *data, size_t len, char hex[65]);

#endif
