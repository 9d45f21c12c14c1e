/*
 * Rope-split heads on the GPU, the parts checkable without one:
 *   - the joint-tile map (src/cuda/rope_split.h): every column of a tile is one feature of q (or k),
 *     one of q_rope (k_rope) or padding, each feature exactly once; a tile built by the map gives
 *     q·k + q_rope·k_rope, and gradient columns split back by it land where the CPU writes them;
 *     the address of a joint feature (fc_rope_elem) in its own view;
 *   - with the CUDA backend built: which rope problems the kernels take and which they refuse by
 *     name (fc_cuda_{fwd,dec,bwd}_unsupported, host code: no device needed).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "cuda/rope_split.h"
#ifdef UNIT_WITH_CUDA
#include "cuda/cuda.h"
#endif

/* The map against its definition, and a bijection onto the features of both parts. */
static void check_map(int dqk, int dr, int D)
{
    int seen_main[512] = {0}, seen_rope[512] = {0};
    for (int e = 0; e < D; e++) {
        int f = -7;
        const int part = fc_rope_part(e, dqk, dr, &f);
        const int want = e < dqk ? 0 : e < dqk + dr ? 1 : -1;
        TC_CHECK(part == want, "dqk=%d dr=%d column %d: part %d, want %d", dqk, dr, e, part, want);
        if (part == 0)
            TC_CHECK(f == e, "dqk=%d dr=%d column %d: feature %d", dqk, dr, e, f), seen_main[f]++;
        else if (part == 1)
            TC_CHECK(f == e - dqk, "dqk=%d dr=%d column %d: rope feature %d", dqk, dr, e, f), seen_rope[f]++;
        else
            TC_CHECK(f == 0, "dqk=%d dr=%d padding column %d: feature %d (must stay in bounds)", dqk, dr, e, f);
    }
    for (int f = 0; f < dqk; f++)
        TC_CHECK(seen_main[f] == 1, "dqk=%d dr=%d: feature %d in %d columns", dqk, dr, f, seen_main[f]);
    for (int f = 0; f < dr; f++)
        TC_CHECK(seen_rope[f] == 1, "dqk=%d dr=%d: rope feature %d in %d columns", dqk, dr, f, seen_rope[f]);
}

/* One query and one key row as the kernels' tiles hold them (columns of D by the map; the
 * tile's padding zero), their dot product against q·k + q_rope·k_rope; then a gradient row of D
 * columns split back into dq and dq_rope, every feature written once with its column's value. */
static void check_joint_rows(tc_rng *r, int dqk, int dr, int D)
{
    double q[512], qr[512], k[512], kr[512], tq[512], tk[512];
    for (int e = 0; e < dqk; e++)
        q[e] = tc_rng_uniform(r, -2, 2), k[e] = tc_rng_uniform(r, -2, 2);
    for (int e = 0; e < dr; e++)
        qr[e] = tc_rng_uniform(r, -2, 2), kr[e] = tc_rng_uniform(r, -2, 2);
    for (int e = 0; e < D; e++) {
        int f;
        const int part = fc_rope_part(e, dqk, dr, &f);
        tq[e] = part == 0 ? q[f] : part == 1 ? qr[f] : 0.0;
        tk[e] = part == 0 ? k[f] : part == 1 ? kr[f] : 0.0;
    }
    double joint = 0.0, split = 0.0;
    for (int e = 0; e < D; e++)
        joint += tq[e] * tk[e];
    for (int e = 0; e < dqk; e++)
        split += q[e] * k[e];
    for (int e = 0; e < dr; e++)
        split += qr[e] * kr[e];
    TC_CHECK(fabs(joint - split) <= 1e-12 * (1 + fabs(split)), "dqk=%d dr=%d: joint tile dot %.17g, q·k + q_rope·k_rope %.17g", dqk,
             dr, joint, split);

    double dq[512], dqr[512];
    for (int e = 0; e < 512; e++)
        dq[e] = dqr[e] = NAN;
    for (int e = 0; e < D; e++) { /* the gradient column e holds e + 0.5 */
        int f;
        const int part = fc_rope_part(e, dqk, dr, &f);
        if (part == 0)
            dq[f] = e + 0.5;
        else if (part == 1)
            dqr[f] = e + 0.5;
    }
    for (int e = 0; e < dqk; e++)
        TC_CHECK(dq[e] == e + 0.5, "dqk=%d dr=%d: dq[%d] = %g", dqk, dr, e, dq[e]);
    for (int e = 0; e < dr; e++)
        TC_CHECK(dqr[e] == dqk + e + 0.5, "dqk=%d dr=%d: dq_rope[%d] = %g", dqk, dr, e, dqr[e]);
    TC_CHECK(isnan(dq[dqk]) && isnan(dqr[dr]), "dqk=%d dr=%d: nothing written past either part", dqk, dr);
}

