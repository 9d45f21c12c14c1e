/*
 * The CUDA sparse backward (SparseFlashAttentionGrad): what it covers (the forward's operands and
 * features, gradients in the operands' dtype), the plan (per-batch facts, the kernel class, the
 * workspace's layout) and the run on its stream:
 *   the non-finite scan → dQ, D and the rows' facts (sparse_dq_kernel) → the inverse index
 *   (sparse_index.cuh: blocks, count, scan, scatter, sort) → dK and dV (sparse_dkv_kernel) → the
 *   non-finite mend (sparse_fixup.cuh).
 * Workspace: per query row and head the statistics as the kernels use them and D (4 floats) and the
 * mend's byte, the index (two int32 per index entry, one per bucket and one per batch) and room for
 * a run's own facts: O(index), nothing O(Sq·Skv).  Instantiations:
 * fp16 and bf16 × classes 64 / 128 / 256 and MLA (576 / 512), nothing else.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuda.h"
#include "launch.h"
#include "plan_facts.h"
#include "sparse_fixup.cuh"
#include "sparse_run.h"

using namespace fc_cuda;

struct fc_cuda_sfag {
    fc_cuda_facts facts;
    int dclass;
    int64_t kv_cap;              /* as the forward's: a paged run's kv lengths at most this */
    int64_t rows, nb, entries;   /* the workspace holds this many query rows, blocks per kv head, index entries */
    size_t rowf_at, blk0_at, count_at, start_at, list_at, tmp_at, mend_at, bytes; /* mend_at: its flag, then its bytes */
};

static const char *const kWho = "fc_cuda_sfag_run";

extern "C" const char *fc_cuda_sfag_unsupported(const fc_problem *p)
{
    const char *fwd = fc_cuda_sfa_unsupported(p); /* the operands and features the scores need */
    if (fwd)
        return fwd;
    if (p->softcap > 0.0f)
        return "sparse selection with a softcap in the backward";
    return fc_cuda_grads_unsupported(p);
}

template <int C> static constexpr size_t fc_sfag_dq_smem() { return SfagDqSmem<SfagShape<C>::DK, SfagShape<C>::DV, SfagShape<C>::BN>::bytes; }
template <int C> static constexpr size_t fc_sfag_kv_smem() { return SfagKvSmem<SfagShape<C>::DK, SfagShape<C>::DV>::bytes; }
template <int C> static constexpr size_t fc_sfag_smem_of()
{
    return fc_sfag_dq_smem<C>() > fc_sfag_kv_smem<C>() ? fc_sfag_dq_smem<C>() : fc_sfag_kv_smem<C>();
}
static size_t fc_sfag_smem(int dclass)
{
    return dclass == 64 ? fc_sfag_smem_of<64>() : dclass == 128 ? fc_sfag_smem_of<128>() : dclass == 256 ? fc_sfag_smem_of<256>()
                                                                                                    : fc_sfag_smem_of<FC_SFA_MLA_DK>();
}

extern "C" void fc_cuda_sfag_destroy(fc_cuda_sfag *plan)
{
    if (!plan)
        return;
    fc_cuda_facts_free(&plan->facts);
    free(plan);
}

static size_t fc_align256(size_t x) { return (x + 255) & ~(size_t)255; }

/* The workspace's layout for the plan's sizes; FC_ERR_BACKEND when the index or its buckets would
 * take 2^31 entries or more (int32 lists), or a size overflows. */
static fc_status fc_sfag_layout(fc_cuda_sfag *plan, const fc_problem *p)
{
    const char *who = "fc_cuda_sfag_plan";
    plan->rows = fc_sfa_rows(p->batch, p->B);
    plan->nb = 0;
    for (int64_t b = 0; b < p->B; b++)
        plan->nb += fc_sfag_blocks(p->batch[b].kv_rows, p->sparse.block_size); /* each < kv_rows + 1 */
    int64_t buckets = 0, rowf = 0;
    if (__builtin_mul_overflow(plan->rows, p->Nkv, &plan->entries) ||
        __builtin_mul_overflow(plan->entries, p->sparse.count, &plan->entries) || plan->entries >= INT32_MAX ||
        __builtin_mul_overflow(plan->nb, p->Nkv, &buckets) || buckets >= INT32_MAX ||
        __builtin_mul_overflow(plan->rows, p->Nq, &rowf) || rowf > INT64_MAX / 32)
        return fc_fail(FC_ERR_BACKEND, "%s: the sparse backward's index would hold 2^31 entries or more (%lld query rows × %lld kv "
                                       "heads × %lld entries, %lld blocks)",
                       who, (long long)plan->rows, (long long)p->Nkv, (long long)p->sparse.count, (long long)plan->nb);
    size_t at = fc_align256(fc_cuda_facts_bytes(p));
    plan->rowf_at = at, at = fc_align256(at + (size_t)rowf * 4 * sizeof(float));
    plan->blk0_at = at, at = fc_align256(at + (size_t)(p->B + 1) * sizeof(int64_t));
    plan->count_at = at, at = fc_align256(at + (size_t)buckets * sizeof(int32_t));
    plan->start_at = at, at = fc_align256(at + (size_t)(buckets + 1) * sizeof(int32_t));
    plan->list_at = at, at = fc_align256(at + (size_t)plan->entries * sizeof(int32_t));
    plan->tmp_at = at, at = fc_align256(at + (size_t)plan->entries * sizeof(int32_t));
    plan->mend_at = at, at = fc_align256(at + 256 + (size_t)rowf); /* the non-finite mend (sparse_fixup.cuh) */
    plan->bytes = at;
    return FC_OK;
}

