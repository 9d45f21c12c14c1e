/*
 * The CUDA tests' command line, `[cases [mode]]`: cases a count, mode one of the test's words.
 * A wrong one exits 2 before the GPU is looked for, so that a device script's typo fails on any
 * machine (tools/gpu-dry-run.sh runs the device scripts without a GPU, where the tests skip).
 */
#ifndef FLASHC_TESTS_CUDA_GPU_ARGS_H
#define FLASHC_TESTS_CUDA_GPU_ARGS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Whether argv is `[cases [mode]]` with mode one of the space-separated modes ("" for none). */
static inline bool gc_args_ok(int argc, char **argv, const char *modes)
{
    bool ok = argc <= 3;
    if (ok && argc > 1)
        ok = argv[1][0] != '\0' && strspn(argv[1], "0123456789") == strlen(argv[1]);
    if (ok && argc > 2) {
        const size_t n = strlen(argv[2]);
        const char *m = strstr(modes, argv[2]);
        ok = false;
        for (; n && m; m = strstr(m + 1, argv[2]))
            ok = ok || ((m == modes || m[-1] == ' ') && (m[n] == ' ' || m[n] == '\0'));
    }
    if (!ok)
        fprintf(stderr, "usage: %s [cases%s%s%s]\n", argv[0], *modes ? " [" : "", modes, *modes ? "]" : "");
    return ok;
}

#endif /* FLASHC_TESTS_CUDA_GPU_ARGS_H */
