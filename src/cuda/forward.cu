/*
 * The CUDA forward: what the kernel covers, the plan's device state (per-batch facts and the
 * launch order of the query tiles, heaviest first, so that causal and varlen problems do not
 * leave SMs idle at the tail), and the launch.  Kernel instantiations: fp16 and bf16 × head-dim
 * classes 64 / 128 / 256 (Dqk and Dv ≤ the class; features beyond them load as zeros); the
 * feature kernels (features.cuh) where a problem needs them: generated dropout, rope-split heads
 * (classes 128 and 256, Dqk + Dr ≤ the class), fp32 operands (3×TF32 products, every class, and with
 * generated dropout; the sm_90a kernel leaves them to these on sm_90 GPUs too), paged or tensor-list key/value (fp16, bf16
 * and fp32, every class: FlashAttention's paged varlen; a run first checks its block tables on the
 * GPU, as the decode does, and an earlier run's bad entry is reported by fc_cuda_fwd_check).
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../core/dtype.h"
#include "cuda.h"
#include "decode_plan.h"
#include "forward_kernel.cuh"
#include "launch.h"
#include "plan_facts.h"
#include "table_report.h"
#ifdef FLASHC_HOPPER
#include "hopper/fwd.h"
#endif

using namespace fc_cuda;

struct fc_cuda_fwd {
    fc_cuda_facts facts;     /* the planned per-batch facts, host and device */
    int2 *items;             /* device: (batch, query tile), heaviest first */
    int n_items, dclass;     /* head-dim class of the kernel: 64, 128 or 256 */
    bool insist_sm90;        /* FLASHC_CUDA_FWD=sm90: a run the sm_90a kernel cannot map fails */
    DecReport *report, *report_dev; /* paged: a run's bad block-table entry (host-mapped) */
    unsigned seen;                  /* reports already returned (host, atomic) */
#ifdef FLASHC_HOPPER
    bool sm90;               /* the sm_90a kernel runs this plan (its views permitting, per run) */
    fc_hopper::FwdPlan hopper;
#endif
};

static int fc_fwd_bm(int dclass) { return dclass == 64 ? FwdShape<64>::BM : dclass == 128 ? FwdShape<128>::BM : FwdShape<256>::BM; }

extern "C" const char *fc_cuda_fwd_unsupported(const fc_problem *p)
{
    if (p->q.dtype != FC_F16 && p->q.dtype != FC_BF16 && p->q.dtype != FC_F32)
        return "query dtype other than fp16/bf16/fp32 (int8 operands are not on the GPU yet)";
    if (p->k.dtype != p->q.dtype || p->v.dtype != p->q.dtype)
        return "key/value dtype different from the query's (int8 antiquant is not on the GPU yet)";
    if (p->out.dtype != p->q.dtype) /* P is rounded to the operand dtype for the P·V product */
        return "an output dtype other than the operands' (fp32 outputs of fp16/bf16 or int8 outputs are not on the GPU yet)";
    if (p->q.dtype == FC_F32 && p->Dr > 0)
        return "rope features (Dr > 0) with fp32 operands";
    if (p->Dr > 0 && (p->q_rope.dtype != p->q.dtype || p->k_rope.dtype != p->q.dtype))
        return "rope features (Dr > 0) of a dtype other than the query's";
    if (p->Dr > 0 && p->drop_philox)
        return "rope features (Dr > 0) with dropout generated on the device";
    if (p->Dr > 0 && p->Dqk + p->Dr > 256)
        return "rope features with Dqk + Dr above 256 (the MLA form 512 + 64 is not on the GPU yet)";
    if (p->Dqk > 256 || p->Dv > 256)
        return "head dims above 256";
    if (kv_paged_or_listed(*p) && (p->Dr > 0 || p->drop_philox))
        return "paged or tensor-list key/value with rope features (Dr > 0) or dropout generated on the device";
    if ((p->k.batch_data || p->v.batch_data) && p->B > kDecMaxList)
        return "tensor-list key/value with more than 256 batches";
    if (!fc_dec_table_fits(p))
        return "block tables of 2^30 entries or more";
    if (p->q.batch_data || p->out.batch_data)
        return "tensor-list (per-batch pointer) query or output storage";
    if (p->sparse.data)
        return "sparse block selection";
    if (p->pse.data && !fc_dtype_is_float(p->pse.dtype))
        return "non-float pse";
    if (p->max_sq >= (1 << 30) || p->max_skv >= (1 << 30))
        return "sequence lengths of 2^30 or more";
    return NULL;
}

