/*
 * The native API's score and visibility rules, read literally from include/flashc.h (the comments
 * on fc_bias, fc_alibi, fc_window, fc_mask, fc_visibility, fc_dropout), as reference hooks.
 * Own types: the oracle does not include flashc.h, so a misreading of a field in the library and
 * the same misreading here cannot cancel out through a shared struct.
 *
 * Indices: b batch, n1 query head, i row and j column inside batch b (semantics §0.1).
 */
#ifndef FLASHC_TESTS_REFERENCE_RULES_NATIVE_H
#define FLASHC_TESTS_REFERENCE_RULES_NATIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "reference.h"

#define REF_UNBOUNDED INT64_MAX

/* Column j visible from row i iff −left ≤ (j + kv_start) − (i + q_start) − diagonal ≤ right, where
 * diagonal = 0 (top-left) or Skv_b − Sq_b (bottom-right), evaluated exactly (no overflow);
 * left or right = REF_UNBOUNDED (FC_UNBOUNDED) removes that bound.  Disabled: all visible. */
typedef struct ref_window {
    bool enabled;
    int64_t left, right;
    bool bottom_right;
} ref_window;

typedef struct ref_native {
    int B, N1;
    const int *S1, *S2; /* real lengths per batch (required) */

    /* visibility */
    ref_window window;
    const ref_window *batch_window; /* NULL = window for every batch */
    const int64_t *prefix;          /* NULL = none; columns j < prefix[b] always visible */
    int64_t q_start, kv_start;      /* global position of row 0 / column 0 */
    const uint8_t *mask;            /* one byte per element, nonzero = hidden; NULL = none */
    int64_t mask_sb, mask_sh, mask_sr, mask_sc;
    bool mask_by_tokens;            /* batch b reads the block at (cumS1[b], cumS2[b]) */

    /* additive bias over (b, n1, row, col) */
    const double *bias;             /* NULL = none */
    bool bias_before_scale;         /* x = (s + bias)·scale instead of s·scale + bias */
    int64_t bias_rows, bias_cols;
    int64_t bias_sb, bias_sh, bias_sr, bias_sc;
    bool bias_bottom_right, bias_compressed;

    /* generated ALiBi: x −= slope·|Δ| (or ·sqrt|Δ|), Δ = (j + kv_start) − (i + q_start) */
    const double *slopes;           /* NULL = none */
    int64_t slope_sb, slope_sh;
    bool alibi_sqrt;
    bool alibi_bottom_right; /* Δ less S2[b] − S1[b] */

    const uint8_t *keep_bits;       /* dropout keep bits (dropout.h); NULL = keep all */

    /* left padding (desc.kv_starts): columns j < kv_starts[b] are hidden from every row, whatever
     * the prefix says (they hold no token); NULL = none */
    const int64_t *kv_starts;
} ref_native;

bool ref_native_window_visible(const ref_window *w, int64_t S1b, int64_t S2b, int64_t q_start, int64_t kv_start,
                               int64_t i, int64_t j);
bool ref_native_hidden(void *ctx, int b, int n1, int i, int j);
double ref_native_bias_value(const ref_native *c, int b, int n1, int i, int j);
double ref_native_bias_before(void *ctx, int b, int n1, int i, int j);
double ref_native_bias_after(void *ctx, int b, int n1, int i, int j); /* bias (after scale) − ALiBi */
bool ref_native_keep(void *ctx, int b, int n1, int i, int j);

/* Points f's hooks (hidden, bias_before, bias_after, keep) and ctx at c. */
void ref_native_plug(ref_fwd *f, ref_native *c);

#endif
