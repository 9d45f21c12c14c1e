/*
 * The CUDA sparse forward (SparseFlashAttention): what its kernel covers, the plan (the per-batch
 * facts and the kernel class), the run's block-table check and visible count (the index rows and
 * block tables are device memory: copied to the host for those two), and the launch.  Kernel
 * instantiations: fp16 and bf16 × classes 64 / 128 / 256 (query/key and value tiles of the class)
 * and MLA (576 / 512), nothing else.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

extern "C" {
#include "../core/host_data.h"
}
#include "cuda.h"
#include "launch.h"
#include "plan_facts.h"
#include "sparse_fwd_kernel.cuh"
#include "sparse_run.h"

using namespace fc_cuda;

struct fc_cuda_sfa {
    fc_cuda_facts facts; /* the planned per-batch facts, host and device */
    int dclass;          /* fc_sfa_class */
    int64_t kv_cap;      /* the most kv positions of a batch a run may use (paged: its tables are read that far) */
};

extern "C" const char *fc_cuda_sfa_unsupported(const fc_problem *p)
{
    if (p->q.dtype != FC_F16 && p->q.dtype != FC_BF16)
        return "sparse selection with a query dtype other than fp16/bf16";
    if (p->k.dtype != p->q.dtype || p->v.dtype != p->q.dtype || (p->Dr > 0 && (p->q_rope.dtype != p->q.dtype ||
                                                                              p->k_rope.dtype != p->q.dtype)))
        return "sparse selection with key/value/rope dtypes different from the query's";
    if (p->out.dtype != p->q.dtype) /* P is rounded to the operand dtype for the P·V product */
        return "sparse selection with an output dtype other than the operands'";
    if (fc_sfa_class(p->Dqk, p->Dr, p->Dv) == 0)
        return "sparse selection with head dims beyond the kernel's (Dqk rounded up to 8, plus Dr, at most 576; Dv at most 512)";
    if (p->q.batch_data || p->k.batch_data || p->v.batch_data || p->out.batch_data || p->k_rope.batch_data)
        return "sparse selection over tensor-list (per-batch pointer) storage";
    if (p->pse.data || p->alibi.slopes || p->mask.data || p->sink || fc_has_dropout(p))
        return "sparse selection with a bias, ALiBi, mask, sink or dropout";
    if (p->max_sq >= (1 << 30) || p->max_skv >= (1 << 30))
        return "sequence lengths of 2^30 or more";
    if (p->Nkv * fc_sfa_head_tiles(p->G) > 65535)
        return "more than 65535 kv heads × groups of 16 query heads";
    return NULL;
}

extern "C" void fc_cuda_sfa_destroy(fc_cuda_sfa *plan)
{
    if (!plan)
        return;
    fc_cuda_facts_free(&plan->facts);
    free(plan);
}

int64_t fc_sfa_kv_cap(const fc_problem *p)
{
    int64_t cap = p->max_skv;
    for (int64_t b = 0; b < p->B; b++)
        cap = p->batch[b].skv > cap ? p->batch[b].skv : cap;
    return cap;
}

/* Shared memory per CTA of a class's kernel. */
template <int C> static constexpr size_t fc_sfa_smem_of() { return SfaSmem<SfaShape<C>::DK, SfaShape<C>::DV, SfaShape<C>::BN>::bytes; }
static size_t fc_sfa_smem(int dclass)
{
    return dclass == 64 ? fc_sfa_smem_of<64>() : dclass == 128 ? fc_sfa_smem_of<128>() : dclass == 256 ? fc_sfa_smem_of<256>()
                                                                                                  : fc_sfa_smem_of<FC_SFA_MLA_DK>();
}

fc_status fc_sfa_device_fits(size_t smem, const char *who)
{
    int dev = 0, optin = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (err != cudaSuccess)
        return fc_cuda_err(err, who);
    if ((size_t)optin < smem)
        return fc_fail(FC_ERR_BACKEND, "%s: the sparse kernels for these head dims need %zu bytes of shared memory per block, "
                                       "this GPU gives %d",
                       who, smem, optin);
    return FC_OK;
}

extern "C" fc_status fc_cuda_sfa_plan(const fc_problem *p, fc_cuda_sfa **out)
{
    const int dclass = fc_sfa_class(p->Dqk, p->Dr, p->Dv);
    fc_status st = fc_sfa_device_fits(fc_sfa_smem(dclass), "fc_cuda_sfa_plan");
    if (st != FC_OK)
        return st;
    fc_cuda_sfa *plan = (fc_cuda_sfa *)calloc(1, sizeof *plan);
    if (!plan)
        return fc_fail(FC_ERR_NO_MEMORY, "fc_cuda_sfa_plan: out of host memory");
    plan->dclass = dclass;
    plan->kv_cap = fc_sfa_kv_cap(p);
    st = fc_cuda_facts_plan(&plan->facts, p, "fc_cuda_sfa_plan");
    if (st != FC_OK) {
        fc_cuda_sfa_destroy(plan);
        return st;
    }
    *out = plan;
    return FC_OK;
}

