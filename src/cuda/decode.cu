/*
 * The CUDA decode: which problems it takes, which kernel runs them (the tensor-core kernel of
 * decode_mma_kernel.cuh where it covers the problem, else the CUDA-core split + merge kernels of
 * decode_kernel.cuh; FLASHC_CUDA_DECODE=simt forces the latter), the split counts, the plan's
 * device state (per-batch facts, host-mapped fault report: immutable once planned) and a run's
 * workspace: counters and the fault word (zeroed by the run on its stream), the run's own
 * per-batch facts when it brings lengths, the partial results.  Runs allocate nothing and never
 * wait for the device, so they can be captured in a CUDA graph, and runs of one plan with
 * distinct workspaces may overlap on different streams.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuda.h"
#include "decode_kernel.cuh"
#include "decode_mma.h"
#include "decode_plan.h"
#include "decode_split.h"
#include "launch.h"
#include "plan_facts.h"
#include "table_report.h"

using namespace fc_cuda;

static_assert(kMmaRows == FC_DEC_MMA_ROWS, "the plan's and the kernel's rows per kv head");

typedef void (*DecSplitFn)(const fc_problem, const DecLaunch);

struct DecKernel {
    DecSplitFn fn;
    size_t smem, smem_max; /* this plan's rows; the most any plan of this kernel asks */
    int tn;
};

/* A run's workspace, in this order (each part 256-byte aligned): counters [B][Nkv] and the fault
 * word (zeroed per run), the run's per-batch facts, the partial results. */
struct DecWorkspace {
    size_t counters, fault, facts, partial, bytes;
};

struct fc_cuda_dec {
    fc_cuda_facts facts;     /* the planned per-batch facts, host and device */
    DecKernel kernel;        /* CUDA cores */
    MmaKernel mma;           /* tensor cores (fn NULL: not this plan's) */
    int nsplit, mma_splits, stages, maxblk, rows, qr, dclass;
    int64_t kv_cap; /* the most kv positions a run may see (fc_dec_kv_cap) */
    size_t slot; /* CUDA cores: floats per (batch, kv head, split) */
    DecWorkspace ws;
    DecReport *report, *report_dev; /* host-mapped */
    unsigned seen;                  /* reports already returned (host, atomic) */
};
/* Rows per CTA: the G query heads of a kv head × the longest batch's query rows. */
static int64_t fc_dec_rows(const fc_problem *p) { return p->G * p->max_sq; }

/* The most rows a CTA serves for a head-dim class: 8 per thread row group, 64 in all. */
static int64_t fc_dec_max_rows(int dclass) { return dclass == 256 ? 32 : kDecMaxRows; }

extern "C" bool fc_cuda_dec_only(const fc_problem *p)
{
    return p->k.dtype == FC_I8 || p->v.dtype == FC_I8 || p->out.dtype != p->q.dtype;
}

extern "C" const char *fc_cuda_dec_unsupported(const fc_problem *p)
{
    if (fc_dec_rows(p) > fc_dec_max_rows(fc_cuda_dclass(p)))
        return "paged, tensor-list or int8 key/value, or an output dtype other than the query's, with more than 64 "
               "query rows per kv head (query heads per kv head × query positions; 32 for head dims above 128)";
    if (!fc_dtype_is_float(p->q.dtype))
        return "a query dtype other than fp32/fp16/bf16";
    if (p->k.dtype != p->v.dtype)
        return "key and value of different dtypes";
    if (p->k.dtype != FC_F16 && p->k.dtype != FC_BF16 && p->k.dtype != FC_I8)
        return "fp32 key/value in decode (fp16, bf16 and int8 caches are on the GPU)";
    if (p->Dr > 0 || p->q_rope.data || p->k_rope.data)
        return "rope features (Dr > 0, the MLA split) in decode";
    if (p->Dqk > 256 || p->Dv > 256)
        return "head dims above 256";
    if (p->sparse.data)
        return "sparse block selection";
    if (fc_has_dropout(p))
        return "dropout in the decode kernel";
    if (p->pse.data && !fc_dtype_is_float(p->pse.dtype))
        return "non-float pse";
    if ((p->k.batch_data || p->v.batch_data) && p->B > kDecMaxList)
        return "tensor-list key/value with more than 256 batches";
    if (p->max_skv >= (1 << 30))
        return "kv lengths of 2^30 or more";
    if (p->B > 65535 || p->Nkv > 65535) /* the kernels' grids: (splits, Nkv, B), the merge's (Nkv, B) */
        return "more than 65535 batches or kv heads in decode (a CUDA grid's y and z limit)";
    if (!fc_dec_table_fits(p))
        return "block tables of 2^30 entries or more";
    return NULL;
}

