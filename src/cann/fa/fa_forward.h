/*
 * The FlashAttentionScore forward family (semantics §2): one validation and lowering shared by the
 * five aclnn entry pairs, which differ only in their signatures (declared parameters and names).
 */
#ifndef FC_CANN_FA_FORWARD_H
#define FC_CANN_FA_FORWARD_H

#include <stdint.h>

#include "aclnn/aclnn_base.h"
#include "fa_params.h"
#include "cann/common/signature.h"

/* One first-phase call: pointer arguments by id, scalars by meaning. */
typedef struct fa_call {
    const cann_signature *sig;
    const void *ptr[FA_NPARAMS];
    double scale, keep_prob;
    int64_t pre, next, head_num, inner_precise, sparse_mode, pse_type;
} fa_call;

extern const cann_signature fa_sig_score, fa_sig_score_v2, fa_sig_score_v3, fa_sig_varlen, fa_sig_varlen_v5;

/* Validates, lowers and returns a new executor (semantics §6.6 phase 1). */
aclnnStatus fa_forward_prepare(const fa_call *call, uint64_t *workspaceSize, aclOpExecutor **executor);

#endif /* FC_CANN_FA_FORWARD_H */
