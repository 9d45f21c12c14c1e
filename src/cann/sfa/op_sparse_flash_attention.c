/*
 * aclnnSparseFlashAttention (semantics §5), defined from its parameter list (cann/common/entry.h):
 * the first phase fills an sfa_call for sfa_prepare, the second is the shared executor run.
 */
#include "aclnnop/aclnn_sparse_flash_attention.h"

#include "cann/common/entry.h"
#include "sfa_state.h"

CANN_ENTRY_ALIASES(SFA_PARAMS)

/* softmaxMaxOut / softmaxSumOut are added to the required set when returnSoftmaxLse is true. */
#define REQUIRED                                                                                                       \
    (SFA_BIT(QUERY) | SFA_BIT(KEY) | SFA_BIT(VALUE) | SFA_BIT(INDICES) | SFA_BIT(LAYOUT_Q) | SFA_BIT(LAYOUT_KV) |      \
     SFA_BIT(OUT) | SFA_BIT(WORKSPACE_SIZE) | SFA_BIT(EXECUTOR))

#define FORWARD(P)                                                                                                     \
    P(query, query) P(key, key) P(value, value) P(indices, sparseIndices) P(block_table, blockTable)                    \
        P(act_q, actualSeqLengthsQuery) P(act_kv, actualSeqLengthsKv) P(query_rope, queryRope) P(key_rope, keyRope)    \
            P(scale, scaleValue) P(block_size, sparseBlockSize) P(layout_q, layoutQuery) P(layout_kv, layoutKv)        \
                P(sparse_mode, sparseMode) P(pre, preTokens) P(next, nextTokens) P(attention_mode, attentionMode)      \
                    P(return_lse, returnSoftmaxLse) P(out, attentionOutOut) P(smax, softmaxMaxOut)                     \
                        P(ssum, softmaxSumOut)
CANN_ENTRY_PAIR(aclnnSparseFlashAttention, sfa_sig_forward, FORWARD, REQUIRED, sfa_call, , sfa_prepare)
