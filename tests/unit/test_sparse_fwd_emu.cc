/*
 * The CUDA sparse forward kernel (src/cuda/sparse_fwd_kernel.cuh) run on the CPU, unchanged, by the
 * CTA emulator (cta_emu.h: every thread a coroutine, warp intrinsics and barriers as exchanges,
 * ldmatrix / mma.sync / cp.async spelled out from the PTX ISA), on the native harness: each case
 * is lowered by a CPU plan (the fc_problem the CUDA backend would get, host addresses), every CTA
 * of the kernel's grid runs, and the harness checks the outputs against the sparse reference
 * (values within §0.4, empty and padding rows exact, statistics replicas, nothing written outside
 * the outputs) and against the CPU backend.  So the walk, the row gathers (strided, packed, paged,
 * element loads), the fragment layouts, the online softmax and the stores are checked without a
 * GPU; what only a GPU shows (timing, the real cp.async and barriers) is tests/cuda/test_sparse.c's.
 */
#include "cta_emu.h"

#include "cuda/sparse_fwd_kernel.cuh"

extern "C" {
#include "common/check.h"
#include "common/rng.h"
#include "core/plan.h"
#include "harness.h"
#include "harness_internal.h"
}


/* cp.async's rule of the CUDA plans (launch.cu fc_cuda_vec_ok): unit feature stride, 16-byte rows. */
static bool vec_ok(const fc_view *v, int64_t d)
{
    return v->se == 1 && d % 8 == 0 && (uintptr_t)v->data % 16 == 0 && v->sb % 8 == 0 && v->sn % 8 == 0 && v->ss % 8 == 0;
}

template <typename T, int C> static void launch(const fc_problem &p, const fc_cuda::SfaLaunch &L, int64_t rows)
{
    using Sh = fc_cuda::SfaShape<C>;
    static_assert(fc_cuda::SfaSmem<Sh::DK, Sh::DV, Sh::BN>::bytes <= kCtaEmuSmem, "the emulator's shared memory holds the CTA's");
    for (int64_t x = 0; x < rows; x++)
        for (int64_t y = 0; y < p.Nkv * L.head_tiles; y++)
            cta_emu::run_cta(32 * Sh::WARPS, cta_emu_dim3{(unsigned)x, (unsigned)y, 0},
                             [&] { fc_cuda::sparse_fwd_kernel<T, Sh::DK, Sh::DV, Sh::BN, Sh::WARPS>(p, L); });
}

/* nt_runner: the kernel's grid on the emulator over the case's lowered problem. */
static fc_status emu_runner(const nt_case *, const nt_data *, const fc_attention_desc *a, nt_bufs *, size_t *ws_bytes)
{
    *ws_bytes = 0;
    fc_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = FC_BACKEND_CPU;
    fc_plan *plan = NULL;
    fc_status st = fc_plan_create(a, &opt, &plan);
    if (st != FC_OK)
        return st;
    const fc_problem &p = plan->prob;
    const int cls = fc_sfa_class(p.Dqk, p.Dr, p.Dv);
    fc_cuda::SfaLaunch L;
    L.head_tiles = (int)fc_sfa_head_tiles(p.G);
    L.rope_at = (int)fc_sfa_rope_at(p.Dqk);
    L.vec_q = vec_ok(&p.q, p.Dqk), L.vec_k = vec_ok(&p.k, p.Dqk), L.vec_v = vec_ok(&p.v, p.Dv);
    L.vec_qr = p.Dr > 0 && vec_ok(&p.q_rope, p.Dr), L.vec_kr = p.Dr > 0 && vec_ok(&p.k_rope, p.Dr);
    L.pair_out = p.out.se == 1 && (uintptr_t)p.out.data % 4 == 0 && p.out.sb % 2 == 0 && p.out.sn % 2 == 0 && p.out.ss % 2 == 0;
    const int64_t rows = fc_sfa_rows(p.batch, p.B);
    const bool bf = p.q.dtype == FC_BF16;
    if (!TC_CHECK(p.sparse.data && (p.q.dtype == FC_F16 || bf) && p.out.dtype == p.q.dtype && cls != 0,
                  "test bug: a case the sparse kernel does not take"))
        st = FC_ERR_BACKEND;
    else if (cls == 64)
        bf ? launch<__nv_bfloat16, 64>(p, L, rows) : launch<__half, 64>(p, L, rows);
    else if (cls == 128)
        bf ? launch<__nv_bfloat16, 128>(p, L, rows) : launch<__half, 128>(p, L, rows);
    else if (cls == 256)
        bf ? launch<__nv_bfloat16, 256>(p, L, rows) : launch<__half, 256>(p, L, rows);
    else
        bf ? launch<__nv_bfloat16, FC_SFA_MLA_DK>(p, L, rows) : launch<__half, FC_SFA_MLA_DK>(p, L, rows);
    fc_plan_destroy(plan);
    return st;
}

/* The case on the CPU backend and on the emulated kernel: each against the reference, the kernel
 * against the CPU. */
