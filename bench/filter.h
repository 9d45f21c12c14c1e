/* --filter: a substring of the case's text; a trailing '$' anchors it at the end, so that
 * "... D=128$" picks a case and not its causal twin.  Shared by flashc-bench and bench/peer_ggml.c. */
#ifndef FLASHC_BENCH_FILTER_H
#define FLASHC_BENCH_FILTER_H

#include <stdbool.h>
#include <string.h>

static inline bool bench_filter_matches(const char *text, const char *filter)
{
    const size_t n = strlen(text), f = strlen(filter);
    if (f && filter[f - 1] == '$')
        return f - 1 <= n && strncmp(text + n - (f - 1), filter, f - 1) == 0;
    return strstr(text, filter) != NULL;
}

#endif
