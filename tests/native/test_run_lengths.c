/* A run's own kv lengths (fc_attention_io.kv_lens): a plan made for the longest lengths, run with
 * shorter ones, gives the bits of a plan made for those lengths (causal bottom-right window over
 * speculative rows, left padding, a sink, statistics; and with a bottom-right ALiBi, whose distance
 * follows each batch's length); lengths outside [kv start, planned length] and plans that cannot
 * move their facts (a bias) are refused by name. */
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "harness.h"

enum { B = 3, N1 = 4, N2 = 2, SQ = 2, S = 40, D = 16, OUT = B * N1 * SQ * D, ST = B * N1 * SQ };

static float q[B * N1 * SQ * D], k[B * N2 * S * D], v[B * N2 * S * D], sink[N1], bias[N1 * SQ * S], slopes[N1];

static fc_attention_desc desc(const int64_t *lens, float *out, float *smax, float *ssum, bool alibi)
{
    static const int64_t starts[B] = {0, 3, 0};
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = B, d.q_heads = N1, d.kv_heads = N2, d.head_dim = D, d.q_len = SQ, d.kv_len = S;
    d.kv_lens = lens, d.kv_starts = starts;
    d.q = fc_tensor_bnsd(q, FC_F32, N1, SQ, D);
    d.k = fc_tensor_bnsd(k, FC_F32, N2, S, D);
    d.v = fc_tensor_bnsd(v, FC_F32, N2, S, D);
    d.out = fc_tensor_bnsd(out, FC_F32, N1, SQ, D);
    d.sink = sink;
    d.vis.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    d.stats = (fc_stats){.max = smax, .sum = ssum, .order = FC_STATS_HEAD_MAJOR, .replicas = 1};
    if (alibi)
        d.alibi = (fc_alibi){.slopes = slopes, .stride_head = 1, .bottom_right = true};
    return d;
}

static fc_status run(fc_plan *plan, const int64_t *kv_lens)
{
    size_t ws = 0;
    fc_plan_workspace_size(plan, &ws);
    void *w = ws ? malloc(ws) : NULL;
    fc_attention_io io = {.kv_lens = kv_lens};
    const fc_status st = fc_plan_run(plan, &io, w, ws);
    free(w);
    return st;
}

static void body(void)
{
    tc_rng r = tc_rng_seed(20261128u);
    float *all[] = {q, k, v, sink, bias, slopes};
    const size_t n[] = {sizeof q, sizeof k, sizeof v, sizeof sink, sizeof bias, sizeof slopes};
    for (int a = 0; a < 6; a++)
        for (size_t t = 0; t < n[a] / sizeof(float); t++)
            all[a][t] = (float)tc_rng_uniform(&r, -1, 1);
    static float o1[OUT], o2[OUT], m1[ST], m2[ST], s1[ST], s2[ST];
    const int64_t planned[B] = {40, 33, 25}, mine[B] = {31, 4, 25};
    fc_plan *pb = NULL, *pe = NULL;
    for (int alibi = 1; alibi >= 0; alibi--) { /* the ALiBi plan first: pb stays the plain one */
        fc_plan_destroy(pb), fc_plan_destroy(pe);
        fc_attention_desc big = desc(planned, o1, m1, s1, alibi), exact = desc(mine, o2, m2, s2, alibi);
        TC_CHECK(fc_plan_create(&big, NULL, &pb) == FC_OK && fc_plan_create(&exact, NULL, &pe) == FC_OK, "plans: %s",
                 fc_last_error());
        memset(o1, 0xA5, sizeof o1), memset(o2, 0x5A, sizeof o2);
        TC_CHECK(run(pb, mine) == FC_OK, "a run with its own kv lengths: %s", fc_last_error());
        TC_CHECK(run(pe, NULL) == FC_OK, "the plan for those lengths: %s", fc_last_error());
        TC_CHECK(memcmp(o1, o2, sizeof o1) == 0 && memcmp(m1, m2, sizeof m1) == 0 && memcmp(s1, s2, sizeof s1) == 0,
                 "run-time kv lengths give the bits of a plan made for them (alibi %d)", alibi);
        TC_CHECK(run(pb, planned) == FC_OK, "the planned lengths as a run's");
    }

    const int64_t longer[B] = {40, 34, 25}, below[B] = {40, 2, 25};
    TC_CHECK(run(pb, longer) == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "io.kv_lens[1] is 34"),
             "a length above the planned one is refused by name: %s", fc_last_error());
    TC_CHECK(run(pb, below) == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "io.kv_lens[1] is 2"),
             "a length below the kv start is refused by name: %s", fc_last_error());

    fc_attention_desc biased = desc(planned, o1, m1, s1, false);
    biased.bias = (fc_bias){.data = bias, .dtype = FC_F32, .rows = SQ, .cols = S, .stride_head = SQ * S, .stride_row = S,
                            .stride_col = 1};
    fc_plan *px = NULL;
    TC_CHECK(fc_plan_create(&biased, NULL, &px) == FC_OK, "a plan with a bias: %s", fc_last_error());
    TC_CHECK(run(px, mine) == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "kv lengths"),
             "a plan with a bias refuses a run's kv lengths by name: %s", fc_last_error());
    fc_plan_destroy(pb), fc_plan_destroy(pe), fc_plan_destroy(px);
}

int main(int argc, char **argv) { return nt_main(argc, argv, "test_native_run_lengths", body); }
