/* Randomized backward cases over the whole forward feature space at small, odd sizes, fixed
 * seeds (each case drawn from its own seed, so a failure reruns alone); gradients in random
 * dtypes and layouts; every fifth case also checks thread-count determinism. */
#include <stdio.h>

#include "common/check.h"
#include "common/rng.h"
#include "harness.h"
#include "harness_draw.h"
#include "harness_bwd.h"

#define CASES 60

static nt_case draw(int k, const nt_draw_spec *spec, int lens_q[4], int lens_kv[4], nt_bwd *o)
{
    tc_rng r = tc_rng_seed(0xB0C0000u + (uint64_t)k);
    nt_case c = nt_default();
    c.seed = 9000 + (uint64_t)k;
    nt_draw_features(&r, spec, &c, lens_q, lens_kv);
    c.stats = true;
    c.stats_order = (fc_stats_order)tc_rng_int(&r, 0, 3);
    c.replicas = c.stats_order >= FC_STATS_KV_GROUP ? 1 : tc_rng_bool(&r, 0.4) ? 8 : 1;
    c.threads = (int)tc_rng_int(&r, 0, 2);
    *o = nt_bwd_default();
    o->grad_dt = (fc_dtype)tc_rng_int(&r, 0, 2);
    o->dout_dt_set = tc_rng_bool(&r, 0.3), o->dout_dt = (fc_dtype)tc_rng_int(&r, 0, 2);
    o->grad_layout_set = tc_rng_bool(&r, 0.3), o->grad_layout = (nt_layout)tc_rng_int(&r, 0, 3);
    o->grad_pad = tc_rng_bool(&r, 0.3) ? (int)tc_rng_int(&r, 1, 2) : 0;
    o->poison_replicas = tc_rng_bool(&r, 0.5);
    o->threads = (int)tc_rng_int(&r, 1, 2);
    o->check_threads = k % 5 == 0;
    o->oneshot = !o->check_threads && tc_rng_bool(&r, 0.15);
    return c;
}

static void body(void)
{
    nt_draw_spec spec = {.rope_prob = 0.25, .max_len = 20, .mask_rows_cols = false};
    const nt_sweep range = nt_sweep_range(CASES, &spec);
    for (int k = range.first; k < range.first + range.count; k++) {
        int lens_q[4], lens_kv[4];
        nt_bwd o;
        const nt_case c = draw(k, &spec, lens_q, lens_kv, &o);
        tc_context("backward sweep case %d", k);
        nt_bwd_run(&c, &o);
    }
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_backward_sweep", body); }
