/*
 * The CUDA backward's fp32 kernels (src/cuda/backward*.cuh with kFeatF32: fp32 tiles, every product
 * 3×TF32 on mma.sync m16n8k8) run on the CPU, unchanged, by the CTA emulator (cta_emu.h), on the
 * backward harness (harness_bwd.h): each case's forward runs on the CPU backend, the backward is
 * lowered by a CPU plan (the fc_problem the CUDA backend would get, host addresses), and the CUDA
 * run's kernels (backward.cu fc_bwd_run, dq-recompute) go over their whole grids: D, dK/dV, dQ,
 * dsink.  The harness checks the gradients against the double-precision reference at fp32's
 * gradient tolerance (§0.4: every element written, nothing outside, rows that see nothing exactly
 * 0) and against the CPU backend.  A second launch configuration — every grid in reverse CTA order,
 * each round's threads highest first, the tile lists reversed, element loads instead of cp.async —
 * must give the same bits.
 * Two kinds of problem take these kernels: fp32 operands, and fp32 gradients of fp16 / bf16
 * operands (their tiles load converted to fp32).  A few cases also run the 16-bit tiles' kernels
 * (gradients in the operands' dtype): the dq-recompute path's, and the fused path's (its units
 * claimed by one emulated CTA in ticket order, the turns always there when asked for, dQ from the
 * ordered accumulators by the conversion kernel), also with rope-split heads (kFeatRope: dq_rope,
 * dk_rope; the mends' rope parts by non-finite rope rows).  Cases: odd sizes and strides, Sq ≠ Skv, every
 * layout, masks and windows, GQA / MQA, varlen (packed, empty batches), score terms (pse, ALiBi,
 * softcap), dropout bits and dropout generated on the device (the fp32 kernels' p.drop_philox
 * branch, kFeatPhilox on the 16-bit tiles and the fused path), sinks (dsink), statistics orders,
 * every head-dim class.
 * Inputs: queries and keys within ±1 (the default), values too except where a case says; 3×TF32
 * carries about 2⁻²¹ of each product (docs/ARCHITECTURE.md), which such inputs keep inside the
 * tolerance's 1e-5·max|gradient| (wider values with cancelling sums can miss it, as the forward's
 * test notes).
 */
#include "cta_emu.h"

/* The fused kernel's turn protocol (backward_dq.cuh) on the emulator, whose CTAs run one after
 * another in claim order: a turn is always there when asked for. */
#define FC_CUDA_DQ_SYNC_EMULATED
#include <stdio.h>
#include <stdlib.h>
namespace fc_cuda {
inline unsigned ld_relaxed_gpu(const unsigned *p) { return *p; }
inline void st_release_gpu(unsigned *p, unsigned v) { *p = v; }
inline void wait_turn(const unsigned *ctr, unsigned turn, unsigned, bool)
{
    if (*ctr != turn) {
        fprintf(stderr, "a dQ turn wait that no CTA run before this one satisfies\n");
        abort();
    }
}
} // namespace fc_cuda

#include "cuda/backward_dq_kernel.cuh"
#include "cuda/backward_kernel.cuh"
#include "cuda/backward_shapes.h"
#include "cuda/dclass.h"
#include "cuda/vec_rule.h"
#include "emu_mend.h"
#include "emu_plan.h"

#include <algorithm>
#include <vector>

extern "C" {
#include "common/check.h"
#include "common/rng.h"
#include "harness_bwd.h"
}

/* f(x) for CTAs [0, n) in launch order, or the reverse. */
template <class F> static void each_cta(int64_t n, bool reverse, int threads, F f)
{
    for (int64_t x = 0; x < n; x++) {
        const unsigned blk = (unsigned)(reverse ? n - 1 - x : x);
        cta_emu::run_cta(threads, cta_emu_dim3{blk, 0, 0}, f);
    }
}

/* The CUDA run's kernels in its order (backward.cu fc_bwd_run, dq-recompute) over host memory: T
 * float, the kFeatF32 kernels; else the 16-bit tiles' kernels with features FEAT (0: the plain
 * ones; kFeatRope: rope-split heads). */