extern "C" void fc_cuda_fwd_destroy(fc_cuda_fwd *plan)
{
    if (!plan)
        return;
    fc_cuda_facts_free(&plan->facts);
    cudaFree(plan->items);
    cudaFreeHost(plan->report);
#ifdef FLASHC_HOPPER
    if (plan->sm90)
        fc_hopper::fwd_destroy(&plan->hopper);
#endif
    free(plan);
}

/* Which forward kernel a plan takes: FLASHC_CUDA_FWD=sm80 forces the mma.sync kernel (every GPU),
 * sm90 insists on the Hopper kernel (a plan or run it cannot take fails, naming why: for tests),
 * auto takes the Hopper kernel where the device and the problem allow.  Unset: kFwdDefault. */
static const char *const kFwdDefault = "auto"; /* the sm_90a kernel where it runs (passed on an H200) */

static fc_status fc_fwd_choose(const fc_problem *p, fc_cuda_fwd *plan)
{
    const char *mode = getenv("FLASHC_CUDA_FWD");
    mode = mode && *mode ? mode : kFwdDefault;
    const bool force80 = mode && strcmp(mode, "sm80") == 0;
    plan->insist_sm90 = mode && strcmp(mode, "sm90") == 0;
    if (mode && *mode && !force80 && !plan->insist_sm90 && strcmp(mode, "auto") != 0)
        return fc_fail(FC_ERR_BACKEND, "fc_cuda_fwd_plan: FLASHC_CUDA_FWD=%.64s names no forward kernel (auto, sm80 or sm90)", mode);
    const char *why = force80 ? "FLASHC_CUDA_FWD=sm80" : NULL;
#ifdef FLASHC_HOPPER
    if (!why && !fc_hopper::fwd_device_ok(&why))
        ;
    else if (!why && (why = fc_hopper::fwd_unsupported(p)) == NULL) {
        const fc_status st = fc_hopper::fwd_plan(p, &plan->hopper);
        if (st != FC_OK)
            return st;
        plan->sm90 = true;
        return FC_OK;
    }
#else
    (void)p;
    if (!why)
        why = "this build has no sm_90a kernels (no CuTe headers at configure time)";
#endif
    if (plan->insist_sm90)
        return fc_fail(FC_ERR_BACKEND, "fc_cuda_fwd_plan: FLASHC_CUDA_FWD=sm90, but the sm_90a forward cannot run this: %s", why);
    return FC_OK;
}

extern "C" fc_status fc_cuda_fwd_plan(const fc_problem *p, fc_cuda_fwd **out)
{
    fc_cuda_fwd *plan = (fc_cuda_fwd *)calloc(1, sizeof *plan);
    if (!plan)
        return fc_fail(FC_ERR_NO_MEMORY, "fc_cuda_fwd_plan: out of host memory");
    plan->dclass = fc_cuda_dclass(p);
    fc_status st = fc_cuda_facts_plan(&plan->facts, p, "fc_cuda_fwd_plan");
    if (st == FC_OK)
        st = fc_cuda_tile_order(p, fc_fwd_bm(plan->dclass), false, p->Nq, fc_cuda_q_tile_cost, &plan->items, &plan->n_items,
                                "fc_cuda_fwd_plan");
    if (st == FC_OK)
        st = fc_fwd_choose(p, plan);
    if (st == FC_OK && (p->k.pages.table || p->v.pages.table))
        st = fc_cuda_report_alloc(&plan->report, &plan->report_dev, "fc_cuda_fwd_plan");
    if (st != FC_OK) {
        fc_cuda_fwd_destroy(plan);
        return st;
    }
    *out = plan;
    return FC_OK;
}

/* The launch of kernel over the plan's tiles (args: FwdLaunch, or FwdPagedLaunch for kFeatPaged). */
template <int WARPS, typename A>
static fc_status fc_fwd_start(const fc_cuda_fwd *plan, const fc_problem &p, void (*kernel)(const fc_problem, const A), size_t smem,
                              const A &L, cudaStream_t stream)
{
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (err != cudaSuccess)
        return fc_cuda_err(err, "fc_cuda_fwd_run: shared memory of the forward kernel");
    const unsigned grid = (unsigned)((int64_t)plan->n_items * p.Nq);
    if (grid > 0)
        kernel<<<grid, 32 * WARPS, smem, stream>>>(p, L);
    if ((err = cudaGetLastError()) != cudaSuccess)
        return fc_cuda_err(err, "fc_cuda_fwd_run: forward launch");
    return FC_OK;
}

