/*
 * The parameters of the SparseFlashAttention family (forward and grad, semantics §5.1) as one
 * list (the machinery: cann/common/params.h): an id (sfa_param), a typed field of sfa_call and a
 * kind.  Each function's declaration order and spelling are its own list
 * (op_sparse_flash_attention*.c).  The grad's single layoutOptional has its own id.
 */
#ifndef FC_CANN_SFA_PARAMS_H
#define FC_CANN_SFA_PARAMS_H

#include "cann/common/params.h"

#define SFA_PARAMS(X, f)                                                                                               \
    X(f, SFA_QUERY, query, T)                                                                                          \
    X(f, SFA_KEY, key, T)                                                                                              \
    X(f, SFA_VALUE, value, T)                                                                                          \
    X(f, SFA_INDICES, indices, T)                                                                                      \
    X(f, SFA_BLOCK_TABLE, block_table, T)                                                                              \
    X(f, SFA_DOUT, dout, T)                                                                                            \
    X(f, SFA_OUT, out, T)   /* forward: attentionOutOut (output); grad: out (input) */                                 \
    X(f, SFA_SMAX, smax, T) /* forward: softmaxMaxOut (output); grad: softmaxMax (input) */                            \
    X(f, SFA_SSUM, ssum, T)                                                                                            \
    X(f, SFA_ACT_Q, act_q, T)                                                                                          \
    X(f, SFA_ACT_KV, act_kv, T)                                                                                        \
    X(f, SFA_QUERY_ROPE, query_rope, T)                                                                                \
    X(f, SFA_KEY_ROPE, key_rope, T)                                                                                    \
    X(f, SFA_SCALE, scale, F)                                                                                          \
    X(f, SFA_BLOCK_SIZE, block_size, N)                                                                                \
    X(f, SFA_LAYOUT_Q, layout_q, S)                                                                                    \
    X(f, SFA_LAYOUT_KV, layout_kv, S)                                                                                  \
    X(f, SFA_LAYOUT, layout, S) /* grad: one layout for every tensor */                                                \
    X(f, SFA_SPARSE_MODE, sparse_mode, N)                                                                              \
    X(f, SFA_PRE, pre, N)                                                                                              \
    X(f, SFA_NEXT, next, N)                                                                                            \
    X(f, SFA_ATTN_MODE, attention_mode, N)                                                                             \
    X(f, SFA_RETURN_LSE, return_lse, B)                                                                                \
    X(f, SFA_DETERMINISTIC, deterministic, B)                                                                          \
    X(f, SFA_DQ, dq, T)                                                                                                \
    X(f, SFA_DK, dk, T)                                                                                                \
    X(f, SFA_DV, dv, T)                                                                                                \
    X(f, SFA_DQ_ROPE, dq_rope, T)                                                                                      \
    X(f, SFA_DK_ROPE, dk_rope, T)                                                                                      \
    X(f, SFA_WORKSPACE_SIZE, workspace_size, W)                                                                        \
    X(f, SFA_EXECUTOR, executor, E)

/* sfa_param, sfa_call (with which of the two functions it is) and sfa_fields. */
CANN_PARAM_FAMILY(sfa, SFA_PARAMS, SFA_NPARAMS, bool backward;);
#define SFA_BIT(id) CANN_BIT(SFA_##id)

#endif /* FC_CANN_SFA_PARAMS_H */
