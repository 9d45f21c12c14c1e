/*
 * The parameters of the FlashAttention family, forward and backward, as one list (the machinery:
 * cann/common/params.h): each is an id (fa_param), a typed field of fa_call and a kind.  The
 * functions' declaration orders are their own lists (op_flash_attention_score*.c).  The backward
 * reuses the forward's ids for the same forward quantities (keyIn = FA_KEY, pseShiftOptional =
 * FA_REAL_SHIFT, sinkInOptional = FA_SINK, softmaxMax/SumOptional = FA_SMAX/FA_SSUM,
 * softmaxInOptional = FA_SOUT, attentionInOptional = FA_OUT, softmaxInLayout = FA_SOFTMAX_LAYOUT)
 * and adds its gradients.
 */
#ifndef FC_CANN_FA_PARAMS_H
#define FC_CANN_FA_PARAMS_H

#include "cann/common/params.h"

#define FA_PARAMS(X, f)                                                                                                \
    X(f, FA_QUERY, query, T)                                                                                           \
    X(f, FA_QUERY_ROPE, query_rope, T)                                                                                 \
    X(f, FA_KEY, key, T)                                                                                               \
    X(f, FA_KEY_ROPE, key_rope, T)                                                                                     \
    X(f, FA_VALUE, value, T)                                                                                           \
    X(f, FA_REAL_SHIFT, real_shift, T)                                                                                 \
    X(f, FA_DROP_MASK, drop_mask, T)                                                                                   \
    X(f, FA_PADDING_MASK, padding_mask, T)                                                                             \
    X(f, FA_ATTEN_MASK, atten_mask, T)                                                                                 \
    X(f, FA_SINK, sink, T)                                                                                             \
    X(f, FA_PREFIX, prefix, I)                                                                                         \
    X(f, FA_ACT_Q, act_q, I)                                                                                           \
    X(f, FA_ACT_KV, act_kv, I)                                                                                         \
    X(f, FA_Q_START, q_start, I)                                                                                       \
    X(f, FA_KV_START, kv_start, I)                                                                                     \
    X(f, FA_SCALE, scale, F)                                                                                           \
    X(f, FA_KEEP_PROB, keep_prob, F)                                                                                   \
    X(f, FA_PRE, pre, N)                                                                                               \
    X(f, FA_NEXT, next, N)                                                                                             \
    X(f, FA_HEAD_NUM, head_num, N)                                                                                     \
    X(f, FA_LAYOUT, layout, S)                                                                                         \
    X(f, FA_INNER_PRECISE, inner_precise, N)                                                                           \
    X(f, FA_SPARSE_MODE, sparse_mode, N)                                                                               \
    X(f, FA_PSE_TYPE, pse_type, N)                                                                                     \
    X(f, FA_SOFTMAX_LAYOUT, softmax_layout, S)                                                                         \
    X(f, FA_SMAX, smax, T)                                                                                             \
    X(f, FA_SSUM, ssum, T)                                                                                             \
    X(f, FA_SOUT, sout, T)                                                                                             \
    X(f, FA_OUT, out, T)                                                                                               \
    X(f, FA_DY, dy, T) /* backward: the output gradient and the gradients */                                           \
    X(f, FA_DQ, dq, T)                                                                                                 \
    X(f, FA_DQ_ROPE, dq_rope, T)                                                                                       \
    X(f, FA_DK, dk, T)                                                                                                 \
    X(f, FA_DK_ROPE, dk_rope, T)                                                                                       \
    X(f, FA_DV, dv, T)                                                                                                 \
    X(f, FA_DPSE, dpse, T)                                                                                             \
    X(f, FA_DSINK, dsink, T)                                                                                           \
    X(f, FA_WORKSPACE_SIZE, workspace_size, W)                                                                         \
    X(f, FA_EXECUTOR, executor, E)

/* fa_param, fa_call and fa_fields.  In a fa_call a function without a parameter leaves it absent
 * (NULL, 0) except pseType, which defaults to 1. */
CANN_PARAM_FAMILY(fa, FA_PARAMS, FA_NPARAMS, );

#endif /* FC_CANN_FA_PARAMS_H */