/* A paged run's block tables, checked on the GPU before either forward kernel (fwd_page_check_kernel
 * into the fault word at the workspace's start, zeroed here): a bad entry stops the run. */
static fc_status fc_fwd_check_pages(const fc_problem &p, void *workspace, cudaStream_t stream)
{
    cudaError_t err = cudaMemsetAsync(workspace, 0, sizeof(unsigned long long), stream);
    if (err == cudaSuccess && p.B > 0)
        fwd_page_check_kernel<kThreads><<<(unsigned)p.B, kThreads, 0, stream>>>(p, (unsigned long long *)workspace);
    if (err != cudaSuccess || (err = cudaGetLastError()) != cudaSuccess)
        return fc_cuda_err(err, "fc_cuda_fwd_run: the block-table check");
    return FC_OK;
}

/* A paged or tensor-list run (a paged one's block tables already checked: fc_fwd_check_pages): the
 * kFeatPaged kernel. */
template <typename T, int D>
static fc_status fc_fwd_launch_paged(const fc_cuda_fwd *plan, const fc_problem &p, const FwdLaunch &base, void *workspace,
                                     cudaStream_t stream)
{
    constexpr int BM = FwdShape<D>::BM, BNT = FwdShape<D>::BN_TERMS, WARPS = FwdShape<D>::WARPS;
    using SmT = FwdSmem<D, BM, BNT, (int)sizeof(T)>;
    constexpr int FEAT = kFeatPaged | (sizeof(T) == 4 ? kFeatF32 : 0);
    static_assert(sizeof(fc_problem) + sizeof(FwdPagedLaunch) < 8192, "kernel parameters");
    FwdPagedLaunch L;
    memset(&L, 0, sizeof L);
    static_cast<FwdLaunch &>(L) = base;
    L.fault = (unsigned long long *)workspace;
    L.report = plan->report_dev;
    for (int64_t b = 0; p.k.batch_data && b < p.B; b++)
        L.k_list[b] = p.k.batch_data[b], L.v_list[b] = p.v.batch_data[b];
    return fc_fwd_start<WARPS>(plan, p, fwd_feat_kernel<T, D, BM, BNT, WARPS, FEAT>, SmT::bytes + SmT::scratch, L, stream);
}

template <typename T, int D>
static fc_status fc_fwd_launch(const fc_cuda_fwd *plan, const fc_problem &p, const FwdLaunch &L, void *workspace, cudaStream_t stream)
{
    constexpr int BM = FwdShape<D>::BM, BN = FwdShape<D>::BN, BNT = FwdShape<D>::BN_TERMS, WARPS = FwdShape<D>::WARPS;
    using SmT = FwdSmem<D, BM, BNT, (int)sizeof(T)>;
    const int feat = feat_bits(p);
    if (feat & kFeatPaged) /* fp16, bf16 or fp32, no other feature (fc_cuda_fwd_unsupported) */
        return fc_fwd_launch_paged<T, D>(plan, p, L, workspace, stream);
    const bool plain = !L.terms && !fc_has_dropout(&p) && feat == 0;
    const size_t smem = plain ? FwdSmem<D, BM, BN>::bytes : SmT::bytes + SmT::scratch;
    void (*kernel)(const fc_problem, const FwdLaunch);
    if constexpr (sizeof(T) == 4) { /* fp32: one kernel for every problem of the class (generated dropout a run-time branch) */
        kernel = fwd_feat_kernel<float, D, BM, BNT, WARPS, kFeatF32>;
    } else {
        kernel = plain ? fwd_kernel<T, D, BM, BN, WARPS, true> : fwd_kernel<T, D, BM, BNT, WARPS, false>;
        if (feat == kFeatPhilox)
            kernel = fwd_feat_kernel<T, D, BM, BNT, WARPS, kFeatPhilox>;
        if constexpr (D >= 128) /* rope problems take classes 128 and 256 (fc_cuda_dclass) */
            if (feat == kFeatRope)
                kernel = fwd_feat_kernel<T, D, BM, BNT, WARPS, kFeatRope>;
    }
    return fc_fwd_start<WARPS>(plan, p, kernel, smem, L, stream);
}

/* A paged run's fault word first (256 bytes), then the run's own facts. */
static size_t fc_fwd_fault_bytes(const fc_problem *p) { return p->k.pages.table || p->v.pages.table ? 256 : 0; }

