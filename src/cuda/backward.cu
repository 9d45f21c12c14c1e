/*
 * The CUDA backward (semantics §3.3): what it covers beyond the forward's coverage, the plan's
 * device state (per-batch facts, the query-row offsets of the D workspace, the query tiles and the
 * kv tiles in launch order) and the launch of its four kernels on the plan's stream:
 *     D = rowsum(dO ∘ O)  →  dK, dV (one CTA per kv tile, the group's heads inside)
 *                         →  dQ (one CTA per query tile)  →  dsink (one CTA per head)
 * Instantiations: fp16 and bf16 × head-dim classes 64 / 128 / 256.
 */
#include <stdlib.h>
#include <string.h>

#include "backward_dq_kernel.cuh"
#include "backward_kernel.cuh"
#include "cuda.h"
#include "launch.h"

using namespace fc_cuda;

struct fc_cuda_bwd {
    const fc_batch *planned;   /* the host facts planned with (the fc_plan's own) */
    fc_batch *batch;           /* device copies */
    int64_t *row0;
    int2 *q_items, *kv_items;  /* (batch, tile), heaviest first */
    int n_q, n_kv, dclass;
    int64_t rows;              /* Σ q_rows: D has Nq·rows entries */
};

/* Tile shapes per head-dim class: the query tile of a dK/dV step (BMQ), the kv tile of a dQ
 * step (BN) and the features one dK/dV CTA accumulates (DC) — the largest that ptxas fits in
 * 255 registers without spills (docs/PERFORMANCE.md). */
template <int D> struct BwdShape;
template <> struct BwdShape<64> { static constexpr int BMQ = 64, BN = 64, DC = 64; };
template <> struct BwdShape<128> { static constexpr int BMQ = 32, BN = 64, DC = 128; };
template <> struct BwdShape<256> { static constexpr int BMQ = 32, BN = 32, DC = 128; };

static int fc_bwd_parts(int dclass) { return dclass == 256 ? 2 : 1; }

extern "C" const char *fc_cuda_bwd_unsupported(const fc_problem *p)
{
    const char *fwd = fc_cuda_fwd_unsupported(p); /* the operands and features the scores need */
    if (fwd)
        return fwd;
    if (p->dout.dtype != p->q.dtype)
        return "an output gradient dtype different from the query's";
    if (p->dq.dtype != p->q.dtype || p->dk.dtype != p->q.dtype || p->dv.dtype != p->q.dtype)
        /* the products round P and dS to the operand dtype: fp32 gradients would promise fp32's
         * tolerance (semantics §0.4) that they do not meet (measured: ~1e-3 relative on an H100) */
        return "gradient dtypes other than the operands' (fp32 gradients are not on the GPU yet)";
    if (p->dout.batch_data || p->dq.batch_data || p->dk.batch_data || p->dv.batch_data || p->dk.pages.table ||
        p->dv.pages.table)
        return "tensor-list or paged gradient storage";
    return NULL;
}

extern "C" void fc_cuda_bwd_destroy(fc_cuda_bwd *plan)
{
    if (!plan)
        return;
    cudaFree(plan->batch);
    cudaFree(plan->row0);
    cudaFree(plan->q_items);
    cudaFree(plan->kv_items);
    free(plan);
}

extern "C" fc_status fc_cuda_bwd_plan(const fc_problem *p, fc_cuda_bwd **out)
{
    const char *who = "fc_cuda_bwd_plan";
    fc_cuda_bwd *plan = (fc_cuda_bwd *)calloc(1, sizeof *plan);
    int64_t *row0 = (int64_t *)malloc((size_t)(p->B ? p->B : 1) * sizeof *row0);
    if (!plan || !row0) {
        free(plan), free(row0);
        return fc_fail(FC_ERR_NO_MEMORY, "%s: out of host memory", who);
    }
    plan->dclass = fc_cuda_dclass(p);
    plan->planned = p->batch;
    for (int64_t b = 0; b < p->B; b++)
        row0[b] = plan->rows, plan->rows += p->batch[b].q_rows;
    fc_status st = fc_cuda_upload((void **)&plan->batch, p->batch, (size_t)p->B * sizeof(fc_batch), who);
    if (st == FC_OK)
        st = fc_cuda_upload((void **)&plan->row0, row0, (size_t)p->B * sizeof *row0, who);
    if (st == FC_OK)
        st = fc_cuda_tile_order(p, kBwdQRows, false, p->Nq, fc_cuda_q_tile_cost, &plan->q_items, &plan->n_q, who);
    if (st == FC_OK)
        st = fc_cuda_tile_order(p, kBwdKvRows, true, p->Nkv * fc_bwd_parts(plan->dclass), fc_cuda_kv_tile_cost, &plan->kv_items,
                                &plan->n_kv, who);
    free(row0);
    if (st != FC_OK) {
        fc_cuda_bwd_destroy(plan);
        return st;
    }
    *out = plan;
    return FC_OK;
}

