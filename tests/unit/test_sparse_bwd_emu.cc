/*
 * The CUDA sparse backward (src/cuda/sparse_bwd_kernel.cuh, sparse_index.cuh) run on the CPU,
 * unchanged, by the CTA emulator (cta_emu.h), on the backward harness (harness_bwd.h): each case's
 * forward runs on the CPU backend, the backward is lowered by a CPU plan (the fc_problem the CUDA
 * backend would get, host addresses), and the run's kernels go in the CUDA run's order over their
 * whole grids: the non-finite scan, dQ and D, the inverse index (blocks, count, scan, scatter,
 * sort), dK and dV, the non-finite mend (sparse_fixup.cuh).  The
 * harness checks the gradients against the sparse reference (§0.4 gradient tolerance, every
 * element written, nothing outside, rows that see nothing exactly 0) and against the CPU backend;
 * a second launch configuration (every grid run in reverse CTA order, the count and scatter with
 * one thread per CTA — so the scatter's atomics hand the rows out last to first — and the scan and
 * sort with 64 threads instead of 128) must give the same bits, and every bucket must come out
 * sorted.
 * Cases: GQA and MQA (more than 16 query heads per kv head), BSND-like padded batches with padding
 * rows, TND, paged keys, causal cuts, −1 entries, duplicates, blocks past the limit, rope, the
 * MLA shape (512 + 64, 512), fp16 and bf16, each head-dim class.
 */
#include "cta_emu.h"

#include "cuda/sparse_fixup.cuh"

#include <vector>

#include "emu_plan.h"
#include "sparse_emu.h"

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
    const cta_emu::OrderScope order(rev); /* the second configuration: each round's threads highest first too */
    const int per_cta = rev ? 1 : 128; /* reversed one-thread CTAs: the scatter takes the rows last to first */
    std::vector<unsigned char> bad((size_t)(p.Nq * L.rows + 1), 0xEEu);
    unsigned flag = 0;
    const fc_cuda::SfagMend M = {&flag, bad.data(), rows};
    each_cta((rows + fc_cuda::kWarps - 1) / fc_cuda::kWarps, rev, [&](int64_t x) {
        cta_emu::run_cta(fc_cuda::kThreads, cta_emu_dim3{(unsigned)x, 0, 0}, [&] { fc_cuda::sfag_nf_scan_kernel(p, L, M); });
    });
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
    each_cta(blocks * p.Nkv, rev, [&](int64_t x) {
        cta_emu::run_cta(fc_cuda::kThreads, cta_emu_dim3{(unsigned)(x / p.Nkv), (unsigned)(x % p.Nkv), 0},
                         [&] { fc_cuda::sfag_nf_dkv_kernel(p, L, M); });
    });
}

/* The kernels over the case's lowered backward problem (launch configuration 0 or 1). */
static fc_status emu_plan_run(const fc_problem &p, int config)
{
    if (!TC_CHECK(p.sparse.data && (p.q.dtype == FC_F16 || p.q.dtype == FC_BF16) && p.dq.dtype == p.q.dtype &&
                      p.dout.dtype == p.q.dtype && fc_sfa_class(p.Dqk, p.Dr, p.Dv) != 0 && p.softcap == 0.0f,
                  "test bug: a case the sparse backward kernels do not take"))
        return FC_ERR_BACKEND;
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
    L.f = sfa_launch_of(p);
    L.f.pair_out = false;
    L.vec_do = vec_ok(&p.dout, p.Dv);
    L.rows = rows, L.rowf = rowf.data();
    L.X = fc_cuda::SfagIndex{blk0.data(), count.data(), start.data(), list.data(), tmp.data(), nb};
    L.parts = (int)fc_sfag_parts(p.sparse.block_size, kv_rows);
    sparse_emu_dispatch(p, [&](auto inst) { launch<typename decltype(inst)::type, decltype(inst)::cls>(p, L, rows, nb, config); });
    /* the index: every bucket sorted, holding exactly the selections */
    bool sorted = true;
    for (int64_t x = 0; x < nb * p.Nkv; x++)
        for (int32_t e = start[(size_t)x] + 1; e < start[(size_t)x + 1]; e++)
            sorted = sorted && list[(size_t)e - 1] <= list[(size_t)e];
    TC_CHECK(sorted && blk0[(size_t)p.B] == nb, "the inverse index: buckets in row order, %lld blocks (want %lld)",
             (long long)blk0[(size_t)p.B], (long long)nb);
    return FC_OK;
}

static void run(const nt_case *c) { emu_bwd_run<emu_plan_run>(c, c->dt); }

int main(int argc, char **argv)
{
    sparse_emu_cases(argc > 1 && strcmp(argv[1], "quick") == 0, "backward", run);
    /* non-finite inputs (semantics §0.3): keys, queries and d_out in selected blocks, some at
     * positions past a token's causal cut (in its block, hidden from it) */
    nt_case c = nf_sparse_case(404, true);
    c.dt = c.out_dt = FC_BF16;
    static const nf_put puts[] = {{NF_K, 0, 0, 0, 17, 1, NAN}, {NF_Q, 1, 3, 2, 0, 0, NAN}, {NF_K, 1, 0, 0, 81, 0, NAN},
                                  {NF_DOUT, 0, 1, 3, 0, 2, INFINITY}, {NF_V, 1, 1, 0, 82, 0, -INFINITY}};
    tc_context("emulated sparse backward, causal: NaN / inf keys, queries, d_out and values in selected blocks");
    emu_bwd_nonfinite<emu_plan_run>(&c, c.dt, puts, 5);
    c.Dr = 8; /* the mend's rope parts: q_rope and k_rope read, dk_rope written */
    static const nf_put rope_puts[] = {{NF_K_ROPE, 0, 0, 0, 17, 1, NAN}, {NF_Q_ROPE, 1, 3, 2, 0, 7, NAN},
                                       {NF_Q_ROPE, 0, 1, 5, 0, 0, INFINITY}, {NF_Q_ROPE, 1, 0, 7, 0, 4, NAN},
                                       {NF_Q, 0, 2, 4, 0, 3, INFINITY}, {NF_V, 1, 1, 0, 82, 0, -INFINITY}};
    tc_context("emulated sparse backward, causal, rope 24 + 8: NaN / inf rope keys, rope queries, queries and values in "
               "selected blocks");
    emu_bwd_nonfinite<emu_plan_run>(&c, c.dt, rope_puts, 6);
    return tc_summary("unit_sparse_bwd_emu");
}