extern "C" size_t fc_cuda_fwd_workspace(const fc_problem *p, bool runs_bring_facts)
{
    return fc_fwd_fault_bytes(p) + (runs_bring_facts ? (fc_cuda_facts_bytes(p) + 255) / 256 * 256 : 0);
}

extern "C" fc_status fc_cuda_fwd_check(fc_cuda_fwd *plan, const fc_problem *p)
{
    return plan->report ? fc_cuda_report_check(plan->report, &plan->seen, p, NULL) : FC_OK;
}

/* A run's own facts (a face that binds lengths per run, e.g. IncreFlashAttention's kvPaddingSize
 * read in its second phase) may move kv windows, not query rows, which the tile list was made
 * from. */
static fc_status fc_fwd_check_facts(const void *, int64_t b, const fc_batch &planned, const fc_batch &own)
{
    if (own.q_rows != planned.q_rows || own.sq != planned.sq)
        return fc_fail(FC_ERR_INVALID_ARG, "fc_cuda_fwd_run: batch %lld of the run has %lld query rows of length %lld, the plan "
                                           "%lld of length %lld",
                       (long long)b, (long long)own.q_rows, (long long)own.sq, (long long)planned.q_rows,
                       (long long)planned.sq);
    return FC_OK;
}

extern "C" fc_status fc_cuda_fwd_run(const fc_cuda_fwd *plan, const fc_problem *run, fc_cuda_lengths lens, void *workspace,
                                     void *stream)
{
    fc_problem p = *run;
    fc_cuda_reach reach;
    const size_t fault = fc_fwd_fault_bytes(run);
    fc_status st = fc_cuda_facts_for_run(&plan->facts, run, lens, plan, fc_fwd_check_facts, workspace ? (char *)workspace + fault : NULL,
                                         (cudaStream_t)stream, "fc_cuda_fwd_run", &p.batch, &reach);
    if (st == FC_OK && (p.k.pages.table || p.v.pages.table))
        st = fc_fwd_check_pages(p, workspace, (cudaStream_t)stream);
    if (st != FC_OK)
        return st;
#ifdef FLASHC_HOPPER
    if (plan->sm90) { /* the sm_90a kernel, unless this run's views cannot be mapped for it */
        bool launched = false;
        const char *why = NULL;
        const bool paged = p.k.pages.table || p.v.pages.table;
        const fc_hopper::FwdFault fault = {paged ? (const unsigned long long *)workspace : NULL, paged ? plan->report_dev : NULL};
        st = fc_hopper::fwd_run(plan->hopper, p, reach, fault, (cudaStream_t)stream, &launched, &why);
        if (st != FC_OK || launched)
            return st;
        if (plan->insist_sm90)
            return fc_fail(FC_ERR_BACKEND, "fc_cuda_fwd_run: FLASHC_CUDA_FWD=sm90, but this run's views cannot be mapped: %s", why);
    }
#endif
    if (plan->insist_sm90)
        return fc_fail(FC_ERR_BACKEND, "fc_cuda_fwd_run: FLASHC_CUDA_FWD=sm90, but the plan took the sm_80 kernel");
    FwdLaunch L;
    L.items = plan->items;
    L.n_items = plan->n_items;
    fwd_launch_views(p, L);
    const bool f32 = p.q.dtype == FC_F32;
    cudaStream_t s = (cudaStream_t)stream;
    const bool bf = p.q.dtype == FC_BF16;
    if (f32)
        switch (plan->dclass) {
        case 64: return fc_fwd_launch<float, 64>(plan, p, L, workspace, s);
        case 128: return fc_fwd_launch<float, 128>(plan, p, L, workspace, s);
        default: return fc_fwd_launch<float, 256>(plan, p, L, workspace, s);
        }
    switch (plan->dclass) {
    case 64: return bf ? fc_fwd_launch<__nv_bfloat16, 64>(plan, p, L, workspace, s) : fc_fwd_launch<__half, 64>(plan, p, L, workspace, s);
    case 128:
        return bf ? fc_fwd_launch<__nv_bfloat16, 128>(plan, p, L, workspace, s) : fc_fwd_launch<__half, 128>(plan, p, L, workspace, s);
    default:
        return bf ? fc_fwd_launch<__nv_bfloat16, 256>(plan, p, L, workspace, s) : fc_fwd_launch<__half, 256>(plan, p, L, workspace, s);
    }
}
