/*
 * Helpers every face uses while lowering into fc_problem: saturating position arithmetic, the
 * window → band compilation, and extent checks that are the same whatever the face.
 */
#ifndef FC_CORE_LOWER_H
#define FC_CORE_LOWER_H

#include <stdbool.h>
#include <stdint.h>

#include "problem.h"

static inline int64_t fc_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static inline int64_t fc_sat_sub(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* Compiles "column j visible from row i iff −left ≤ (j + kv_start) − (i + q_start) − diagonal
 * ≤ right" into the batch's clamped band (diagonal = Skv_b − Sq_b when bottom_right, else 0),
 * exactly for all int64 inputs; FC_UNBOUNDED (INT64_MAX) for left or right means no bound on
 * that side.  Disabled = everything visible.  Records the window in win_lo/win_hi so that
 * fc_batch_relength can move it with another kv length. */
void fc_lower_window(fc_batch *bt, bool enabled, int64_t left, int64_t right, bool bottom_right, int64_t q_start,
                     int64_t kv_start);

/* The statistics view of a flashc.h fc_stats_order for Nq query heads in groups of G, each value
 * written `copies` times (>= 1), over `tokens` rows in all (Σ q_rows; read by the
 * FC_STATS_KV_TOKEN_GROUP order only).  The orders end here: kernels see strides. */
fc_stats_view fc_lower_stats(float *max, float *sum, fc_stats_order order, int64_t copies, int64_t Nq, int64_t G,
                             int64_t tokens);

/* True when no two elements of a view with these extents and strides share an address. */
bool fc_dims_disjoint(const int64_t *ext, const int64_t *stride, int n);

/* Checks that every pse element batch b reads lies inside a rows × cols block (semantics §2.4). */
fc_status fc_check_pse_extent(const char *fn, const char *name, const fc_batch *bt, int64_t b, int64_t rows,
                              int64_t cols, bool has_rows, bool compressed);

#endif /* FC_CORE_LOWER_H */