extern "C" size_t fc_cuda_sfa_workspace(const fc_problem *p, bool runs_bring_facts)
{
    return runs_bring_facts ? (fc_cuda_facts_bytes(p) + 255) / 256 * 256 : 0;
}

fc_status fc_sfa_to_host(const void *dev, int64_t n, size_t es, cudaStream_t s, const char *what, void **out)
{
    *out = NULL;
    if (n <= 0)
        return FC_OK;
    if (!(*out = malloc((size_t)n * es)))
        return fc_fail(FC_ERR_NO_MEMORY, "%s: out of host memory", what);
    cudaError_t err = cudaMemcpyAsync(*out, dev, (size_t)n * es, cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(s);
    if (err == cudaSuccess)
        return FC_OK;
    free(*out);
    *out = NULL;
    return fc_cuda_err(err, what);
}

void fc_sfa_check_free(SfaRunCheck *c)
{
    for (int x = 0; x < 3; x++)
        free(c->copies[x]);
}

fc_status fc_sfa_check_init(SfaRunCheck *c, const fc_problem *run, int64_t kv_cap, cudaStream_t s, const char *who)
{
    c->host = *run, c->kv_cap = kv_cap, c->rows = c->kv_rows = c->blocks = 0, c->who = who;
    fc_view *views[3] = {&c->host.k, &c->host.v, &c->host.k_rope};
    fc_status st = FC_OK;
    for (int x = 0; x < 3; x++) {
        c->copies[x] = NULL;
        fc_pages *pg = &views[x]->pages;
        if (!pg->table || st != FC_OK)
            continue;
        const int64_t entries = (run->B - 1) * pg->table_stride + fc_ceil_div(kv_cap, pg->block_size);
        st = fc_sfa_to_host(pg->table, entries, sizeof(int32_t), s, c->who, &c->copies[x]);
        pg->table = (const int32_t *)c->copies[x];
    }
    return st;
}

fc_status fc_sfa_check_batch(SfaRunCheck *c, int64_t b, const fc_batch &bt)
{
    const int64_t end = bt.stat_row0 + bt.q_rows;
    c->rows = end > c->rows ? end : c->rows;
    c->kv_rows = bt.kv_rows > c->kv_rows ? bt.kv_rows : c->kv_rows;
    c->blocks += fc_sfag_blocks(bt.kv_rows, c->host.sparse.block_size); /* < kv_rows + 1 each: no overflow */
    const bool paged = c->host.k.pages.table || c->host.v.pages.table || c->host.k_rope.pages.table;
    if (paged && bt.skv > c->kv_cap)
        return fc_fail(FC_ERR_INVALID_ARG, "%s: batch %lld of the run has %lld kv positions, the paged plan at most %lld", c->who,
                       (long long)b, (long long)bt.skv, (long long)c->kv_cap);
    return fc_host_check_batch_pages(c->who, &c->host, b, bt.skv);
}

/* fc_cuda_facts_check over a run's own facts (state: its SfaRunCheck). */
static fc_status fc_sfa_check_own(const void *state, int64_t b, const fc_batch &, const fc_batch &own)
{
    return fc_sfa_check_batch((SfaRunCheck *)state, b, own);
}

fc_status fc_sfa_run_facts(const fc_cuda_facts *facts, int64_t kv_cap, const fc_problem *run, const fc_cuda_lengths &lens,
                           void *workspace, cudaStream_t s, const char *who, fc_batch **batch, SfaRunCheck *check)
{
    fc_status st = fc_sfa_check_init(check, run, kv_cap, s, who);
    for (int64_t b = 0; st == FC_OK && !lens.len && b < run->B; b++) /* the planned facts (own ones: in the walk below) */
        st = fc_sfa_check_batch(check, b, run->batch[b]);
    if (st == FC_OK)
        st = fc_cuda_facts_for_run(facts, run, lens, check, fc_sfa_check_own, workspace, s, who, batch, NULL);
    fc_sfa_check_free(check);
    if (st == FC_OK && check->rows >= INT32_MAX)
        st = fc_fail(FC_ERR_BACKEND, "%s: %lld query rows, more than one launch takes", who, (long long)check->rows);
    return st;
}

/* Selected positions of the problem, counted on a host copy of its index rows (the rows read:
 * i < sq of every batch, every kv head, every entry).  −1 (with fc_fail) when they cannot be read. */
extern "C" double fc_cuda_sfa_visible(const fc_problem *p)
{
    const fc_sparse_view *sv = &p->sparse;
    int64_t last = -1; /* the highest element read */
    bool ok = true;
    for (int64_t b = 0; b < p->B; b++) {
        const fc_batch *bt = &p->batch[b];
        int64_t at = 0, t = 0;
        if (bt->sq <= 0)
            continue;
        ok = ok && !__builtin_mul_overflow(b, sv->sb, &at) && !__builtin_mul_overflow(bt->q_tok + bt->sq - 1, sv->si, &t) &&
             !__builtin_add_overflow(at, t, &at) && !__builtin_mul_overflow(p->Nkv - 1, sv->sn, &t) &&
             !__builtin_add_overflow(at, t, &at) && !__builtin_mul_overflow(sv->count - 1, sv->sk, &t) &&
             !__builtin_add_overflow(at, t, &at);
        last = at > last ? at : last;
    }
    if (!ok || last >= INT64_MAX / 8) {
        fc_fail(FC_ERR_BACKEND, "fc_cuda_sfa_visible: the index rows span more than 2^63 bytes");
        return -1.0;
    }
    void *rows = NULL;
    if (fc_sfa_to_host(sv->data, last + 1, sv->dtype == FC_I64 ? 8 : 4, 0, "fc_cuda_sfa_visible: the index rows", &rows) != FC_OK)
        return -1.0;
    fc_problem h = *p;
    h.sparse.data = (const char *)rows;
    const double n = rows ? fc_host_visible(&h) : 0.0;
    free(rows);
    return n;
}

template <typename T, int C>
static fc_status fc_sfa_launch(const fc_problem &p, const SfaLaunch &L, int64_t rows, cudaStream_t stream)
{
    using Sh = SfaShape<C>;
    constexpr size_t smem = fc_sfa_smem_of<C>();
    auto kernel = sparse_fwd_kernel<T, Sh::DK, Sh::DV, Sh::BN, Sh::WARPS>;
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (err != cudaSuccess)
        return fc_cuda_err(err, "fc_cuda_sfa_run: shared memory of the sparse forward kernel");
    const dim3 grid((unsigned)rows, (unsigned)(p.Nkv * L.head_tiles));
    if (rows > 0 && p.Nkv > 0)
        kernel<<<grid, 32 * Sh::WARPS, smem, stream>>>(p, L);
    if ((err = cudaGetLastError()) != cudaSuccess)
        return fc_cuda_err(err, "fc_cuda_sfa_run: sparse forward launch");
    return FC_OK;
}

extern "C" fc_status fc_cuda_sfa_run(const fc_cuda_sfa *plan, const fc_problem *run, fc_cuda_lengths lens, void *workspace,
                                     void *stream)
{
    fc_problem p = *run;
    SfaRunCheck check;
    const fc_status st = fc_sfa_run_facts(&plan->facts, plan->kv_cap, run, lens, workspace, (cudaStream_t)stream,
                                          "fc_cuda_sfa_run", &p.batch, &check);
    const int64_t rows = check.rows; /* the run's own rows (its lengths may differ from the plan's) */
    if (st != FC_OK)
        return st;
    SfaLaunch L;
    L.head_tiles = (int)fc_sfa_head_tiles(p.G);
    L.rope_at = (int)fc_sfa_rope_at(p.Dqk);
    L.vec_q = fc_cuda_vec_ok(&p.q, p.Dqk);
    L.vec_k = fc_cuda_vec_ok(&p.k, p.Dqk);
    L.vec_v = fc_cuda_vec_ok(&p.v, p.Dv);
    L.vec_qr = p.Dr > 0 && fc_cuda_vec_ok(&p.q_rope, p.Dr);
    L.vec_kr = p.Dr > 0 && fc_cuda_vec_ok(&p.k_rope, p.Dr);
    L.pair_out = p.out.se == 1 && (uintptr_t)p.out.data % 4 == 0 && p.out.sb % 2 == 0 && p.out.sn % 2 == 0 && p.out.ss % 2 == 0;
    cudaStream_t s = (cudaStream_t)stream;
    const bool bf = p.q.dtype == FC_BF16;
    switch (plan->dclass) {
    case 64: return bf ? fc_sfa_launch<__nv_bfloat16, 64>(p, L, rows, s) : fc_sfa_launch<__half, 64>(p, L, rows, s);
    case 128: return bf ? fc_sfa_launch<__nv_bfloat16, 128>(p, L, rows, s) : fc_sfa_launch<__half, 128>(p, L, rows, s);
    case 256: return bf ? fc_sfa_launch<__nv_bfloat16, 256>(p, L, rows, s) : fc_sfa_launch<__half, 256>(p, L, rows, s);
    default:
        return bf ? fc_sfa_launch<__nv_bfloat16, FC_SFA_MLA_DK>(p, L, rows, s)
                  : fc_sfa_launch<__half, FC_SFA_MLA_DK>(p, L, rows, s);
    }
}
