#include "harness_draw.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static fc_window random_window(tc_rng *r, int span)
{
    const int64_t sides[] = {FC_UNBOUNDED, 0, 1, 2, 5, -1, -2};
    fc_window w = {.enabled = true, .align = (fc_align)tc_rng_int(r, 0, 1)};
    w.left = tc_rng_bool(r, 0.3) ? tc_rng_int(r, -2, span) : sides[tc_rng_int(r, 0, 6)];
    w.right = tc_rng_bool(r, 0.3) ? tc_rng_int(r, -2, span) : sides[tc_rng_int(r, 0, 6)];
    return w;
}

void nt_draw_features(tc_rng *r, const nt_draw_spec *spec, nt_case *c, int lens_q[4], int lens_kv[4])
{
    c->B = (int)tc_rng_int(r, 1, 4);
    c->N2 = (int)tc_rng_int(r, 1, 3);
    c->N1 = c->N2 * (int)tc_rng_int(r, 1, 3);
    const int max_dim = spec->max_dim > 0 ? spec->max_dim : 40;
    c->D = (int)tc_rng_int(r, 1, max_dim);
    c->Dv = (int)tc_rng_int(r, 1, max_dim);
    c->Dr = tc_rng_bool(r, spec->rope_prob) ? (int)tc_rng_int(r, 1, 16) : 0;
    c->Sq = (int)tc_rng_int(r, 1, spec->max_len);
    c->Skv = (int)tc_rng_int(r, 1, spec->max_len);
    c->packed = tc_rng_bool(r, 0.3);
    c->lens = !c->packed && tc_rng_bool(r, 0.3);
    for (int b = 0; b < c->B; b++) {
        lens_q[b] = (int)tc_rng_int(r, 0, c->Sq);
        lens_kv[b] = (int)tc_rng_int(r, 0, c->Skv);
    }
    if (c->packed || c->lens)
        c->sq = lens_q, c->skv = lens_kv;
    c->layout = (nt_layout)tc_rng_int(r, 0, 3);
    c->mixed_layouts = tc_rng_bool(r, 0.3);
    c->pad = tc_rng_bool(r, 0.4) ? (int)tc_rng_int(r, 1, 3) : 0;
    c->dim_stride = tc_rng_bool(r, 0.2) ? 2 : 1;
    c->kv_bcast_seq = tc_rng_bool(r, 0.08);
    c->q_bcast_head = tc_rng_bool(r, 0.08);
    c->dt = (fc_dtype)tc_rng_int(r, 0, 2);
    c->out_dt = tc_rng_bool(r, 0.7) ? c->dt : (fc_dtype)tc_rng_int(r, 0, 2);
    c->scale = tc_rng_bool(r, 0.5) ? 0 : tc_rng_uniform(r, -0.5, 0.8);
    c->softcap = tc_rng_bool(r, 0.2) ? (float)tc_rng_uniform(r, 0.5, 10) : 0;
    if (tc_rng_bool(r, 0.35)) {
        nt_bias_spec *b = &c->bias;
        b->on = true;
        b->order = (fc_bias_order)tc_rng_int(r, 0, 1);
        b->dtype = (fc_dtype)tc_rng_int(r, 0, 2);
        b->bcast_batch = tc_rng_bool(r, 0.3), b->bcast_head = tc_rng_bool(r, 0.3);
        b->bcast_row = tc_rng_bool(r, 0.2), b->bcast_col = tc_rng_bool(r, 0.1);
        b->bottom_right = tc_rng_bool(r, 0.5);
        b->extra_rows = (int)tc_rng_int(r, 0, 2), b->extra_cols = (int)tc_rng_int(r, 0, 2);
    }
    if (tc_rng_bool(r, 0.25))
        c->alibi.on = true, c->alibi.per_batch = tc_rng_bool(r, 0.5), c->alibi.sqrt_distance = tc_rng_bool(r, 0.5),
        c->alibi.bottom_right = tc_rng_bool(r, 0.5);
    if (tc_rng_bool(r, 0.5))
        c->window = random_window(r, c->Sq + c->Skv);
    c->batch_windows = tc_rng_bool(r, 0.15);
    c->prefix = tc_rng_bool(r, 0.15);
    if (tc_rng_bool(r, 0.25))
        c->q_start = tc_rng_int(r, -5, 30), c->kv_start = tc_rng_int(r, -5, 30);
    if (tc_rng_bool(r, 0.3)) {
        c->mask.on = true;
        c->mask.dtype = (fc_dtype)tc_rng_int(r, FC_I8, FC_BOOL);
        c->mask.density = tc_rng_uniform(r, 0, 0.9);
        c->mask.by_tokens = c->packed && tc_rng_bool(r, 0.5);
        c->mask.bcast_batch = tc_rng_bool(r, 0.3), c->mask.bcast_head = tc_rng_bool(r, 0.3);
        if (spec->mask_rows_cols)
            c->mask.bcast_row = tc_rng_bool(r, 0.15), c->mask.bcast_col = tc_rng_bool(r, 0.1);
    }
    if (tc_rng_bool(r, 0.25))
        c->keep_prob = tc_rng_uniform(r, 0.3, 0.95);
    if (tc_rng_bool(r, 0.25))
        c->sink = (nt_sink_mode)tc_rng_int(r, 1, 3);
    if (tc_rng_bool(r, 0.2)) /* an output that needs only fp16/bf16 tolerance (fc_options.out_tolerance) */
        c->out_tolerance = (fc_dtype)tc_rng_int(r, 0, 2);
}

nt_sweep nt_sweep_range(int count, nt_draw_spec *spec)
{
    nt_sweep s = {0, count};
    const char *env = getenv("FLASHC_TEST_SWEEP");
    if (!env || !*env)
        return s;
    int v[4] = {0, 0, spec->max_len, spec->max_dim > 0 ? spec->max_dim : 40};
    const int n = sscanf(env, "%d,%d,%d,%d", &v[0], &v[1], &v[2], &v[3]);
    if (n < 2 || v[0] < 0 || v[1] < 0 || v[1] > INT_MAX - v[0] || v[2] < 1 || v[2] > 4096 || v[3] < 1 || v[3] > 1024) {
        fprintf(stderr, "FLASHC_TEST_SWEEP=%s: want first,count[,max_len[,max_dim]]; ignored\n", env);
        return s;
    }
    spec->max_len = v[2], spec->max_dim = v[3];
    s.first = v[0], s.count = v[1];
    return s;
}
