/* Non-finite inputs through the infiniop face (semantics §0.3), on the kernel path named by
 * argv[1]: NaN and ±inf in q, and in k and v at keys the padding mask shows or hides; outputs are
 * compared with tests/reference (NaN exactly where it has NaN), and each case checks that its
 * reference held both non-finite and finite values. */
#include <math.h>
#include <stdio.h>

#include "harness.h"

static void run(const char *name, ifa_case c)
{
    int64_t bad = 0, good = 0;
    c.ref_nonfinite = &bad, c.ref_finite = &good;
    ifa_run_case(name, &c);
    TC_CHECK(bad > 0 && good > 0, "%s: the reference held %lld non-finite and %lld finite values", name,
             (long long)bad, (long long)good);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !fc_cpu_force_isa(argv[1])) {
        printf("kernel path %s is not available here\n", argv[1]);
        return TC_SKIP;
    }
    for (int dt = 0; dt < 3; dt++)
        for (int masked = 0; masked < 2; masked++) {
            ifa_case c = ifa_case_default();
            c.dtype = dt == 0 ? TC_F32 : dt == 1 ? TC_F16 : TC_BF16;
            c.B = 2, c.Nq = 4, c.Nkv = 2, c.Sq = 70, c.Skv = 90, c.D = 16;
            c.seed = 10 + (uint64_t)(dt * 2 + masked);
            if (masked)
                c.mask_rank = 2, c.mask_dtype = INFINI_DTYPE_U8, c.mask_density = 0.4;
            c.poison[c.npoison++] = (ifa_poison){IFA_AT_Q, 1, 3, 20, 2, NAN};
            c.poison[c.npoison++] = (ifa_poison){IFA_AT_K, 0, 1, 40, 0, NAN};
            c.poison[c.npoison++] = (ifa_poison){IFA_AT_V, 1, 0, 7, 5, INFINITY};
            c.poison[c.npoison++] = (ifa_poison){IFA_AT_V, 0, 0, 80, 1, NAN};
            char name[128];
            snprintf(name, sizeof name, "dtype %d%s: NaN query row, NaN key and value, +inf value", dt,
                     masked ? ", key-padding mask" : "");
            run(name, c);
        }
    char name[64];
    snprintf(name, sizeof name, "infiniop_nonfinite[%s]", fc_cpu_isa());
    return tc_summary(name);
}