template <typename T, int D, int FEAT>
static void launch(const fc_problem &p, fc_cuda::BwdLaunch L, const std::vector<int2> &qi, const std::vector<int2> &kvi, bool rev)
{
    using namespace fc_cuda;
    constexpr bool F32 = sizeof(T) == 4;
    static_assert(!F32 || FEAT == 0, "the fp32 tiles take no other features here");
    using Sh = std::conditional_t<F32, BwdShapeF32<D>, BwdShape<D>>;
    using KvSm = BwdKvSmem<D, Sh::BMQ, (int)sizeof(T)>;
    using QSm = BwdQSmem<D, Sh::BN, (int)sizeof(T)>;
    static_assert(KvSm::bytes + KvSm::scratch <= kCtaEmuSmem && QSm::bytes + QSm::scratch <= kCtaEmuSmem,
                  "the emulator's shared memory holds the CTA's");
    const int64_t q_grid = (int64_t)qi.size() * p.Nq;
    L.items = qi.data(), L.n_items = (int)qi.size();
    EmuMend mend(p, L, kvi.data(), (int64_t)kvi.size(), kBwdKvRows, false);
    emu_scan(p, L, mend, rev);
    if constexpr (F32)
        each_cta(q_grid, rev, kThreads, [&] { bwd_dsum_any_kernel<kBwdQRows>(p, L); });
    else
        each_cta(q_grid, rev, kThreads, [&] { bwd_dsum_kernel<T, kBwdQRows>(p, L); });
    L.items = kvi.data(), L.n_items = (int)kvi.size();
    if constexpr (F32)
        each_cta(L.units, rev, kThreads, [&] { bwd_dkv_feat_kernel<float, D, Sh::DC, Sh::BMQ, kFeatF32>(p, L); });
    else if constexpr (FEAT != 0)
        each_cta(L.units, rev, kThreads, [&] { bwd_dkv_feat_kernel<T, D, Sh::DC, Sh::BMQ, FEAT>(p, L); });
    else
        each_cta(L.units, rev, kThreads, [&] { bwd_dkv_kernel<T, D, Sh::DC, Sh::BMQ>(p, L); });
    L.items = qi.data(), L.n_items = (int)qi.size();
    if constexpr (F32)
        each_cta(q_grid, rev, kThreads, [&] { bwd_dq_feat_kernel<float, D, Sh::BN, kFeatF32>(p, L); });
    else if constexpr (FEAT != 0)
        each_cta(q_grid, rev, kThreads, [&] { bwd_dq_feat_kernel<T, D, Sh::BN, FEAT>(p, L); });
    else
        each_cta(q_grid, rev, kThreads, [&] { bwd_dq_kernel<T, D, Sh::BN>(p, L); });
    if (p.sink && p.dsink)
        each_cta(p.Nq, rev, kSinkThreads, [&] { bwd_dsink_kernel(p, L); });
    emu_mend(p, L, mend, rev);
}

/* The fused path's kernels (backward.cu fc_bwd_run, fused; 16-bit tiles, features FEAT): D, then
 * one CTA claiming every unit of the kv tiles in each batch's increasing order (later CTAs find
 * none), then dQ from the accumulators. */
