/*
 * The CUDA forward: what the kernel covers, the plan's device state (per-batch facts and the
 * launch order of the query tiles, heaviest first, so that causal and varlen problems do not
 * leave SMs idle at the tail), and the launch.  Kernel instantiations: fp16 and bf16 × head-dim
 * classes 64 / 128 / 256 (Dqk and Dv ≤ the class; features beyond them load as zeros).
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

extern "C" {
#include "../core/error.h"
}
#include "../core/dtype.h"
#include "cuda.h"
#include "forward_kernel.cuh"

using namespace fc_cuda;

struct fc_cuda_fwd {
    fc_batch *batch;      /* device copy of the planned per-batch facts */
    int2 *items;          /* device: (batch, query tile), heaviest first */
    int n_items, dclass;  /* head-dim class of the kernel: 64, 128 or 256 */
};

/* Tile shapes per head-dim class: rows BM (16·MT per warp) × kv columns BN — the largest that
 * ptxas fits in 255 registers without local-memory spills (docs/PERFORMANCE.md). */
template <int D> struct FwdShape;
template <> struct FwdShape<64> { static constexpr int BM = 128, BN = 64; };
#ifndef FC_FWD128_BM /* experiment builds override the D = 128 shape (docs/PERFORMANCE.md) */
#define FC_FWD128_BM 64
#define FC_FWD128_BN 64
#endif
template <> struct FwdShape<128> { static constexpr int BM = FC_FWD128_BM, BN = FC_FWD128_BN; };
template <> struct FwdShape<256> { static constexpr int BM = 64, BN = 16; };

static int fc_fwd_dclass(const fc_problem *p)
{
    const int64_t d = p->Dqk > p->Dv ? p->Dqk : p->Dv;
    return d <= 64 ? 64 : d <= 128 ? 128 : 256;
}

static int fc_fwd_bm(int dclass) { return dclass == 64 ? FwdShape<64>::BM : dclass == 128 ? FwdShape<128>::BM : FwdShape<256>::BM; }

extern "C" const char *fc_cuda_fwd_unsupported(const fc_problem *p)
{
    if (p->q.dtype != FC_F16 && p->q.dtype != FC_BF16)
        return "query dtype other than fp16/bf16 (fp32 and int8 operands are not on the GPU yet)";
    if (p->k.dtype != p->q.dtype || p->v.dtype != p->q.dtype)
        return "key/value dtype different from the query's (int8 antiquant is not on the GPU yet)";
    if (p->out.dtype != p->q.dtype) /* P is rounded to the operand dtype for the P·V product */
        return "an output dtype other than the operands' (fp32 or int8 outputs are not on the GPU yet)";
    if (p->Dr > 0 || p->q_rope.data || p->k_rope.data)
        return "rope features (Dr > 0, the MLA split)";
    if (p->Dqk > 256 || p->Dv > 256)
        return "head dims above 256";
    if (p->k.pages.table || p->v.pages.table)
        return "paged key/value storage";
    if (p->q.batch_data || p->k.batch_data || p->v.batch_data || p->out.batch_data)
        return "tensor-list (per-batch pointer) storage";
    if (p->sparse.data)
        return "sparse block selection";
    if (p->pse.data && !fc_dtype_is_float(p->pse.dtype))
        return "non-float pse";
    if (p->max_sq >= (1 << 30) || p->max_skv >= (1 << 30))
        return "sequence lengths of 2^30 or more";
    return NULL;
}

/* Visible scores of query tile [m0, m0 + bm) of a batch (its cost, for the launch order). */
static int64_t fc_tile_work(const fc_batch *bt, int64_t m0, int bm)
{
    int64_t w = bm, sp[4]; /* + the cost of writing the rows */
    for (int64_t i = m0; i < m0 + bm && i < bt->sq; i++)
        w += fc_row_spans(bt, i, sp);
    return w;
}

typedef struct {
    int64_t work;
    int idx;
    int2 item;
} fc_tile_order;

static int fc_tile_cmp(const void *a, const void *b)
{
    const fc_tile_order *x = (const fc_tile_order *)a, *y = (const fc_tile_order *)b;
    if (x->work != y->work)
        return x->work > y->work ? -1 : 1;
    return x->idx - y->idx;
}

static fc_status fc_cuda_err(cudaError_t err, const char *what)
{
    return fc_fail(FC_ERR_BACKEND, "%s: %s", what, cudaGetErrorString(err));
}

extern "C" void fc_cuda_fwd_destroy(fc_cuda_fwd *plan)
{
    if (!plan)
        return;
    cudaFree(plan->batch);
    cudaFree(plan->items);
    free(plan);
}