static void run(const nt_case *c) { nt_run_elsewhere(c, emu_runner, 1); }

/* The sparse fixture in dtype dt, 5 rows over 3·bs + 3 columns, 5 entries per row, D 64. */
static nt_case sparse_case(uint64_t seed, fc_dtype dt, int bs, bool causal, fc_dtype idt)
{
    nt_case c = nt_sparse_fixture(seed, bs, causal, idt);
    c.dt = c.out_dt = dt;
    c.D = 64, c.Dv = 64, c.Sq = 5, c.Skv = 3 * bs + 3, c.sparse.count = 5;
    return c;
}

int main(int argc, char **argv)
{
    const bool quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    static const int sq[3] = {4, 0, 5}, skv[3] = {40, 7, 90};
    nt_case c = sparse_case(1, FC_F16, 16, false, FC_I32);
    tc_context("emulated sparse forward: D 64, fp16, blocks of 16 (more than a tile of positions)");
    run(&c);
    c = sparse_case(2, FC_BF16, 3, true, FC_I64);
    c.sparse.pad = 1, c.N1 = 6, c.N2 = 2, c.D = 24, c.Dr = 8, c.Dv = 16, c.stats_order = FC_STATS_HEAD_MAJOR, c.replicas = 8;
    tc_context("emulated sparse forward: causal, GQA 3, rope, Dv != D, 8 statistics replicas");
    run(&c);
    c = sparse_case(3, FC_F16, 5, true, FC_I32);
    c.B = 3, c.packed = true, c.sq = sq, c.skv = skv, c.stats_order = FC_STATS_KV_TOKEN_GROUP;
    tc_context("emulated sparse forward: TND (packed), a batch without rows");
    run(&c);
    c = sparse_case(4, FC_BF16, 7, false, FC_I32);
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 6, c.kv.spare_blocks = 2, c.kv.head_major_blocks = true;
    tc_context("emulated sparse forward: PA_BSND (paged, head-major blocks)");
    run(&c);
    c = sparse_case(5, FC_F16, 4, true, FC_I64);
    c.pad = 3, c.dim_stride = 2, c.D = 40, c.Dv = 24, c.layout = NT_BNSD, c.mixed_layouts = true, c.lens = true;
    static const int sq2[2] = {5, 2}, skv2[2] = {15, 0};
    c.sq = sq2, c.skv = skv2;
    tc_context("emulated sparse forward: odd strides (element loads), padding rows, an empty kv batch");
    run(&c);
    c = sparse_case(6, FC_F16, 64, false, FC_I32);
    c.N1 = 18, c.N2 = 1, c.Sq = 2, c.Skv = 200, c.D = 100, c.Dv = 72, c.scale = -0.2;
    tc_context("emulated sparse forward: MQA 18 (two head tiles), class 128, negative scale");
    run(&c);
    if (!quick) {
        c = sparse_case(7, FC_BF16, 64, true, FC_I32);
        c.N1 = 4, c.N2 = 1, c.Sq = 2, c.Skv = 150, c.D = 256, c.Dv = 200, c.sparse.count = 3;
        tc_context("emulated sparse forward: class 256");
        run(&c);
        c = sparse_case(8, FC_BF16, 64, true, FC_I32);
        c.N1 = 16, c.N2 = 1, c.Sq = 2, c.Skv = 140, c.D = 512, c.Dr = 64, c.Dv = 512, c.sparse.count = 3;
        tc_context("emulated sparse forward: MLA 512 + 64, Dv 512");
        run(&c);
        tc_rng r = tc_rng_seed(31);
        for (int x = 0; x < 4; x++) { /* small random cases over the classes 64 / 128 */
            static const int bss[] = {1, 2, 8, 33};
            c = sparse_case(100 + x, tc_rng_bool(&r, 0.5) ? FC_BF16 : FC_F16, bss[tc_rng_int(&r, 0, 3)], tc_rng_bool(&r, 0.5),
                            tc_rng_bool(&r, 0.5) ? FC_I64 : FC_I32);
            c.N2 = (int)tc_rng_int(&r, 1, 2), c.N1 = c.N2 * (int)tc_rng_int(&r, 1, 5);
            c.D = 8 * (int)tc_rng_int(&r, 1, 12), c.Dv = 8 * (int)tc_rng_int(&r, 1, 12), c.Dr = tc_rng_bool(&r, 0.3) ? 8 : 0;
            c.Sq = (int)tc_rng_int(&r, 1, 4), c.Skv = (int)tc_rng_int(&r, 1, 80), c.sparse.count = (int)tc_rng_int(&r, 1, 6);
            c.kv.mode = tc_rng_bool(&r, 0.3) ? NT_KV_PAGED : NT_KV_TENSOR, c.kv.block_size = (int)tc_rng_int(&r, 1, 9);
            tc_context("emulated sparse forward: random case %d", x);
            run(&c);
        }
    }
    return tc_summary("unit_sparse_fwd_emu");
}