template <typename T, int D, int FEAT>
static void launch_fused(const fc_problem &p, fc_cuda::BwdLaunch L, const std::vector<int2> &qi, const std::vector<int2> &kvi)
{
    using namespace fc_cuda;
    using Sh = FusedShape<D>;
    static_assert(BwdKvSmem<D, Sh::BMQ>::bytes + BwdKvSmem<D, Sh::BMQ>::scratch + BwdDqSmem<kBwdKvRows, Sh::BMQ, Sh::DC>::bytes <=
                      kCtaEmuSmem,
                  "the emulator's shared memory holds the CTA's");
    std::vector<int64_t> arow0((size_t)p.B + 1, 0);
    for (int64_t b = 0; b < p.B; b++)
        arow0[(size_t)b + 1] = arow0[(size_t)b] + (p.batch[b].q_rows + Sh::BMQ - 1) / Sh::BMQ * Sh::BMQ;
    const int64_t arows = arow0[(size_t)p.B];
    std::vector<float> acc((size_t)(p.Nq * arows * D) + 1, 0.0f);
    std::vector<unsigned> turns((size_t)(p.Nq * (arows / Sh::BMQ) * L.parts) + 1, 0u), ticket(1, 0u);
    L.dq_acc = acc.data(), L.arow0 = arow0.data(), L.arows = arows, L.dq_ld = D;
    L.turns = turns.data(), L.ticket = ticket.data();
    const int64_t q_grid = (int64_t)qi.size() * p.Nq;
    L.items = qi.data(), L.n_items = (int)qi.size();
    EmuMend mend(p, L, kvi.data(), (int64_t)kvi.size(), kBwdKvRows, true);
    emu_scan(p, L, mend, false);
    each_cta(q_grid, false, kThreads, [&] { bwd_dsum_kernel<T, kBwdQRows>(p, L); });
    L.items = kvi.data(), L.n_items = (int)kvi.size();
    const int ctas = L.units < 3 ? L.units : 3;
    if constexpr (FEAT != 0)
        each_cta(ctas, false, kThreads, [&] { bwd_fused_feat_kernel<T, D, Sh::DC, Sh::BMQ, FEAT>(p, L); });
    else
        each_cta(ctas, false, kThreads, [&] { bwd_fused_kernel<T, D, Sh::DC, Sh::BMQ>(p, L); });
    TC_CHECK(ticket[0] >= (unsigned)L.units, "the ticket handed out every unit (%u of %d)", ticket[0], L.units);
    L.items = qi.data(), L.n_items = (int)qi.size();
    if constexpr ((FEAT & kFeatRope) != 0)
        each_cta(q_grid, false, kThreads, [&] { bwd_dq_convert_rope_kernel<kBwdQRows>(p, L); });
    else
        each_cta(q_grid, false, kThreads, [&] { bwd_dq_convert_kernel<kBwdQRows>(p, L); });
    if (p.sink && p.dsink)
        each_cta(p.Nq, false, kSinkThreads, [&] { bwd_dsink_kernel(p, L); });
    emu_mend(p, L, mend, false);
}

/* launch (FUSED: launch_fused) at head-dim class cls; rope problems take classes 128 and 256
 * (fc_cuda_dclass). */
template <typename T, bool FUSED, int FEAT>
static void launch_class(int cls, const fc_problem &p, const fc_cuda::BwdLaunch &L, const std::vector<int2> &qi,
                         const std::vector<int2> &kvi, bool rev)
{
    const auto at = [&](auto d) {
        constexpr int D = decltype(d)::value;
        if constexpr (FUSED)
            launch_fused<T, D, FEAT>(p, L, qi, kvi);
        else
            launch<T, D, FEAT>(p, L, qi, kvi, rev);
    };
    if constexpr ((FEAT & fc_cuda::kFeatRope) == 0) {
        if (cls == 64)
            return at(std::integral_constant<int, 64>());
    }
    if (cls == 128)
        at(std::integral_constant<int, 128>());
    else
        at(std::integral_constant<int, 256>());
}

/* Tiles (batch, tile) of `tile` rows of every batch (kv: over kv_rows), each batch's in increasing
 * order (the dK/dV kernel takes any order; the reversed configuration reverses the list). */
static std::vector<int2> tiles(const fc_problem &p, int tile, bool kv, bool rev)
{
    std::vector<int2> t;
    for (int64_t b = 0; b < p.B; b++)
        for (int64_t x = 0; x * tile < (kv ? p.batch[b].kv_rows : p.batch[b].q_rows); x++)
            t.push_back(make_int2((int)b, (int)x));
    if (rev)
        std::reverse(t.begin(), t.end());
    return t;
}

/* Generated dropout (emu_plan.h emu_philox_*): the case's lowered problem draws its bits. */
static bool g_philox;