/* fc_rope_elem over views of different dtypes and feature strides: the main view's feature e below
 * dqk, the rope view's feature e − dqk after, at feature · stride · element size bytes. */
static void check_elem(int dqk, int dr)
{
    const fc_view v = {.dtype = FC_F32, .se = 3}, vr = {.dtype = FC_BF16, .se = 5};
    for (int e = 0; e < dqk + dr; e++) {
        int64_t off = -1;
        const fc_view *w = fc_rope_elem(&v, &vr, dqk, dr, e, &off);
        const bool rope = e >= dqk;
        const int64_t want = rope ? (int64_t)(e - dqk) * 5 * 2 : (int64_t)e * 3 * 4;
        TC_CHECK(w == (rope ? &vr : &v) && off == want, "dqk=%d dr=%d: feature %d in the %s view at byte %lld (want the %s view at %lld)",
                 dqk, dr, e, w == &vr ? "rope" : "main", (long long)off, rope ? "rope" : "main", (long long)want);
    }
}

#ifdef UNIT_WITH_CUDA
/* A dense bf16 rope problem (q 128 + 64 rope, v 128: the MLA training form), its backward's views too. */
static fc_problem rope_problem(void)
{
    static fc_batch batch = {.sq = 100, .skv = 130, .q_rows = 100, .kv_rows = 130, .vis_lo = -1000, .vis_hi = 1000};
    static char data[64];
    fc_problem p;
    memset(&p, 0, sizeof p);
    p.B = 1, p.Nq = 4, p.Nkv = 2, p.G = 2, p.Dqk = 128, p.Dv = 128, p.Dr = 64, p.max_sq = 100, p.max_skv = 130;
    p.batch = &batch, p.scale = 0.07f;
    fc_view v = {.data = data, .dtype = FC_BF16, .se = 1, .ss = 192, .sn = 64};
    p.q = p.k = p.v = p.q_rope = p.k_rope = p.out = v;
    p.dout = p.dq = p.dk = p.dv = p.dq_rope = p.dk_rope = v;
    return p;
}

static void expect_refusal(const char *what, const char *why, const char *needle)
{
    TC_CHECK(why && strstr(why, needle), "%s: refused naming \"%s\", got %s", what, needle, why ? why : "taken");
}

