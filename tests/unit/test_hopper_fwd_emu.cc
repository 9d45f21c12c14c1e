/*
 * The sm_90a forward (src/cuda/hopper/fwd_kernel.cuh: TMA, wgmma through CuTe's GMMA atoms,
 * mbarrier rings, warp specialisation, the persistent grid) run on the CPU, unchanged, by the CTA
 * emulator with its Hopper vocabulary (cta_emu_sm90.h), on the native harness: each case is lowered
 * by a CPU plan (the fc_problem the CUDA backend would get, host addresses); the Hopper plan and run
 * are the library's own host code (fwd_host.cu, tma_map.cu, launch.cu: the work list heaviest first,
 * the tensor maps through the emulator's encoder) on an emulated device of a few SMs, so every
 * persistent CTA takes several items and the rings wrap; the launchers below run the grid's CTAs one
 * after another.  The harness checks the output and statistics against the double-precision
 * reference and the CPU backend.  Both dtypes, classes 64 / 128 / 256, the three-warpgroup class-64
 * variant, ping-pong on and off, both epilogues (register stores; whole tiles through shared memory
 * and a TMA store) on every two-warpgroup case; odd sizes, Sq != Skv, causal / bands / prefixes,
 * GQA, packed and padded varlen (short batches: the edge fixer; tiles a TMA store must not take),
 * both statistics orders.
 */
#include "cta_emu_sm90.h"

#include "cuda/hopper/fwd_kernel.cuh"
#include "hopper_emu.h"

extern "C" {
#include "common/rng.h"
}

/* The grid's CTAs, one after another (each persistent over items w, w + grid, ...); the kernel the
 * library's launcher would start (TMA_OUT: the TMA-store epilogue's). */
static int g_launches_tma_out; /* launches of the TMA-store variant: the case ran the kernel it meant to */
template <typename T, int D, int WG, bool TMA_OUT = false>
static cudaError_t emu_launch(const fc_problem &p, const fc_hopper::FwdArgs &a, int grid)
{
    using Tr = fc_hopper::FwdTraits<T, D, WG>;
    static_assert(Tr::SMEM <= kCtaEmuSmem, "the emulator's shared memory holds the CTA's");
    g_launches_tma_out += TMA_OUT;
    for (int x = 0; x < grid; x++)
        cta_emu_sm90::run_cta(Tr::THREADS, cta_emu_dim3{(unsigned)x, 0, 0}, (unsigned)grid, [&] {
            if constexpr (TMA_OUT)
                fc_hopper::fwd_hopper_kernel_tma_store<T, D>(p, a);
            else
                fc_hopper::fwd_hopper_kernel<T, D, WG>(p, a);
        });
    return cudaSuccess;
}
#define EMU_LAUNCHER(dt, T, d, wg, suffix, tma_out)                                                                            \
    cudaError_t fc_hopper::fwd_launch_##dt##_d##d##suffix(const fc_problem &p, const FwdArgs &a, int grid, cudaStream_t) \
    {                                                                                                                          \
        return emu_launch<T, d, wg, tma_out>(p, a, grid);                                                                      \
    }
EMU_LAUNCHER(f16, __half, 64, 2, , false)
EMU_LAUNCHER(f16, __half, 128, 2, , false)
EMU_LAUNCHER(f16, __half, 256, 2, , false)
EMU_LAUNCHER(bf16, __nv_bfloat16, 64, 2, , false)
EMU_LAUNCHER(bf16, __nv_bfloat16, 128, 2, , false)
EMU_LAUNCHER(bf16, __nv_bfloat16, 256, 2, , false)
EMU_LAUNCHER(f16, __half, 64, 3, _wg3, false)
EMU_LAUNCHER(bf16, __nv_bfloat16, 64, 3, _wg3, false)
EMU_LAUNCHER(f16, __half, 64, 2, _tma, true)
EMU_LAUNCHER(f16, __half, 128, 2, _tma, true)
EMU_LAUNCHER(f16, __half, 256, 2, _tma, true)
EMU_LAUNCHER(bf16, __nv_bfloat16, 64, 2, _tma, true)
EMU_LAUNCHER(bf16, __nv_bfloat16, 128, 2, _tma, true)
EMU_LAUNCHER(bf16, __nv_bfloat16, 256, 2, _tma, true)

