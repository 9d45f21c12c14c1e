/*
 * The unfused attention a user would write with a BLAS: per (batch, head)
 *     S = scale·Q·Kᵀ (sgemm), row softmax over the visible columns, O = P·V (sgemm),
 * all fp32, single-threaded OpenBLAS per head inside an OpenMP loop over (batch, head) — Debian's
 * pthread OpenBLAS fights OpenMP for the 2 cores otherwise (see docs/anchors.md).
 * Built only when OpenBLAS was found; bench_unfused_available() says so at run time.
 */
#ifndef FLASHC_BENCH_BASELINE_H
#define FLASHC_BENCH_BASELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bench_unfused {
    int64_t batch, q_heads, kv_heads, head_dim; /* query head n reads kv head n / (q_heads / kv_heads) */
    const int64_t *q_lens, *kv_lens;            /* per batch */
    const int64_t *q_base, *kv_base;            /* element offset of batch b's head 0, position 0 */
    int64_t q_sh, q_ss, kv_sh, kv_ss;           /* head and position strides; features are contiguous */
    const float *q, *k, *v;
    float *out;                                 /* same offsets and strides as q */
    float scale;
    bool causal;                                /* top-left: row i sees columns j <= i */
} bench_unfused;

bool bench_unfused_available(void);
const char *bench_blas_info(void); /* e.g. "OpenBLAS 0.3.21 Haswell, 1 thread per head" */
const char *bench_blas_core(void); /* the OpenBLAS core that runs (e.g. "SkylakeX"); NULL without OpenBLAS */

/* Bytes of score buffer the run needs: one max(Sq)×max(Skv) fp32 matrix per thread. */
size_t bench_unfused_scratch_bytes(const bench_unfused *p, int threads);

/* scratch: bench_unfused_scratch_bytes() bytes, allocated by the caller outside the timing. */
bool bench_unfused_run(const bench_unfused *p, int threads, float *scratch);

#endif
