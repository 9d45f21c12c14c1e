/*
 * FlashAttention-family visibility (semantics §2.5): sparse modes, attention-mask shapes
 * (element and compressed), prefixes, and their lowering into per-batch bands and mask views.
 * Shared by the forward and backward operators.
 */
#ifndef FC_CANN_FA_MASK_H
#define FC_CANN_FA_MASK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/problem.h"
#include "fa_layout.h"
#include "cann/common/operand.h"

typedef enum fa_mask_kind {
    FA_MASK_NONE,       /* no mask tensor: nothing is masked (rule 0) */
    FA_MASK_ELEMENT,    /* modes 0, 1, 5: read element by element */
    FA_MASK_COMPRESSED  /* modes 2, 3, 4, 6, 7, 8: shape checked, contents generated analytically */
} fa_mask_kind;

typedef struct fa_mask_plan {
    fa_mask_kind kind;
    fc_mask_view view; /* element masks: data and head/row/column strides */
    int64_t sb;        /* element masks: batch stride (0 = shared by all batches) */
    bool diagonal;     /* TND [T1, T2] masks: batch b reads its diagonal block */
} fa_mask_plan;

/* The sparse modes a function accepts: dense 0..6, TND (VarLen) 0..8 except 5. */
aclnnStatus fa_check_sparse_mode(const char *fn, const char *name, int64_t mode, bool tnd);

/* attenMask's shape for the mode and the layout's sizes; fills mp (kind NONE when mask absent). */
aclnnStatus fa_mask_prepare(const fa_geom *g, const cann_operand *mask, int64_t mode, const char *mode_name,
                            fa_mask_plan *mp);

/* Mode 6 with a mask: prefix must have exactly B entries, each >= 0. */
aclnnStatus fa_prefix_check(const fa_geom *g, const char *fn, const cann_ints *prefix, const char *prefix_name,
                            int64_t mode, const char *mode_name, bool has_mask);

/* Per-batch band and prefix (§2.5); batch[] holds the core's facts (core/batch.h) already. */
void fa_lower_visibility(const fa_geom *g, const fa_mask_plan *mp, int64_t mode, int64_t pre, int64_t next,
                         const cann_ints *prefix, fc_batch *batch);

#endif /* FC_CANN_FA_MASK_H */