/* The kernels over the case's lowered backward problem: TILES16, the 16-bit tiles' kernels
 * (16-bit operands and gradients; FUSED: the fused path's); else the fp32 tiles' (fp32 gradients). */
template <bool TILES16, bool FUSED = false> static fc_status emu_plan_run(const fc_problem &lowered, int config)
{
    fc_problem p = lowered;
    if (g_philox)
        emu_philox_problem(p);
    const auto own_or_f32 = [&](fc_dtype dt) { return dt == p.q.dtype || dt == FC_F32; };
    const bool grads_ok = TILES16 ? p.q.dtype != FC_F32 && p.dq.dtype == p.q.dtype && p.dout.dtype == p.q.dtype : p.dq.dtype == FC_F32;
    if (!TC_CHECK(!p.sparse.data && (p.Dr == 0 || TILES16) && (!g_philox || (p.Dr == 0 && p.keep_prob < 1.0f)) && grads_ok && own_or_f32(p.dout.dtype) &&
                      p.k.dtype == p.q.dtype && p.v.dtype == p.q.dtype && p.out.dtype == p.q.dtype && !p.k.pages.table &&
                      !p.q.batch_data && !p.k.batch_data,
                  "test bug: a case the emulated backward kernels do not take"))
        return FC_ERR_BACKEND;
    const bool rev = config == 1;
    const cta_emu::OrderScope order(rev); /* the second configuration: each round's threads highest first too */
    const int cls = fc_cuda_dclass(&p);
    /* (the fused path's kv tiles in each batch's increasing order: its turns need it) */
    const std::vector<int2> qi = tiles(p, fc_cuda::kBwdQRows, false, rev), kvi = tiles(p, fc_cuda::kBwdKvRows, true, rev && !FUSED);
    std::vector<int64_t> row0((size_t)p.B + 1, 0);
    for (int64_t b = 0; b < p.B; b++)
        row0[(size_t)b + 1] = row0[(size_t)b] + p.batch[b].q_rows;
    std::vector<float> dsum((size_t)(p.Nq * row0[(size_t)p.B] + 1), NAN);
    fc_cuda::BwdLaunch L = {};
    L.parts = cls == 256 ? 2 : 1;
    L.row0 = row0.data();
    L.dsum = dsum.data();
    L.rows = row0[(size_t)p.B];
    L.units = (int)(kvi.size() * p.Nkv * L.parts);
    /* backward.cu's rule: cp.async for views whose rows fit (fp32 tiles: fp32 views); the second
     * configuration loads element by element */
    const auto fits = [&](const fc_view &v, int64_t d) { return !rev && (TILES16 ? fc_cuda_vec_fits(&v, d, 2) : fc_cuda_vec_f32(&v, d)); };
    const auto fits_qk = [&](const fc_view &v, const fc_view &r) { return fits(v, p.Dqk) && (p.Dr == 0 || fits(r, p.Dr)); };
    L.vec_q = fits_qk(p.q, p.q_rope), L.vec_k = fits_qk(p.k, p.k_rope), L.vec_v = fits(p.v, p.Dv), L.vec_do = fits(p.dout, p.Dv);
    L.terms = p.pse.data || p.alibi.slopes || p.mask.data || p.softcap > 0.0f || fc_has_dropout(&p);
    L.dq_sync = rev ? fc_cuda::kDqSyncLean : fc_cuda::kDqSyncFence;
    const bool bf = p.q.dtype == FC_BF16;
    if (!TILES16)
        launch_class<float, false, 0>(cls, p, L, qi, kvi, rev);
    else if (p.drop_philox)
        bf ? launch_class<__nv_bfloat16, FUSED, fc_cuda::kFeatPhilox>(cls, p, L, qi, kvi, rev)
           : launch_class<__half, FUSED, fc_cuda::kFeatPhilox>(cls, p, L, qi, kvi, rev);
    else if (p.Dr > 0)
        bf ? launch_class<__nv_bfloat16, FUSED, fc_cuda::kFeatRope>(cls, p, L, qi, kvi, rev)
           : launch_class<__half, FUSED, fc_cuda::kFeatRope>(cls, p, L, qi, kvi, rev);
    else
        bf ? launch_class<__nv_bfloat16, FUSED, 0>(cls, p, L, qi, kvi, rev) : launch_class<__half, FUSED, 0>(cls, p, L, qi, kvi, rev);
    return FC_OK;
}

