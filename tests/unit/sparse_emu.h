/*
 * What the emulated sparse kernels' tests share (test_sparse_fwd_emu.cc, test_sparse_bwd_emu.cc):
 * the launch facts a CUDA plan would give the forward's kernel, the kernel class dispatch, and the
 * named cases every sparse kernel runs (each test passes its own run).  Include after cta_emu.h
 * and the kernels' header.
 */
#ifndef FLASHC_TESTS_UNIT_SPARSE_EMU_H
#define FLASHC_TESTS_UNIT_SPARSE_EMU_H

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

/* The forward kernel's launch facts for p (sparse_fwd.cu fc_cuda_sfa_run). */
static fc_cuda::SfaLaunch sfa_launch_of(const fc_problem &p)
{
    fc_cuda::SfaLaunch L;
    L.head_tiles = (int)fc_sfa_head_tiles(p.G);
    L.rope_at = (int)fc_sfa_rope_at(p.Dqk);
    L.vec_q = vec_ok(&p.q, p.Dqk), L.vec_k = vec_ok(&p.k, p.Dqk), L.vec_v = vec_ok(&p.v, p.Dv);
    L.vec_qr = p.Dr > 0 && vec_ok(&p.q_rope, p.Dr), L.vec_kr = p.Dr > 0 && vec_ok(&p.k_rope, p.Dr);
    L.pair_out = p.out.se == 1 && (uintptr_t)p.out.data % 4 == 0 && p.out.sb % 2 == 0 && p.out.sn % 2 == 0 && p.out.ss % 2 == 0;
    return L;
}

/* An instantiation: operand type T, kernel class C. */
template <typename T, int C> struct SparseInst {
    using type = T;
    static constexpr int cls = C;
};

/* f(SparseInst<T, C>{}) for p's dtype and kernel class (sparse_plan.h fc_sfa_class). */
template <class F> static void sparse_emu_dispatch(const fc_problem &p, F f)
{
    const int cls = fc_sfa_class(p.Dqk, p.Dr, p.Dv);
    const bool bf = p.q.dtype == FC_BF16;
    if (cls == 64)
        bf ? f(SparseInst<__nv_bfloat16, 64>{}) : f(SparseInst<__half, 64>{});
    else if (cls == 128)
        bf ? f(SparseInst<__nv_bfloat16, 128>{}) : f(SparseInst<__half, 128>{});
    else if (cls == 256)
        bf ? f(SparseInst<__nv_bfloat16, 256>{}) : f(SparseInst<__half, 256>{});
    else
        bf ? f(SparseInst<__nv_bfloat16, FC_SFA_MLA_DK>{}) : f(SparseInst<__half, FC_SFA_MLA_DK>{});
}

/* The sparse fixture in dtype dt, 5 rows over 3·bs + 3 columns, 5 entries per row, D 64. */
static nt_case sparse_case(uint64_t seed, fc_dtype dt, int bs, bool causal, fc_dtype idt)
{
    nt_case c = nt_sparse_fixture(seed, bs, causal, idt);
    c.dt = c.out_dt = dt;
    c.D = 64, c.Dv = 64, c.Sq = 5, c.Skv = 3 * bs + 3, c.sparse.count = 5;
    return c;
}

/* The named cases (quick: the first nine), then small random ones over the classes 64 / 128;
 * `what` names the kernels in each case's context. */
