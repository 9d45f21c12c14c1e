/*
 * Parameter ids of the SparseFlashAttention family (forward and grad, semantics §5.1).  Ids only
 * identify a parameter; each function's declaration order and spelling live in its
 * cann_signature (sfa_signatures.c).  The grad's single layoutOptional has its own id.
 */
#ifndef FC_CANN_SFA_PARAMS_H
#define FC_CANN_SFA_PARAMS_H

typedef enum sfa_param {
    SFA_QUERY,
    SFA_KEY,
    SFA_VALUE,
    SFA_INDICES,
    SFA_BLOCK_TABLE,
    SFA_DOUT,
    SFA_OUT,        /* forward: attentionOutOut (output); grad: out (input) */
    SFA_SMAX,       /* forward: softmaxMaxOut (output); grad: softmaxMax (input) */
    SFA_SSUM,
    SFA_ACT_Q,
    SFA_ACT_KV,
    SFA_QUERY_ROPE,
    SFA_KEY_ROPE,
    SFA_SCALE,
    SFA_BLOCK_SIZE,
    SFA_LAYOUT_Q,
    SFA_LAYOUT_KV,
    SFA_LAYOUT,     /* grad: one layout for every tensor */
    SFA_SPARSE_MODE,
    SFA_PRE,
    SFA_NEXT,
    SFA_ATTN_MODE,
    SFA_RETURN_LSE,
    SFA_DETERMINISTIC,
    SFA_DQ,
    SFA_DK,
    SFA_DV,
    SFA_DQ_ROPE,
    SFA_DK_ROPE,
    SFA_WORKSPACE_SIZE,
    SFA_EXECUTOR,
    SFA_NPARAMS
} sfa_param;

#endif /* FC_CANN_SFA_PARAMS_H */
