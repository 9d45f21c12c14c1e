/* A set with bf16 products runs every problem it takes without them as its base set does, bit
 * for bit: avx512bf16 is avx512 plus vdpbf16ps products where those pay (bf16 operands), neonbf16
 * neon plus BFDOT's, and dispatch relies on that (src/cpu/isa.c: where the bf16 set is the
 * default, an fp32 or fp16 caller gets the base set's results).  Each case runs under both sets
 * (argv[1], argv[2]) on the same data — forwards of every kernel kind (GEMM, dots, decode with
 * splits; fp32, fp16, int8 keys and values; windows, packed rows, BSND, sink, dropout) and fp32
 * and fp16 backwards — and the outputs, statistics and gradients must be the same bits.  Skipped
 * (77) where this CPU lacks either set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "harness.h"
#include "harness_internal.h"

static const char *kSets[2]; /* the base set and its bf16 sibling */

/* The forward of c on d under each set: the same bits. */
static void forward_agrees(const char *what, const nt_case *c)
{
    tc_context("%s", what);
    nt_data d = nt_prepare(c);
    nt_result r[2];
    for (int s = 0; s < 2; s++) {
        fc_cpu_force_isa(kSets[s]);
        nt_execute(c, &d, &r[s]);
    }
    TC_CHECK(r[0].status == FC_OK && r[1].status == FC_OK, "both runs succeed (%d, %d)", r[0].status, r[1].status);
    TC_CHECK(nt_bitwise_equal(&r[0], &r[1]), "%s's output and statistics are %s's bits", kSets[1], kSets[0]);
    nt_result_free(&r[0]), nt_result_free(&r[1]);
    nt_data_free(&d);
}

static void forwards(void)
{
    static const int sq[2] = {70, 201}, skv[2] = {150, 260}, one[3] = {1, 1, 1}, kv[3] = {700, 0, 1025};
    for (int v = 0; v < 8; v++) {
        nt_case c = nt_default();
        c.seed = 7100 + v;
        c.B = 2, c.N1 = 4, c.N2 = 2, c.D = v % 2 ? 128 : 64, c.Sq = 201, c.Skv = 260; /* past one tile */
        c.stats = true;
        c.dt = c.out_dt = v < 4 ? FC_F32 : FC_F16;
        c.window = v % 4 == 1 ? fc_window_causal(FC_ALIGN_BOTTOM_RIGHT) : c.window;
        c.packed = v % 4 == 2, c.sq = c.packed ? sq : NULL, c.skv = c.packed ? skv : NULL;
        c.layout = c.packed ? NT_TND : v % 4 == 3 ? NT_BSND : NT_BNSD;
        c.sink = v == 3 ? NT_SINK_FINITE : NT_SINK_NONE;
        c.keep_prob = v == 7 ? 0.8 : 1;
        c.threads = 2;
        char what[96];
        snprintf(what, sizeof what, "forward %s, variant %d", v < 4 ? "fp32" : "fp16", v);
        forward_agrees(what, &c);
    }
    /* decode: one query row of 4 heads per kv head over long caches (splits), fp16 and int8 kv */
    for (int v = 0; v < 3; v++) {
        nt_case c = nt_default();
        c.seed = 7200 + v;
        c.B = 3, c.N1 = 8, c.N2 = 2, c.D = 128, c.Sq = 1, c.Skv = 1025;
        c.lens = true, c.sq = one, c.skv = kv;
        c.layout = NT_BSND, c.stats = true;
        c.dt = c.out_dt = v == 0 ? FC_F32 : FC_F16;
        c.kv.int8 = v == 2, c.kv.per_channel = true, c.kv.offset = true;
        c.threads = 2;
        forward_agrees(v == 2 ? "decode, int8 kv" : v ? "decode, fp16" : "decode, fp32", &c);
    }
}

/* n elements of dtype dt, uniform in [−1, 1) from r. */
static void *random_buffer(size_t n, fc_dtype dt, tc_rng *r)
{
    void *p = malloc(n * fc_dtype_size(dt));
    for (size_t i = 0; i < n; i++)
        tc_store(nt_tc(dt), p, (int64_t)i, tc_rng_uniform(r, -1, 1));
    return p;
}

/* A dense BNSD backward (forward first, for its output and statistics) under each set: the same
 * gradients, bit for bit. */