/* How the next case runs: SMs of the emulated device, the class-64 variant, ping-pong, the epilogue. */
static int g_sms = 3;
static bool g_wg3, g_pingpong = true, g_tma_out;

/* The library's Hopper plan and run of p on the emulator. */
static fc_status emu_plan_run(const fc_problem &p)
{
    fc_status st = FC_OK;
    const char *why = fc_hopper::fwd_unsupported(&p);
    cta_emu_device().sms = g_sms;
    setenv("FLASHC_CUDA_FWD_D64", g_wg3 ? "wg3" : "wg2", 1);
    setenv("FLASHC_CUDA_FWD_PINGPONG", g_pingpong ? "1" : "0", 1);
    setenv("FLASHC_CUDA_FWD_EPILOGUE", g_tma_out ? "tma" : "regs", 1);
    fc_hopper::FwdPlan hp;
    memset(&hp, 0, sizeof hp);
    fc_cuda_facts facts;
    memset(&facts, 0, sizeof facts);
    bool launched = false;
    if (!TC_CHECK(!why, "test bug: the sm_90a forward does not take the case (%s)", why ? why : ""))
        st = FC_ERR_BACKEND;
    if (st == FC_OK)
        st = fc_hopper::fwd_plan(&p, &hp);
    if (st == FC_OK)
        st = fc_cuda_facts_plan(&facts, &p, "emu");
    if (st == FC_OK)
        st = fc_hopper::fwd_run(hp, p, facts.reach, 0, &launched, &why);
    if (st == FC_OK && !TC_CHECK(launched, "test bug: the run's views cannot be mapped (%s)", why ? why : ""))
        st = FC_ERR_BACKEND;
    fc_cuda_facts_free(&facts);
    fc_hopper::fwd_destroy(&hp);
    return st;
}

/* nt_runner over the case's lowered problem, each case twice: the threads of each round by index,
 * then highest first (a role that skips a wait then runs before the one it should wait for); the
 * harness checks both runs, and that they agree bit for bit. */
static fc_status emu_runner(const nt_case *, const nt_data *, const fc_attention_desc *a, nt_bufs *, size_t *ws_bytes)
{
    static int calls;
    *ws_bytes = 0;
    cta_emu::reverse_order() = calls++ % 2 == 1;
    const fc_status st = emu_with_plan(a, NULL, [](const fc_problem &p) { return emu_plan_run(p); });
    cta_emu::reverse_order() = false;
    return st;
}

/* Each case with the register epilogue, then with the TMA store (the three-warpgroup variant has
 * only the first); the second must have run the variant's kernel and stored through the TMA. */
static void run(const nt_case *c)
{
    g_tma_out = false;
    nt_run_elsewhere(c, emu_runner, 2);
    if (g_wg3)
        return;
    char ctx[512];
    snprintf(ctx, sizeof ctx, "%s", tc_context_text());
    tc_context("%s; TMA-store epilogue", ctx);
    g_tma_out = true;
    const int launches = g_launches_tma_out;
    const uint64_t stores = cta_emu_sm90::st().tma_stores;
    nt_run_elsewhere(c, emu_runner, 2);
    TC_CHECK(g_launches_tma_out > launches && cta_emu_sm90::st().tma_stores > stores, "the TMA-store variant ran and stored tiles");
    g_tma_out = false;
    tc_context("%s", ctx);
}