template <typename KT, int DC> static DecKernel fc_dec_kernel_rb(int rows)
{
    DecKernel k;
    k.fn = rows <= 4 ? dec_split_kernel<KT, DC, 4> : dec_split_kernel<KT, DC, 8>;
    k.smem = dec_smem_bytes<KT, DC>(rows);
    k.smem_max = dec_smem_bytes<KT, DC>((int)fc_dec_max_rows(DC));
    k.tn = DecShape<KT, DC>::TN;
    return k;
}

template <typename KT> static DecKernel fc_dec_kernel_d(int dclass, int rows)
{
    return dclass == 64 ? fc_dec_kernel_rb<KT, 64>(rows) : dclass == 128 ? fc_dec_kernel_rb<KT, 128>(rows)
                                                                         : fc_dec_kernel_rb<KT, 256>(rows);
}

static DecKernel fc_dec_kernel(fc_dtype kv, int dclass, int rows)
{
    return kv == FC_I8 ? fc_dec_kernel_d<int8_t>(dclass, rows)
           : kv == FC_BF16 ? fc_dec_kernel_d<__nv_bfloat16>(dclass, rows)
                           : fc_dec_kernel_d<__half>(dclass, rows);
}

/* The CUDA-core split count: enough CTAs for whole waves over the SMs (at the kernel's
 * occupancy), each slice at least two tiles long. */
static int fc_dec_splits(const fc_problem *p, const DecKernel &k, int sms, int occ)
{
    const int64_t longest = fc_dec_longest(p);
    const int64_t units = p->B * p->Nkv, slots = (int64_t)sms * (occ > 0 ? occ : 1);
    int64_t cap = (longest + 2 * k.tn - 1) / (2 * k.tn);
    cap = cap < 1 ? 1 : cap > 64 ? 64 : cap;
    int best = 1;
    double best_eff = 0.0;
    for (int64_t n = 1; n <= cap; n++) {
        const int64_t total = units * n, waves = (total + slots - 1) / slots;
        const double eff = (double)total / (double)(waves * slots);
        if (eff > best_eff + 1e-9)
            best = (int)n, best_eff = eff;
        if (eff >= 0.95)
            break;
    }
    return best;
}

/* FLASHC_CUDA_DECODE: auto or mma: the tensor-core kernel where it covers the problem; simt: the
 * CUDA-core kernel always; unset or empty: kDecDefault.  FLASHC_CUDA_DECODE_SPLITS=n forces the
 * split count (tests: the results must not change). */
static const char *const kDecDefault = "auto"; /* the tensor-core kernel where it runs (passed on an H200) */

/* FLASHC_CUDA_DECODE_VARIANT: the tensor-core kernel's variant (decode_mma_kernel.cuh; head-dim
 * class 128): base, linear (kMmaLinearIssue), merge (kMmaWideMerge), linear+merge, or
 * linear+merge+posm (kMmaPositionsM too: positions on the MMA's M side where rows ≤ 8), or
 * linear+merge+posm+imma (kMmaIntK too: int8 keys on the integer tensor cores there), or
 * linear+merge+posm+imma+ipv (kMmaIntPV too: int8 values' P·V on the integer tensor cores) (unset or
 * empty: kDecVariantDefault — on an H200 linear+merge read 1.15-1.24x faster than base at every
 * bench shape and passed the decode tests). */
static const char *const kDecVariantDefault = "linear+merge";
static fc_status fc_dec_variant(int *variant)
{
    static const struct {
        const char *name;
        int bits;
    } names[] = {{"base", 0}, {"linear", kMmaLinearIssue}, {"merge", kMmaWideMerge}, {"linear+merge", kMmaLinearIssue | kMmaWideMerge},
                   {"linear+merge+posm", kMmaLinearIssue | kMmaWideMerge | kMmaPositionsM},
                   {"linear+merge+posm+imma", kMmaLinearIssue | kMmaWideMerge | kMmaPositionsM | kMmaIntK},
                   {"linear+merge+posm+imma+ipv", kMmaLinearIssue | kMmaWideMerge | kMmaPositionsM | kMmaIntK | kMmaIntPV}};
    const char *v = getenv("FLASHC_CUDA_DECODE_VARIANT");
    *variant = 0;
    v = v && *v ? v : kDecVariantDefault;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(v, names[i].name) == 0) {
            *variant = names[i].bits;
            return FC_OK;
        }
    return fc_fail(FC_ERR_BACKEND, "fc_cuda_dec_plan: FLASHC_CUDA_DECODE_VARIANT=%s names no variant (base, linear, merge, linear+merge, linear+merge+posm, linear+merge+posm+imma, "
                   "linear+merge+posm+imma+ipv)", v);
}

