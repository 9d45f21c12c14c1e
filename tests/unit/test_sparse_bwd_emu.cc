/*
 * The CUDA sparse backward (src/cuda/sparse_bwd_kernel.cuh, sparse_index.cuh) run on the CPU,
 * unchanged, by the CTA emulator (cta_emu.h), on the backward harness (harness_bwd.h): each case's
 * forward runs on the CPU backend, the backward is lowered by a CPU plan (the fc_problem the CUDA
 * backend would get, host addresses), and the run's kernels go in the CUDA run's order over their
 * whole grids: dQ and D, the inverse index (blocks, count, scan, scatter, sort), dK and dV.  The
 * harness checks the gradients against the sparse reference (§0.4 gradient tolerance, every
 * element written, nothing outside, rows that see nothing exactly 0) and against the CPU backend;
 * a second launch configuration (every grid run in reverse CTA order — so the scatter's atomics
 * hand out other slots — and index kernels of 64 threads instead of 128) must give the same bits.
 * Cases: GQA and MQA (more than 16 query heads per kv head), BSND-like padded batches with padding
 * rows, TND, paged keys, causal cuts, −1 entries, duplicates, blocks past the limit, rope, the
 * MLA shape (512 + 64, 512), fp16 and bf16, each head-dim class.
 */
#include "cta_emu.h"

#include "cuda/sparse_bwd_kernel.cuh"

#include <vector>

extern "C" {
#include "common/check.h"
#include "common/rng.h"
#include "core/plan.h"
#include "harness.h"
#include "harness_bwd.h"
#include "harness_internal.h"
}

/* cp.async's rule of the CUDA plans (launch.cu fc_cuda_vec_ok): unit feature stride, 16-byte rows. */
static bool vec_ok(const fc_view *v, int64_t d)
{
    return v->se == 1 && d % 8 == 0 && (uintptr_t)v->data % 16 == 0 && v->sb % 8 == 0 && v->sn % 8 == 0 && v->ss % 8 == 0;
}

/* CTAs [0, n) in launch order, or the reverse. */
template <class F> static void each_cta(int64_t n, bool reverse, F f)
{
    for (int64_t x = 0; x < n; x++)
        f(reverse ? n - 1 - x : x);
}

template <int T> struct IndexKernels {
    static void scan(fc_cuda::SfagIndex X, int64_t nbk)
    {
        cta_emu::run_cta(T, cta_emu_dim3{0, 0, 0}, [&] { fc_cuda::sfag_scan_kernel<T>(X, nbk); });
    }
    static void sort(fc_cuda::SfagIndex X, int64_t nbk, bool rev)
    {
        each_cta(nbk, rev, [&](int64_t x) {
            cta_emu::run_cta(T, cta_emu_dim3{(unsigned)x, 0, 0}, [&] { fc_cuda::sfag_sort_kernel<T>(X); });
        });
    }
};

/* The run's kernels in the CUDA run's order (sparse_bwd.cu fc_sfag_launch) over host memory. */
template <typename T, int C>
static void launch(const fc_problem &p, fc_cuda::SfagLaunch L, int64_t rows, int64_t blocks, int config)
{
    using Sh = fc_cuda::SfagShape<C>;
    static_assert(fc_cuda::SfagDqSmem<Sh::DK, Sh::DV, Sh::BN>::bytes <= kCtaEmuSmem &&
                      fc_cuda::SfagKvSmem<Sh::DK, Sh::DV>::bytes <= kCtaEmuSmem,
                  "the emulator's shared memory holds the CTA's");
    const bool rev = config == 1;
    const int per_cta = rev ? 64 : 128;
    each_cta(rows * p.Nkv * L.f.head_tiles, rev, [&](int64_t x) {
        cta_emu::run_cta(128, cta_emu_dim3{(unsigned)(x / (p.Nkv * L.f.head_tiles)), (unsigned)(x % (p.Nkv * L.f.head_tiles)), 0},
                         [&] { fc_cuda::sparse_dq_kernel<T, Sh::DK, Sh::DV, Sh::BN>(p, L); });
    });
    const int64_t nbk = L.X.nb * p.Nkv, index_rows = rows * p.Nkv;
    if (nbk == 0)
        return;
    memset(L.X.count, 0, (size_t)nbk * sizeof(int32_t));
    cta_emu::run_cta(32, cta_emu_dim3{0, 0, 0}, [&] { fc_cuda::sfag_blocks_kernel(p, L.X); });
    const int64_t grid = index_rows > 0 ? (index_rows + per_cta - 1) / per_cta : 0;
    each_cta(grid, rev, [&](int64_t x) {
        cta_emu::run_cta(per_cta, cta_emu_dim3{(unsigned)x, 0, 0},
                         [&] { fc_cuda::sfag_count_kernel(p, L.X, rows, grid * per_cta, per_cta); });
    });
    rev ? IndexKernels<64>::scan(L.X, nbk) : IndexKernels<128>::scan(L.X, nbk);
    each_cta(grid, rev, [&](int64_t x) {
        cta_emu::run_cta(per_cta, cta_emu_dim3{(unsigned)x, 0, 0},
                         [&] { fc_cuda::sfag_scatter_kernel(p, L.X, rows, grid * per_cta, per_cta); });
    });
    rev ? IndexKernels<64>::sort(L.X, nbk, rev) : IndexKernels<128>::sort(L.X, nbk, rev);
    each_cta(blocks * L.parts * p.Nkv, rev, [&](int64_t x) {
        cta_emu::run_cta(128, cta_emu_dim3{(unsigned)(x / p.Nkv), (unsigned)(x % p.Nkv), 0},
                         [&] { fc_cuda::sparse_dkv_kernel<T, Sh::DK, Sh::DV>(p, L); });
    });
}

