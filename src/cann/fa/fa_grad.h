/*
 * The FlashAttentionScoreGrad backward family (semantics §3): one validation and lowering shared
 * by the four aclnn entry pairs.  A backward call describes the same forward call (validated by the
 * forward's shared rules, lowered by the forward's lowering into the same fc_problem) plus the
 * output gradient, the forward's output and statistics as inputs, and the gradients.
 */
#ifndef FC_CANN_FA_GRAD_H
#define FC_CANN_FA_GRAD_H

#include <stdint.h>

#include "fa_forward.h"

struct fa_fwd;

/* Runs the shared rules and the backward's own in the order of semantics §0.5 (fa_grad_rules.c). */
aclnnStatus fa_grad_validate(struct fa_fwd *f);

/* Validates, lowers and returns a new executor (semantics §6.6 phase 1). */
aclnnStatus fa_grad_prepare(const fa_call *call, uint64_t *workspaceSize, aclOpExecutor **executor);

#endif /* FC_CANN_FA_GRAD_H */