static fc_status fc_dec_env(bool *simt, int *splits, int *variant)
{
    const fc_status st = fc_dec_variant(variant);
    if (st != FC_OK)
        return st;
    const char *mode = getenv("FLASHC_CUDA_DECODE"), *sp = getenv("FLASHC_CUDA_DECODE_SPLITS");
    mode = mode && *mode ? mode : kDecDefault;
    *simt = mode && strcmp(mode, "simt") == 0;
    if (mode && *mode && !*simt && strcmp(mode, "auto") != 0 && strcmp(mode, "mma") != 0)
        return fc_fail(FC_ERR_BACKEND, "fc_cuda_dec_plan: FLASHC_CUDA_DECODE=%s names no decode kernel (auto, mma or simt)", mode);
    *splits = sp && *sp ? atoi(sp) : 0;
    if (*splits < 0 || *splits > FC_DEC_MAX_SPLITS)
        return fc_fail(FC_ERR_BACKEND, "fc_cuda_dec_plan: FLASHC_CUDA_DECODE_SPLITS=%s is outside [1, %d]", sp, FC_DEC_MAX_SPLITS);
    return FC_OK;
}

extern "C" void fc_cuda_dec_destroy(fc_cuda_dec *plan)
{
    if (!plan)
        return;
    fc_cuda_facts_free(&plan->facts);
    cudaFreeHost(plan->report);
    free(plan);
}

static size_t fc_align256(size_t x) { return (x + 255) & ~(size_t)255; }

/* The tensor-core kernel's setup: stages that fit the device, occupancy, split count (fn NULL
 * when it cannot run the plan here). */
static cudaError_t fc_dec_mma_setup(fc_cuda_dec *plan, const fc_problem *p, int dev, int sms, int forced, int variant)
{
    MmaKernel k = mma_kernel(p->k.dtype, plan->dclass, plan->rows, variant);
    int optin = 0, occ = 0;
    cudaFuncAttributes fa;
    cudaError_t err;
    if ((err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) ||
        (err = cudaFuncGetAttributes(&fa, k.fn)))
        return err;
    const size_t room = (size_t)optin > fa.sharedSizeBytes ? (size_t)optin - fa.sharedSizeBytes : 0;
    const int stages = k.smem3 <= room ? 3 : k.smem2 <= room ? 2 : 0;
    /* the last CTA keeps each block's weights in the idle stages */
    if (stages == 0 || (size_t)plan->maxblk * plan->rows * 4 > k.stage_bytes2 / 2 * stages)
        return cudaSuccess;
    const size_t smem = stages == 3 ? k.smem3 : k.smem2;
    if ((err = cudaFuncSetAttribute(k.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)) ||
        (err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k.fn, kMmaThreads, smem)))
        return err;
    if (occ < 1)
        return cudaSuccess;
    plan->mma = k;
    plan->stages = stages;
    plan->mma_splits = forced ? forced : fc_dec_split_count(p->B * p->Nkv, fc_dec_blocks(fc_dec_longest(p)), (int64_t)sms * occ);
    return cudaSuccess;
}

