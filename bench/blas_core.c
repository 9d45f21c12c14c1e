/* OpenBLAS core names by vector level, and this CPU's level (see blas_core.h). */
#include "blas_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

static const struct {
    const char *name;
    int level;
} cores[] = {
    {"SapphireRapids", 3}, {"Cooperlake", 3}, {"SkylakeX", 3},
    {"Haswell", 2}, {"Zen", 2}, {"Excavator", 2},
    {"Sandybridge", 1}, {"Bulldozer", 1}, {"Piledriver", 1}, {"Steamroller", 1},
    {"Prescott", 0}, {"Core2", 0}, {"Penryn", 0}, {"Dunnington", 0}, {"Nehalem", 0}, {"Atom", 0},
    {"Barcelona", 0}, {"Opteron", 0}, {"Opteron_SSE3", 0}, {"Athlon", 0}, {"Nano", 0}, {"Bobcat", 0},
    {"Northwood", 0}, {"Katmai", 0}, {"Coppermine", 0}, {"Banias", 0},
};

/* What to ask for at each level: the oldest core of the level, which every OpenBLAS with
 * DYNAMIC_ARCH has (Cooperlake's and SapphireRapids' sgemm kernels are SkylakeX's). */
static const char *level_core[4] = {"Prescott", "Sandybridge", "Haswell", "SkylakeX"};

int bench_blas_core_level(const char *core)
{
    for (size_t i = 0; core && i < sizeof cores / sizeof cores[0]; i++)
        if (strcasecmp(core, cores[i].name) == 0)
            return cores[i].level;
    return -1;
}

int bench_cpu_vector_level(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
        return 3;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return 2;
    if (__builtin_cpu_supports("avx"))
        return 1;
    return 0;
#else
    return -1;
#endif
}

const char *bench_blas_best_core(void)
{
    const int level = bench_cpu_vector_level();
    return level >= 0 ? level_core[level] : "";
}

const char *bench_blas_core_warning(const char *core, char *buf, size_t size)
{
    static const char *level_name[4] = {"SSE", "AVX", "AVX2", "AVX-512"};
    const int have = bench_cpu_vector_level(), ran = bench_blas_core_level(core);
    buf[0] = 0;
    if (!core || have < 0 || ran < 0 || ran >= have)
        return buf;
    const char *forced = getenv("OPENBLAS_CORETYPE");
    snprintf(buf, size,
             "WARNING: the baseline ran OpenBLAS's %s core (%s) on a CPU with %s%s%s%s: the baseline is slow and "
             "every ratio inflated; run with OPENBLAS_CORETYPE=%s",
             core, level_name[ran], level_name[have], forced ? " (OPENBLAS_CORETYPE=" : "", forced ? forced : "",
             forced ? " forced it)" : " (OpenBLAS did not recognise this CPU)", level_core[have]);
    return buf;
}
