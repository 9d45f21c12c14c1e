/*
 * The CUDA backward (semantics §3.3): what it covers beyond the forward's coverage, the plan's
 * device state (per-batch facts, the query-row offsets of the workspace, the query tiles and the
 * kv tiles in launch order) and the launches on the plan's stream.  Three paths:
 *   fused (FLASHC_CUDA_BWD=fused, or auto where it fits; five tile products per visible pair):
 *     zero the dQ accumulators → D = rowsum(dO ∘ O) → dK, dV and the dQ partials, added in kv
 *     order (one unit per kv tile, kv head and feature part; backward_dq.cuh) → dQ from the
 *     accumulators → dsink
 *   dq-recompute (the default, kBwdDefault: seven products; also auto where the device's shared
 *   memory per block is below the fused kernel's):
 *     D → dK, dV (one CTA per kv tile) → dQ (one CTA per query tile, recomputing S and dP) → dsink
 *   sm90 (FLASHC_CUDA_BWD=sm90, opt-in until a GPU run passes; insists: a plan or run it cannot
 *   take fails, naming why): the fused path's order with the Hopper kernel (hopper/bwd_kernel.cuh:
 *   TMA, wgmma, 128-key units, 64-row query tiles) in place of the fused kernel
 * Around every path, the non-finite mend (backward_fixup.cuh): a scan of the query, d_out and key
 * rows before, and after, dK/dV (and, fused or sm90, dQ) again where a hidden pair met an inf or NaN.
 * FLASHC_CUDA_BWD_GRID=N caps the fused (or sm90) kernel's grid at N CTAs (tests: results must not move).
 * Fused-path variants under measurement (results bitwise the same under each, any grid):
 *   FLASHC_CUDA_BWD_ORDER=batch (default) | spread: the units' launch order (fc_dq_spread_tiles);
 *   FLASHC_CUDA_BWD_SYNC=fence (default) | lean: how an adder publishes its tile (backward_dq.cuh).
 * Instantiations: fp16 and bf16 × head-dim classes 64 / 128 / 256; the feature kernels
 * (features.cuh) where a problem needs them (rope-split heads: classes 128 and 256).  fp32 operands,
 * or fp32 gradients (or output gradient) of 16-bit operands, take the kFeatF32 kernels of the
 * dq-recompute path, classes 64 / 128 / 256: fp32 tiles, every product 3×TF32; the fused and sm90
 * paths refuse them.
 */
#include <stdlib.h>
#include <string.h>

#include "backward_dq_kernel.cuh"
#include "backward_fixup.cuh"
#include "backward_kernel.cuh"
#include "backward_shapes.h"
#include "cuda.h"
#include "launch.h"
#include "plan_facts.h"
#include "vec_rule.h"
#ifdef FLASHC_HOPPER
#include "hopper/bwd.h"
#include "hopper/fwd.h"
#include "hopper/tma_map.h"
#endif

using namespace fc_cuda;

struct fc_cuda_bwd {
    fc_cuda_facts facts;       /* the planned per-batch facts, host and device */
    int64_t *row0, *arow0;     /* per batch: Σ q_rows before it; fused: Σ whole query tiles' rows */
    int64_t *krow0, krows;     /* per batch: Σ kv_rows before it; their sum (the mend's key bytes) */
    int2 *q_items, *kv_items;  /* (batch, tile), heaviest first (kv: each batch's in order) */
    int n_q, n_kv, dclass;
    int64_t rows;              /* Σ q_rows: D has Nq·rows entries */
    bool fused;                /* the five-product path */
    bool sm90;                 /* the five products on the Hopper kernel (the fused path's workspace) */
    void *encode;              /* sm90: the driver's tensor-map encoder */
    int sms;                   /* sm90: the persistent grid's default size */
    int grid_cap;              /* fused: CTAs at most (0: one per unit) */
    int walk;                  /* the kv tiles' order (FC_TILES_KV or, fused, FC_TILES_KV_SPREAD) */
    int dq_sync;               /* fused: kDqSync* (backward_dq.cuh) */
    int64_t arows;             /* fused: accumulator rows per query head */
    size_t acc_at, turns_at, ticket_at, ws_bytes; /* workspace layout from its 256-aligned start */
    size_t mend_at;            /* the non-finite mend's flag, then its query bytes and key bytes */
};