extern "C" fc_status fc_cuda_fwd_plan(const fc_problem *p, fc_cuda_fwd **out)
{
    fc_cuda_fwd *plan = (fc_cuda_fwd *)calloc(1, sizeof *plan);
    if (!plan)
        return fc_fail(FC_ERR_NO_MEMORY, "fc_cuda_fwd_plan: out of host memory");
    plan->dclass = fc_fwd_dclass(p);
    const int bm = fc_fwd_bm(plan->dclass);
    int64_t n = 0;
    for (int64_t b = 0; b < p->B; b++)
        n += (p->batch[b].q_rows + bm - 1) / bm;
    if (n * p->Nq > INT32_MAX) {
        free(plan);
        return fc_fail(FC_ERR_BACKEND, "fc_cuda_fwd_plan: %lld query tiles × %lld heads exceed one CUDA launch", (long long)n,
                       (long long)p->Nq);
    }
    fc_tile_order *order = (fc_tile_order *)malloc((size_t)(n ? n : 1) * sizeof *order);
    int2 *items = (int2 *)malloc((size_t)(n ? n : 1) * sizeof *items);
    fc_status st = order && items ? FC_OK : fc_fail(FC_ERR_NO_MEMORY, "fc_cuda_fwd_plan: out of host memory");
    int k = 0;
    for (int64_t b = 0; st == FC_OK && b < p->B; b++)
        for (int64_t t = 0; t * bm < p->batch[b].q_rows; t++, k++)
            order[k] = fc_tile_order{fc_tile_work(&p->batch[b], t * bm, bm), k, make_int2((int)b, (int)t)};
    if (st == FC_OK) {
        qsort(order, (size_t)n, sizeof *order, fc_tile_cmp);
        for (int64_t x = 0; x < n; x++)
            items[x] = order[x].item;
        plan->n_items = (int)n;
        cudaError_t err;
        const size_t bb = (size_t)p->B * sizeof(fc_batch), ib = (size_t)(n ? n : 1) * sizeof(int2);
        if ((err = cudaMalloc(&plan->batch, bb ? bb : 1)) != cudaSuccess || (err = cudaMalloc(&plan->items, ib)) != cudaSuccess ||
            (err = cudaMemcpy(plan->batch, p->batch, bb, cudaMemcpyHostToDevice)) != cudaSuccess ||
            (err = cudaMemcpy(plan->items, items, (size_t)n * sizeof(int2), cudaMemcpyHostToDevice)) != cudaSuccess)
            st = err == cudaErrorMemoryAllocation ? fc_fail(FC_ERR_NO_MEMORY, "fc_cuda_fwd_plan: out of device memory")
                                                   : fc_cuda_err(err, "fc_cuda_fwd_plan");
    }
    free(order);
    free(items);
    if (st != FC_OK) {
        fc_cuda_fwd_destroy(plan);
        return st;
    }
    *out = plan;
    return FC_OK;
}

/* cp.async needs unit feature stride and 16-byte aligned rows and feature chunks. */
static bool fc_vec_ok(const fc_view *v, int64_t d)
{
    return v->se == 1 && d % 8 == 0 && (uintptr_t)v->data % 16 == 0 && v->sb % 8 == 0 && v->sn % 8 == 0 && v->ss % 8 == 0;
}

template <typename T, int D>
static fc_status fc_fwd_launch(const fc_cuda_fwd *plan, const fc_problem &p, const FwdLaunch &L, cudaStream_t stream)
{
    constexpr int BM = FwdShape<D>::BM, BN = FwdShape<D>::BN;
    const size_t smem = FwdSmem<D, BM, BN>::bytes + (L.terms || p.drop_bits ? FwdSmem<D, BM, BN>::scratch : 0);
    auto kernel = L.terms || p.drop_bits ? fwd_kernel<T, D, BM, BN, false> : fwd_kernel<T, D, BM, BN, true>;
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (err != cudaSuccess)
        return fc_cuda_err(err, "fc_cuda_fwd_run: shared memory of the forward kernel");
    const unsigned grid = (unsigned)((int64_t)plan->n_items * p.Nq);
    if (grid > 0)
        kernel<<<grid, kThreads, smem, stream>>>(p, L);
    if ((err = cudaGetLastError()) != cudaSuccess)
        return fc_cuda_err(err, "fc_cuda_fwd_run: forward launch");
    return FC_OK;
}

extern "C" fc_status fc_cuda_fwd_run(const fc_cuda_fwd *plan, const fc_problem *run, void *stream)
{
    fc_problem p = *run;
    p.batch = plan->batch;
    FwdLaunch L;
    L.items = plan->items;
    L.n_items = plan->n_items;
    L.vec_q = fc_vec_ok(&p.q, p.Dqk);
    L.vec_k = fc_vec_ok(&p.k, p.Dqk);
    L.vec_v = fc_vec_ok(&p.v, p.Dv);
    L.terms = p.pse.data || p.alibi.slopes || p.mask.data || p.softcap > 0.0f;
    L.pair_out = p.out.se == 1 && (uintptr_t)p.out.data % 4 == 0 && p.out.sb % 2 == 0 &&
                 p.out.sn % 2 == 0 && p.out.ss % 2 == 0;
    cudaStream_t s = (cudaStream_t)stream;
    const bool bf = p.q.dtype == FC_BF16;
    switch (plan->dclass) {
    case 64: return bf ? fc_fwd_launch<__nv_bfloat16, 64>(plan, p, L, s) : fc_fwd_launch<__half, 64>(plan, p, L, s);
    case 128: return bf ? fc_fwd_launch<__nv_bfloat16, 128>(plan, p, L, s) : fc_fwd_launch<__half, 128>(plan, p, L, s);
    default: return bf ? fc_fwd_launch<__nv_bfloat16, 256>(plan, p, L, s) : fc_fwd_launch<__half, 256>(plan, p, L, s);
    }
}