extern "C" fc_status fc_cuda_dec_plan(const fc_problem *p, fc_cuda_dec **out)
{
    bool simt = false;
    int forced = 0, variant = 0;
    fc_status st = fc_dec_env(&simt, &forced, &variant);
    if (st != FC_OK)
        return st;
    fc_cuda_dec *plan = (fc_cuda_dec *)calloc(1, sizeof *plan);
    if (!plan)
        return fc_fail(FC_ERR_NO_MEMORY, "fc_cuda_dec_plan: out of host memory");
    plan->dclass = fc_cuda_dclass(p);
    plan->qr = (int)(p->max_sq > 0 ? p->max_sq : 1);
    plan->rows = (int)(p->G * plan->qr);
    plan->kernel = fc_dec_kernel(p->k.dtype, plan->dclass, plan->rows);
    plan->slot = (size_t)plan->rows * (plan->dclass + 2);
    plan->kv_cap = fc_dec_kv_cap(p);
    plan->maxblk = (int)fc_dec_blocks(plan->kv_cap);
    int dev = 0, sms = 0, occ = 0;
    cudaError_t err;
    const size_t bb = fc_cuda_facts_bytes(p);
    if ((err = cudaGetDevice(&dev)) != cudaSuccess || (err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) ||
        (err = cudaFuncSetAttribute(plan->kernel.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)plan->kernel.smem_max)) ||
        (err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, plan->kernel.fn, kDecThreads, plan->kernel.smem)) ||
        (!simt && !fc_dec_mma_gap(p, plan->rows, mma_int_pv(p->k.dtype, plan->dclass, plan->rows, variant)) && (err = fc_dec_mma_setup(plan, p, dev, sms, forced, variant))))
        st = fc_cuda_err(err, "fc_cuda_dec_plan");
    if (st == FC_OK)
        st = fc_cuda_report_alloc(&plan->report, &plan->report_dev, "fc_cuda_dec_plan");
    if (st == FC_OK)
        st = fc_cuda_facts_plan(&plan->facts, p, "fc_cuda_dec_plan");
    if (st != FC_OK) {
        fc_cuda_dec_destroy(plan);
        return st;
    }
    plan->nsplit = forced ? (forced < 64 ? forced : 64) : fc_dec_splits(p, plan->kernel, sms, occ);
    const size_t pairs = (size_t)(p->B * p->Nkv);
    const size_t simt_partial = pairs * (size_t)plan->nsplit * plan->slot * sizeof(float);
    const size_t mma_partial = plan->mma.fn ? pairs * (size_t)plan->maxblk * plan->rows * (plan->dclass + 2) * sizeof(float) : 0;
    DecWorkspace &w = plan->ws;
    w.counters = 0;
    w.fault = fc_align256(pairs * sizeof(unsigned));
    w.facts = w.fault + 256;
    w.partial = fc_align256(w.facts + bb);
    w.bytes = w.partial + (simt_partial > mma_partial ? simt_partial : mma_partial);
    *out = plan;
    return FC_OK;
}

extern "C" size_t fc_cuda_dec_workspace(const fc_cuda_dec *plan, const fc_problem *p)
{
    (void)p;
    return plan->ws.bytes;
}

fc_status fc_cuda_report_alloc(DecReport **host, DecReport **dev, const char *who)
{
    cudaError_t err = cudaHostAlloc((void **)host, sizeof **host, cudaHostAllocMapped);
    if (err == cudaSuccess && (err = cudaHostGetDevicePointer((void **)dev, *host, 0)) == cudaSuccess)
        memset(*host, 0, sizeof **host);
    return err == cudaSuccess ? FC_OK : fc_cuda_err(err, who);
}

