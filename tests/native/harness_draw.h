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
    bool mask_rows_cols; /* also draw row/column broadcasts of the explicit mask */
} nt_draw_spec;

/* Fills c's features from r; per-batch lengths go to lens_q / lens_kv (4 entries each, owned by
 * the caller for as long as c is used). */
void nt_draw_features(tc_rng *r, const nt_draw_spec *spec, nt_case *c, int lens_q[4], int lens_kv[4]);

#endif /* FLASHC_TESTS_NATIVE_HARNESS_DRAW_H */