static void run(const nt_case *c) { emu_bwd_run<emu_plan_run<false>>(c, FC_F32); }
/* The 16-bit tiles' kernels: gradients in the operands' dtype. */
static void run16(const nt_case *c) { emu_bwd_run<emu_plan_run<true>>(c, c->dt); }
/* The fused path's kernel (five products, dQ through the ordered accumulators). */
static void run_fused(const nt_case *c) { emu_bwd_run<emu_plan_run<true, true>>(c, c->dt); }

/* The case (keep_prob < 1) with its dropout generated on the device (g_philox) by the kernels of
 * RUN, gradients of grad_dt: the forward on the CPU and the reference read the same bits. */
template <fc_status (*RUN)(const fc_problem &, int)> static void run_philox(const nt_case *c, fc_dtype grad_dt)
{
    nt_bwd o = emu_bwd_options<RUN>(grad_dt);
    o.edit_data = emu_philox_bits;
    g_philox = true;
    nt_bwd_run(c, &o);
    g_philox = false;
}

/* B 2, 4 query heads on 2 kv heads, BSND; dt: the operands' dtype (fp16/bf16: fp32 gradients of them). */
static nt_case base(uint64_t seed, fc_dtype dt, int D, int Sq, int Skv)
{
    nt_case c = nt_fixture(seed, (nt_sizes){2, 4, 2, D, D, Sq, Skv});
    c.layout = NT_BSND;
    c.dt = c.out_dt = dt;
    return c;
}