int main(int argc, char **argv)
{
    const bool quick = hopper_quick(argc, argv);
    hopper_first_cases("forward", run);
    if (quick)
        return tc_summary("unit_hopper_fwd_emu");
    g_pingpong = false;
    nt_case c = hopper_case(3, FC_BF16, 128, 70, 200);
    c.N2 = 1, c.window = fc_window_band(40, 20, FC_ALIGN_TOP_LEFT);
    tc_context("emulated sm_90a forward: ping-pong off, MQA, a band");
    run(&c);
    g_pingpong = true;
    c = hopper_case(4, FC_F16, 256, 40, 150), c.Dv = 192, c.window = fc_window_causal(FC_ALIGN_TOP_LEFT), c.prefix = true;
    tc_context("emulated sm_90a forward: fp16 class 256, Dv 192, causal top-left, prefixes");
    run(&c);
    static const int sq[3] = {9, 0, 200}, skv[3] = {140, 7, 65};
    c = hopper_case(5, FC_BF16, 64, 200, 140), c.B = 3, c.packed = true, c.sq = sq, c.skv = skv,
    c.window = fc_window_band(60, 3, FC_ALIGN_TOP_LEFT);
    tc_context("emulated sm_90a forward: TND (packed) varlen, a batch without rows, a band");
    run(&c);
    g_wg3 = true;
    c.seed = 6, c.dt = c.out_dt = FC_F16, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("emulated sm_90a forward: class 64 on three warpgroups, packed varlen, causal");
    run(&c);
    c = hopper_case(7, FC_BF16, 64, 250, 170), c.N1 = 6, c.N2 = 2;
    tc_context("emulated sm_90a forward: class 64 on three warpgroups, GQA 3, two query tiles");
    run(&c);
    g_wg3 = false;
    static const int psq[2] = {130, 17}, pskv[2] = {33, 180};
    c = hopper_case(8, FC_F16, 128, 130, 180), c.sq = psq, c.skv = pskv, c.lens = true, c.stats_order = FC_STATS_TOKEN_MAJOR;
    tc_context("emulated sm_90a forward: padded varlen (lengths), short kv batches, token-major statistics");
    run(&c);
    c = hopper_case(9, FC_BF16, 96, 33, 257), c.Dv = 80, c.layout = NT_BSH, c.batch_windows = true;
    tc_context("emulated sm_90a forward: class 128 with D 96, Dv 80, BSH, per-batch windows");
    run(&c);
    /* long kv ranges (several tiles per item, both warpgroups' rows written): a ring stage released
     * too early is overwritten while a product still reads it */
    c = hopper_case(10, FC_F16, 128, 256, 600), c.B = 1, c.N1 = 2, c.N2 = 1;
    tc_context("emulated sm_90a forward: five kv tiles per item, two query tiles");
    run(&c);
    c = hopper_case(11, FC_BF16, 256, 130, 330), c.B = 1, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("emulated sm_90a forward: class 256, six kv tiles per item, causal");
    run(&c);
    g_wg3 = true, g_pingpong = false;
    c = hopper_case(12, FC_F16, 64, 200, 520), c.B = 1, c.N1 = 2, c.N2 = 2;
    tc_context("emulated sm_90a forward: class 64 on three warpgroups, ping-pong off, five kv tiles");
    run(&c);
    g_wg3 = false, g_pingpong = true;
    tc_rng r = tc_rng_seed(41);
    for (int x = 0; x < 3; x++) {
        static const int ds[] = {32, 64, 104, 128, 200, 256};
        c = hopper_case(100 + x, tc_rng_bool(&r, 0.5) ? FC_F16 : FC_BF16, ds[tc_rng_int(&r, 0, 5)], (int)tc_rng_int(&r, 1, 300),
                 (int)tc_rng_int(&r, 1, 500));
        c.N2 = (int)tc_rng_int(&r, 1, 2), c.N1 = c.N2 * (int)tc_rng_int(&r, 1, 3), c.B = (int)tc_rng_int(&r, 1, 2);
        static const nt_layout lays[] = {NT_BNSD, NT_BSND, NT_BSH, NT_SBH};
        c.layout = lays[tc_rng_int(&r, 0, 3)];
        if (tc_rng_bool(&r, 0.5))
            c.window = fc_window_causal(tc_rng_bool(&r, 0.5) ? FC_ALIGN_BOTTOM_RIGHT : FC_ALIGN_TOP_LEFT);
        g_sms = (int)tc_rng_int(&r, 1, 5), g_pingpong = tc_rng_bool(&r, 0.5);
        tc_context("emulated sm_90a forward: random case %d (D %d, Sq %d, Skv %d, %d SMs)", x, c.D, c.Sq, c.Skv, g_sms);
        run(&c);
    }
    return tc_summary("unit_hopper_fwd_emu");
}
