/*
 * Random problems for the seeded sweeps: one draw of the whole forward feature space (sizes,
 * lengths, layouts, dtypes, score modifiers, visibility, dropout, sink), shared by the forward and
 * backward sweeps; each sweep then draws what is its own (statistics, threads, gradients).
 */
#ifndef FLASHC_TESTS_NATIVE_HARNESS_DRAW_H
#define FLASHC_TESTS_NATIVE_HARNESS_DRAW_H

#include "common/rng.h"
#include "harness.h"

typedef struct nt_draw_spec {
    double rope_prob;   /* probability of rope features */
    int max_len;        /* Sq and Skv in [1, max_len] */
    int max_dim;        /* D and Dv in [1, max_dim] (0: 40) */
    bool mask_rows_cols; /* also draw row/column broadcasts of the explicit mask */
} nt_draw_spec;

/* Fills c's features from r; per-batch lengths go to lens_q / lens_kv (4 entries each, owned by
 * the caller for as long as c is used). */
void nt_draw_features(tc_rng *r, const nt_draw_spec *spec, nt_case *c, int lens_q[4], int lens_kv[4]);

/* Which cases a sweep runs: [first, first + count), by default [0, count).  FLASHC_TEST_SWEEP =
 * "first,count[,max_len[,max_dim]]" widens a sweep for a bug hunt outside CI (more seeds, longer
 * sequences that cross kv tiles, wider heads); a malformed value is reported and ignored. */
typedef struct nt_sweep {
    int first, count;
} nt_sweep;
nt_sweep nt_sweep_range(int count, nt_draw_spec *spec);

#endif /* FLASHC_TESTS_NATIVE_HARNESS_DRAW_H */