extern "C" fc_status fc_cuda_sfag_plan(const fc_problem *p, fc_cuda_sfag **out)
{
    const int dclass = fc_sfa_class(p->Dqk, p->Dr, p->Dv);
    fc_status st = fc_sfa_device_fits(fc_sfag_smem(dclass), "fc_cuda_sfag_plan");
    if (st != FC_OK)
        return st;
    fc_cuda_sfag *plan = (fc_cuda_sfag *)calloc(1, sizeof *plan);
    if (!plan)
        return fc_fail(FC_ERR_NO_MEMORY, "fc_cuda_sfag_plan: out of host memory");
    plan->dclass = dclass;
    plan->kv_cap = fc_sfa_kv_cap(p);
    st = fc_sfag_layout(plan, p);
    if (st == FC_OK)
        st = fc_cuda_facts_plan(&plan->facts, p, "fc_cuda_sfag_plan");
    if (st != FC_OK) {
        fc_cuda_sfag_destroy(plan);
        return st;
    }
    *out = plan;
    return FC_OK;
}

extern "C" size_t fc_cuda_sfag_workspace(const fc_cuda_sfag *plan) { return plan->bytes; }

template <typename K> static fc_status fc_sfag_smem_attr(K kernel, size_t smem)
{
    const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    return err == cudaSuccess ? FC_OK : fc_cuda_err(err, "fc_cuda_sfag_run: shared memory of the sparse backward kernels");
}

/* The launches of one run: the non-finite scan, dQ and D, the inverse index, dK and dV, the
 * non-finite mend (sparse_fixup.cuh). */
template <typename T, int C>
static fc_status fc_sfag_launch(const fc_problem &p, const SfagLaunch &L, const SfagMend &M, int64_t rows, int64_t blocks,
                                cudaStream_t s)
{
    using Sh = SfagShape<C>;
    constexpr int kIndexThreads = 128;
    auto dq = sparse_dq_kernel<T, Sh::DK, Sh::DV, Sh::BN>;
    auto dkv = sparse_dkv_kernel<T, Sh::DK, Sh::DV>;
    fc_status st = fc_sfag_smem_attr(dq, fc_sfag_dq_smem<C>());
    if (st == FC_OK)
        st = fc_sfag_smem_attr(dkv, fc_sfag_kv_smem<C>());
    if (st != FC_OK)
        return st;
    const int64_t index_rows = rows * p.Nkv, nbk = L.X.nb * p.Nkv;
    const int64_t ctas = index_rows > 0 ? fc_ceil_div(index_rows, kIndexThreads) : 0, grid = ctas < 4096 ? ctas : 4096;
    const cudaError_t cleared = cudaMemsetAsync(M.flag, 0, sizeof *M.flag, s);
    if (cleared != cudaSuccess)
        return fc_cuda_err(cleared, "fc_cuda_sfag_run: clearing the non-finite flag");
    if (rows > 0)
        sfag_nf_scan_kernel<<<(unsigned)fc_ceil_div(rows, kWarps), kThreads, 0, s>>>(p, L, M);
    if (rows > 0 && p.Nkv > 0)
        dq<<<dim3((unsigned)rows, (unsigned)(p.Nkv * L.f.head_tiles)), 128, fc_sfag_dq_smem<C>(), s>>>(p, L);
    cudaError_t err = nbk > 0 ? cudaMemsetAsync(L.X.count, 0, (size_t)nbk * sizeof(int32_t), s) : cudaSuccess;
    if (err == cudaSuccess && nbk > 0) {
        sfag_blocks_kernel<<<1, 32, 0, s>>>(p, L.X);
        if (grid > 0)
            sfag_count_kernel<<<(unsigned)grid, kIndexThreads, 0, s>>>(p, L.X, rows, grid * kIndexThreads, kIndexThreads);
        sfag_scan_kernel<kIndexThreads><<<1, kIndexThreads, 0, s>>>(L.X, nbk);
        if (grid > 0)
            sfag_scatter_kernel<<<(unsigned)grid, kIndexThreads, 0, s>>>(p, L.X, rows, grid * kIndexThreads, kIndexThreads);
        sfag_sort_kernel<kIndexThreads><<<(unsigned)nbk, kIndexThreads, 0, s>>>(L.X);
        if (blocks > 0 && L.parts > 0)
            dkv<<<dim3((unsigned)(blocks * L.parts), (unsigned)p.Nkv), 128, fc_sfag_kv_smem<C>(), s>>>(p, L);
        if (blocks > 0)
            sfag_nf_dkv_kernel<<<dim3((unsigned)blocks, (unsigned)p.Nkv), kThreads, 0, s>>>(p, L, M);
    }
    if (err == cudaSuccess)
        err = cudaGetLastError();
    return err == cudaSuccess ? FC_OK : fc_cuda_err(err, "fc_cuda_sfag_run: sparse backward launch");
}