template <class Run> static void sparse_emu_cases(bool quick, const char *what, Run run)
{
    static const int sq[3] = {4, 0, 5}, skv[3] = {40, 7, 90}, sq2[2] = {5, 2}, skv2[2] = {15, 0};
    nt_case c = sparse_case(1, FC_F16, 16, false, FC_I32);
    tc_context("emulated sparse %s: D 64, fp16, blocks of 16 (more than a tile of positions)", what);
    run(&c);
    c = sparse_case(2, FC_BF16, 3, true, FC_I64);
    c.sparse.pad = 1, c.N1 = 6, c.N2 = 2, c.D = 24, c.Dr = 8, c.Dv = 16, c.stats_order = FC_STATS_HEAD_MAJOR, c.replicas = 8;
    tc_context("emulated sparse %s: causal, GQA 3, rope, Dv != D, 8 statistics replicas", what);
    run(&c);
    c = sparse_case(3, FC_F16, 5, true, FC_I32);
    c.B = 3, c.packed = true, c.sq = sq, c.skv = skv, c.stats_order = FC_STATS_KV_TOKEN_GROUP;
    tc_context("emulated sparse %s: TND (packed), a batch without rows", what);
    run(&c);
    c = sparse_case(4, FC_BF16, 7, false, FC_I32);
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 6, c.kv.spare_blocks = 2, c.kv.head_major_blocks = true;
    tc_context("emulated sparse %s: PA_BSND (paged, head-major blocks)", what);
    run(&c);
    c = sparse_case(5, FC_F16, 4, true, FC_I64);
    c.pad = 3, c.dim_stride = 2, c.D = 40, c.Dv = 24, c.layout = NT_BNSD, c.mixed_layouts = true, c.lens = true;
    c.sq = sq2, c.skv = skv2;
    tc_context("emulated sparse %s: odd strides (element loads), padding rows, an empty kv batch", what);
    run(&c);
    c = sparse_case(6, FC_F16, 64, false, FC_I32);
    c.N1 = 18, c.N2 = 1, c.Sq = 3, c.Skv = 200, c.D = 100, c.Dv = 72, c.scale = -0.2, c.sparse.dup_p = 0.4;
    tc_context("emulated sparse %s: MQA 18 (two head tiles), class 128, negative scale, duplicates", what);
    run(&c);
    c = sparse_case(9, FC_BF16, 2, true, FC_I32);
    c.Sq = 12, c.Skv = 8, c.sparse.count = 7;
    tc_context("emulated sparse %s: causal with more rows than columns, blocks of 2", what);
    run(&c);
    c = sparse_case(10, FC_F16, 2, true, FC_I32);
    c.Sq = 6, c.Skv = 150, c.sparse.count = 70, c.sparse.dup_p = 0.2;
    tc_context("emulated sparse %s: index rows of 70 entries (the walk's later rounds of 32), causal, duplicates", what);
    run(&c);
    c = sparse_case(11, FC_BF16, 4, false, FC_I32);
    c.N1 = 2, c.N2 = 1, c.Sq = 200, c.Skv = 40, c.sparse.count = 12, c.sparse.dup_p = 0.3;
    tc_context("emulated sparse %s: 200 rows over 10 blocks (buckets of more entries than the index CTA's threads)", what);
    run(&c);
    if (quick)
        return;
    c = sparse_case(7, FC_BF16, 64, true, FC_I32);
    c.N1 = 4, c.N2 = 1, c.Sq = 2, c.Skv = 150, c.D = 256, c.Dv = 200, c.sparse.count = 3;
    tc_context("emulated sparse %s: class 256", what);
    run(&c);
    for (int x = 0; x < 2; x++) {
        c = sparse_case(8 + 10 * x, x ? FC_F16 : FC_BF16, 64, x == 0, FC_I32);
        c.N1 = 16, c.N2 = 1, c.Sq = 2, c.Skv = 140, c.D = 512, c.Dr = 64, c.Dv = 512, c.sparse.count = 3;
        if (x)
            c.packed = true, c.B = 2, c.sq = sq2, c.skv = skv2, c.stats_order = FC_STATS_KV_TOKEN_GROUP;
        tc_context("emulated sparse %s: MLA 512 + 64, Dv 512 (%s)", what, x ? "fp16, packed" : "bf16, causal");
        run(&c);
    }
    tc_rng r = tc_rng_seed(31);
    for (int x = 0; x < 6; x++) {
        static const int bss[] = {1, 2, 8, 33};
        c = sparse_case(100 + x, tc_rng_bool(&r, 0.5) ? FC_BF16 : FC_F16, bss[tc_rng_int(&r, 0, 3)], tc_rng_bool(&r, 0.5),
                        tc_rng_bool(&r, 0.5) ? FC_I64 : FC_I32);
        c.N2 = (int)tc_rng_int(&r, 1, 2), c.N1 = c.N2 * (int)tc_rng_int(&r, 1, 5);
        c.D = 8 * (int)tc_rng_int(&r, 1, 12), c.Dv = 8 * (int)tc_rng_int(&r, 1, 12), c.Dr = tc_rng_bool(&r, 0.3) ? 8 : 0;
        c.Sq = (int)tc_rng_int(&r, 1, 4), c.Skv = (int)tc_rng_int(&r, 1, 80), c.sparse.count = (int)tc_rng_int(&r, 1, 6);
        c.kv.mode = tc_rng_bool(&r, 0.3) ? NT_KV_PAGED : NT_KV_TENSOR, c.kv.block_size = (int)tc_rng_int(&r, 1, 9);
        tc_context("emulated sparse %s: random case %d", what, x);
        run(&c);
    }
}

#endif /* FLASHC_TESTS_UNIT_SPARSE_EMU_H */
