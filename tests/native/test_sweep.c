/* Randomized combinations of every forward feature at small sizes, fixed seeds.  Each case is
 * drawn from its own seed, so a failure prints a case that reruns alone. */
#include <stdio.h>

#include "common/check.h"
#include "common/rng.h"
#include "harness.h"
#include "harness_draw.h"

#define SWEEP_CASES 300

static nt_case draw(int k, const nt_draw_spec *spec, int lens_q[4], int lens_kv[4])
{
    tc_rng r = tc_rng_seed(0x5EED0000u + (uint64_t)k);
    nt_case c = nt_default();
    c.seed = 4000 + (uint64_t)k;
    nt_draw_features(&r, spec, &c, lens_q, lens_kv);
    c.stats = tc_rng_bool(&r, 0.7);
    c.stats_order = (fc_stats_order)tc_rng_int(&r, 0, 3);
    c.replicas = c.stats_order >= FC_STATS_KV_GROUP ? 1 : tc_rng_bool(&r, 0.4) ? 8 : 1;
    c.threads = (int)tc_rng_int(&r, 0, 2);
    c.oneshot = tc_rng_bool(&r, 0.2);
    return c;
}

static void body(void)
{
    nt_draw_spec spec = {.rope_prob = 0.2, .max_len = 24, .mask_rows_cols = true};
    const nt_sweep range = nt_sweep_range(SWEEP_CASES, &spec);
    for (int k = range.first; k < range.first + range.count; k++) {
        int lens_q[4], lens_kv[4];
        const nt_case c = draw(k, &spec, lens_q, lens_kv);
        tc_context("sweep case %d", k);
        nt_run(&c);
    }
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_sweep", body); }
