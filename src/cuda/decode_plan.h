/*
 * The CUDA decode's host decisions that need no device (decode.cu; the emulated tensor-core kernel's
 * test makes the same ones): the longest visible range, the kv positions a run may see, whether
 * key/value rows suit cp.async, and which problems the tensor-core kernel takes.
 */
#ifndef FC_CUDA_DECODE_PLAN_H
#define FC_CUDA_DECODE_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/dtype.h"
#include "../core/problem.h"
#include "../core/visibility.h"

#define FC_DEC_MMA_ROWS 16 /* query rows per kv head the tensor-core kernel serves (its MMA's rows) */

/* The longest visible range of a batch's rows (the union of their spans), over the batches. */
static inline int64_t fc_dec_longest(const fc_problem *p)
{
    int64_t longest = 0, sp[4];
    for (int64_t b = 0; b < p->B; b++) {
        int64_t lo = INT64_MAX, hi = 0;
        for (int64_t i = 0; i < p->batch[b].q_rows; i++)
            if (fc_row_spans(&p->batch[b], i, sp) > 0) {
                const int64_t a = sp[1] > sp[0] ? sp[0] : sp[2], z = sp[3] > sp[2] ? sp[3] : sp[1];
                lo = a < lo ? a : lo;
                hi = z > hi ? z : hi;
            }
        longest = hi > lo && hi - lo > longest ? hi - lo : longest;
    }
    return longest;
}

/* The most kv positions a run of the plan can see: the planned lengths and rows bound every run's
 * (faces that bind lengths plan with bounding ones; io.kv_lens stay within the planned). */
static inline int64_t fc_dec_kv_cap(const fc_problem *p)
{
    int64_t cap = p->max_skv;
    for (int64_t b = 0; b < p->B; b++) {
        cap = p->batch[b].skv > cap ? p->batch[b].skv : cap;
        cap = p->batch[b].kv_rows > cap ? p->batch[b].kv_rows : cap;
    }
    return cap < (1ll << 30) ? cap : (1ll << 30);
}

/* cp.async needs unit feature stride and 16-byte aligned rows and feature chunks. */
static inline bool fc_dec_vec_ok(const fc_view *v, int64_t d, int64_t es, int64_t B)
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

/* Whether the problem's block tables (if any) stay below 2^30 entries: the GPU's fault word
 * (decode_common.cuh dec_fault) holds an entry's index over key, value and lengths in 32 bits. */
static inline bool fc_dec_table_fits(const fc_problem *p)
{
    const int64_t w = p->k.pages.table_stride > p->v.pages.table_stride ? p->k.pages.table_stride : p->v.pages.table_stride;
    return !(p->k.pages.table || p->v.pages.table) || 4 * p->B * (w > 0 ? w : 1) < (1ll << 32);
}

/* Why the tensor-core kernel's products are too coarse for the problem's output (NULL when they
 * are not): P enters P·V in the values' 16-bit type, so an fp32 output with bf16 values (8-bit
 * mantissa) or int8 values converted to fp16 misses fp32's tolerance; fp16 values (11 bits) and
 * the integer P·V (P as two 8-bit parts, int_pv) hold it.  Those problems run on the CUDA-core
 * kernel. */
static inline const char *fc_dec_mma_precision_gap(const fc_problem *p, bool int_pv)
{
    if (p->out.dtype != FC_F32)
        return NULL;
    if (p->v.dtype == FC_BF16)
        return "fp32 output with bf16 values";
    if (p->v.dtype == FC_I8 && !int_pv)
        return "fp32 output with int8 values outside the integer P·V variant";
    return NULL;
}

/* Why the tensor-core kernel does not take the problem (NULL when it does), its integer P·V variant
 * int_pv or not; those problems run on the CUDA-core kernel. */
static inline const char *fc_dec_mma_gap(const fc_problem *p, int rows, bool int_pv)
{
    const int64_t es = fc_dtype_bytes(p->k.dtype);
    if (rows > FC_DEC_MMA_ROWS)
        return "more than 16 query rows per kv head";
    if (p->q.dtype != FC_F16 && p->q.dtype != FC_BF16)
        return "fp32 queries";
    if (p->pse.data || p->alibi.slopes || p->mask.data || p->softcap > 0.0f)
        return "score terms (pse, ALiBi, explicit masks, softcap)";
    if (!fc_dec_vec_ok(&p->k, p->Dqk, es, p->B) || !fc_dec_vec_ok(&p->v, p->Dv, es, p->B))
        return "key/value rows without unit feature stride and 16-byte alignment";
    return fc_dec_mma_precision_gap(p, int_pv);
}

#endif /* FC_CUDA_DECODE_PLAN_H */