static void check_planning(void)
{
    fc_problem p = rope_problem();
    const char *why = fc_cuda_fwd_unsupported(&p);
    TC_CHECK(!why, "128 + 64 rope forward taken by the tiled kernel, got %s", why ? why : "");
    why = fc_cuda_bwd_unsupported(&p);
    TC_CHECK(!why, "128 + 64 rope backward taken, got %s", why ? why : "");
    p.max_sq = 1; /* a decode shape: the tiled kernel takes it */
    expect_refusal("rope decode", fc_cuda_dec_unsupported(&p), "rope");
    TC_CHECK(!fc_cuda_fwd_unsupported(&p), "rope decode shape taken by the tiled kernel");
    p.Dqk = 192, p.Dr = 64; /* 256: the largest class */
    TC_CHECK(!fc_cuda_fwd_unsupported(&p), "192 + 64 rope taken");
    p.Dqk = 7, p.Dr = 5, p.Dv = 3; /* odd sizes: element loads, class 128 */
    TC_CHECK(!fc_cuda_fwd_unsupported(&p) && !fc_cuda_bwd_unsupported(&p), "7 + 5 rope taken");

    p = rope_problem(), p.Dqk = 512;
    expect_refusal("512 + 64", fc_cuda_fwd_unsupported(&p), "512 + 64");
    expect_refusal("512 + 64 backward", fc_cuda_bwd_unsupported(&p), "512 + 64");
    p = rope_problem(), p.Dqk = 200;
    expect_refusal("200 + 64", fc_cuda_fwd_unsupported(&p), "Dqk + Dr above 256");
    p = rope_problem(), p.q_rope.dtype = FC_F16;
    expect_refusal("fp16 q_rope of bf16 q", fc_cuda_fwd_unsupported(&p), "rope features (Dr > 0) of a dtype");
    p = rope_problem(), p.k_rope.dtype = FC_F32;
    expect_refusal("fp32 k_rope", fc_cuda_fwd_unsupported(&p), "rope features (Dr > 0) of a dtype");
    p = rope_problem(), p.drop_philox = true, p.keep_prob = 0.9f;
    expect_refusal("rope with generated dropout", fc_cuda_fwd_unsupported(&p), "generated on the device");
    p = rope_problem(), p.dq_rope.dtype = FC_F32;
    expect_refusal("fp32 dq_rope", fc_cuda_bwd_unsupported(&p), "gradient dtypes");
    p = rope_problem(), p.dk_rope.dtype = FC_F16;
    expect_refusal("fp16 dk_rope", fc_cuda_bwd_unsupported(&p), "gradient dtypes");
    p = rope_problem(), p.dq.dtype = p.dk.dtype = p.dv.dtype = p.dq_rope.dtype = p.dk_rope.dtype = FC_F32;
    expect_refusal("rope with fp32 gradients", fc_cuda_bwd_unsupported(&p), "rope features (Dr > 0) with fp32 gradients");
    p.Dr = 0; /* fp32 gradients of bf16 operands: the fp32 kernels */
    TC_CHECK(!fc_cuda_bwd_unsupported(&p), "fp32 gradients of bf16 operands taken");
    p.dout.dtype = FC_F32;
    TC_CHECK(!fc_cuda_bwd_unsupported(&p), "an fp32 output gradient of bf16 operands taken");
    p.dk.dtype = FC_F16;
    expect_refusal("fp16 dk of bf16 operands", fc_cuda_bwd_unsupported(&p), "gradient dtypes other than the operands' or fp32");
    p = rope_problem(), p.k.pages.table = (const int32_t *)p.k.data; /* paged: not in the tiled kernel */
    expect_refusal("paged rope", fc_cuda_fwd_unsupported(&p), "paged");
    p = rope_problem(), p.Dr = 0; /* no rope: 128 features, as before */
    TC_CHECK(!fc_cuda_fwd_unsupported(&p) && !fc_cuda_bwd_unsupported(&p), "the same without rope taken");
    p.k.pages.table = p.v.pages.table = (const int32_t *)p.k.data; /* paged without rope: the kFeatPaged kernels */
    TC_CHECK(!fc_cuda_fwd_unsupported(&p), "paged forward taken by the tiled kernel");
    expect_refusal("paged backward", fc_cuda_bwd_unsupported(&p), "paged or tensor-list key/value in the backward");
    p.drop_philox = true, p.keep_prob = 0.9f;
    expect_refusal("paged with generated dropout", fc_cuda_fwd_unsupported(&p), "dropout generated on the device");
    p = rope_problem(), p.Dr = 0, p.drop_philox = true, p.keep_prob = 0.9f;
    p.q.dtype = p.k.dtype = p.v.dtype = p.out.dtype = FC_F32; /* fp32 with generated dropout: the kFeatF32 kernel's run-time branch */
    TC_CHECK(!fc_cuda_fwd_unsupported(&p), "fp32 forward with generated dropout taken");
}
#endif

int main(void)
{
    static const int dims[][3] = {{128, 64, 256}, {64, 64, 128}, {192, 64, 256}, {7, 5, 128}, {1, 1, 128},
                                  {120, 8, 128},  {8, 120, 128}, {3, 253, 256}, {129, 1, 256}};
    tc_rng r = tc_rng_seed(30);
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        check_map(dims[i][0], dims[i][1], dims[i][2]);
        check_joint_rows(&r, dims[i][0], dims[i][1], dims[i][2]);
        check_elem(dims[i][0], dims[i][1]);
    }
    for (int n = 0; n < 200; n++) { /* random splits of every class */
        const int D = n % 2 ? 128 : 256, dqk = (int)tc_rng_int(&r, 1, D - 1), dr = (int)tc_rng_int(&r, 1, D - dqk);
        check_map(dqk, dr, D);
        check_joint_rows(&r, dqk, dr, D);
        check_elem(dqk, dr);
    }
#ifdef UNIT_WITH_CUDA
    check_planning();
#endif
    return tc_summary("unit_cuda_rope");
}
