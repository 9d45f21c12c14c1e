/*
 * The FlashAttentionScore forward family (semantics §2): one validation and lowering shared by the
 * five aclnn entry pairs, which differ only in their parameter lists (op_flash_attention_score.c).
 */
#ifndef FC_CANN_FA_FORWARD_H
#define FC_CANN_FA_FORWARD_H

#include <stdint.h>

#include "aclnn/aclnn_base.h"
#include "fa_params.h"

/* Validates, lowers and returns a new executor (semantics §6.6 phase 1). */
aclnnStatus fa_forward_prepare(const fa_call *call, uint64_t *workspaceSize, aclOpExecutor **executor);

#endif /* FC_CANN_FA_FORWARD_H */
