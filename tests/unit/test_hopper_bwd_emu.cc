/*
 * The sm_90a backward (src/cuda/hopper/bwd_kernel.cuh: five products on wgmma through CuTe's GMMA
 * atoms, TMA rings, the ticket and the dQ turn counters) run on the CPU, unchanged, by the CTA
 * emulator with its Hopper vocabulary (cta_emu_sm90.h), on the backward harness (harness_bwd.h):
 * each case's forward runs on the CPU backend, the backward is lowered by a CPU plan (the
 * fc_problem the CUDA backend would get, host addresses), and the run goes in the CUDA run's order
 * (backward.cu with FLASHC_CUDA_BWD=sm90): the non-finite scan, D = rowsum(dO∘O) (bwd_dsum_kernel),
 * the Hopper kernel through the library's bwd_run (its tensor maps through the emulator's
 * encoder), dQ from the fp32 accumulators (bwd_dq_convert_kernel), the non-finite mend (emu_mend.h)
 * — every kernel on the emulator, the workspace as the plan lays it out.  The emulator runs CTAs one at a time, so the persistent grid's first CTA claims
 * every unit from the ticket in order and no dQ turn wait can block; configuration 1 launches more
 * CTAs (the later ones find the ticket spent) with the threads of each round in reverse order (a role
 * that skips a wait then runs before the one it should wait for) and must give the same bits.  The harness checks dQ,
 * dK and dV against the reference and the CPU backend.
 */
#include "cta_emu_sm90.h"

#include "cuda/backward_dq.cuh"
#include "cuda/hopper/bwd_kernel.cuh"
#include "emu_mend.h"
#include "hopper_emu.h"

#include "cuda/hopper/bwd_host.cu"

/* The grid's CTAs, one after another. */
template <typename T, int D>
static cudaError_t emu_launch(const fc_problem &p, const fc_cuda::BwdLaunch &L, const fc_hopper::BwdArgs &a, int grid)
{
    using Tr = fc_hopper::BwdTraits<T, D>;
    static_assert(Tr::SMEM <= kCtaEmuSmem, "the emulator's shared memory holds the CTA's");
    for (int x = 0; x < grid; x++)
        cta_emu_sm90::run_cta(Tr::THREADS, cta_emu_dim3{(unsigned)x, 0, 0}, (unsigned)grid,
                              [&] { fc_hopper::bwd_hopper_kernel<T, D>(p, L, a); });
    return cudaSuccess;
}
#define EMU_LAUNCHER(dt, T, d)                                                                                               \
    cudaError_t fc_hopper::bwd_launch_##dt##_d##d(const fc_problem &p, const fc_cuda::BwdLaunch &L, const BwdArgs &a, int grid, \
                                                  cudaStream_t)                                                             \
    {                                                                                                                        \
        return emu_launch<T, d>(p, L, a, grid);                                                                              \
    }
EMU_LAUNCHER(f16, __half, 64)
EMU_LAUNCHER(f16, __half, 128)
EMU_LAUNCHER(bf16, __nv_bfloat16, 64)
EMU_LAUNCHER(bf16, __nv_bfloat16, 128)
/* (the forward's launchers: fwd_host.cu names them; the backward test runs none) */
#define EMU_NO_FWD(dt, d)                                                                               \
    cudaError_t fc_hopper::fwd_launch_##dt##_d##d(const fc_problem &, const FwdArgs &, int, cudaStream_t) \
    {                                                                                                   \
        return cudaErrorInvalidValue;                                                                   \
    }
#define EMU_NO_FWD_TMA(dt, d) EMU_NO_FWD(dt, d##_tma)
FC_HOPPER_FWD_LAUNCHERS(EMU_NO_FWD)
FC_HOPPER_FWD_LAUNCHERS(EMU_NO_FWD_TMA)
#define EMU_NO_FWD_PAGED(dt, d) EMU_NO_FWD(dt, d##_paged)
FC_HOPPER_FWD_PAGED_LAUNCHERS(EMU_NO_FWD_PAGED)
EMU_NO_FWD(f16, 64_wg3)
EMU_NO_FWD(bf16, 64_wg3)

/* A kernel of kThreads-thread CTAs over the (query tile, head) grid, as backward.cu launches it. */
template <class K> static void query_grid(const fc_problem &p, const fc_cuda::BwdLaunch &L, K kernel)
{
    for (int64_t x = 0; x < (int64_t)L.n_items * p.Nq; x++)
        cta_emu::run_cta(fc_cuda::kThreads, cta_emu_dim3{(unsigned)x, 0, 0}, [&] { kernel(p, L); });
}