static int fc_bwd_parts(int dclass) { return dclass == 256 ? 2 : 1; } /* BwdShape<D>::DC = FusedShape<D>::DC = D / parts */
static int fc_bwd_bmq(int dclass) { return dclass == 64 ? FusedShape<64>::BMQ : dclass == 128 ? FusedShape<128>::BMQ : FusedShape<256>::BMQ; }

/* The query rows of an accumulator tile (one turn counter each) and the kv rows of a unit. */
#ifdef FLASHC_HOPPER
static int fc_bwd_acc_rows(const fc_cuda_bwd *plan) { return plan->sm90 ? fc_hopper::kBwdQRows : fc_bwd_bmq(plan->dclass); }
static int fc_bwd_kv_rows(const fc_cuda_bwd *plan) { return plan->sm90 ? fc_hopper::kBwdKvRows : kBwdKvRows; }
#else
static int fc_bwd_acc_rows(const fc_cuda_bwd *plan) { return fc_bwd_bmq(plan->dclass); }
static int fc_bwd_kv_rows(const fc_cuda_bwd *plan) { (void)plan; return kBwdKvRows; }
#endif

/* Shared memory of the dK/dV kernel or of the fused one, with the score-terms scratch. */
template <int D> static size_t fc_bwd_smem(bool fused, bool terms)
{
    using KvSmem = BwdKvSmem<D, BwdShape<D>::BMQ>;
    using FSmem = BwdKvSmem<D, FusedShape<D>::BMQ>;
    if (!fused)
        return KvSmem::bytes + (terms ? KvSmem::scratch : 0);
    return FSmem::bytes + (terms ? FSmem::scratch : 0) + BwdDqSmem<kBwdKvRows, FusedShape<D>::BMQ, FusedShape<D>::DC>::bytes;
}
static size_t fc_bwd_smem_for(int dclass, bool fused, bool terms)
{
    return dclass == 64 ? fc_bwd_smem<64>(fused, terms) : dclass == 128 ? fc_bwd_smem<128>(fused, terms) : fc_bwd_smem<256>(fused, terms);
}

/* The kFeatF32 kernels' shared memory (scratch tiles included: their products stage through them):
 * the larger of the dK/dV and dQ kernels'. */
template <int D> static size_t fc_bwd_f32_smem()
{
    using KvSmem = BwdKvSmem<D, BwdShapeF32<D>::BMQ, 4>;
    using QSmem = BwdQSmem<D, BwdShapeF32<D>::BN, 4>;
    const size_t kv = KvSmem::bytes + KvSmem::scratch, q = QSmem::bytes + QSmem::scratch;
    return kv > q ? kv : q;
}
static size_t fc_bwd_f32_smem_for(int dclass)
{
    return dclass == 64 ? fc_bwd_f32_smem<64>() : dclass == 128 ? fc_bwd_f32_smem<128>() : fc_bwd_f32_smem<256>();
}

/* Whether a problem takes the kFeatF32 kernels: fp32 operands, or an fp32 gradient or output
 * gradient of 16-bit operands (fc_cuda_bwd_unsupported allows no other mix). */
static bool fc_bwd_f32(const fc_problem *p)
{
    return p->q.dtype == FC_F32 || p->dout.dtype == FC_F32 || p->dq.dtype == FC_F32 || p->dk.dtype == FC_F32 ||
           p->dv.dtype == FC_F32;
}

static size_t fc_align256(size_t x) { return (x + 255) & ~(size_t)255; }

/* The path (FLASHC_CUDA_BWD: "auto" = fused where it fits, "fused", "dq-recompute"; unset or empty:
 * kBwdDefault) and the fused grid cap (FLASHC_CUDA_BWD_GRID); a value that names neither fails
 * the plan, as does "fused" on a device whose shared memory per block is below the kernel's. */
static const char *const kBwdDefault = "dq-recompute"; /* the fused kernel passes on a GPU but is slower today */

/* The index of env's value among names[0..n) (unset or empty: 0), or −1. */
static int fc_bwd_pick(const char *env, const char *const *names, int n)
{
    if (!env || !*env)
        return 0;
    for (int k = 0; k < n; k++)
        if (strcmp(env, names[k]) == 0)
            return k;
    return -1;
}