/* nt_bwd_runner_fn: the kernels over the case's lowered backward problem. */
static fc_status emu_runner(const nt_case *, const nt_data *, const fc_attention_desc *a, const struct nt_bufs *,
                            const fc_attention_grads *gr, const size_t *, int config)
{
    fc_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = FC_BACKEND_CPU;
    fc_plan *plan = NULL;
    fc_status st = fc_plan_create_backward(a, gr, &opt, &plan);
    if (st != FC_OK)
        return st;
    const fc_problem &p = plan->prob;
    const int cls = fc_sfa_class(p.Dqk, p.Dr, p.Dv);
    const bool bf = p.q.dtype == FC_BF16;
    if (!TC_CHECK(p.sparse.data && (p.q.dtype == FC_F16 || bf) && p.dq.dtype == p.q.dtype && p.dout.dtype == p.q.dtype &&
                      cls != 0 && p.softcap == 0.0f,
                  "test bug: a case the sparse backward kernels do not take")) {
        fc_plan_destroy(plan);
        return FC_ERR_BACKEND;
    }
    /* the sizes the CUDA plan gives its workspace (sparse_bwd.cu fc_sfag_layout) */
    const int64_t rows = fc_sfa_rows(p.batch, p.B);
    int64_t nb = 0, kv_rows = 0;
    for (int64_t b = 0; b < p.B; b++) {
        nb += fc_sfag_blocks(p.batch[b].kv_rows, p.sparse.block_size);
        kv_rows = p.batch[b].kv_rows > kv_rows ? p.batch[b].kv_rows : kv_rows;
    }
    const int64_t entries = rows * p.Nkv * p.sparse.count;
    std::vector<float> rowf((size_t)(p.Nq * rows * 4 + 1), NAN);
    std::vector<int64_t> blk0((size_t)p.B + 1, -1);
    std::vector<int32_t> count((size_t)(nb * p.Nkv + 1), -1), start((size_t)(nb * p.Nkv + 1), -1), list((size_t)entries + 1, -1),
        tmp((size_t)entries + 1, -1);
    fc_cuda::SfagLaunch L;
    L.f.head_tiles = (int)fc_sfa_head_tiles(p.G);
    L.f.rope_at = (int)fc_sfa_rope_at(p.Dqk);
    L.f.vec_q = vec_ok(&p.q, p.Dqk), L.f.vec_k = vec_ok(&p.k, p.Dqk), L.f.vec_v = vec_ok(&p.v, p.Dv);
    L.f.vec_qr = p.Dr > 0 && vec_ok(&p.q_rope, p.Dr), L.f.vec_kr = p.Dr > 0 && vec_ok(&p.k_rope, p.Dr);
    L.f.pair_out = false;
    L.vec_do = vec_ok(&p.dout, p.Dv);
    L.rows = rows, L.rowf = rowf.data();
    L.X = fc_cuda::SfagIndex{blk0.data(), count.data(), start.data(), list.data(), tmp.data(), nb};
    L.parts = (int)fc_sfag_parts(p.sparse.block_size, kv_rows);
    if (cls == 64)
        bf ? launch<__nv_bfloat16, 64>(p, L, rows, nb, config) : launch<__half, 64>(p, L, rows, nb, config);
    else if (cls == 128)
        bf ? launch<__nv_bfloat16, 128>(p, L, rows, nb, config) : launch<__half, 128>(p, L, rows, nb, config);
    else if (cls == 256)
        bf ? launch<__nv_bfloat16, 256>(p, L, rows, nb, config) : launch<__half, 256>(p, L, rows, nb, config);
    else
        bf ? launch<__nv_bfloat16, FC_SFA_MLA_DK>(p, L, rows, nb, config) : launch<__half, FC_SFA_MLA_DK>(p, L, rows, nb, config);
    /* the index: every bucket sorted, holding exactly the selections */
    bool sorted = true;
    for (int64_t x = 0; x < nb * p.Nkv; x++)
        for (int32_t e = start[(size_t)x] + 1; e < start[(size_t)x + 1]; e++)
            sorted = sorted && list[(size_t)e - 1] <= list[(size_t)e];
    TC_CHECK(sorted && blk0[(size_t)p.B] == nb, "the inverse index: buckets in row order, %lld blocks (want %lld)",
             (long long)blk0[(size_t)p.B], (long long)nb);
    fc_plan_destroy(plan);
    return FC_OK;
}

