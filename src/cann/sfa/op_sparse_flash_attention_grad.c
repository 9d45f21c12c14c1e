/*
 * aclnnSparseFlashAttentionGrad (semantics §5.5), defined from its parameter list
 * (cann/common/entry.h): the first phase fills an sfa_call for sfa_prepare, the second is the
 * shared executor run.  deterministic is accepted and has no effect on the CPU backend, which is
 * always bit-reproducible (§3.4).
 */
#include "aclnnop/aclnn_sparse_flash_attention_grad.h"

#include "cann/common/entry.h"
#include "sfa_state.h"

CANN_ENTRY_ALIASES(SFA_PARAMS)

/* layoutOptional NULL means "BSND"; the rope gradients are required (161002) only with rope. */
#define REQUIRED                                                                                                       \
    (SFA_BIT(QUERY) | SFA_BIT(KEY) | SFA_BIT(VALUE) | SFA_BIT(INDICES) | SFA_BIT(DOUT) | SFA_BIT(OUT) |                \
     SFA_BIT(SMAX) | SFA_BIT(SSUM) | SFA_BIT(DQ) | SFA_BIT(DK) | SFA_BIT(DV) | SFA_BIT(WORKSPACE_SIZE) |               \
     SFA_BIT(EXECUTOR))

#define GRAD(P)                                                                                                        \
    P(query, query) P(key, key) P(value, value) P(indices, sparseIndices) P(dout, dOut) P(out, out)                    \
        P(smax, softmaxMax) P(ssum, softmaxSum) P(act_q, actualSeqLengthsQueryOptional)                                \
            P(act_kv, actualSeqLengthskvOptional) P(query_rope, queryRopeOptional) P(key_rope, keyRopeOptional)        \
                P(scale, scaleValue) P(block_size, sparseBlockSize) P(layout, layoutOptional)                          \
                    P(sparse_mode, sparseMode) P(pre, preTokens) P(next, nextTokens)                                   \
                        P(deterministic, deterministic) P(dq, dQueryOut) P(dk, dKeyOut) P(dv, dValueOut)               \
                            P(dq_rope, dQueryRopeOutOptional) P(dk_rope, dKeyRopeOutOptional)
CANN_ENTRY_PAIR(aclnnSparseFlashAttentionGrad, sfa_sig_grad, GRAD, REQUIRED, sfa_call, .backward = true, sfa_prepare)
