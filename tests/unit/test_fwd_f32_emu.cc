/*
 * The CUDA forward's fp32 kernels (src/cuda/forward_kernel.cuh with kFeatF32: 3×TF32 products on
 * mma.sync m16n8k8) run on the CPU, unchanged, by the CTA emulator (cta_emu.h: tf32 mma.sync and
 * cvt.rna.tf32.f32 from the PTX ISA's definitions, an operand word that is no tf32 value poisons
 * its products), on the native harness: each case is lowered by a CPU plan (the fc_problem the CUDA
 * backend would get, host addresses), every CTA of the kernel's grid runs, and the harness checks
 * the output and statistics against the double-precision reference at fp32's tolerance (§0.4; the
 * products must carry fp32's accuracy, a single TF32 product misses it) and against the CPU backend.
 * Masks, windows, layouts and odd strides (element loads), GQA, varlen, score terms, dropout (the
 * caller's bits, and generated on the device: the kernel's p.drop_philox branch), sinks, every head-dim class.
 * The non-finite suites (harness_nonfinite.h) run here at all three dtypes: fp16 and bf16 on the
 * 16-bit kernels (plain, and with score terms), including values that rows of their tile do not see.
 */
#include "cta_emu.h"

#include <math.h>

#include "cuda/dclass.h"
#include "cuda/forward_kernel.cuh"
#include "cuda/vec_rule.h"
#include "emu_plan.h"

extern "C" {
#include "common/check.h"
#include "common/rng.h"
#include "harness.h"
#include "harness_internal.h"
#include "harness_nonfinite.h"
}

/* The class's kernel, kFeatF32 (forward.cu's choice for every fp32 problem: generated dropout is
 * its run-time branch). */
template <int D> static void launch_feat(const fc_problem &p, const fc_cuda::FwdLaunch &L)
{
    using Sh = fc_cuda::FwdShape<D>;
    using Sm = fc_cuda::FwdSmem<D, Sh::BM, Sh::BN_TERMS, 4>;
    static_assert(Sm::bytes + Sm::scratch <= kCtaEmuSmem, "the emulator's shared memory holds the CTA's");
    for (int64_t x = 0; x < (int64_t)L.n_items * p.Nq; x++)
        cta_emu::run_cta(32 * Sh::WARPS, cta_emu_dim3{(unsigned)x, 0, 0},
                         [&] { fc_cuda::fwd_feat_kernel<float, D, Sh::BM, Sh::BN_TERMS, Sh::WARPS, fc_cuda::kFeatF32>(p, L); });
}

/* The 16-bit kernels (forward.cu's choice without generated dropout or rope): the plain one, or
 * the one with score terms and dropout bits; for the non-finite suites at fp16 and bf16. */
template <typename T, int D> static void launch_16(const fc_problem &p, const fc_cuda::FwdLaunch &L, bool plain)
{
    using Sh = fc_cuda::FwdShape<D>;
    using Sm = fc_cuda::FwdSmem<D, Sh::BM, Sh::BN_TERMS, 2>;
    static_assert(Sm::bytes + Sm::scratch <= kCtaEmuSmem, "the emulator's shared memory holds the CTA's");
    for (int64_t x = 0; x < (int64_t)L.n_items * p.Nq; x++)
        cta_emu::run_cta(32 * Sh::WARPS, cta_emu_dim3{(unsigned)x, 0, 0}, [&] {
            if (plain)
                fc_cuda::fwd_kernel<T, D, Sh::BM, Sh::BN, Sh::WARPS, true>(p, L);
            else
                fc_cuda::fwd_kernel<T, D, Sh::BM, Sh::BN_TERMS, Sh::WARPS, false>(p, L);
        });
}

template <typename T> static void launch_16_class(int cls, const fc_problem &p, const fc_cuda::FwdLaunch &L, bool plain)
{
    if (cls == 64)
        launch_16<T, 64>(p, L, plain);
    else if (cls == 128)
        launch_16<T, 128>(p, L, plain);
    else
        launch_16<T, 256>(p, L, plain);
}

/* Generated dropout (g_philox): the emulated kernel draws its keep bits from this seed and offset
 * (core/philox.h), while the reference and the CPU backend read the caller's bits, set to what
 * Philox makes for the same seed, offset and bit index (core/terms.h): the results agree only if
 * the kernel's bits are those. */
static bool g_philox;
static const uint64_t kSeed = 0x9E3779B97F4A7C15ull, kOffset = 0xFFFFFFFFull - 40;

/* nt_runner: the kernel's grid on the emulator over the case's lowered problem; the query tiles in
 * batch order (the GPU's heaviest-first order changes no result: one CTA per output row). */