static void run(const nt_case *c)
{
    nt_bwd o = nt_bwd_default();
    o.grad_dt = c->dt;
    o.runner = emu_runner;
    o.runner_configs = 2;
    nt_bwd_run(c, &o);
}

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
    tc_context("emulated sparse backward: D 64, fp16, blocks of 16");
    run(&c);
    c = sparse_case(2, FC_BF16, 3, true, FC_I64);
    c.sparse.pad = 1, c.N1 = 6, c.N2 = 2, c.D = 24, c.Dr = 8, c.Dv = 16, c.stats_order = FC_STATS_HEAD_MAJOR, c.replicas = 8;
    tc_context("emulated sparse backward: causal, GQA 3, rope, Dv != D, 8 statistics replicas");
    run(&c);
    c = sparse_case(3, FC_F16, 5, true, FC_I32);
    c.B = 3, c.packed = true, c.sq = sq, c.skv = skv, c.stats_order = FC_STATS_KV_TOKEN_GROUP;
    tc_context("emulated sparse backward: TND (packed), a batch without rows");
    run(&c);
    c = sparse_case(4, FC_BF16, 7, false, FC_I32);
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 6, c.kv.spare_blocks = 2, c.kv.head_major_blocks = true;
    tc_context("emulated sparse backward: paged keys (head-major blocks)");
    run(&c);
    c = sparse_case(5, FC_F16, 4, true, FC_I64);
    c.pad = 3, c.dim_stride = 2, c.D = 40, c.Dv = 24, c.layout = NT_BNSD, c.mixed_layouts = true, c.lens = true;
    static const int sq2[2] = {5, 2}, skv2[2] = {15, 0};
    c.sq = sq2, c.skv = skv2;
    tc_context("emulated sparse backward: odd strides (element loads), padding rows, an empty kv batch");
    run(&c);
    c = sparse_case(6, FC_F16, 64, false, FC_I32);
    c.N1 = 18, c.N2 = 1, c.Sq = 3, c.Skv = 200, c.D = 100, c.Dv = 72, c.scale = -0.2, c.sparse.dup_p = 0.4;
    tc_context("emulated sparse backward: MQA 18 (two head tiles), class 128, negative scale, duplicates");
    run(&c);
    c = sparse_case(9, FC_BF16, 2, true, FC_I32);
    c.Sq = 12, c.Skv = 8, c.sparse.count = 7;
    tc_context("emulated sparse backward: causal with more rows than columns, blocks of 2");
    run(&c);
    if (!quick) {
        c = sparse_case(7, FC_BF16, 64, true, FC_I32);
        c.N1 = 4, c.N2 = 1, c.Sq = 2, c.Skv = 150, c.D = 256, c.Dv = 200, c.sparse.count = 3;
        tc_context("emulated sparse backward: class 256");
        run(&c);
        for (int x = 0; x < 2; x++) {
            c = sparse_case(8 + 10 * x, x ? FC_F16 : FC_BF16, 64, x == 0, FC_I32);
            c.N1 = 16, c.N2 = 1, c.Sq = 2, c.Skv = 140, c.D = 512, c.Dr = 64, c.Dv = 512, c.sparse.count = 3;
            if (x)
                c.packed = true, c.B = 2, c.sq = sq2, c.skv = skv2, c.stats_order = FC_STATS_KV_TOKEN_GROUP;
            tc_context("emulated sparse backward: MLA 512 + 64, Dv 512 (%s)", x ? "fp16, packed" : "bf16, causal");
            run(&c);
        }
        tc_rng r = tc_rng_seed(37);
        for (int x = 0; x < 6; x++) { /* small random cases over the classes 64 / 128 */
            static const int bss[] = {1, 2, 8, 33};
            c = sparse_case(100 + x, tc_rng_bool(&r, 0.5) ? FC_BF16 : FC_F16, bss[tc_rng_int(&r, 0, 3)], tc_rng_bool(&r, 0.5),
                            tc_rng_bool(&r, 0.5) ? FC_I64 : FC_I32);
            c.N2 = (int)tc_rng_int(&r, 1, 2), c.N1 = c.N2 * (int)tc_rng_int(&r, 1, 5);
            c.D = 8 * (int)tc_rng_int(&r, 1, 12), c.Dv = 8 * (int)tc_rng_int(&r, 1, 12), c.Dr = tc_rng_bool(&r, 0.3) ? 8 : 0;
            c.Sq = (int)tc_rng_int(&r, 1, 4), c.Skv = (int)tc_rng_int(&r, 1, 80), c.sparse.count = (int)tc_rng_int(&r, 1, 6);
            c.kv.mode = tc_rng_bool(&r, 0.3) ? NT_KV_PAGED : NT_KV_TENSOR, c.kv.block_size = (int)tc_rng_int(&r, 1, 9);
            tc_context("emulated sparse backward: random case %d", x);
            run(&c);
        }
    }
    return tc_summary("unit_sparse_bwd_emu");
}