fc_status fc_cuda_report_check(const DecReport *report, unsigned *seen_count, const fc_problem *p, const fc_batch *planned)
{
    const unsigned seq = report->seq;
    unsigned seen = __atomic_load_n(seen_count, __ATOMIC_ACQUIRE);
    if (seq == seen || !__atomic_compare_exchange_n(seen_count, &seen, seq, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return FC_OK;
    const DecReport r = *report;
    if (r.tensor == 2)
        return fc_fail(FC_ERR_INVALID_ARG,
                       "io.kv_lens[%lld] was %lld, outside [%lld, %lld] (the batch's kv start and planned "
                       "length; found on the GPU by a run of this plan, which did not write %s)",
                       (long long)r.batch, (long long)r.value, (long long)planned[r.batch].col_lo, (long long)planned[r.batch].skv,
                       r.whole ? "its outputs" : "that batch's rows");
    const fc_pages &pg = r.tensor ? p->v.pages : p->k.pages;
    return fc_fail(FC_ERR_INVALID_ARG,
                   "%s block table entry [%lld][%lld] was %lld, outside [0, %lld) (found on the GPU by a run "
                   "of this plan, which did not write %s)",
                   r.tensor ? "value" : "key", (long long)r.batch, (long long)r.entry, (long long)r.value, (long long)pg.blocks,
                   r.whole ? "its outputs" : "that batch's rows");
}

extern "C" fc_status fc_cuda_dec_check(fc_cuda_dec *plan, const fc_problem *p)
{
    return fc_cuda_report_check(plan->report, &plan->seen, p, plan->facts.planned);
}

/* A run's own facts: the kernels read every window per run; the plan fixes at most the query
 * rows per CTA and the kv positions its partials hold. */
static fc_status fc_dec_check_facts(const void *state, int64_t b, const fc_batch &, const fc_batch &own)
{
    const fc_cuda_dec *plan = (const fc_cuda_dec *)state;
    if (own.q_rows > plan->qr)
        return fc_fail(FC_ERR_INVALID_ARG, "fc_cuda_dec_run: batch %lld brings %lld query rows, the decode plan serves %d",
                       (long long)b, (long long)own.q_rows, plan->qr);
    if (own.skv > plan->kv_cap)
        return fc_fail(FC_ERR_INVALID_ARG, "fc_cuda_dec_run: batch %lld brings a kv length of %lld, the decode plan serves "
                                           "%lld (its planned lengths bound every run's)",
                       (long long)b, (long long)own.skv, (long long)plan->kv_cap);
    return FC_OK;
}

extern "C" fc_status fc_cuda_dec_run(const fc_cuda_dec *plan, const fc_problem *run, fc_cuda_lengths lens, const int64_t *kv_lens,
                                     void *workspace, void *stream)
{
    fc_problem p = *run;
    cudaStream_t s = (cudaStream_t)stream;
    char *ws = (char *)workspace;
    const fc_status st = fc_cuda_facts_for_run(&plan->facts, run, lens, plan, fc_dec_check_facts, ws ? ws + plan->ws.facts : NULL,
                                               s, "fc_cuda_dec_run", &p.batch, NULL);
    if (st != FC_OK)
        return st;
    if (p.B == 0 || p.Nkv == 0)
        return FC_OK;
    cudaError_t err = cudaMemsetAsync(ws, 0, plan->ws.fault + sizeof(unsigned long long), s);
    if (err != cudaSuccess)
        return fc_cuda_err(err, "fc_cuda_dec_run: clearing the run's counters");
    const int64_t es = fc_dtype_bytes(p.k.dtype);
    const bool vec_k = fc_dec_vec_ok(&p.k, p.Dqk, es, p.B), vec_v = fc_dec_vec_ok(&p.v, p.Dv, es, p.B);
    if (plan->mma.fn && vec_k && vec_v) { /* a run whose views lost the alignment takes the CUDA-core kernel */
        static_assert(sizeof(MmaLaunch) < 8192, "kernel parameters");
        MmaLaunch L;
        memset(&L, 0, sizeof L);
        L.partial = (float *)(ws + plan->ws.partial);
        L.counter = (unsigned *)(ws + plan->ws.counters);
        L.fault = (unsigned long long *)(ws + plan->ws.fault);
        L.report = plan->report_dev;
        L.kv_lens = kv_lens;
        L.rows = plan->rows, L.qr = plan->qr, L.nsplit = plan->mma_splits, L.maxblk = plan->maxblk, L.stages = plan->stages;
        L.qlo = p.q.dtype != p.k.dtype;
        for (int64_t b = 0; p.k.batch_data && b < p.B; b++)
            L.k_list[b] = p.k.batch_data[b], L.v_list[b] = p.v.batch_data[b];
        const dim3 grid((unsigned)plan->mma_splits, (unsigned)p.Nkv, (unsigned)p.B);
        plan->mma.fn<<<grid, kMmaThreads, plan->stages == 3 ? plan->mma.smem3 : plan->mma.smem2, s>>>(p, L);
    } else {
        DecLaunch L;
        memset(&L, 0, sizeof L);
        L.partial = (float *)(ws + plan->ws.partial);
        L.fault = (unsigned long long *)(ws + plan->ws.fault);
        L.report = plan->report_dev;
        L.kv_lens = kv_lens;
        L.nsplit = plan->nsplit, L.rows = plan->rows, L.qr = plan->qr, L.slot = (int)plan->slot;
        L.vec_k = vec_k, L.vec_v = vec_v;
        L.terms = p.pse.data || p.alibi.slopes || p.mask.data || p.softcap > 0.0f;
        for (int64_t b = 0; p.k.batch_data && b < p.B; b++)
            L.k_list[b] = p.k.batch_data[b], L.v_list[b] = p.v.batch_data[b];
        const dim3 grid((unsigned)plan->nsplit, (unsigned)p.Nkv, (unsigned)p.B);
        plan->kernel.fn<<<grid, kDecThreads, plan->kernel.smem, s>>>(p, L);
        const size_t msmem = (size_t)(plan->nsplit + 2) * plan->rows * sizeof(float);
        dec_merge_kernel<<<dim3((unsigned)p.Nkv, (unsigned)p.B), kDecThreads, msmem, s>>>(p, L);
    }
    err = cudaGetLastError();
    return err == cudaSuccess ? FC_OK : fc_cuda_err(err, "fc_cuda_dec_run: decode launch");
}