static fc_status emu_runner(const nt_case *, const nt_data *, const fc_attention_desc *a, nt_bufs *, size_t *ws_bytes)
{
    *ws_bytes = 0;
    fc_plan *plan = NULL;
    fc_status st = emu_cpu_plan(a, &plan);
    if (st != FC_OK)
        return st;
    fc_problem p = plan->prob;
    if (g_philox) /* the plan's keep probability (threshold) with generated bits */
        p.drop_philox = true, p.drop_bits = NULL, p.drop_seed = kSeed, p.drop_offset = kOffset;
    const int cls = fc_cuda_dclass(&p);
    const int bm = cls == 64 ? fc_cuda::FwdShape<64>::BM : cls == 128 ? fc_cuda::FwdShape<128>::BM : fc_cuda::FwdShape<256>::BM;
    std::vector<int2> items;
    for (int64_t b = 0; b < p.B; b++)
        for (int64_t t = 0; t * bm < p.batch[b].q_rows; t++)
            items.push_back(make_int2((int)b, (int)t));
    fc_cuda::FwdLaunch L;
    L.items = items.data(), L.n_items = (int)items.size();
    L.vec_q = fc_cuda_vec_fits(&p.q, p.Dqk, 4), L.vec_k = fc_cuda_vec_fits(&p.k, p.Dqk, 4), L.vec_v = fc_cuda_vec_fits(&p.v, p.Dv, 4);
    L.terms = p.pse.data || p.alibi.slopes || p.mask.data || p.softcap > 0.0f;
    L.pair_out = fc_cuda_pair_fits(&p.out, 4);
    const bool half = p.q.dtype != FC_F32;
    if (half)
        L.vec_q = fc_cuda_vec_fits(&p.q, p.Dqk, 2), L.vec_k = fc_cuda_vec_fits(&p.k, p.Dqk, 2), L.vec_v = fc_cuda_vec_fits(&p.v, p.Dv, 2),
        L.pair_out = fc_cuda_pair_fits(&p.out, 2);
    if (!TC_CHECK((half ? p.k.dtype == p.q.dtype && p.v.dtype == p.q.dtype && p.out.dtype == p.q.dtype && !g_philox
                        : p.k.dtype == FC_F32 && p.v.dtype == FC_F32 && p.out.dtype == FC_F32) &&
                      p.Dr == 0 && (!g_philox || p.keep_prob < 1.0f) && !p.k.pages.table && !p.q.batch_data && !p.k.batch_data,
                  "test bug: a case the emulated kernels do not take"))
        st = FC_ERR_BACKEND;
    else if (half) {
        const bool plain = !L.terms && !fc_has_dropout(&p);
        if (p.q.dtype == FC_F16)
            launch_16_class<__half>(cls, p, L, plain);
        else
            launch_16_class<__nv_bfloat16>(cls, p, L, plain);
    } else if (cls == 64)
        launch_feat<64>(p, L);
    else if (cls == 128)
        launch_feat<128>(p, L);
    else
        launch_feat<256>(p, L);
    fc_plan_destroy(plan);
    return st;
}

static void run(const nt_case *c) { nt_run_elsewhere(c, emu_runner, 1); }

/* The case (keep_prob < 1) with generated dropout on the emulated kernel (g_philox). */
static void run_philox(const nt_case *c)
{
    nt_data d = nt_prepare(c);
    const uint64_t threshold = (uint64_t)ceil(ldexp(c->keep_prob, 32)); /* the lowering's (native/lower.c) */
    for (int64_t e = 0; e < d.keep_n * 8; e++) {
        const unsigned bit = fc_philox_keep_at(kSeed, kOffset, threshold, (uint64_t)e);
        d.keep[e >> 3] = (uint8_t)((d.keep[e >> 3] & ~(1u << (e & 7))) | bit << (e & 7));
    }
    g_philox = true;
    nt_run_elsewhere_on(c, &d, emu_runner, 1);
    g_philox = false;
    nt_data_free(&d);
}

static nt_case base(uint64_t seed, int D, int Sq, int Skv)
{
    nt_case c = nt_fixture(seed, (nt_sizes){2, 4, 2, D, D, Sq, Skv});
    c.layout = NT_BSND;
    return c;
}

