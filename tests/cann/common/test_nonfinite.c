/*
 * Non-finite inputs through the CANN face (semantics §0.3), on the kernel path named by argv[1]:
 * FlashAttentionScore (V2, V3 with sinks), its grad, IncreFlashAttentionV4 and
 * SparseFlashAttention (+ grad) with NaN and ±inf in the query, in key and value rows at visible
 * and at masked positions (compressed causal masks, element masks, actual lengths), in the pse,
 * the sink and dy.  Each case is checked by its harness against tests/reference, which applies
 * §0.3 itself (NaN exactly where the reference has NaN); each also checks that its reference
 * held both non-finite and finite values, so that neither propagation nor containment passes
 * vacuously.
 */
#include <math.h>
#include <stdio.h>

#include "flashc.h"
#include "fa/harness_grad.h"
#include "ifa/ifa_harness.h"
#include "sfa/sfa_harness.h"

#define NAN_ NAN
#define INF_ INFINITY

static void expect_mixed(const fa_tally *t)
{
    TC_CHECK(t->nonfinite > 0 && t->finite > 0,
             "the reference held %lld non-finite and %lld finite values: the case tests nothing", (long long)t->nonfinite,
             (long long)t->finite);
}

static void put(fa_poison *list, int *n, fa_at at, int64_t a, int64_t b, int64_t c, int64_t d, double v)
{
    list[(*n)++] = (fa_poison){at, {a, b, c, d}, v};
}

static fa_case fa_base(uint64_t seed, tc_dtype dt)
{
    fa_case c = fa_case_default();
    c.B = 2, c.N1 = 4, c.N2 = 2, c.D = 16, c.S1 = 70, c.S2 = 70;
    c.dtype = dt;
    c.sparse_mode = 2; /* leftUpCausal: row i sees j <= i */
    fa_mask_compressed(&c, false);
    c.seed = seed;
    return c;
}

static void run_fa(const char *name, fa_case c)
{
    fa_tally t = {0, 0};
    c.tally = &t;
    fa_run_case(name, &c);
    expect_mixed(&t);
}

static void forward(void)
{
    for (int dt = 0; dt < 3; dt++) {
        const tc_dtype t = dt == 0 ? TC_F32 : dt == 1 ? TC_F16 : TC_BF16;
        fa_case c = fa_base(10 + dt, t);
        put(c.poison, &c.npoison, FA_AT_Q, 1, 2, 30, 3, NAN_);
        put(c.poison, &c.npoison, FA_AT_K, 0, 1, 50, 0, NAN_); /* rows < 50 do not see it */
        put(c.poison, &c.npoison, FA_AT_V, 0, 0, 65, 5, NAN_);
        put(c.poison, &c.npoison, FA_AT_V, 1, 1, 3, 2, INF_);
        put(c.poison, &c.npoison, FA_AT_V, 1, 0, 60, 1, -INF_);
        run_fa("FA V2 leftUpCausal: NaN query row, NaN key and values, +-inf values", c);
    }
    fa_case c = fa_base(20, TC_F32);
    c.sparse_mode = 0, c.mask_rank = 2, c.mask_dims[0] = c.S1, c.mask_dims[1] = c.S2, c.mask_dims[2] = c.mask_dims[3] = 0;
    c.mask_density = 0.4;
    put(c.poison, &c.npoison, FA_AT_K, 1, 0, 7, 2, NAN_);
    put(c.poison, &c.npoison, FA_AT_V, 0, 1, 10, 2, INF_);
    put(c.poison, &c.npoison, FA_AT_V, 0, 0, 33, 0, NAN_);
    run_fa("FA V2 element mask: NaN key, NaN and +inf values some rows see and others do not", c);

    c = fa_base(21, TC_F32);
    c.pse_rank = 4, c.pse_dims[0] = c.B, c.pse_dims[1] = c.N1, c.pse_dims[2] = c.S1, c.pse_dims[3] = c.S2;
    put(c.poison, &c.npoison, FA_AT_PSE, 0, 1, 5, 3, NAN_);  /* visible */
    put(c.poison, &c.npoison, FA_AT_PSE, 0, 1, 3, 5, NAN_);  /* masked */
    put(c.poison, &c.npoison, FA_AT_PSE, 1, 2, 4, 2, INF_);  /* +inf logit: a NaN row, max +inf */
    put(c.poison, &c.npoison, FA_AT_PSE, 1, 3, 8, 1, -INF_); /* contributes 0 */
    put(c.poison, &c.npoison, FA_AT_PSE, 1, 0, 0, 0, -INF_); /* row 0's only logit: fully masked results */
    run_fa("FA V2 pse: NaN visible and masked, +inf, -inf", c);
    c.pse_type = 0;
    c.fn = FA_V3;
    run_fa("FA V3 pseType 0 (scale, then pse)", c);

    c = fa_base(22, TC_F32);
    c.fn = FA_V3, c.S1 = 20, c.S2 = 12, c.sparse_mode = 3, c.sink = 1; /* rows 0..7 see nothing */
    put(c.poison, &c.npoison, FA_AT_SINK, 0, 0, 0, 0, NAN_);
    put(c.poison, &c.npoison, FA_AT_SINK, 1, 0, 0, 0, INF_);
    put(c.poison, &c.npoison, FA_AT_SINK, 2, 0, 0, 0, -INF_);
    run_fa("FA V3 sinks NaN, +inf, -inf (no sink), with fully masked rows", c);
}

