/* Each operand has its own storage dtype (flashc.h): every mix of fp32 / fp16 / bf16 queries, keys
 * and values — fp32 queries over an fp16 cache, the common decode case, among them — against the
 * oracle fed the same rounded values, for prefill and single-row decode shapes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <flashc.h>

#include "common/check.h"
#include "common/rng.h"
#include "common/tolerance.h"
#include "harness.h"
#include "reference/reference.h"

enum { N1 = 4, N2 = 2, D = 24, SKV = 37 };

static const fc_dtype dtypes[3] = {FC_F32, FC_F16, FC_BF16};

static tc_dtype tc_of(fc_dtype t) { return t == FC_F16 ? TC_F16 : t == FC_BF16 ? TC_BF16 : TC_F32; }

/* A [heads, rows, D] operand in dtype t, random in [-1, 1]; ref receives the stored values. */
static void *operand(tc_rng *r, fc_dtype t, int heads, int rows, double *ref)
{
    const int64_t n = (int64_t)heads * rows * D;
    void *buf = malloc((size_t)n * tc_dtype_size(tc_of(t)));
    for (int64_t k = 0; k < n; k++) {
        tc_store(tc_of(t), buf, k, tc_rng_uniform(r, -1, 1));
        ref[k] = tc_load(tc_of(t), buf, k);
    }
    return buf;
}

/* Row i sees columns j <= i + SKV - Sq (ctx: Sq). */
static bool causal_bottom_right(void *ctx, int b, int n1, int i, int j)
{
    (void)b, (void)n1;
    return j > i + SKV - *(const int *)ctx;
}

static void one(fc_dtype qt, fc_dtype kt, fc_dtype vt, int sq, uint64_t seed)
{
    tc_context("q %s, k %s, v %s, Sq %d", tc_dtype_name(tc_of(qt)), tc_dtype_name(tc_of(kt)),
               tc_dtype_name(tc_of(vt)), sq);
    tc_rng r = tc_rng_seed(seed);
    double *rq = malloc(sizeof(double) * N1 * sq * D), *rk = malloc(sizeof(double) * N2 * SKV * D);
    double *rv = malloc(sizeof(double) * N2 * SKV * D), *want = malloc(sizeof(double) * N1 * sq * D);
    double *got = malloc(sizeof(double) * N1 * sq * D);
    void *q = operand(&r, qt, N1, sq, rq), *k = operand(&r, kt, N2, SKV, rk), *v = operand(&r, vt, N2, SKV, rv);
    float *out = malloc(sizeof(float) * N1 * sq * D);

    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = N1, d.kv_heads = N2, d.head_dim = D, d.q_len = sq, d.kv_len = SKV;
    d.q = fc_tensor_bnsd(q, qt, N1, sq, D);
    d.k = fc_tensor_bnsd(k, kt, N2, SKV, D);
    d.v = fc_tensor_bnsd(v, vt, N2, SKV, D);
    d.out = fc_tensor_bnsd(out, FC_F32, N1, sq, D);
    d.vis.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    const fc_status st = fc_attention(&d);
    if (TC_CHECK(st == FC_OK, "fc_attention: %s %s", fc_status_name(st), fc_last_error())) {
        ref_fwd p = {.B = 1, .N1 = N1, .N2 = N2, .D = D, .Dv = D, .S1cap = sq, .S2cap = SKV,
                     .q = rq, .k = rk, .v = rv, .scale = 1.0 / sqrt((double)D), .ctx = &sq,
                     .hidden = causal_bottom_right};
        ref_forward(&p, want, NULL, NULL);
        for (int64_t i = 0; i < (int64_t)N1 * sq * D; i++)
            got[i] = out[i];
        tc_compare("out", got, want, (int64_t)N1 * sq * D, tc_tol_out(TC_F32), 1.0);
    }
    free(q), free(k), free(v), free(out), free(rq), free(rk), free(rv), free(want), free(got);
}

/* An fp32 output that needs only fp16/bf16 tolerance (fc_options.out_tolerance, the ring's partial
 * outputs): within that tolerance of the oracle and bit-identical for 1 and 2 threads. */
static void looser_tolerance(void)
{
    uint64_t seed = 91;
    for (int t = 1; t < 3; t++)
        for (int in = 1; in < 3; in++) {
            nt_case c = nt_fixture(seed++, (nt_sizes){.B = 2, .N1 = 4, .N2 = 2, .D = 64, .Dv = 64, .Sq = 150, .Skv = 300});
            c.dt = dtypes[in], c.out_dt = FC_F32, c.out_tolerance = dtypes[t];
            c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
            tc_context("in %s, fp32 out at %s tolerance", tc_dtype_name(tc_of(c.dt)), tc_dtype_name(tc_of(dtypes[t])));
            nt_data d = nt_prepare(&c);
            nt_result one = {0}, two = {0};
            c.threads = 1;
            nt_execute(&c, &d, &one);
            c.threads = 2;
            nt_execute(&c, &d, &two);
            TC_CHECK(nt_bitwise_equal(&one, &two), "1 and 2 threads differ");
            nt_result_free(&one), nt_result_free(&two), nt_data_free(&d);
        }
}

static void body(void)
{
    looser_tolerance();
    uint64_t seed = 7;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 3; c++) {
                one(dtypes[a], dtypes[b], dtypes[c], 1, seed++);
                one(dtypes[a], dtypes[b], dtypes[c], 9, seed++);
            }
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_mixed_dtypes", body); }