/* FLASHC_CUDA_BWD=sm90: the Hopper kernel, or a failure naming why it cannot run p. */
static fc_status fc_bwd_choose_sm90(fc_cuda_bwd *plan, const fc_problem *p, const char *who)
{
#ifdef FLASHC_HOPPER
    const char *why = NULL;
    if (fc_hopper::fwd_device_ok(&why) && (why = fc_hopper::bwd_unsupported(p, plan->dclass)) == NULL) {
        int dev = 0;
        cudaError_t err = cudaGetDevice(&dev);
        if (err == cudaSuccess)
            err = cudaDeviceGetAttribute(&plan->sms, cudaDevAttrMultiProcessorCount, dev);
        if (err != cudaSuccess)
            return fc_cuda_err(err, who);
        plan->sm90 = true;
        plan->fused = false;
        plan->walk = FC_TILES_KV;
        return fc_hopper::tma_encoder(&plan->encode, who);
    }
#else
    (void)plan, (void)p;
    const char *why = "this build has no sm_90a kernels";
#endif
    return fc_fail(FC_ERR_BACKEND, "%s: FLASHC_CUDA_BWD=sm90, but the sm_90a backward cannot run this: %s", who, why);
}

static fc_status fc_bwd_choose(fc_cuda_bwd *plan, const fc_problem *p, const char *who)
{
    static const char *const orders[] = {"batch", "spread"}, *const syncs[] = {"fence", "lean"};
    const char *order = getenv("FLASHC_CUDA_BWD_ORDER"), *sync = getenv("FLASHC_CUDA_BWD_SYNC");
    const int order_at = fc_bwd_pick(order, orders, 2), sync_at = fc_bwd_pick(sync, syncs, 2);
    if (order_at < 0)
        return fc_fail(FC_ERR_BACKEND, "%s: FLASHC_CUDA_BWD_ORDER=%.64s names no order (batch or spread)", who, order);
    if (sync_at < 0)
        return fc_fail(FC_ERR_BACKEND, "%s: FLASHC_CUDA_BWD_SYNC=%.64s names no protocol (fence or lean)", who, sync);
    plan->dq_sync = sync_at == 1 ? kDqSyncLean : kDqSyncFence;
    const char *env = getenv("FLASHC_CUDA_BWD");
    env = env && *env ? env : kBwdDefault;
    const bool want_fused = strcmp(env, "fused") == 0, auto_path = strcmp(env, "auto") == 0, want_sm90 = strcmp(env, "sm90") == 0;
    if (!want_fused && !auto_path && !want_sm90 && strcmp(env, "dq-recompute") != 0)
        return fc_fail(FC_ERR_BACKEND, "%s: FLASHC_CUDA_BWD=%.64s names no backward path (fused, dq-recompute, sm90 or auto)", who, env);
    const char *grid = getenv("FLASHC_CUDA_BWD_GRID");
    if (grid && *grid) {
        char *end;
        const long n = strtol(grid, &end, 10);
        if (*end || n < 1 || n > INT32_MAX)
            return fc_fail(FC_ERR_BACKEND, "%s: FLASHC_CUDA_BWD_GRID=%.64s is not a positive CTA count", who, grid);
        plan->grid_cap = (int)n;
    }
    int dev = 0, optin = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (err != cudaSuccess)
        return fc_cuda_err(err, who);
    if (fc_bwd_f32(p)) { /* the kFeatF32 kernels: dq-recompute only */
        const size_t need = fc_bwd_f32_smem_for(plan->dclass);
        if (want_fused)
            return fc_fail(FC_ERR_BACKEND, "%s: FLASHC_CUDA_BWD=fused, but the fused kernel has no fp32 products (fp32 operands or "
                                           "gradients take dq-recompute)", who);
        if (need > (size_t)optin)
            return fc_fail(FC_ERR_BACKEND, "%s: fp32 products at head-dim class %d need %zu bytes of shared memory per block; this "
                                           "device has %d", who, plan->dclass, need, optin);
        plan->walk = FC_TILES_KV;
        return want_sm90 ? fc_bwd_choose_sm90(plan, p, who) : FC_OK;
    }
    const size_t need = fc_bwd_smem_for(plan->dclass, true, true);
    plan->fused = (want_fused || auto_path) && need <= (size_t)optin;
    if (want_fused && !plan->fused)
        return fc_fail(FC_ERR_BACKEND, "%s: FLASHC_CUDA_BWD=fused needs %zu bytes of shared memory per block; this device has %d",
                       who, need, optin);
    plan->walk = plan->fused && order_at == 1 ? FC_TILES_KV_SPREAD : FC_TILES_KV;
    return want_sm90 ? fc_bwd_choose_sm90(plan, p, who) : FC_OK;
}