static void backward_agrees(fc_dtype dt, int N1, int N2, int Sq, int Skv, int D, bool causal, uint64_t seed)
{
    tc_context("backward dtype %d, %d/%d heads, %d × %d, D %d%s", dt, N1, N2, Sq, Skv, D, causal ? ", causal" : "");
    const size_t es = fc_dtype_size(dt), nq = (size_t)N1 * Sq * D, nkv = (size_t)N2 * Skv * D;
    tc_rng st = tc_rng_seed(seed);
    void *q = random_buffer(nq, dt, &st), *k = random_buffer(nkv, dt, &st), *v = random_buffer(nkv, dt, &st);
    void *dout = random_buffer(nq, dt, &st);
    void *grads[2][3], *out[2];
    float *stats[2][2];
    bool ok = true;
    for (int s = 0; s < 2; s++) {
        fc_cpu_force_isa(kSets[s]);
        out[s] = calloc(nq, es);
        stats[s][0] = calloc((size_t)N1 * Sq, sizeof(float)), stats[s][1] = calloc((size_t)N1 * Sq, sizeof(float));
        grads[s][0] = calloc(nq, es), grads[s][1] = calloc(nkv, es), grads[s][2] = calloc(nkv, es);
        fc_attention_desc d = fc_attention_desc_init();
        d.batch = 1, d.q_heads = N1, d.kv_heads = N2, d.head_dim = D, d.q_len = Sq, d.kv_len = Skv;
        d.q = fc_tensor_bnsd(q, dt, N1, Sq, D);
        d.k = fc_tensor_bnsd(k, dt, N2, Skv, D);
        d.v = fc_tensor_bnsd(v, dt, N2, Skv, D);
        d.out = fc_tensor_bnsd(out[s], dt, N1, Sq, D);
        d.stats = (fc_stats){.max = stats[s][0], .sum = stats[s][1], .order = FC_STATS_HEAD_MAJOR, .replicas = 1};
        if (causal)
            d.vis.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
        const fc_attention_grads g = {.d_out = fc_tensor_bnsd(dout, dt, N1, Sq, D),
                                      .dq = fc_tensor_bnsd(grads[s][0], dt, N1, Sq, D),
                                      .dk = fc_tensor_bnsd(grads[s][1], dt, N2, Skv, D),
                                      .dv = fc_tensor_bnsd(grads[s][2], dt, N2, Skv, D)};
        ok &= TC_CHECK(fc_attention(&d) == FC_OK, "%s forward: %s", kSets[s], fc_last_error());
        ok &= TC_CHECK(fc_attention_backward(&d, &g) == FC_OK, "%s backward: %s", kSets[s], fc_last_error());
    }
    if (ok) {
        const size_t sb = (size_t)N1 * Sq * sizeof(float);
        TC_CHECK(!memcmp(out[0], out[1], nq * es) && !memcmp(stats[0][0], stats[1][0], sb) &&
                     !memcmp(stats[0][1], stats[1][1], sb),
                 "the forward's output and statistics: the same bits");
        TC_CHECK(!memcmp(grads[0][0], grads[1][0], nq * es), "dq: the same bits");
        TC_CHECK(!memcmp(grads[0][1], grads[1][1], nkv * es), "dk: the same bits");
        TC_CHECK(!memcmp(grads[0][2], grads[1][2], nkv * es), "dv: the same bits");
    }
    for (int s = 0; s < 2; s++) {
        free(out[s]), free(stats[s][0]), free(stats[s][1]);
        for (int t = 0; t < 3; t++)
            free(grads[s][t]);
    }
    free(q), free(k), free(v), free(dout);
}

static void body(void)
{
    forwards();
    backward_agrees(FC_F32, 4, 2, 200, 230, 64, false, 11);
    backward_agrees(FC_F32, 8, 8, 160, 160, 128, true, 12);
    backward_agrees(FC_F16, 4, 1, 150, 190, 128, true, 13);
    backward_agrees(FC_F16, 2, 2, 64, 64, 256, false, 14);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s BASE_SET BF16_SET\n", argv[0]);
        return 2;
    }
    kSets[0] = argv[1], kSets[1] = argv[2];
    for (int s = 0; s < 2; s++)
        if (!fc_cpu_force_isa(kSets[s])) {
            printf("native_sets_agree: no %s kernels on this CPU or in this build; skipped\n", kSets[s]);
            return TC_SKIP;
        }
    body();
    char name[64];
    snprintf(name, sizeof name, "native_sets_agree[%s = %s]", kSets[0], kSets[1]);
    return tc_summary(name);
}