int main(int argc, char **argv)
{
    /* quick: the named cases; FLASHC_EMU_QUICK (the sanitizer builds, where ASan intercepts every
     * coroutine switch): the first two, small ones */
    const bool tiny = getenv("FLASHC_EMU_QUICK") != NULL, quick = tiny || (argc > 1 && strcmp(argv[1], "quick") == 0);
    nt_case c = base(3, 40, 21, 33);
    c.Dv = 24, c.pad = 3, c.dim_stride = 2, c.mixed_layouts = true, c.N2 = 1;
    tc_context("emulated fp32 forward: odd strides (element loads), Dv != D, MQA, mixed layouts");
    run(&c);
    c = base(4, 128, 19, 70), c.mask.on = true, c.bias.on = true, c.softcap = 4.0f, c.scale = -0.3;
    tc_context("emulated fp32 forward: mask, bias, softcap, negative scale");
    run(&c);
    if (tiny)
        return tc_summary("unit_fwd_f32_emu");
    c = base(1, 64, 37, 150);
    tc_context("emulated fp32 forward: class 64, GQA 2, several kv tiles, BSND");
    run(&c);
    c = base(2, 128, 70, 90), c.layout = NT_BNSD, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("emulated fp32 forward: class 128, BNSD, causal bottom-right, two query tiles");
    run(&c);
    static const int sq[3] = {9, 0, 30}, skv[3] = {40, 7, 65};
    c = base(5, 64, 30, 65), c.B = 3, c.packed = true, c.sq = sq, c.skv = skv, c.window = fc_window_band(10, 3, FC_ALIGN_TOP_LEFT);
    tc_context("emulated fp32 forward: TND (packed) varlen, a batch without rows, a band");
    run(&c);
    c = base(6, 96, 17, 41), c.alibi.on = true, c.sink = NT_SINK_FINITE, c.keep_prob = 0.8, c.layout = NT_BSH;
    tc_context("emulated fp32 forward: ALiBi, sink, dropout keep bits, BSH");
    run(&c);
    c = base(11, 64, 20, 30), c.alibi.on = true, c.q_start = 100000, c.sink = NT_SINK_FINITE;
    tc_context("emulated fp32 forward: ALiBi with the queries 100000 positions after the keys, a sink above every logit");
    run(&c);
    c = base(7, 256, 20, 45), c.Dv = 200, c.range = 4, c.v_range = 1, c.window = fc_window_causal(FC_ALIGN_TOP_LEFT), c.prefix = true;
    tc_context("emulated fp32 forward: class 256, Dv 200, wide query/key inputs (logits to ~±100), prefixes");
    run(&c);
    c = base(8, 64, 70, 150), c.keep_prob = 0.7, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT), c.sink = NT_SINK_FINITE;
    tc_context("emulated fp32 forward: dropout generated on the device, class 64, causal, sink");
    run_philox(&c);
    static const int sq2[2] = {33, 17}, skv2[2] = {90, 40};
    c = base(9, 128, 33, 90), c.keep_prob = 0.85, c.lens = true, c.sq = sq2, c.skv = skv2, c.bias.on = true;
    tc_context("emulated fp32 forward: generated dropout, class 128, varlen (the batches' bit offsets), bias");
    run_philox(&c);
    c = base(10, 256, 19, 37), c.keep_prob = 0.5, c.Dv = 136;
    tc_context("emulated fp32 forward: generated dropout, class 256");
    run_philox(&c);
    for (int dt = 0; dt < 3; dt++) /* non-finite inputs (semantics §0.3), on the 16-bit kernels too */
        nf_dense_suite((fc_dtype)dt, emu_runner, true);
    if (!quick) {
        tc_rng r = tc_rng_seed(32);
        for (int x = 0; x < 4; x++) {
            c = base(100 + x, 4 * (int)tc_rng_int(&r, 1, 64), (int)tc_rng_int(&r, 1, 70), (int)tc_rng_int(&r, 1, 140));
            c.N2 = (int)tc_rng_int(&r, 1, 2), c.N1 = c.N2 * (int)tc_rng_int(&r, 1, 3), c.B = (int)tc_rng_int(&r, 1, 2);
            c.Dv = 4 * (int)tc_rng_int(&r, 1, 64);
            static const nt_layout lays[] = {NT_BNSD, NT_BSND, NT_BSH, NT_SBH};
            c.layout = lays[tc_rng_int(&r, 0, 3)];
            c.mask.on = tc_rng_bool(&r, 0.3);
            if (tc_rng_bool(&r, 0.5))
                c.window = fc_window_causal(tc_rng_bool(&r, 0.5) ? FC_ALIGN_BOTTOM_RIGHT : FC_ALIGN_TOP_LEFT);
            tc_context("emulated fp32 forward: random case %d (D %d, Dv %d, Sq %d, Skv %d)", x, c.D, c.Dv, c.Sq, c.Skv);
            run(&c);
        }
    }
    return tc_summary("unit_fwd_f32_emu");
}