extern "C" fc_status fc_cuda_sfag_run(const fc_cuda_sfag *plan, const fc_problem *run, fc_cuda_lengths lens, void *workspace,
                                      void *stream)
{
    fc_problem p = *run;
    SfaRunCheck check;
    const cudaStream_t s = (cudaStream_t)stream;
    fc_status st = fc_sfa_run_facts(&plan->facts, plan->kv_cap, run, lens, workspace, s, kWho, &p.batch, &check);
    if (st == FC_OK && (check.rows > plan->rows || check.blocks > plan->nb))
        st = fc_fail(FC_ERR_INVALID_ARG, "%s: the run's lengths give %lld query rows and %lld key blocks, the plan's workspace holds "
                                         "%lld and %lld",
                     kWho, (long long)check.rows, (long long)check.blocks, (long long)plan->rows, (long long)plan->nb);
    const int64_t parts = fc_sfag_parts(p.sparse.block_size, check.kv_rows);
    if (st == FC_OK && check.blocks * parts >= INT32_MAX) /* blocks < 2^31, parts < 2^26 */
        st = fc_fail(FC_ERR_BACKEND, "%s: %lld key blocks of %lld parts, more than one launch takes", kWho, (long long)check.blocks,
                     (long long)parts);
    if (st == FC_OK && !workspace && plan->bytes > 0)
        st = fc_fail(FC_ERR_WORKSPACE, "%s: the sparse backward needs its workspace (%zu bytes)", kWho, plan->bytes);
    if (st != FC_OK)
        return st;
    char *ws = (char *)workspace;
    SfagLaunch L;
    L.f.head_tiles = (int)fc_sfa_head_tiles(p.G);
    L.f.rope_at = (int)fc_sfa_rope_at(p.Dqk);
    L.f.vec_q = fc_cuda_vec_ok(&p.q, p.Dqk);
    L.f.vec_k = fc_cuda_vec_ok(&p.k, p.Dqk);
    L.f.vec_v = fc_cuda_vec_ok(&p.v, p.Dv);
    L.f.vec_qr = p.Dr > 0 && fc_cuda_vec_ok(&p.q_rope, p.Dr);
    L.f.vec_kr = p.Dr > 0 && fc_cuda_vec_ok(&p.k_rope, p.Dr);
    L.f.pair_out = false;
    L.vec_do = fc_cuda_vec_ok(&p.dout, p.Dv);
    L.rows = plan->rows; /* the row facts' stride (the run's rows, check.rows, are at most these) */
    L.rowf = (float *)(ws + plan->rowf_at);
    L.X.blk0 = (int64_t *)(ws + plan->blk0_at);
    L.X.count = (int32_t *)(ws + plan->count_at);
    L.X.start = (int32_t *)(ws + plan->start_at);
    L.X.list = (int32_t *)(ws + plan->list_at);
    L.X.tmp = (int32_t *)(ws + plan->tmp_at);
    L.X.nb = plan->nb;
    L.parts = (int)parts;
    const int64_t rows = check.rows, blocks = check.blocks;
    const SfagMend M = {(unsigned *)(ws + plan->mend_at), (unsigned char *)(ws + plan->mend_at + 256), rows};
    const bool bf = p.q.dtype == FC_BF16;
    switch (plan->dclass) {
    case 64: return bf ? fc_sfag_launch<__nv_bfloat16, 64>(p, L, M, rows, blocks, s) : fc_sfag_launch<__half, 64>(p, L, M, rows, blocks, s);
    case 128:
        return bf ? fc_sfag_launch<__nv_bfloat16, 128>(p, L, M, rows, blocks, s) : fc_sfag_launch<__half, 128>(p, L, M, rows, blocks, s);
    case 256:
        return bf ? fc_sfag_launch<__nv_bfloat16, 256>(p, L, M, rows, blocks, s) : fc_sfag_launch<__half, 256>(p, L, M, rows, blocks, s);
    default:
        return bf ? fc_sfag_launch<__nv_bfloat16, FC_SFA_MLA_DK>(p, L, M, rows, blocks, s)
                  : fc_sfag_launch<__half, FC_SFA_MLA_DK>(p, L, M, rows, blocks, s);
    }
}
