/*
 * The oracle for top-k block-sparse attention (SparseFlashAttention / SparseFlashAttentionGrad,
 * semantics §5.3–§5.5; the native fc_sparse of flashc.h), read literally from the text:
 *
 *   thr = causal ? S2_b − S1_b + i + 1 : S2_b
 *   for k = 0 .. K−1:  idx = ind[k];  idx < 0 → stop;  lo = idx·bs;  lo ≥ thr → skip;
 *                      select lo .. min(lo + bs, thr) − 1
 *
 * The selection is a multiset (a block listed twice counts twice).  Index rows are addressed
 * through element strides: BSND  ind[k] = indices[b·st_batch + i·st_seq + n2·st_head + k·st_entry],
 * TND (packed) ind[k] = indices[(cumS1[b] + i)·st_seq + n2·st_head + k·st_entry].
 *
 * Operands use the layout of reference.h (q [B][N1][S1cap][D], k [B][N2][S2cap][D], ...); the
 * statistics use the SFA shapes: (B, N2, S1cap, G) for BSND, (N2, T1, G) for TND.
 */
#ifndef FLASHC_TESTS_REFERENCE_SPARSE_H
#define FLASHC_TESTS_REFERENCE_SPARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "backward.h"

typedef struct ref_sparse {
    int B, N1, N2, D, Dv, Dr;
    int S1cap, S2cap;   /* capacities of the logical arrays (BSND: S1 and S2 of the tensors) */
    const int *S1, *S2; /* per-batch lengths; NULL = capacity */
    const double *q, *k, *v, *q_rope, *k_rope;
    double scale;

    const void *indices;
    bool indices_i64;   /* INT64 entries (else INT32) */
    int64_t K, block_size;
    int64_t st_batch, st_seq, st_head, st_entry; /* element strides (st_batch unused for TND) */
    bool tnd;           /* rows addressed by token, statistics (N2, T1, G) */
    bool causal;        /* sparseMode 3 */
} ref_sparse;

/* Entry k of the index row of (b, i, n2). */
int64_t ref_sparse_entry(const ref_sparse *p, int b, int i, int n2, int64_t k);

/* The selected positions of row (b, i, n2) in selection order, duplicates included; pos may be
 * NULL (then only counted), otherwise it holds at least K·block_size entries.  Returns the count
 * (0 for an empty row or a row i ≥ S1_b). */
int64_t ref_sparse_select(const ref_sparse *p, int b, int i, int n2, int64_t *pos);

/* Offset of (b, n1, i) in the statistics, and their element count. */
int64_t ref_sparse_stat_index(const ref_sparse *p, int b, int n1, int i);
int64_t ref_sparse_stat_count(const ref_sparse *p);

/* Forward (§5.4): out [B][N1][S1cap][Dv] (every element written: rows beyond S1_b are 0), and
 * smax/ssum (may be NULL) in the shapes above; empty rows and BSND padding rows get out 0,
 * max −FLT_MAX, sum +FLT_MAX. */
void ref_sparse_forward(const ref_sparse *p, double *out, double *smax, double *ssum);

/* Backward (§5.5) from the given out, statistics (as laid out above, used as given) and dout;
 * g as in backward.h (dsink ignored).  Every gradient element is written. */
void ref_sparse_backward(const ref_sparse *p, const double *dout, const double *out, const double *smax,
                         const double *ssum, ref_grads *g);

/* A ref_fwd carrying the same sizes and operands (no hooks), e.g. for ref_grads_alloc or to
 * compare with dense attention. */
ref_fwd ref_sparse_as_dense(const ref_sparse *p);

#endif
