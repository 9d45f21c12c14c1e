/*
 * FlashAttention-family softmax statistics and dropout masks (semantics §2.7, §2.8): shapes,
 * the softmaxOutLayout string, and their lowering (×8 replicas, head- or token-major, dropout bit
 * offsets).  Shared by the forward (outputs) and backward (inputs).
 */
#ifndef FC_CANN_FA_STATS_H
#define FC_CANN_FA_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/problem.h"
#include "fa_layout.h"
#include "cann/common/operand.h"

#define FA_STAT_REPLICAS 8

/* softmaxOutLayout: NULL or "" = per-batch [N1, S1_b, 8] blocks; "same_as_input" = [T1, N1, 8].
 * Reads at most 64 bytes; false for any other string. */
bool fa_softmax_layout_parse(const char *s, bool *token_major);

/* FLOAT32, contiguous (intrinsic checks of a statistics tensor). */
aclnnStatus fa_stats_check_tensor(const cann_operand *t);

/* Dense [B, N1, S1, 8]; TND [T1, N1, 8] or [N1, T1, 8]. */
aclnnStatus fa_stats_check_shape(const fa_geom *g, const cann_operand *t);

/* UINT8 and contiguous (intrinsic checks of a dropout mask). */
aclnnStatus fa_dropout_check_tensor(const cann_operand *mask);

/* At least ceil(E/8) bytes for E = N1·Σ S1_b·S2_b. */
aclnnStatus fa_dropout_check_size(const fa_geom *g, const cann_operand *mask);

/* The statistics view: per batch [N1, S1_b, 8] blocks, or [T1, N1, 8] when token-major. */
fc_stats_view fa_lower_stats(const fa_geom *g, bool token_major, float *max, float *sum);

#endif /* FC_CANN_FA_STATS_H */