/* The fused path's workspace after D: the dQ accumulators, the turn counters and the ticket
 * (zeroed on the stream before each run); fails when a size overflows. */
static fc_status fc_bwd_layout(fc_cuda_bwd *plan, const fc_problem *p, const char *who)
{
    size_t dsum, acc = 0, turns = 0;
    bool bad = __builtin_mul_overflow((size_t)p->Nq, (size_t)plan->rows, &dsum) || __builtin_mul_overflow(dsum, 4, &dsum);
    if (plan->fused || plan->sm90) {
        const size_t tiles = (size_t)(plan->arows / fc_bwd_acc_rows(plan));
        bad = bad || __builtin_mul_overflow((size_t)p->Nq, (size_t)plan->arows, &acc) ||
              __builtin_mul_overflow(acc, (size_t)plan->dclass * 4, &acc) || __builtin_mul_overflow((size_t)p->Nq, tiles, &turns) ||
              __builtin_mul_overflow(turns, (size_t)fc_bwd_parts(plan->dclass) * 4, &turns);
    }
    size_t qbad, kbad; /* the mend's bytes: one per query row of each query head, per key row of each kv head */
    bad = bad || __builtin_mul_overflow((size_t)p->Nq, (size_t)plan->rows, &qbad) ||
          __builtin_mul_overflow((size_t)p->Nkv, (size_t)plan->krows, &kbad);
    bad = bad || dsum > SIZE_MAX / 4 || acc > SIZE_MAX / 4 || turns > SIZE_MAX / 4 || qbad > SIZE_MAX / 4 || kbad > SIZE_MAX / 4;
    if (bad)
        return fc_fail(FC_ERR_BACKEND, "%s: the backward's workspace size overflows", who);
    plan->acc_at = fc_align256(dsum);
    plan->turns_at = fc_align256(plan->acc_at + acc);
    plan->ticket_at = plan->turns_at + turns;
    plan->mend_at = fc_align256(plan->fused || plan->sm90 ? plan->ticket_at + 4 : dsum);
    plan->ws_bytes = 255 + plan->mend_at + 256 + qbad + kbad; /* + 255: the start is aligned up */
    return FC_OK;
}

extern "C" const char *fc_cuda_bwd_unsupported(const fc_problem *p)
{
    const char *fwd = fc_cuda_fwd_unsupported(p); /* the operands and features the scores need */
    if (fwd)
        return fwd;
    if (p->Dqk + p->Dr > kFixMaxD || p->Dv > kFixMaxD) /* the forward's refusal today; the mends' row buffers rely on it */
        return "head dims above 256 in the backward";
    if (kv_paged_or_listed(*p)) /* the forward reads them (kFeatPaged), the backward's kernels do not yet */
        return "paged or tensor-list key/value in the backward";
    if (!fc_bwd_f32(p))
        return fc_cuda_grads_unsupported(p);
    /* the kFeatF32 kernels: fp32 tiles whatever the operands' dtype, gradients stored as any */
    const auto own_or_f32 = [p](fc_dtype dt) { return dt == p->q.dtype || dt == FC_F32; };
    if (!own_or_f32(p->dout.dtype) || !own_or_f32(p->dq.dtype) || !own_or_f32(p->dk.dtype) || !own_or_f32(p->dv.dtype))
        return "gradient dtypes other than the operands' or fp32";
    if (p->Dr > 0)
        return "rope features (Dr > 0) with fp32 gradients";
    return fc_cuda_grads_storage_unsupported(p);
}

extern "C" const char *fc_cuda_grads_unsupported(const fc_problem *p)
{
    if (p->dout.dtype != p->q.dtype)
        return "an output gradient dtype different from the query's";
    if (p->dq.dtype != p->q.dtype || p->dk.dtype != p->q.dtype || p->dv.dtype != p->q.dtype ||
        (p->Dr > 0 && (p->dq_rope.dtype != p->q.dtype || p->dk_rope.dtype != p->q.dtype)))
        /* the 16-bit products round P and dS to the operand dtype (the dense backward takes fp32
         * gradients on its fp32 kernels: fc_cuda_bwd_unsupported) */
        return "gradient dtypes other than the operands'";
    return fc_cuda_grads_storage_unsupported(p);
}

