/*
 * The parameters of the FlashAttention family, forward and backward, as one list: each is an id
 * (fa_param), a typed field of fa_call and a kind that gives the field's C type.  Ids only identify
 * a parameter; each function's declaration order is its own list (op_flash_attention_score*.c), so
 * one id set serves functions that order their parameters differently.  The backward reuses the
 * forward's ids for the same forward quantities (keyIn = FA_KEY, pseShiftOptional = FA_REAL_SHIFT,
 * sinkInOptional = FA_SINK, softmaxMax/SumOptional = FA_SMAX/FA_SSUM, softmaxInOptional = FA_SOUT,
 * attentionInOptional = FA_OUT, softmaxInLayout = FA_SOFTMAX_LAYOUT) and adds its gradients.
 */
#ifndef FC_CANN_FA_PARAMS_H
#define FC_CANN_FA_PARAMS_H

#include <stdint.h>

#include "aclnn/aclnn_base.h"
#include "cann/common/signature.h"

/* Kinds: T tensor, I integer array, S string, F double, N int64, W the workspace-size out
 * pointer, E the executor out pointer. */
#define FA_PARAMS(X)                                                                                                   \
    X(FA_QUERY, query, T)                                                                                              \
    X(FA_QUERY_ROPE, query_rope, T)                                                                                    \
    X(FA_KEY, key, T)                                                                                                  \
    X(FA_KEY_ROPE, key_rope, T)                                                                                        \
    X(FA_VALUE, value, T)                                                                                              \
    X(FA_REAL_SHIFT, real_shift, T)                                                                                    \
    X(FA_DROP_MASK, drop_mask, T)                                                                                      \
    X(FA_PADDING_MASK, padding_mask, T)                                                                                \
    X(FA_ATTEN_MASK, atten_mask, T)                                                                                    \
    X(FA_SINK, sink, T)                                                                                                \
    X(FA_PREFIX, prefix, I)                                                                                            \
    X(FA_ACT_Q, act_q, I)                                                                                              \
    X(FA_ACT_KV, act_kv, I)                                                                                            \
    X(FA_Q_START, q_start, I)                                                                                          \
    X(FA_KV_START, kv_start, I)                                                                                        \
    X(FA_SCALE, scale, F)                                                                                              \
    X(FA_KEEP_PROB, keep_prob, F)                                                                                      \
    X(FA_PRE, pre, N)                                                                                                  \
    X(FA_NEXT, next, N)                                                                                                \
    X(FA_HEAD_NUM, head_num, N)                                                                                        \
    X(FA_LAYOUT, layout, S)                                                                                            \
    X(FA_INNER_PRECISE, inner_precise, N)                                                                              \
    X(FA_SPARSE_MODE, sparse_mode, N)                                                                                  \
    X(FA_PSE_TYPE, pse_type, N)                                                                                        \
    X(FA_SOFTMAX_LAYOUT, softmax_layout, S)                                                                            \
    X(FA_SMAX, smax, T)                                                                                                \
    X(FA_SSUM, ssum, T)                                                                                                \
    X(FA_SOUT, sout, T)                                                                                                \
    X(FA_OUT, out, T)                                                                                                  \
    X(FA_DY, dy, T) /* backward: the output gradient and the gradients */                                              \
    X(FA_DQ, dq, T)                                                                                                    \
    X(FA_DQ_ROPE, dq_rope, T)                                                                                          \
    X(FA_DK, dk, T)                                                                                                    \
    X(FA_DK_ROPE, dk_rope, T)                                                                                          \
    X(FA_DV, dv, T)                                                                                                    \
    X(FA_DPSE, dpse, T)                                                                                                \
    X(FA_DSINK, dsink, T)                                                                                              \
    X(FA_WORKSPACE_SIZE, workspace_size, W)                                                                            \
    X(FA_EXECUTOR, executor, E)

/* A kind's field type. */
#define FA_FIELD_TYPE_T const aclTensor *
#define FA_FIELD_TYPE_I const aclIntArray *
#define FA_FIELD_TYPE_S const char *
#define FA_FIELD_TYPE_F double
#define FA_FIELD_TYPE_N int64_t
#define FA_FIELD_TYPE_W uint64_t *
#define FA_FIELD_TYPE_E aclOpExecutor **

#define FA_ENUM_(id, field, kind) id,
typedef enum fa_param { FA_PARAMS(FA_ENUM_) FA_NPARAMS } fa_param;
#undef FA_ENUM_

/* One first-phase call: every argument in its typed field; a function without a parameter leaves
 * it absent (NULL, 0) except pseType, which defaults to 1. */
typedef struct fa_call {
    const cann_signature *sig;
#define FA_FIELD_(id, field, kind) FA_FIELD_TYPE_##kind field;
    FA_PARAMS(FA_FIELD_)
#undef FA_FIELD_
} fa_call;

/* The tensor (integer array) argument with id; NULL when absent or of another kind. */
const aclTensor *fa_call_tensor(const fa_call *c, fa_param id);
const aclIntArray *fa_call_ints(const fa_call *c, fa_param id);

/* Every pointer argument by id (NULL for scalars), for cann_check_required. */
void fa_call_pointers(const fa_call *c, const void *ptr[FA_NPARAMS]);

#endif /* FC_CANN_FA_PARAMS_H */
