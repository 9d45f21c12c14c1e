/* FLASHC_CUDA_EXPERIMENTAL (experimental.h). */
#include "experimental.h"

#include <stdlib.h>
#include <string.h>

static const char *const kFeatures[] = {"philox", "rope", "sparse", "all"};

/* The next non-empty comma-separated name at *s (its start and length), advancing *s; false at the end. */
static bool fc_next_name(const char **s, const char **name, size_t *n)
{
    while (*s && **s) {
        *name = *s, *n = strcspn(*s, ",");
        *s += *n + ((*s)[*n] == ',');
        if (*n)
            return true;
    }
    return false;
}

static bool fc_is(const char *name, size_t n, const char *word) { return strlen(word) == n && strncmp(name, word, n) == 0; }

bool fc_cuda_experimental(const char *feature)
{
    const char *s = getenv("FLASHC_CUDA_EXPERIMENTAL"), *name;
    size_t n;
    while (fc_next_name(&s, &name, &n))
        if (fc_is(name, n, "all") || fc_is(name, n, feature))
            return true;
    return false;
}

const char *fc_cuda_experimental_unknown(void)
{
    const char *s = getenv("FLASHC_CUDA_EXPERIMENTAL"), *name;
    size_t n;
    while (fc_next_name(&s, &name, &n)) {
        bool known = false;
        for (size_t k = 0; k < sizeof kFeatures / sizeof kFeatures[0]; k++)
            known = known || fc_is(name, n, kFeatures[k]);
        if (!known)
            return name;
    }
    return NULL;
}