static void grad(void)
{
    for (int dt = 0; dt < 2; dt++) {
        fag_case g = fag_case_default();
        g.f = fa_base(30 + dt, dt ? TC_F16 : TC_F32);
        fa_case *c = &g.f;
        put(c->poison, &c->npoison, FA_AT_Q, 1, 2, 30, 3, NAN_);
        put(c->poison, &c->npoison, FA_AT_K, 0, 1, 50, 0, NAN_);
        put(c->poison, &c->npoison, FA_AT_V, 1, 0, 65, 5, INF_);
        put(c->poison, &c->npoison, FA_AT_DY, 0, 0, 40, 1, NAN_);
        fa_tally t = {0, 0};
        c->tally = &t;
        fag_run_case("FA grad leftUpCausal: NaN query, key, dy; +inf value", &g);
        expect_mixed(&t);
    }
    fag_case g = fag_case_default();
    g.f = fa_base(32, TC_F32);
    fa_case *c = &g.f;
    c->sparse_mode = 0, c->mask_rank = 2, c->mask_dims[0] = c->S1, c->mask_dims[1] = c->S2;
    c->mask_dims[2] = c->mask_dims[3] = 0, c->mask_density = 0.4;
    put(c->poison, &c->npoison, FA_AT_K, 1, 0, 7, 2, NAN_);
    put(c->poison, &c->npoison, FA_AT_V, 0, 1, 10, 2, -INF_);
    put(c->poison, &c->npoison, FA_AT_DY, 1, 3, 12, 0, INF_);
    fa_tally t = {0, 0};
    c->tally = &t;
    fag_run_case("FA grad element mask: NaN key, -inf value, +inf dy", &g);
    expect_mixed(&t);

    g = fag_case_default();
    c = &g.f;
    const int s1[] = {4, 0, 6}, s2[] = {4, 2, 3};
    c->fn = FA_V5, c->layout = "TND", c->B = 3, c->N1 = 4, c->N2 = 2, c->D = 8, c->sink = 1;
    for (int b = 0; b < 3; b++)
        c->s1[b] = s1[b], c->s2[b] = s2[b];
    c->sparse_mode = 3, c->mask_rank = 2, c->mask_dims[0] = 2048, c->mask_dims[1] = 2048;
    c->seed = 33;
    put(c->poison, &c->npoison, FA_AT_SINK, 1, 0, 0, 0, NAN_);
    t = (fa_tally){0, 0};
    c->tally = &t;
    fag_run_case("FA grad V5 TND: a NaN sink (dsink NaN)", &g);
    expect_mixed(&t);
}

static void decode(void)
{
    for (int dt = 0; dt < 2; dt++)
        for (int masked = 0; masked < 2; masked++) {
            ifa_case c = ifa_case_default();
            c.dtype = dt ? TC_BF16 : TC_F16;
            c.B = 2, c.N1 = 8, c.N2 = 2, c.D = 32, c.S[0] = 600; /* long enough for flash-decoding splits */
            c.act_count = 2, c.L[0] = 600, c.L[1] = 300;
            if (masked)
                c.mask_rank = 2, c.mask_density = 0.3;
            c.pse = dt == 1;
            c.seed = 40 + dt * 2 + masked;
            put(c.poison, &c.npoison, FA_AT_Q, 0, 5, 0, 2, NAN_);
            put(c.poison, &c.npoison, FA_AT_K, 0, 0, 100, 2, NAN_);
            put(c.poison, &c.npoison, FA_AT_V, 1, 0, 50, 3, INF_);
            put(c.poison, &c.npoison, FA_AT_K, 1, 1, 400, 0, NAN_); /* beyond batch 1's length */
            if (c.pse)
                put(c.poison, &c.npoison, FA_AT_PSE, 1, 6, 0, 7, NAN_);
            fa_tally t = {0, 0};
            c.tally = &t;
            char name[128];
            snprintf(name, sizeof name, "IFA V4 %s%s%s: NaN query, key, pse; +inf value; NaN beyond a length",
                     dt ? "bf16" : "fp16", masked ? ", mask" : "", c.pse ? ", pse" : "");
            ifa_run_case(name, &c, NULL);
            expect_mixed(&t);
        }
}

static void sparse(void)
{
    for (int mode = 0; mode <= 3; mode += 3) {
        sfa_case c = sfa_case_default();
        c.mode = mode, c.backward = true, c.seed = 50 + mode;
        put(c.poison, &c.npoison, FA_AT_Q, 1, 3, 1, 0, NAN_);
        put(c.poison, &c.npoison, FA_AT_K, 0, 0, 5, 1, NAN_);
        put(c.poison, &c.npoison, FA_AT_V, 0, 1, 9, 2, INF_);
        put(c.poison, &c.npoison, FA_AT_DY, 0, 2, 2, 3, NAN_);
        fa_tally t = {0, 0};
        c.tally = &t;
        sfa_run_case(mode ? "SFA + grad, sparseMode 3: NaN query, key, dOut; +inf value"
                          : "SFA + grad: NaN query, key, dOut; +inf value",
                     &c);
        expect_mixed(&t);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !fc_cpu_force_isa(argv[1])) {
        printf("cann_nonfinite: the %s kernels are not available on this CPU; skipped\n", argv[1]);
        return TC_SKIP;
    }
    forward();
    grad();
    decode();
    sparse();
    char name[64];
    snprintf(name, sizeof name, "cann_nonfinite[%s]", fc_cpu_isa());
    return tc_summary(name);
}
