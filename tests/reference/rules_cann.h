/*
 * The CANN FlashAttentionScore rules, read literally from semantics.md, as reference hooks:
 *   §2.5 visibility: Rule 0 (no mask tensor = no masking), sparse modes 0–8 with pre/next tokens
 *        (negative values allowed), prefix (mode 6), the mode 7/8 band batch, element masks incl.
 *        the two TND readings, compressed masks (shape only, generated analytically);
 *   §2.4 pse: pseType 0/1 external tensors of every accepted shape incl. [B,N1,1,S2] and the
 *        compressed 1024-row form (dense and TND), with its extra j > i masking; pseType 2/3
 *        generated ALiBi from slopes [B,N1] or [N1] with qStartIdx/kvStartIdx (TND mode 8: batch 0
 *        only);
 *   §2.7 dropout (via dropout.h).
 * Tensors are given as contiguous logical arrays with their shape (the test gathers strided views
 * itself); validation (which shapes are legal) is the CANN test's business, not the oracle's.
 */
#ifndef FLASHC_TESTS_REFERENCE_RULES_CANN_H
#define FLASHC_TESTS_REFERENCE_RULES_CANN_H

#include <stdbool.h>
#include <stdint.h>

#include "reference.h"

typedef struct ref_cann {
    int B, N1;
    const int *S1, *S2; /* per-batch lengths (required; dense: all equal) */
    bool tnd;           /* TND layout (varlen functions) */

    int sparse_mode;
    int64_t pre_tokens, next_tokens;
    const int64_t *prefix; /* mode 6, B entries */

    /* attenMaskOptional as a contiguous array of its shape, nonzero = masked; NULL = absent */
    const uint8_t *mask;
    int mask_rank;         /* 2 or 4 */
    int64_t mask_dims[4];

    /* realShiftOptional (pse): pseType 0/1 → doubles of shape pse_dims (rank 4);
     * pseType 2/3 → slopes of shape [B, N1] (rank 2) or [N1] (rank 1).  NULL = absent. */
    const double *pse;
    int pse_type;
    int pse_rank;
    int64_t pse_dims[4];
    int64_t q_start_idx, kv_start_idx; /* element 0 of qStartIdx / kvStartIdx (absent: 0) */

    const uint8_t *drop_mask; /* keep bits (used when the test sets a keepProb < 1) */
} ref_cann;

/* The band batch of modes 7 (last batch with S1_b > 0) and 8 (first); −1 when none. */
int ref_cann_band_batch(const ref_cann *c);
/* userMask(b, n1, i, j) of the element-mask table (modes 0, 1, 5). */
bool ref_cann_user_mask(const ref_cann *c, int b, int n1, int i, int j);
/* Whether batch b's external pse is read through the compressed (L1 > 1024) rule. */
bool ref_cann_pse_compressed(const ref_cann *c, int b);
double ref_cann_pse_value(const ref_cann *c, int b, int n1, int i, int j);

bool ref_cann_masked(void *ctx, int b, int n1, int i, int j);
double ref_cann_bias_before(void *ctx, int b, int n1, int i, int j); /* pseType 1 */
double ref_cann_bias_after(void *ctx, int b, int n1, int i, int j);  /* pseType 0, 2, 3 */
bool ref_cann_keep(void *ctx, int b, int n1, int i, int j);

/* Points f's hooks and ctx at c (keep too; f->keep_prob decides whether it is used). */
void ref_cann_plug(ref_fwd *f, ref_cann *c);

#endif
