/*
 * The CUDA decode (decode_kernel.cuh): which problems it takes, the split count, the plan's device
 * state (per-batch facts, the block-table fault word and its host-mapped report) and the launch of
 * the split and merge kernels.  Instantiations: key/value fp16, bf16 or int8 × head-dim classes
 * 64 / 128 / 256 × 4 or 8 rows per thread.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuda.h"
#include "decode_kernel.cuh"
#include "launch.h"

using namespace fc_cuda;

typedef void (*DecSplitFn)(const fc_problem, const DecLaunch);

struct DecKernel {
    DecSplitFn fn;
    size_t smem, smem_max; /* this plan's rows; the most any plan of this kernel asks */
    int tn;
};

struct fc_cuda_dec {
    fc_batch *batch;         /* device copy of the planned per-batch facts */
    const fc_batch *planned; /* the host facts planned with (the fc_plan's own) */
    fc_batch *run_batch;     /* device: the facts of a run that brings its own (IFA's kvPaddingSize,
                                read in the second phase); one such run at a time per plan */
    DecKernel kernel;
    int nsplit, rows, qr, dclass;
    size_t slot; /* floats per (batch, kv head, split) */
    unsigned long long *fault;
    DecReport *report, *report_dev; /* host-mapped */
    unsigned epoch, seen;
};

/* Rows per CTA: the G query heads of a kv head × the longest batch's query rows. */
static int64_t fc_dec_rows(const fc_problem *p) { return p->G * p->max_sq; }

/* The most rows a CTA serves for a head-dim class: 8 per thread row group, 64 in all. */
static int64_t fc_dec_max_rows(int dclass) { return dclass == 256 ? 32 : kDecMaxRows; }

extern "C" bool fc_cuda_dec_only(const fc_problem *p)
{
    return p->k.pages.table || p->v.pages.table || p->k.batch_data || p->v.batch_data || p->k.dtype == FC_I8 ||
           p->v.dtype == FC_I8 || p->out.dtype != p->q.dtype;
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
    const int64_t w = p->k.pages.table_stride > p->v.pages.table_stride ? p->k.pages.table_stride : p->v.pages.table_stride;
    if ((p->k.pages.table || p->v.pages.table) && 2 * p->B * (w > 0 ? w : 1) >= (1ll << 32))
        return "block tables of 2^31 entries or more";
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

/* The split count: enough CTAs for whole waves over the SMs (at the kernel's occupancy), each
 * slice at least two tiles long. */
static int fc_dec_splits(const fc_problem *p, const DecKernel &k, int sms, int occ)
{
    int64_t longest = 0, sp[4];
    for (int64_t b = 0; b < p->B; b++) {
        int64_t lo = INT64_MAX, hi = 0;
        for (int64_t i = 0; i < p->batch[b].q_rows; i++)
            if (fc_row_spans(&p->batch[b], i, sp) > 0) {
                lo = lo < (sp[1] > sp[0] ? sp[0] : sp[2]) ? lo : (sp[1] > sp[0] ? sp[0] : sp[2]);
                hi = hi > (sp[3] > sp[2] ? sp[3] : sp[1]) ? hi : (sp[3] > sp[2] ? sp[3] : sp[1]);
            }
        longest = hi > lo && hi - lo > longest ? hi - lo : longest;
    }
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

extern "C" void fc_cuda_dec_destroy(fc_cuda_dec *plan)
{
    if (!plan)
        return;
    cudaFree(plan->batch);
    cudaFree(plan->run_batch);
    cudaFree(plan->fault);
    cudaFreeHost(plan->report);
    free(plan);
}

extern "C" fc_status fc_cuda_dec_plan(const fc_problem *p, fc_cuda_dec **out)
{
    fc_cuda_dec *plan = (fc_cuda_dec *)calloc(1, sizeof *plan);
    if (!plan)
        return fc_fail(FC_ERR_NO_MEMORY, "fc_cuda_dec_plan: out of host memory");
    plan->dclass = fc_cuda_dclass(p);
    plan->qr = (int)(p->max_sq > 0 ? p->max_sq : 1);
    plan->rows = (int)(p->G * plan->qr);
    plan->kernel = fc_dec_kernel(p->k.dtype, plan->dclass, plan->rows);
    plan->slot = (size_t)plan->rows * (plan->dclass + 2);
    int dev = 0, sms = 0, occ = 0;
    cudaError_t err;
    const size_t bb = (size_t)p->B * sizeof(fc_batch);
    if ((err = cudaGetDevice(&dev)) != cudaSuccess || (err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) ||
        (err = cudaFuncSetAttribute(plan->kernel.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)plan->kernel.smem_max)) ||
        (err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, plan->kernel.fn, kDecThreads, plan->kernel.smem)) ||
        (err = cudaMalloc(&plan->batch, bb ? bb : 1)) || (err = cudaMemcpy(plan->batch, p->batch, bb, cudaMemcpyHostToDevice)) ||
        (err = cudaMalloc(&plan->run_batch, bb ? bb : 1)) ||
        (err = cudaMalloc(&plan->fault, sizeof *plan->fault)) || (err = cudaMemset(plan->fault, 0, sizeof *plan->fault)) ||
        (err = cudaHostAlloc(&plan->report, sizeof *plan->report, cudaHostAllocMapped)) ||
        (err = cudaHostGetDevicePointer(&plan->report_dev, plan->report, 0))) {
        fc_cuda_dec_destroy(plan);
        return fc_cuda_err(err, "fc_cuda_dec_plan");
    }
    memset(plan->report, 0, sizeof *plan->report);
    plan->planned = p->batch;
    plan->nsplit = fc_dec_splits(p, plan->kernel, sms, occ);
    *out = plan;
    return FC_OK;
}

