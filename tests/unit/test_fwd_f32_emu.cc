/*
 * The CUDA forward's fp32 kernels (src/cuda/forward_kernel.cuh with kFeatF32: 3×TF32 products on
 * mma.sync m16n8k8) run on the CPU, unchanged, by the CTA emulator (cta_emu.h: tf32 mma.sync and
 * cvt.rna.tf32.f32 from the PTX ISA's definitions, an operand word that is no tf32 value poisons
 * its products), on the native harness: each case is lowered by a CPU plan (the fc_problem the CUDA
 * backend would get, host addresses), every CTA of the kernel's grid runs, and the harness checks
 * the output and statistics against the double-precision reference at fp32's tolerance (§0.4; the
 * products must carry fp32's accuracy, a single TF32 product misses it) and against the CPU backend.
 * Masks, windows, layouts and odd strides (element loads), GQA, varlen, score terms, dropout (the
 * caller's bits, and generated on the device: the kernel's p.drop_philox branch), sinks, every head-dim class,
 * finite operands whose tf32 rounding overflows, and tf32_split itself over inf, NaN payloads and
 * edge values.  The 16-bit feature kernels too (kFeatPhilox: dropout generated on the device;
 * kFeatRope: rope-split heads), chosen as forward.cu chooses them.
 * The non-finite suites (harness_nonfinite.h) run here at all three dtypes: fp16 and bf16 on the
 * 16-bit kernels (plain, and with score terms), including values that rows of their tile do not see.
 */
#include "cta_emu.h"

#include <float.h>
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

/* The 16-bit kernels, chosen as forward.cu chooses them: the plain one, the one with score terms
 * and dropout bits, or a feature kernel (features.cuh: generated dropout, rope-split heads). */
template <typename T, int D> static void launch_16(const fc_problem &p, const fc_cuda::FwdLaunch &L, int feat, bool plain)
{
    using Sh = fc_cuda::FwdShape<D>;
    using Sm = fc_cuda::FwdSmem<D, Sh::BM, Sh::BN_TERMS, 2>;
    static_assert(Sm::bytes + Sm::scratch <= kCtaEmuSmem, "the emulator's shared memory holds the CTA's");
    for (int64_t x = 0; x < (int64_t)L.n_items * p.Nq; x++)
        cta_emu::run_cta(32 * Sh::WARPS, cta_emu_dim3{(unsigned)x, 0, 0}, [&] {
            if (feat == fc_cuda::kFeatPhilox)
                fc_cuda::fwd_feat_kernel<T, D, Sh::BM, Sh::BN_TERMS, Sh::WARPS, fc_cuda::kFeatPhilox>(p, L);
            else if (feat == fc_cuda::kFeatRope) {
                if constexpr (D >= 128)
                    fc_cuda::fwd_feat_kernel<T, D, Sh::BM, Sh::BN_TERMS, Sh::WARPS, fc_cuda::kFeatRope>(p, L);
            } else if (plain)
                fc_cuda::fwd_kernel<T, D, Sh::BM, Sh::BN, Sh::WARPS, true>(p, L);
            else
                fc_cuda::fwd_kernel<T, D, Sh::BM, Sh::BN_TERMS, Sh::WARPS, false>(p, L);
        });
}

template <typename T> static void launch_16_class(int cls, const fc_problem &p, const fc_cuda::FwdLaunch &L, int feat, bool plain)
{
    if (cls == 64)
        launch_16<T, 64>(p, L, feat, plain);
    else if (cls == 128)
        launch_16<T, 128>(p, L, feat, plain);
    else
        launch_16<T, 256>(p, L, feat, plain);
}

/* Generated dropout (emu_plan.h emu_philox_*): the case's lowered problem draws its bits. */
static bool g_philox;

/* nt_runner: the kernel's grid on the emulator over the case's lowered problem; the query tiles in
 * batch order (the GPU's heaviest-first order changes no result: one CTA per output row).  Every
 * second run takes each round's threads highest first (cta_emu reverse_order: a warp that skips a
 * wait, or overwrites a buffer another still reads, then runs first). */
