/*
 * FlashAttention-family position bias (semantics §2.4): external pse tensors (dense shapes, the
 * compressed 1024-row form, the TND bottom-right block) and generated ALiBi slopes with start
 * indices, lowered into the core's pse / ALiBi views and per-batch shifts.
 * Shared by the forward and backward operators.
 */
#ifndef FC_CANN_FA_PSE_H
#define FC_CANN_FA_PSE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/problem.h"
#include "fa_layout.h"
#include "cann/common/operand.h"

#define FA_PSE_ROWS 1024 /* rows of the compressed and TND forms */

typedef enum fa_pse_kind { FA_PSE_NONE, FA_PSE_EXTERNAL, FA_PSE_ALIBI } fa_pse_kind;

typedef struct fa_pse_plan {
    fa_pse_kind kind;
    fc_pse_view view;      /* external */
    fc_alibi_view alibi;   /* generated */
    int64_t sb;            /* batch stride of the pse tensor (0 = shared by all batches) */
    int64_t rows, cols;    /* external: extents of one head's block */
    bool corner;           /* rows = 1024 forms: batch b reads the bottom-right [S1_b, S2_b] corner */
    int64_t q_start, kv_start;
} fa_pse_plan;

/* pseType must be 0..3, and the dtype the type needs (0/1: the query dtype, 2/3: FLOAT32). */
aclnnStatus fa_pse_check_type(const cann_operand *pse, const cann_operand *q, int64_t pse_type, const char *type_name);

/* The shape of pse for its type and the call's sizes (§2.4), and every batch's extent. */
aclnnStatus fa_pse_prepare(const fa_geom *g, const cann_operand *pse, int64_t pse_type, fa_pse_plan *pp);

/* A batch read in the compressed form (S1_b > 1024) needs mode 0, 2, 3 (TND also 7, 8). */
aclnnStatus fa_pse_check_mode(const fa_geom *g, const fa_pse_plan *pp, const char *fn, const char *pse_name,
                              int64_t mode, const char *mode_name);

/* Element 0 of qStartIdx / kvStartIdx (absent or empty: 0). */
void fa_pse_starts(fa_pse_plan *pp, const cann_ints *q_start, const cann_ints *kv_start);

/* Per-batch pse base and shifts, ALiBi offsets and the compressed form's j <= i rule; after the
 * visibility has been lowered. */
void fa_pse_lower(const fa_geom *g, const fa_pse_plan *pp, int64_t mode, fc_batch *batch);

#endif /* FC_CANN_FA_PSE_H */