int main(int argc, char **argv)
{
    /* quick: the named cases; FLASHC_EMU_QUICK (the sanitizer builds, where ASan intercepts every
     * coroutine switch and 3×TF32 makes three exchanges per product): the first, smallest one */
    const bool tiny = getenv("FLASHC_EMU_QUICK") != NULL, quick = tiny || (argc > 1 && strcmp(argv[1], "quick") == 0);
    nt_case c = base(3, FC_F32, 40, 21, 33);
    c.Dv = 24, c.pad = 3, c.dim_stride = 2, c.mixed_layouts = true, c.N2 = 1;
    if (tiny) /* the sanitizer builds: one batch, two query heads */
        c.B = 1, c.N1 = 2;
    tc_context("emulated fp32 backward: odd strides (element loads), Dv != D, MQA, mixed layouts");
    run(&c);
    if (tiny)
        return tc_summary("unit_bwd_f32_emu");
    c = base(4, FC_BF16, 72, 19, 70), c.mask.on = true, c.bias.on = true, c.softcap = 4.0f, c.scale = -0.3;
    tc_context("emulated fp32 backward: bf16 operands, fp32 gradients; class 128, mask, bias, softcap, negative scale");
    run(&c);
    c = base(1, FC_F16, 64, 37, 150), c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("emulated fp32 backward: fp16 operands, fp32 gradients; class 64, GQA 2, several kv tiles, causal bottom-right");
    run(&c);
    c = base(2, FC_F32, 128, 70, 90), c.layout = NT_BNSD, c.window = fc_window_band(20, 5, FC_ALIGN_TOP_LEFT), c.keep_prob = 0.8;
    c.stats_order = FC_STATS_TOKEN_MAJOR;
    tc_context("emulated fp32 backward: class 128, BNSD, a band, dropout keep bits, two query tiles, token-major statistics");
    run(&c);
    static const int sq[3] = {9, 0, 70}, skv[3] = {40, 7, 65};
    c = base(5, FC_F32, 64, 70, 65), c.B = 3, c.packed = true, c.sq = sq, c.skv = skv;
    c.window = fc_window_causal(FC_ALIGN_TOP_LEFT), c.stats_order = FC_STATS_KV_TOKEN_GROUP;
    tc_context("emulated fp32 backward: TND (packed) varlen, a batch without rows, causal, kv-group statistics");
    run(&c);
    c = base(6, FC_F32, 96, 17, 41), c.alibi.on = true, c.sink = NT_SINK_FINITE, c.layout = NT_BSH, c.prefix = true;
    c.stats_order = FC_STATS_HEAD_MAJOR, c.replicas = 8;
    tc_context("emulated fp32 backward: ALiBi, sink (dsink), BSH, prefixes, head-major statistics with 8 replicas");
    run(&c);
    c = base(7, FC_F32, 256, 20, 45), c.Dv = 200, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT), c.N1 = 2, c.N2 = 1;
    tc_context("emulated fp32 backward: class 256 (two feature parts), Dv 200, causal bottom-right, MQA");
    run(&c);
    c = base(8, FC_BF16, 160, 33, 18), c.layout = NT_SBH, c.mask.on = true, c.N1 = 2, c.N2 = 1;
    tc_context("emulated fp32 backward: bf16 operands, fp32 gradients; class 256, SBH, mask, Sq > Skv");
    run(&c);
    /* dropout generated on the device (kFeatPhilox; the fp32 kernels' run-time branch) */
    c = base(17, FC_F32, 64, 45, 70), c.keep_prob = 0.8, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT), c.sink = NT_SINK_FINITE;
    tc_context("emulated fp32 backward: dropout generated on the device, class 64, causal bottom-right, sink");
    run_philox<emu_plan_run<false>>(&c, FC_F32);
    static const int sq2[2] = {33, 17}, skv2[2] = {90, 40};
    c = base(18, FC_BF16, 112, 33, 90), c.keep_prob = 0.85, c.lens = true, c.sq = sq2, c.skv = skv2, c.bias.on = true;
    tc_context("emulated fp32 backward: generated dropout, bf16 operands, fp32 gradients, class 128, varlen, bias");
    run_philox<emu_plan_run<false>>(&c, FC_F32);
    c = base(19, FC_F16, 64, 40, 75), c.keep_prob = 0.7, c.mask.on = true;
    tc_context("emulated 16-bit backward: generated dropout (kFeatPhilox), fp16, class 64, mask");
    run_philox<emu_plan_run<true>>(&c, FC_F16);
    c = base(20, FC_BF16, 128, 70, 90), c.keep_prob = 0.9, c.lens = true, c.sq = sq2, c.skv = skv2, c.N2 = 1;
    tc_context("emulated 16-bit backward: generated dropout, bf16, class 128, varlen, MQA");
    run_philox<emu_plan_run<true>>(&c, FC_BF16);
    tc_context("emulated fused backward: generated dropout, bf16, class 128, varlen, MQA");
    run_philox<emu_plan_run<true, true>>(&c, FC_BF16);
    c = base(21, FC_F16, 256, 20, 45), c.keep_prob = 0.6, c.Dv = 136, c.window = fc_window_band(12, 4, FC_ALIGN_TOP_LEFT);
    tc_context("emulated fused backward: generated dropout, fp16, class 256 (two feature parts), a band");
    run_philox<emu_plan_run<true, true>>(&c, FC_F16);
    /* non-finite inputs (semantics §0.3) where every row sees them (a product of a hidden pair's 0
     * with a non-finite operand is NaN here: ARCHITECTURE.md): a NaN query row, a NaN key, +inf in
     * a query element, a NaN value and a −inf one */
    c = base(9, FC_F32, 24, 90, 100), c.Dv = 20;
    static const nf_put nonfinite[] = {{NF_Q, 1, 2, 30, 0, 3, NAN}, {NF_K, 0, 1, 0, 80, 0, NAN}, {NF_Q, 0, 3, 50, 0, 1, INFINITY},
                                       {NF_V, 1, 0, 0, 7, 2, NAN}, {NF_V, 0, 0, 0, 0, 5, -INFINITY}};
    tc_context("emulated fp32 backward: NaN query row, NaN key, +inf query element, NaN and -inf values");
    emu_bwd_nonfinite<emu_plan_run<false>>(&c, FC_F32, nonfinite, 5);
    /* the 16-bit tiles' kernels (gradients in the operands' dtype) */
    c = base(10, FC_BF16, 64, 70, 90), c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT), c.Dv = 48;
    tc_context("emulated 16-bit backward: bf16, class 64, causal bottom-right, Dv 48");
    run16(&c);
    c = base(11, FC_F16, 128, 40, 50), c.mask.on = true, c.layout = NT_BNSD;
    tc_context("emulated 16-bit backward: fp16, class 128, mask, BNSD");
    run16(&c);
    tc_context("emulated fused backward: fp16, class 128, mask, BNSD");
    run_fused(&c);
    c = base(14, FC_BF16, 200, 70, 130), c.window = fc_window_band(50, 10, FC_ALIGN_BOTTOM_RIGHT), c.N2 = 1;
    tc_context("emulated fused backward: bf16, class 256 (two feature parts), a band, MQA, several query and kv tiles");
    run_fused(&c);
    /* rope-split heads (kFeatRope: the query and key tiles carry q_rope / k_rope after their
     * features; dq_rope and dk_rope from the same accumulators) */
    c = base(15, FC_BF16, 64, 45, 70), c.Dr = 24, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT), c.Dv = 40;
    tc_context("emulated 16-bit backward, rope: bf16, 64 + 24 (class 128), causal bottom-right, GQA 2, Dv 40");
    run16(&c);
    tc_context("emulated fused backward, rope: bf16, 64 + 24 (class 128), causal bottom-right, GQA 2, Dv 40");
    run_fused(&c);
    c = base(16, FC_F16, 120, 33, 50), c.Dr = 56, c.layout = NT_BNSD, c.mask.on = true, c.N2 = 1;
    tc_context("emulated fused backward, rope: fp16, 120 + 56 (class 256), BNSD, mask, MQA");
    run_fused(&c);
    /* non-finite operands at pairs that rows of the same tiles do not see: keys (the dQ kernel
     * records what the visible pairs make of them and zeroes them for its product; the fused
     * path's dQ is mended afterwards), queries and d_out (dK and dV mended afterwards:
     * backward_fixup.cuh); and visible ones (a −∞ logit beside a NaN statistic is arithmetic,
     * not a hidden pair).  Each on the fp32 tiles, the 16-bit tiles and the fused kernel. */
    static const nf_put hidden[] = {{NF_K, 0, 1, 0, 80, 0, NAN}, {NF_K, 1, 0, 0, 37, 2, INFINITY}, {NF_V, 0, 0, 0, 70, 4, -INFINITY}};
    static const nf_put masked[] = {{NF_K, 1, 0, 0, 7, 2, NAN}, {NF_K, 0, 1, 0, 30, 5, -INFINITY}};
    static const nf_put hidden_q[] = {{NF_Q, 0, 1, 30, 0, 3, NAN}, {NF_DOUT, 1, 2, 40, 0, 5, INFINITY},
                                      {NF_Q, 1, 3, 10, 0, 0, -INFINITY}, {NF_DOUT, 0, 0, 60, 0, 1, NAN}};
    /* the same with rope parts: a NaN in a rope key or rope query row reaches only the other
     * operand's rope gradient (dq_rope, dk_rope) through the hidden pairs' 0 */
    static const nf_put hidden_rope[] = {{NF_K_ROPE, 0, 1, 0, 80, 3, NAN}, {NF_K, 1, 0, 0, 37, 2, INFINITY},
                                         {NF_V, 0, 0, 0, 70, 4, -INFINITY}};
    static const nf_put hidden_q_rope[] = {{NF_Q_ROPE, 0, 1, 30, 0, 5, NAN}, {NF_DOUT, 1, 2, 40, 0, 5, INFINITY},
                                           {NF_Q_ROPE, 1, 3, 10, 0, 0, -INFINITY}, {NF_DOUT, 0, 0, 60, 0, 1, NAN}};
    static const nf_put masked_q[] = {{NF_Q, 0, 2, 5, 0, 7, NAN}, {NF_DOUT, 1, 1, 20, 0, 3, -INFINITY}, {NF_K, 0, 0, 0, 12, 1, NAN}};
    static const char *const path_name[3] = {"fp32", "16-bit", "fused"};
    for (int path = 0; path < 3; path++) {
        const auto nonfinite_run = [&](const nt_case *k, const nf_put *puts, int n) {
            if (path == 2)
                emu_bwd_nonfinite<emu_plan_run<true, true>>(k, k->dt, puts, n);
            else if (path == 1)
                emu_bwd_nonfinite<emu_plan_run<true>>(k, k->dt, puts, n);
            else
                emu_bwd_nonfinite<emu_plan_run<false>>(k, FC_F32, puts, n);
        };
        c = base(12, path ? FC_BF16 : FC_F32, 24, 90, 100), c.Dv = 20, c.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
        tc_context("emulated %s backward: NaN / +inf keys at pairs their tiles' rows do not see, a -inf value", path_name[path]);
        nonfinite_run(&c, hidden, 3);
        tc_context("emulated %s backward: NaN / inf queries and d_out at pairs their tiles' keys do not see", path_name[path]);
        nonfinite_run(&c, hidden_q, 4);
        if (path) { /* the mends' rope parts: q_rope and k_rope read, dq_rope and dk_rope written */
            c.Dr = 8;
            tc_context("emulated %s backward, rope 24 + 8: NaN / +inf keys and rope keys at pairs their tiles' rows do not see",
                       path_name[path]);
            nonfinite_run(&c, hidden_rope, 3);
            tc_context("emulated %s backward, rope 24 + 8: NaN / inf queries, rope queries and d_out at pairs their tiles' "
                       "keys do not see", path_name[path]);
            nonfinite_run(&c, hidden_q_rope, 4);
        }
        c = base(13, path ? FC_F16 : FC_F32, 72, 37, 45), c.mask.on = true, c.mask.density = 0.4;
        tc_context("emulated %s backward, class 128, a mask tensor: NaN and -inf keys", path_name[path]);
        nonfinite_run(&c, masked, 2);
        tc_context("emulated %s backward, class 128, a mask tensor: NaN and -inf queries, d_out and a key", path_name[path]);
        nonfinite_run(&c, masked_q, 3);
    }
    if (!quick) {
        tc_rng r = tc_rng_seed(41);
        static const fc_dtype dts[] = {FC_F32, FC_F16, FC_BF16};
        for (int x = 0; x < 3; x++) {
            const fc_dtype dt = dts[tc_rng_int(&r, 0, 2)];
            c = base(100 + x, dt, 4 * (int)tc_rng_int(&r, 1, 32), (int)tc_rng_int(&r, 1, 70), (int)tc_rng_int(&r, 1, 140));
            c.N2 = (int)tc_rng_int(&r, 1, 2), c.N1 = c.N2 * (int)tc_rng_int(&r, 1, 3), c.B = (int)tc_rng_int(&r, 1, 2);
            c.Dv = 4 * (int)tc_rng_int(&r, 1, 32);
            static const nt_layout lays[] = {NT_BNSD, NT_BSND, NT_BSH, NT_SBH};
            c.layout = lays[tc_rng_int(&r, 0, 3)];
            c.mask.on = tc_rng_bool(&r, 0.3);
            if (tc_rng_bool(&r, 0.5))
                c.window = fc_window_causal(tc_rng_bool(&r, 0.5) ? FC_ALIGN_BOTTOM_RIGHT : FC_ALIGN_TOP_LEFT);
            tc_context("emulated fp32 backward: random case %d (dtype %d, D %d, Dv %d, Sq %d, Skv %d)", x, (int)dt, c.D, c.Dv, c.Sq,
                       c.Skv);
            run(&c);
        }
    }
    return tc_summary("unit_bwd_f32_emu");
}