static fc_status emu_runner(const nt_case *, const nt_data *, const fc_attention_desc *a, nt_bufs *, size_t *ws_bytes)
{
    static int calls;
    const cta_emu::OrderScope order(calls++ % 2 == 1);
    *ws_bytes = 0;
    fc_plan *plan = NULL;
    fc_status st = emu_cpu_plan(a, &plan);
    if (st != FC_OK)
        return st;
    fc_problem p = plan->prob;
    if (g_philox)
        emu_philox_problem(p);
    const int cls = fc_cuda_dclass(&p);
    const int bm = cls == 64 ? fc_cuda::FwdShape<64>::BM : cls == 128 ? fc_cuda::FwdShape<128>::BM : fc_cuda::FwdShape<256>::BM;
    std::vector<int2> items;
    for (int64_t b = 0; b < p.B; b++)
        for (int64_t t = 0; t * bm < p.batch[b].q_rows; t++)
            items.push_back(make_int2((int)b, (int)t));
    fc_cuda::FwdLaunch L;
    L.items = items.data(), L.n_items = (int)items.size();
    fc_cuda::fwd_launch_views(p, L);
    const bool half = p.q.dtype != FC_F32;
    const int feat = fc_cuda::feat_bits(p) & ~fc_cuda::kFeatF32;
    if (!TC_CHECK((half ? p.k.dtype == p.q.dtype && p.v.dtype == p.q.dtype && p.out.dtype == p.q.dtype
                        : p.k.dtype == FC_F32 && p.v.dtype == FC_F32 && p.out.dtype == FC_F32 && p.Dr == 0) &&
                      (feat == 0 || feat == fc_cuda::kFeatPhilox || (feat == fc_cuda::kFeatRope && cls >= 128)) &&
                      (!g_philox || p.keep_prob < 1.0f),
                  "test bug: a case the emulated kernels do not take"))
        st = FC_ERR_BACKEND;
    else if (half) {
        const bool plain = !L.terms && !fc_has_dropout(&p) && feat == 0;
        if (p.q.dtype == FC_F16)
            launch_16_class<__half>(cls, p, L, feat, plain);
        else
            launch_16_class<__nv_bfloat16>(cls, p, L, feat, plain);
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
    emu_philox_bits(c, &d);
    g_philox = true;
    nt_run_elsewhere_on(c, &d, emu_runner, 1);
    g_philox = false;
    nt_data_free(&d);
}

/* tf32_split over the fp32 values where it must not take the common path's word: ±inf, NaN with
 * its payload anywhere (cvt's NaN is the emulator's worst case, tf32_rna), finite values whose
 * rounding to tf32 overflows, and random and edge finite ones.  Both parts must be tf32 values
 * (the tensor cores ignore the low 13 bits); a finite x must give finite parts with
 * |hi + lo − x| ≤ 2⁻²¹·|x| (fp32's subnormals: one step of 2⁻¹⁴⁹·2¹³ at most); a non-finite x,
 * hi = 0 and lo = x (NaN: a NaN). */
static void check_tf32_split(void)
{
    tc_context("tf32_split: inf, NaN payloads, finite values whose rounding overflows, random values");
    std::vector<uint32_t> xs = {0x00000000u, 0x80000000u, 0x00000001u, 0x00001FFFu, 0x00800000u, 0x3F800000u, 0x3F801000u,
                                0x7F7FEFFFu, 0x7F7FF000u, 0x7F7FFFFFu, 0xFF7FF000u, 0xFF7FFFFFu, 0x7F800000u, 0xFF800000u,
                                0x7F800001u, 0xFF800001u, 0x7F801FFFu, 0x7FC00000u, 0x7FFFFFFFu, 0xFFC00001u};
    tc_rng r = tc_rng_seed(77);
    for (int i = 0; i < 4000; i++)
        xs.push_back((uint32_t)tc_rng_u64(&r));
    for (uint32_t u : xs) {
        const float x = __uint_as_float(u);
        const fc_cuda::Tf32Split s = fc_cuda::tf32_split(x);
        const double hi = __uint_as_float(s.hi), lo = __uint_as_float(s.lo);
        bool ok = ((s.hi | s.lo) & 0x1FFFu) == 0;
        if (x != x)
            ok = ok && s.hi == 0 && lo != lo;
        else if (isinf(x))
            ok = ok && s.hi == 0 && s.lo == u;
        else
            ok = ok && isfinite(hi) && isfinite(lo) && fabs(hi + lo - (double)x) <= fmax(ldexp(fabs((double)x), -21), ldexp(1.0, -136));
        TC_CHECK(ok, "tf32_split: x = 0x%08x gives hi 0x%08x, lo 0x%08x", u, s.hi, s.lo);
    }
}

static nt_case base(uint64_t seed, int D, int Sq, int Skv)
{
    nt_case c = nt_fixture(seed, (nt_sizes){2, 4, 2, D, D, Sq, Skv});
    c.layout = NT_BSND;
    return c;
}

/* Finite operands whose tf32 rounding overflows (tf32_split's truncated hi) in both products:
 * queries ±FLT_MAX at feature 0 against keys of ±(1 + j/64)·2⁻¹²⁵ there (logit terms of 8–16 at
 * scale 1/8), and one key's value −FLT_MAX at feature 3 (an output of p·FLT_MAX, finite). */
static void run_near_max(void)
{
    nt_case c = nt_fixture(12, (nt_sizes){1, 1, 1, 64, 64, 9, 40});
    tc_context("emulated fp32 forward: queries and a value of ±FLT_MAX (tf32 rounding past the largest finite)");
    nt_data d = nt_prepare(&c);
    for (int i = 0; i < 3; i++)
        d.q[(int64_t)i * c.D] = i % 2 ? FLT_MAX : -FLT_MAX;
    for (int j = 0; j < c.Skv; j++)
        d.k[(int64_t)j * c.D] = ldexp(j % 3 ? 1.0 + j / 64.0 : -1.0 - j / 64.0, -125);
    d.v[5 * (int64_t)d.Dv + 3] = -FLT_MAX;
    nt_run_elsewhere_on(&c, &d, emu_runner, 1);
    nt_data_free(&d);
}

int main(int argc, char **argv)
{
    /* quick: the named cases; FLASHC_EMU_QUICK (the sanitizer builds, where ASan intercepts every
     * coroutine switch): the first two, small ones */
    const bool tiny = getenv("FLASHC_EMU_QUICK") != NULL, quick = tiny || (argc > 1 && strcmp(argv[1], "quick") == 0);
    check_tf32_split();
    run_near_max();
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
    c = base(13, 64, 70, 150), c.dt = c.out_dt = FC_F16, c.keep_prob = 0.75, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("emulated 16-bit forward: dropout generated on the device (kFeatPhilox), fp16, class 64, causal");
    run_philox(&c);
    c = base(14, 128, 33, 90), c.dt = c.out_dt = FC_BF16, c.keep_prob = 0.9, c.lens = true, c.sq = sq2, c.skv = skv2, c.sink = NT_SINK_FINITE;
    tc_context("emulated 16-bit forward: generated dropout, bf16, class 128, varlen, sink");
    run_philox(&c);
    c = base(15, 96, 30, 70), c.Dr = 32, c.dt = c.out_dt = FC_F16, c.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    tc_context("emulated 16-bit forward: rope-split heads (kFeatRope), fp16, 96 + 32 (class 128), GQA, causal");
    run(&c);
    c = base(16, 160, 21, 45), c.Dr = 64, c.Dv = 128, c.dt = c.out_dt = FC_BF16, c.bias.on = true, c.layout = NT_BNSD;
    tc_context("emulated 16-bit forward: rope-split heads, bf16, 160 + 64 (class 256), Dv 128, bias, BNSD");
    run(&c);
    c = base(17, 120, 19, 33), c.Dr = 8, c.dt = c.out_dt = FC_F16, c.pad = 3, c.dim_stride = 2, c.N2 = 1;
    tc_context("emulated 16-bit forward: rope-split heads, odd strides (element loads), MQA");
    run(&c);
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