extern "C" size_t fc_cuda_bwd_workspace(const fc_cuda_bwd *plan, const fc_problem *p)
{
    return (size_t)p->Nq * (size_t)plan->rows * sizeof(float);
}

/* Sets the kernel's dynamic shared memory and launches it on grid CTAs. */
template <typename K>
static fc_status fc_bwd_launch(K kernel, unsigned grid, unsigned threads, size_t smem, cudaStream_t stream,
                               const fc_problem &p, const BwdLaunch &L, const char *what)
{
    if (grid == 0)
        return FC_OK;
    cudaError_t err = smem ? cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) : cudaSuccess;
    if (err == cudaSuccess) {
        kernel<<<grid, threads, smem, stream>>>(p, L);
        err = cudaGetLastError();
    }
    return err == cudaSuccess ? FC_OK : fc_cuda_err(err, what);
}

template <typename T, int D>
static fc_status fc_bwd_run(const fc_cuda_bwd *plan, const fc_problem &p, BwdLaunch L, cudaStream_t stream)
{
    using Shape = BwdShape<D>;
    using KvSmem = BwdKvSmem<D, Shape::BMQ>;
    using QSmem = BwdQSmem<D, Shape::BN>;
    L.items = plan->q_items, L.n_items = plan->n_q;
    fc_status st = fc_bwd_launch(bwd_dsum_kernel<T, kBwdQRows>, (unsigned)((int64_t)plan->n_q * p.Nq), kThreads, 0, stream,
                                 p, L, "fc_cuda_bwd_run: D = rowsum(dO∘O)");
    L.items = plan->kv_items, L.n_items = plan->n_kv;
    if (st == FC_OK)
        st = fc_bwd_launch(bwd_dkv_kernel<T, D, Shape::DC, Shape::BMQ>, (unsigned)((int64_t)plan->n_kv * p.Nkv * L.parts),
                           kThreads, KvSmem::bytes + (L.terms ? KvSmem::scratch : 0), stream, p, L, "fc_cuda_bwd_run: dK/dV");
    L.items = plan->q_items, L.n_items = plan->n_q;
    if (st == FC_OK)
        st = fc_bwd_launch(bwd_dq_kernel<T, D, Shape::BN>, (unsigned)((int64_t)plan->n_q * p.Nq), kThreads,
                           QSmem::bytes + (L.terms ? QSmem::scratch : 0), stream, p, L, "fc_cuda_bwd_run: dQ");
    if (st == FC_OK && p.sink && p.dsink)
        st = fc_bwd_launch(bwd_dsink_kernel, (unsigned)p.Nq, kSinkThreads, 0, stream, p, L, "fc_cuda_bwd_run: dsink");
    return st;
}

extern "C" fc_status fc_cuda_bwd_run(const fc_cuda_bwd *plan, const fc_problem *run, void *workspace, void *stream)
{
    if (run->batch != plan->planned) /* no backward face patches them per run (IFA's forward does) */
        return fc_fail(FC_ERR_BACKEND, "fc_cuda_bwd_run: per-run batch facts are not supported by the CUDA backward");
    fc_problem p = *run;
    p.batch = plan->batch;
    BwdLaunch L;
    L.parts = fc_bwd_parts(plan->dclass);
    L.row0 = plan->row0;
    L.dsum = (float *)workspace;
    L.rows = plan->rows;
    L.vec_q = fc_cuda_vec_ok(&p.q, p.Dqk);
    L.vec_k = fc_cuda_vec_ok(&p.k, p.Dqk);
    L.vec_v = fc_cuda_vec_ok(&p.v, p.Dv);
    L.vec_do = fc_cuda_vec_ok(&p.dout, p.Dv);
    L.terms = p.pse.data || p.alibi.slopes || p.mask.data || p.softcap > 0.0f || p.drop_bits;
    cudaStream_t s = (cudaStream_t)stream;
    const bool bf = p.q.dtype == FC_BF16;
    switch (plan->dclass) {
    case 64: return bf ? fc_bwd_run<__nv_bfloat16, 64>(plan, p, L, s) : fc_bwd_run<__half, 64>(plan, p, L, s);
    case 128: return bf ? fc_bwd_run<__nv_bfloat16, 128>(plan, p, L, s) : fc_bwd_run<__half, 128>(plan, p, L, s);
    default: return bf ? fc_bwd_run<__nv_bfloat16, 256>(plan, p, L, s) : fc_bwd_run<__half, 256>(plan, p, L, s);
    }
}