extern "C" size_t fc_cuda_dec_workspace(const fc_cuda_dec *plan, const fc_problem *p)
{
    return (size_t)(p->B * p->Nkv) * (size_t)plan->nsplit * plan->slot * sizeof(float);
}

extern "C" fc_status fc_cuda_dec_check(fc_cuda_dec *plan, const fc_problem *p)
{
    const unsigned e = plan->report->epoch;
    if (e == plan->seen)
        return FC_OK;
    plan->seen = e;
    const DecReport r = *plan->report;
    const fc_pages &pg = r.tensor ? p->v.pages : p->k.pages;
    return fc_fail(FC_ERR_INVALID_ARG,
                   "fc_plan_run: %s block table entry [%lld][%lld] was %d, outside [0, %lld) (found on the GPU by an "
                   "earlier run of this plan, which wrote nothing)",
                   r.tensor ? "value" : "key", (long long)r.batch, (long long)r.entry, r.value, (long long)pg.blocks);
}

/* cp.async needs unit feature stride and 16-byte aligned rows and feature chunks. */
static bool fc_dec_vec_ok(const fc_view *v, int64_t d, int64_t es, int64_t B)
{
    const int64_t unit = 16 / es;
    bool ok = v->se == 1 && d % unit == 0 && v->sb % unit == 0 && v->sn % unit == 0 && v->ss % unit == 0;
    if (v->batch_data)
        for (int64_t b = 0; ok && b < B; b++)
            ok = (uintptr_t)v->batch_data[b] % 16 == 0;
    else
        ok = ok && (uintptr_t)v->data % 16 == 0;
    return ok;
}

/* The per-batch facts a run uses on the device: the planned ones, or the run's own copied on its
 * stream (the kernels read every window per run; only the query rows are fixed by the plan). */
static fc_status fc_dec_batches(fc_cuda_dec *plan, const fc_problem *run, cudaStream_t s, fc_batch **out)
{
    *out = plan->batch;
    if (run->batch == plan->planned)
        return FC_OK;
    for (int64_t b = 0; b < run->B; b++)
        if (run->batch[b].q_rows > plan->qr)
            return fc_fail(FC_ERR_INVALID_ARG, "fc_cuda_dec_run: batch %lld brings %lld query rows, the decode plan serves %d",
                           (long long)b, (long long)run->batch[b].q_rows, plan->qr);
    *out = plan->run_batch; /* from pageable memory: staged before the call returns */
    const cudaError_t err = cudaMemcpyAsync(plan->run_batch, run->batch, (size_t)run->B * sizeof(fc_batch), cudaMemcpyHostToDevice, s);
    return err == cudaSuccess ? FC_OK : fc_cuda_err(err, "fc_cuda_dec_run: the run's per-batch facts");
}

extern "C" fc_status fc_cuda_dec_run(fc_cuda_dec *plan, const fc_problem *run, void *workspace, void *stream)
{
    fc_problem p = *run;
    const fc_status st = fc_dec_batches(plan, run, (cudaStream_t)stream, &p.batch);
    if (st != FC_OK)
        return st;
    DecLaunch L;
    memset(&L, 0, sizeof L);
    L.partial = (float *)workspace;
    L.fault = plan->fault;
    L.report = plan->report_dev;
    if (++plan->epoch == 0) /* 0 is the fault word's initial value */
        plan->epoch = 1;
    L.epoch = plan->epoch;
    L.nsplit = plan->nsplit, L.rows = plan->rows, L.qr = plan->qr, L.slot = (int)plan->slot;
    const int64_t es = fc_dtype_bytes(p.k.dtype);
    L.vec_k = fc_dec_vec_ok(&p.k, p.Dqk, es, p.B);
    L.vec_v = fc_dec_vec_ok(&p.v, p.Dv, es, p.B);
    L.terms = p.pse.data || p.alibi.slopes || p.mask.data || p.softcap > 0.0f;
    for (int64_t b = 0; p.k.batch_data && b < p.B; b++)
        L.k_list[b] = p.k.batch_data[b], L.v_list[b] = p.v.batch_data[b];
    cudaStream_t s = (cudaStream_t)stream;
    const dim3 grid((unsigned)plan->nsplit, (unsigned)p.Nkv, (unsigned)p.B);
    if (p.B > 0 && p.Nkv > 0) {
        plan->kernel.fn<<<grid, kDecThreads, plan->kernel.smem, s>>>(p, L);
        const size_t msmem = (size_t)(plan->nsplit + 2) * plan->rows * sizeof(float);
        dec_merge_kernel<<<dim3((unsigned)p.Nkv, (unsigned)p.B), kDecThreads, msmem, s>>>(p, L);
    }
    const cudaError_t err = cudaGetLastError();
    return err == cudaSuccess ? FC_OK : fc_cuda_err(err, "fc_cuda_dec_run: decode launch");
}
