/*
 * Lowering a validated SparseFlashAttention call into fc_problem, in two steps: the template
 * (sizes, views, selection, statistics, gradients) in the first phase, and the per-batch facts in
 * the second, once the actual lengths have been read from the device.
 */
#ifndef FC_CANN_SFA_LOWER_H
#define FC_CANN_SFA_LOWER_H

#include <stdint.h>

#include "core/problem.h"
#include "sfa_state.h"

/* The statistics view: (B,N2,S1,G), or (N2,T1,G) for a TND query (one copy per value). */
fc_stats_view sfa_lower_stats(const sfa_geom *g, float *max, float *sum);

/* Everything but p->batch (NULL) and, for a paged key, the block table (pages.table NULL). */
void sfa_lower_template(const sfa_state *s, fc_problem *p);

/* p->batch[0..B) (allocated by the caller) and max_sq / max_skv from the per-batch lengths:
 * BSND query rows are padded to S1 (rows >= S1_b see nothing); TND sides pack by token. */
void sfa_lower_batches(const sfa_geom *g, const int64_t *sq, const int64_t *skv, fc_problem *p);

/* Lengths whose plan bounds the workspace of every plan the call's real lengths can give: the
 * same query rows (BSND: S1 per batch; TND: all T1 tokens in batch 0, as the row count is all that
 * matters) and every batch at the largest kv length the shapes allow. */
void sfa_bound_lengths(const sfa_geom *g, int64_t *sq, int64_t *skv);

#endif /* FC_CANN_SFA_LOWER_H */