extern "C" const char *fc_cuda_grads_storage_unsupported(const fc_problem *p)
{
    if (p->dout.batch_data || p->dq.batch_data || p->dk.batch_data || p->dv.batch_data || p->dk.pages.table ||
        p->dv.pages.table || p->dq_rope.batch_data || p->dk_rope.batch_data || p->dk_rope.pages.table)
        return "tensor-list or paged gradient storage";
    return NULL;
}

extern "C" void fc_cuda_bwd_destroy(fc_cuda_bwd *plan)
{
    if (!plan)
        return;
    fc_cuda_facts_free(&plan->facts);
    cudaFree(plan->row0);
    cudaFree(plan->arow0);
    cudaFree(plan->krow0);
    cudaFree(plan->q_items);
    cudaFree(plan->kv_items);
    free(plan);
}

extern "C" fc_status fc_cuda_bwd_plan(const fc_problem *p, fc_cuda_bwd **out)
{
    const char *who = "fc_cuda_bwd_plan";
    fc_cuda_bwd *plan = (fc_cuda_bwd *)calloc(1, sizeof *plan);
    int64_t *row0 = (int64_t *)malloc(3 * (size_t)(p->B ? p->B : 1) * sizeof *row0);
    if (!plan || !row0) {
        free(plan), free(row0);
        return fc_fail(FC_ERR_NO_MEMORY, "%s: out of host memory", who);
    }
    int64_t *arow0 = row0 + (p->B ? p->B : 1), *krow0 = arow0 + (p->B ? p->B : 1);
    plan->dclass = fc_cuda_dclass(p);
    fc_status st = fc_bwd_choose(plan, p, who);
    const int bmq = fc_bwd_acc_rows(plan);
    for (int64_t b = 0; b < p->B; b++) {
        row0[b] = plan->rows, plan->rows += p->batch[b].q_rows;
        arow0[b] = plan->arows, plan->arows += (p->batch[b].q_rows + bmq - 1) / bmq * bmq;
        krow0[b] = plan->krows, plan->krows += p->batch[b].kv_rows;
    }
    if (st == FC_OK)
        st = fc_bwd_layout(plan, p, who);
    if (st == FC_OK)
        st = fc_cuda_facts_plan(&plan->facts, p, who);
    if (st == FC_OK)
        st = fc_cuda_upload((void **)&plan->row0, row0, (size_t)p->B * sizeof *row0, who);
    if (st == FC_OK)
        st = fc_cuda_upload((void **)&plan->arow0, arow0, (size_t)p->B * sizeof *arow0, who);
    if (st == FC_OK)
        st = fc_cuda_upload((void **)&plan->krow0, krow0, (size_t)p->B * sizeof *krow0, who);
    if (st == FC_OK)
        st = fc_cuda_tile_order(p, kBwdQRows, false, p->Nq, fc_cuda_q_tile_cost, &plan->q_items, &plan->n_q, who);
    if (st == FC_OK)
        st = fc_cuda_tile_order(p, fc_bwd_kv_rows(plan), plan->walk, p->Nkv * fc_bwd_parts(plan->dclass), fc_cuda_kv_tile_cost, &plan->kv_items,
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
    (void)p;
    return plan->ws_bytes;
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

/* The kernels with the features FEAT (kFeat*): the plain ones for FEAT = 0 (instantiated only where
 * named, so the plain build of backward.cu holds no feature kernels). */
template <typename T, int D, int FEAT> struct BwdKernels {
    using Shape = BwdShapeFor<D, FEAT>;
    static auto fused()
    {
        if constexpr (FEAT == 0)
            return bwd_fused_kernel<T, D, FusedShape<D>::DC, FusedShape<D>::BMQ>;
        else
            return bwd_fused_feat_kernel<T, D, FusedShape<D>::DC, FusedShape<D>::BMQ, FEAT>;
    }
    static auto dkv()
    {
        if constexpr (FEAT == 0)
            return bwd_dkv_kernel<T, D, Shape::DC, Shape::BMQ>;
        else
            return bwd_dkv_feat_kernel<T, D, Shape::DC, Shape::BMQ, FEAT>;
    }
    static auto dq()
    {
        if constexpr (FEAT == 0)
            return bwd_dq_kernel<T, D, Shape::BN>;
        else
            return bwd_dq_feat_kernel<T, D, Shape::BN, FEAT>;
    }
    static auto dsum()
    {
        if constexpr ((FEAT & kFeatF32) != 0)
            return bwd_dsum_any_kernel<kBwdQRows>;
        else
            return bwd_dsum_kernel<T, kBwdQRows>;
    }
};

/* A mend kernel (backward_fixup.cuh) on grid CTAs. */
template <typename K>
static fc_status fc_bwd_mend_launch(K kernel, unsigned grid, cudaStream_t stream, const fc_problem &p, const BwdLaunch &L,
                                    const BwdMend &M, const char *what)
{
    if (grid == 0)
        return FC_OK;
    kernel<<<grid, kThreads, 0, stream>>>(p, L, M);
    const cudaError_t err = cudaGetLastError();
    return err == cudaSuccess ? FC_OK : fc_cuda_err(err, what);
}

/* Before the run: the flag cleared, the bytes of every query and key row (backward_fixup.cuh). */
static fc_status fc_bwd_mend_scan(const fc_cuda_bwd *plan, const fc_problem &p, BwdLaunch L, const BwdMend &M, cudaStream_t s)
{
    const cudaError_t err = cudaMemsetAsync(M.flag, 0, sizeof *M.flag, s);
    if (err != cudaSuccess)
        return fc_cuda_err(err, "fc_cuda_bwd_run: clearing the non-finite flag");
    L.items = plan->q_items, L.n_items = plan->n_q;
    fc_status st = fc_bwd_mend_launch(bwd_nf_scan_q_kernel, (unsigned)((int64_t)plan->n_q * p.Nq), s, p, L, M,
                                      "fc_cuda_bwd_run: the query rows' inf and NaN");
    if (st == FC_OK)
        st = fc_bwd_mend_launch(bwd_nf_scan_k_kernel, (unsigned)((int64_t)plan->n_kv * p.Nkv), s, p, L, M,
                                "fc_cuda_bwd_run: the key rows' inf and NaN");
    return st;
}

/* After the run: dK and dV of the kv tiles that met a bad query or d_out row at a hidden pair,
 * and (the paths whose dQ partials take every key of a tile) dQ of the query tiles that met a bad
 * key at one; both return at once unless the scan found an inf or NaN. */
static fc_status fc_bwd_mend(const fc_cuda_bwd *plan, const fc_problem &p, BwdLaunch L, const BwdMend &M, cudaStream_t s)
{
    L.items = plan->q_items, L.n_items = plan->n_q;
    fc_status st = fc_bwd_mend_launch(bwd_nf_dkv_kernel, (unsigned)((int64_t)plan->n_kv * p.Nkv), s, p, L, M,
                                      "fc_cuda_bwd_run: dK/dV where a hidden pair met an inf or NaN");
    if (st == FC_OK && (plan->fused || plan->sm90))
        st = fc_bwd_mend_launch(bwd_nf_dq_kernel, (unsigned)((int64_t)plan->n_q * p.Nq), s, p, L, M,
                                "fc_cuda_bwd_run: dQ where a hidden pair met an inf or NaN");
    return st;
}

template <typename T, int D, int FEAT>
static fc_status fc_bwd_run(const fc_cuda_bwd *plan, const fc_problem &p, BwdLaunch L, cudaStream_t stream)
{
    constexpr bool F32 = (FEAT & kFeatF32) != 0; /* fp32 tiles; the scratch tiles always (their products stage there) */
    using Shape = BwdShapeFor<D, FEAT>;
    using QSmem = BwdQSmem<D, Shape::BN, (int)sizeof(T)>;
    using KvSmem = BwdKvSmem<D, Shape::BMQ, (int)sizeof(T)>;
    fc_status st = FC_OK;
    if (plan->fused || plan->sm90) { /* the accumulators, turn counters and ticket start at zero */
        const cudaError_t err = cudaMemsetAsync(L.dq_acc, 0, plan->ticket_at + 4 - plan->acc_at, stream);
        if (err != cudaSuccess)
            st = fc_cuda_err(err, "fc_cuda_bwd_run: zeroing the dQ accumulators");
    }
    L.items = plan->q_items, L.n_items = plan->n_q;
    const unsigned q_grid = (unsigned)((int64_t)plan->n_q * p.Nq);
    if (st == FC_OK)
        st = fc_bwd_launch(BwdKernels<T, D, FEAT>::dsum(), q_grid, kThreads, 0, stream, p, L, "fc_cuda_bwd_run: D = rowsum(dO∘O)");
    L.items = plan->kv_items, L.n_items = plan->n_kv;
    const size_t kv_smem = F32 ? KvSmem::bytes + KvSmem::scratch : fc_bwd_smem<D>(plan->fused, L.terms);
#ifdef FLASHC_HOPPER
    if (st == FC_OK && plan->sm90) {
        if constexpr (FEAT == 0) { /* the Hopper kernel in the fused kernel's place (it takes no features) */
            const int cap = plan->grid_cap ? plan->grid_cap : plan->sms;
            bool launched = false;
            const char *why = NULL;
            st = fc_hopper::bwd_run(plan->encode, plan->dclass, p, L, plan->facts.reach, cap < L.units ? cap : L.units, stream,
                                    &launched, &why);
            if (st == FC_OK && !launched)
                return fc_fail(FC_ERR_BACKEND, "fc_cuda_bwd_run: FLASHC_CUDA_BWD=sm90, but this run's views cannot be mapped: %s", why);
            L.items = plan->q_items, L.n_items = plan->n_q;
            if (st == FC_OK)
                st = fc_bwd_launch(bwd_dq_convert_kernel<kBwdQRows>, q_grid, kThreads, 0, stream, p, L, "fc_cuda_bwd_run: dQ");
            return st;
        }
    }
#endif
    if constexpr (F32) { /* dq-recompute only (fc_bwd_choose) */
    } else if (st == FC_OK && plan->fused) {
        const unsigned grid = (unsigned)(plan->grid_cap && plan->grid_cap < L.units ? plan->grid_cap : L.units);
        st = fc_bwd_launch(BwdKernels<T, D, FEAT>::fused(), grid, kThreads, kv_smem, stream, p, L,
                           "fc_cuda_bwd_run: dK/dV and dQ (fused)");
        L.items = plan->q_items, L.n_items = plan->n_q;
        if (st == FC_OK && (FEAT & kFeatRope))
            st = fc_bwd_launch(bwd_dq_convert_rope_kernel<kBwdQRows>, q_grid, kThreads, 0, stream, p, L, "fc_cuda_bwd_run: dQ");
        else if (st == FC_OK)
            st = fc_bwd_launch(bwd_dq_convert_kernel<kBwdQRows>, q_grid, kThreads, 0, stream, p, L, "fc_cuda_bwd_run: dQ");
    }
    if (st == FC_OK && !plan->fused) {
        st = fc_bwd_launch(BwdKernels<T, D, FEAT>::dkv(), (unsigned)L.units, kThreads, kv_smem, stream, p, L,
                           "fc_cuda_bwd_run: dK/dV");
        L.items = plan->q_items, L.n_items = plan->n_q;
        if (st == FC_OK)
            st = fc_bwd_launch(BwdKernels<T, D, FEAT>::dq(), q_grid, kThreads, QSmem::bytes + (L.terms || F32 ? QSmem::scratch : 0),
                               stream, p, L, "fc_cuda_bwd_run: dQ");
    }
    if (st == FC_OK && p.sink && p.dsink)
        st = fc_bwd_launch(bwd_dsink_kernel, (unsigned)p.Nq, kSinkThreads, 0, stream, p, L, "fc_cuda_bwd_run: dsink");
    return st;
}

template <int FEAT>
static fc_status fc_bwd_run_class(const fc_cuda_bwd *plan, const fc_problem &p, const BwdLaunch &L, cudaStream_t s, bool bf)
{
    switch (plan->dclass) {
    case 64:
        if constexpr ((FEAT & kFeatRope) != 0) /* rope problems take classes 128 and 256 (fc_cuda_dclass) */
            return fc_fail(FC_ERR_BACKEND, "fc_cuda_bwd_run: no rope kernels at head-dim class 64");
        else
            return bf ? fc_bwd_run<__nv_bfloat16, 64, FEAT>(plan, p, L, s) : fc_bwd_run<__half, 64, FEAT>(plan, p, L, s);
    case 128: return bf ? fc_bwd_run<__nv_bfloat16, 128, FEAT>(plan, p, L, s) : fc_bwd_run<__half, 128, FEAT>(plan, p, L, s);
    default: return bf ? fc_bwd_run<__nv_bfloat16, 256, FEAT>(plan, p, L, s) : fc_bwd_run<__half, 256, FEAT>(plan, p, L, s);
    }
}

extern "C" fc_status fc_cuda_bwd_run(const fc_cuda_bwd *plan, const fc_problem *run, fc_cuda_lengths lens, void *workspace,
                                     void *stream)
{
    if (lens.len) /* no backward face binds lengths per run (IFA's forward does) */
        return fc_fail(FC_ERR_BACKEND, "fc_cuda_bwd_run: per-run batch facts are not supported by the CUDA backward");
    fc_problem p = *run;
    p.batch = plan->facts.dev;
    BwdLaunch L = {};
    char *ws = (char *)(((uintptr_t)workspace + 255) & ~(uintptr_t)255);
    L.parts = fc_bwd_parts(plan->dclass);
    L.row0 = plan->row0;
    L.dsum = (float *)ws;
    L.rows = plan->rows;
    L.units = plan->n_kv * (int)p.Nkv * L.parts; /* fits: fc_cuda_tile_order checked it */
    if (plan->fused || plan->sm90) {
        L.dq_acc = (float *)(ws + plan->acc_at);
        L.arow0 = plan->arow0;
        L.arows = plan->arows;
        L.dq_ld = plan->dclass;
        L.turns = (unsigned *)(ws + plan->turns_at);
        L.ticket = (unsigned *)(ws + plan->ticket_at);
        L.dq_sync = plan->dq_sync;
    }
    L.vec_q = fc_cuda_vec_qk_ok(&p, &p.q, &p.q_rope);
    L.vec_k = fc_cuda_vec_qk_ok(&p, &p.k, &p.k_rope);
    L.vec_v = fc_cuda_vec_ok(&p.v, p.Dv);
    L.vec_do = fc_cuda_vec_ok(&p.dout, p.Dv);
    L.terms = p.pse.data || p.alibi.slopes || p.mask.data || p.softcap > 0.0f || fc_has_dropout(&p);
    cudaStream_t s = (cudaStream_t)stream;
    BwdMend M = {};
    M.flag = (unsigned *)(ws + plan->mend_at);
    M.q_bad = (unsigned char *)(ws + plan->mend_at + 256);
    M.k_bad = M.q_bad + (size_t)p.Nq * plan->rows;
    M.krow0 = plan->krow0;
    M.krows = plan->krows;
    M.kv_tile = fc_bwd_kv_rows(plan);
    M.kv_items = plan->kv_items;
    fc_status st = fc_bwd_mend_scan(plan, p, L, M, s);
    if (st != FC_OK)
        return st;
    if (fc_bwd_f32(&p)) { /* fp32 tiles: cp.async for fp32 views, 16-bit ones convert element by element */
        L.vec_q = fc_cuda_vec_f32(&p.q, p.Dqk), L.vec_k = fc_cuda_vec_f32(&p.k, p.Dqk);
        L.vec_v = fc_cuda_vec_f32(&p.v, p.Dv), L.vec_do = fc_cuda_vec_f32(&p.dout, p.Dv);
        switch (plan->dclass) {
        case 64: st = fc_bwd_run<float, 64, kFeatF32>(plan, p, L, s); break;
        case 128: st = fc_bwd_run<float, 128, kFeatF32>(plan, p, L, s); break;
        default: st = fc_bwd_run<float, 256, kFeatF32>(plan, p, L, s); break;
        }
    } else {
        const bool bf = p.q.dtype == FC_BF16;
        if (feat_bits(p) == kFeatPhilox)
            st = fc_bwd_run_class<kFeatPhilox>(plan, p, L, s, bf);
        else if (feat_bits(p) == kFeatRope)
            st = fc_bwd_run_class<kFeatRope>(plan, p, L, s, bf);
        else
            st = fc_bwd_run_class<0>(plan, p, L, s, bf);
    }
    return st == FC_OK ? fc_bwd_mend(plan, p, L, M, s) : st;
}
