/*
 * The parameters of IncreFlashAttentionV4 (its own family: only this function uses them) as one
 * list (the machinery: cann/common/params.h): an id (ifa_param), a typed field of ifa_call and a
 * kind.  The declaration order and spelled names are the function's list
 * (op_incre_flash_attention_v4.c).
 */
#ifndef FC_CANN_IFA_PARAMS_H
#define FC_CANN_IFA_PARAMS_H

#include "cann/common/params.h"

#define IFA_PARAMS(X, f)                                                                                               \
    X(f, IFA_QUERY, query, T)                                                                                          \
    X(f, IFA_KEY, key, L)                                                                                              \
    X(f, IFA_VALUE, value, L)                                                                                          \
    X(f, IFA_PSE, pse, T)                                                                                              \
    X(f, IFA_MASK, mask, T)                                                                                            \
    X(f, IFA_ACT_LEN, act_len, I)                                                                                      \
    X(f, IFA_DEQ_SCALE1, deq_scale1, T)                                                                                \
    X(f, IFA_Q_SCALE1, q_scale1, T)                                                                                    \
    X(f, IFA_DEQ_SCALE2, deq_scale2, T)                                                                                \
    X(f, IFA_Q_SCALE2, q_scale2, T)                                                                                    \
    X(f, IFA_Q_OFFSET2, q_offset2, T)                                                                                  \
    X(f, IFA_AQ_SCALE, aq_scale, T)                                                                                    \
    X(f, IFA_AQ_OFFSET, aq_offset, T)                                                                                  \
    X(f, IFA_BLOCK_TABLE, block_table, T)                                                                              \
    X(f, IFA_KV_PAD, kv_pad, T)                                                                                        \
    X(f, IFA_NUM_HEADS, num_heads, N)                                                                                  \
    X(f, IFA_SCALE, scale, F)                                                                                          \
    X(f, IFA_LAYOUT, layout, S)                                                                                        \
    X(f, IFA_NUM_KV_HEADS, num_kv_heads, N)                                                                            \
    X(f, IFA_BLOCK_SIZE, block_size, N)                                                                                \
    X(f, IFA_INNER_PRECISE, inner_precise, N)                                                                          \
    X(f, IFA_OUT, out, T)                                                                                              \
    X(f, IFA_WORKSPACE_SIZE, workspace_size, W)                                                                        \
    X(f, IFA_EXECUTOR, executor, E)

/* ifa_param, ifa_call and ifa_fields. */
CANN_PARAM_FAMILY(ifa, IFA_PARAMS, IFA_NPARAMS, );

#endif /* FC_CANN_IFA_PARAMS_H */
