/*
 * Device pieces both decode kernels share (decode_kernel.cuh on CUDA cores, decode_mma_kernel.cuh
 * on tensor cores): a kv row's address in any storage, the run's block-table fault word and its
 * host-mapped report, the NaN-keeping maximum, an output element in any dtype.
 */
#ifndef FC_CUDA_DECODE_COMMON_CUH
#define FC_CUDA_DECODE_COMMON_CUH

#include "../core/dtype.h"
#include "tile.cuh"

namespace fc_cuda {

constexpr int kDecMaxList = 256; /* tensor-list storage: batches whose bases travel with a launch */

/* What the GPU found wrong with a run (host-mapped; seq, the count of reports, last, after a
 * system fence). */
struct DecReport {
    int64_t batch, entry, value; /* tensor 0/1: the block table's entry and its value; 2: the length */
    int32_t tensor;              /* 0 key block table, 1 value block table, 2 the run's kv length */
    int32_t whole;               /* 1: the run wrote none of its outputs; 0: only that batch's rows */
    volatile unsigned seq;
};

/* Batch b's facts for this run: the problem's, moved to the run's kv length when it brings one
 * (device memory).  A length outside [col_lo, the planned skv] keeps the planned facts (every load
 * stays in bounds) and returns false: the caller records it (dec_fault, tensor 2). */
__device__ __forceinline__ bool dec_batch(const fc_problem &p, const int64_t *kv_lens, int64_t b, fc_batch *out)
{
    *out = p.batch[b];
    if (!kv_lens)
        return true;
    const int64_t len = kv_lens[b];
    if (len < out->col_lo || len > out->skv)
        return false;
    fc_batch_relength(out, len);
    return true;
}

/* Address of kv row s of (b, n2) in view v (NULL when its block-table entry is out of range);
 * tensor-list storage passes the batch's base. */
__device__ __forceinline__ const char *dec_row(const fc_view &v, const char *list_base, int esize, int64_t b, int64_t tok,
                                               int64_t n2, int64_t s)
{
    if (v.pages.table) { /* 32-bit division: positions stay below 2^30 (decode.cu), larger blocks act alike */
        const int bs = v.pages.block_size < (1 << 30) ? (int)v.pages.block_size : (1 << 30);
        const int blk_at = (int)s / bs, slot = (int)s - blk_at * bs;
        const int32_t blk = v.pages.table[b * v.pages.table_stride + blk_at];
        if (blk < 0 || blk >= v.pages.blocks)
            return nullptr;
        return v.data + ((int64_t)blk * v.sb + (int64_t)slot * v.ss + n2 * v.sn) * esize;
    }
    if (!list_base)
        return fc_view_row(&v, esize, b, tok, n2, s);
    fc_view w = v; /* a tensor list: the batch's own base, at batch index 0 */
    w.batch_data = nullptr, w.data = const_cast<char *>(list_base), w.sb = 0;
    return fc_view_row(&w, esize, 0, tok, n2, s);
}

/* Whether kv rows [s, s + n) of view v lie in one block of its block table (always without one):
 * then they sit at one stride from row s. */
__device__ __forceinline__ bool dec_one_page(const fc_view &v, int s, int n)
{
    if (!v.pages.table)
        return true;
    const int bs = v.pages.block_size < (1 << 30) ? (int)v.pages.block_size : (1 << 30);
    return s / bs == (s + n - 1) / bs;
}

/* Records block-table entry (tensor, b, k) as bad in the run's fault word (zeroed by the run):
 * (1 << 32) | (0xFFFFFFFF − the entry's linear index), so the smallest index wins; tensor 2, k 0:
 * batch b's run length. */
__device__ __forceinline__ void dec_fault(unsigned long long *fault, const fc_problem &p, int tensor, int64_t b, int64_t k)
{
    const int64_t w = p.k.pages.table_stride > p.v.pages.table_stride ? p.k.pages.table_stride : p.v.pages.table_stride;
    const unsigned long long lin = (unsigned long long)((tensor * p.B + b) * (w > 0 ? w : 1) + k);
    atomicMax(fault, (1ull << 32) | (0xFFFFFFFFull - (lin & 0xFFFFFFFFull)));
}

/* Checks block-table entries first, first + step, ... of batch b's key and value tables that
 * cover positions below skv; records the bad ones (dec_fault).  Whether this thread found one. */
__device__ __forceinline__ bool dec_check_table(unsigned long long *fault, const fc_problem &p, int64_t b, int64_t skv,
                                                int64_t first, int64_t step)
{
    bool bad = false;
    for (int t = 0; t < 2; t++) {
        const fc_pages &pg = t ? p.v.pages : p.k.pages;
        if (!pg.table)
            continue;
        const int64_t used = (skv + pg.block_size - 1) / pg.block_size;
        for (int64_t k = first; k < used; k += step) {
            const int32_t blk = pg.table[b * pg.table_stride + k];
            if (blk < 0 || blk >= pg.blocks) {
                dec_fault(fault, p, t, b, k);
                bad = true;
            }
        }
    }
    return bad;
}

/* Set in a fault word by the run's one reporter (dec_claim_report); it freezes the word, whose other
 * writes are atomicMax of values below it. */
constexpr unsigned long long kFaultReported = 1ull << 63;

/* Whether this thread is the run's one reporter of a fault word that has a fault, and the word as
 * it claimed it (several CTAs may find the fault; one report per run keeps the host's count true). */
__device__ __forceinline__ bool dec_claim_report(unsigned long long *fault, unsigned long long *word)
{
    *word = atomicOr(fault, kFaultReported);
    return (*word >> 32) && !(*word & kFaultReported);
}

/* Puts the entry (or length) of a fault word into the host-mapped report, then counts the report;
 * whole: the run writes none of its outputs (else only the faulting batch's rows are left). */
__device__ __forceinline__ void dec_report(DecReport *report, const fc_problem &p, const int64_t *kv_lens,
                                           unsigned long long fault, bool whole)
{
    const int64_t w = p.k.pages.table_stride > p.v.pages.table_stride ? p.k.pages.table_stride : p.v.pages.table_stride;
    const int64_t lin = (int64_t)(0xFFFFFFFFull - (fault & 0xFFFFFFFFull)), ww = w > 0 ? w : 1;
    const int tensor = (int)(lin / (p.B * ww));
    const int64_t bb = lin / ww % p.B, k = lin % ww;
    const fc_pages &pg = tensor ? p.v.pages : p.k.pages;
    report->batch = bb, report->entry = k, report->tensor = tensor, report->whole = whole;
    report->value = tensor == 2 ? kv_lens[bb] : pg.table[bb * pg.table_stride + k];
    __threadfence_system();
    report->seq = report->seq + 1;
}

/* Output element e of a row, in the output's dtype (int8: semantics §4.6, y = q(x·scale + offset)). */
__device__ __forceinline__ void dec_store(const fc_problem &p, char *row, int64_t n1, int e, float x, bool empty)
{
    const int64_t es = fc_dtype_bytes(p.out.dtype);
    char *at = row + (int64_t)e * p.out.se * es;
    switch (p.out.dtype) {
    case FC_F16: *(__half *)at = __float2half_rn(x); return;
    case FC_BF16: *(__nv_bfloat16 *)at = __float2bfloat16_rn(x); return;
    case FC_I8: {
        const fc_affine_view &a = p.out_quant;
        const int64_t ae = fc_dtype_bytes(a.dtype), off = (n1 * a.sn + (int64_t)e * a.se) * ae;
        const float s = load_any(a.scale + off, a.dtype), o = a.offset ? load_any(a.offset + off, a.dtype) : 0.0f;
        const float h = __half2float(__float2half_rn(x * s + o)), rr = rintf(h);
        *(int8_t *)at = empty || h != h ? 0 : (int8_t)(rr > 127.0f ? 127 : rr < -128.0f ? -128 : (int)rr);
        return;
    }
    default: *(float *)at = x; return;
    }
}

} // namespace fc_cuda

#endif /* FC_CUDA_DECODE_COMMON_CUH */