/* The run's kernels over p (configuration 0 or 1). */
static fc_status emu_plan_run(const fc_problem &p, int config)
{
    const int dclass = fc_cuda_dclass(&p);
    const char *why = fc_hopper::bwd_unsupported(&p, dclass);
    if (!TC_CHECK(!why, "test bug: the sm_90a backward does not take the case (%s)", why ? why : ""))
        return FC_ERR_BACKEND;
    /* the plan's facts (backward.cu fc_cuda_bwd_plan with the Hopper tiles) */
    constexpr int BM = fc_hopper::kBwdQRows;
    std::vector<int64_t> row0((size_t)p.B + 1), arow0((size_t)p.B + 1);
    int64_t rows = 0, arows = 0;
    for (int64_t b = 0; b < p.B; b++) {
        row0[(size_t)b] = rows, rows += p.batch[b].q_rows;
        arow0[(size_t)b] = arows, arows += (p.batch[b].q_rows + BM - 1) / BM * BM;
    }
    int2 *q_items = NULL, *kv_items = NULL;
    int n_q = 0, n_kv = 0;
    fc_cuda_facts facts;
    memset(&facts, 0, sizeof facts);
    void *encode = NULL;
    fc_status st = fc_cuda_tile_order(&p, BM, false, p.Nq, fc_cuda_q_tile_cost, &q_items, &n_q, "emu");
    if (st == FC_OK)
        st = fc_cuda_tile_order(&p, fc_hopper::kBwdKvRows, FC_TILES_KV, p.Nkv, fc_cuda_kv_tile_cost, &kv_items, &n_kv, "emu");
    if (st == FC_OK)
        st = fc_cuda_facts_plan(&facts, &p, "emu");
    if (st == FC_OK)
        st = fc_hopper::tma_encoder(&encode, "emu");
    /* the run's workspace: D poisoned (the D kernel writes every row the kernel reads), the
     * accumulators, turn counters and ticket zeroed */
    std::vector<float> dsum((size_t)(p.Nq * rows) + 1, NAN), acc((size_t)(p.Nq * arows * dclass) + 1, 0.0f);
    std::vector<unsigned> turns((size_t)(p.Nq * (arows / BM)) + 1, 0u), ticket(1, 0u);
    fc_cuda::BwdLaunch L;
    memset(&L, 0, sizeof L);
    L.parts = 1, L.row0 = row0.data(), L.dsum = dsum.data(), L.rows = rows;
    L.units = n_kv * (int)p.Nkv;
    L.dq_acc = acc.data(), L.arow0 = arow0.data(), L.arows = arows, L.dq_ld = dclass;
    L.turns = turns.data(), L.ticket = ticket.data();
    const bool bf = p.q.dtype == FC_BF16;
    if (st == FC_OK) {
        L.items = q_items, L.n_items = n_q;
        EmuMend mend(p, L, kv_items, n_kv, fc_hopper::kBwdKvRows, true);
        emu_scan(p, L, mend, config == 1);
        bf ? query_grid(p, L, fc_cuda::bwd_dsum_kernel<__nv_bfloat16, BM>) : query_grid(p, L, fc_cuda::bwd_dsum_kernel<__half, BM>);
        L.items = kv_items, L.n_items = n_kv;
        bool launched = false;
        const int grid = config == 0 ? 1 : 3; /* one persistent CTA, or more (the later ones find no units) */
        cta_emu::reverse_order() = config == 1;
        st = fc_hopper::bwd_run(encode, dclass, p, L, facts.reach, grid < L.units ? grid : L.units, 0, &launched, &why);
        if (st == FC_OK && !TC_CHECK(launched, "test bug: the run's views cannot be mapped (%s)", why ? why : ""))
            st = FC_ERR_BACKEND;
        TC_CHECK(ticket[0] >= (unsigned)L.units, "the ticket handed out every unit (%u of %d)", ticket[0], L.units);
        L.items = q_items, L.n_items = n_q;
        if (st == FC_OK)
            query_grid(p, L, fc_cuda::bwd_dq_convert_kernel<BM>);
        cta_emu::reverse_order() = false;
        if (st == FC_OK)
            emu_mend(p, L, mend, config == 1);
    }
    cudaFree(q_items), cudaFree(kv_items);
    fc_cuda_facts_free(&facts);
    return st;
}

static void run(const nt_case *c) { emu_bwd_run<emu_plan_run>(c, c->dt); }

/* Non-finite keys, queries and d_out at pairs some rows of their tiles do not see (semantics
 * §0.3; the mend, backward_fixup.cuh, keeps them out of dQ, dK and dV), and a −inf value. */
static void nonfinite_cases()
{
    static const nf_put causal[] = {{NF_K, 0, 1, 0, 150, 0, NAN}, {NF_Q, 1, 2, 30, 0, 3, NAN}, {NF_DOUT, 0, 0, 70, 0, 5, INFINITY},
                                    {NF_K, 1, 0, 0, 37, 2, INFINITY}, {NF_V, 0, 0, 0, 20, 4, -INFINITY}};
    nt_case c = hopper_case(6, FC_BF16, 64, 140, 200);
    c.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    tc_context("emulated sm_90a backward: NaN / inf keys, queries and d_out at pairs their tiles' rows do not see");
    emu_bwd_nonfinite<emu_plan_run>(&c, c.dt, causal, 5);
}

int main(int argc, char **argv)
{
    const bool quick = hopper_quick(argc, argv);
    hopper_first_cases("backward", run);
    nonfinite_cases();
    if (quick)
        return tc_summary("unit_hopper_bwd_emu");
    nt_case c = hopper_case(3, FC_BF16, 64, 70, 300);
    c.N2 = 1, c.window = fc_window_band(40, 20, FC_ALIGN_TOP_LEFT);
    tc_context("emulated sm_90a backward: MQA, a band, three kv tiles");
    run(&c);
    static const int sq[3] = {9, 0, 200}, skv[3] = {140, 7, 65};
    c = hopper_case(4, FC_F16, 128, 200, 140), c.B = 3, c.packed = true, c.sq = sq, c.skv = skv,
    c.window = fc_window_causal(FC_ALIGN_TOP_LEFT), c.prefix = true;
    tc_context("emulated sm_90a backward: TND (packed) varlen, a batch without rows, causal with prefixes");
    run(&c);
    static const int psq[2] = {130, 17}, pskv[2] = {33, 180};
    c = hopper_case(5, FC_BF16, 96, 130, 180), c.Dv = 72, c.sq = psq, c.skv = pskv, c.lens = true, c.stats_order = FC_STATS_TOKEN_MAJOR;
    tc_context("emulated sm_90a backward: padded varlen (lengths), D 96 Dv 72, token-major statistics");
    run(&c);
    return tc_summary("unit_hopper_bwd_emu");
}
