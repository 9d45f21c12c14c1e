/*
 * Lowering a validated SparseFlashAttention call into fc_problem: the template (sizes, views,
 * selection, statistics, gradients) and the rule by which lengths become per-batch facts — in the
 * first phase for bounding lengths (the plan), in the second for the lengths read from the device
 * (the run's bindings).
 */
#ifndef FC_CANN_SFA_LOWER_H
#define FC_CANN_SFA_LOWER_H

#include <stdint.h>

#include "core/batch.h"
#include "core/problem.h"
#include "sfa_state.h"

/* The statistics view: (B,N2,S1,G), or (N2,T1,G) for a TND query (one copy per value). */
fc_stats_view sfa_lower_stats(const sfa_geom *g, float *max, float *sum);

/* Everything but p->batch (NULL) and, for a paged key, the block table (pages.table NULL). */
void sfa_lower_template(const sfa_state *s, fc_problem *p);

/* How the per-batch lengths become per-batch facts (core/batch.h): at planning for the bounding
 * lengths below, at every run for the lengths read from the device. */
fc_batch_rule sfa_batch_rule(const sfa_geom *g);

/* Lengths whose plan bounds the workspace of every plan the call's real lengths can give: the
 * same query rows (BSND: S1 per batch; TND: all T1 tokens in batch 0, as the row count is all that
 * matters) and every batch at the largest kv length the shapes allow. */
void sfa_bound_lengths(const sfa_geom *g, int64_t *sq, int64_t *skv);

#endif /* FC_CANN_SFA_LOWER_H */
