/*
 * Parameter ids of the FlashAttention family, forward and backward.  Ids only identify a
 * parameter; each function's declaration order lives in its cann_signature, so one id set serves
 * functions that order their parameters differently.  The backward reuses the forward's ids for
 * the same forward quantities (keyIn = FA_KEY, pseShiftOptional = FA_REAL_SHIFT, sinkInOptional =
 * FA_SINK, softmaxMax/SumOptional = FA_SMAX/FA_SSUM, softmaxInOptional = FA_SOUT,
 * attentionInOptional = FA_OUT, softmaxInLayout = FA_SOFTMAX_LAYOUT) and adds its gradients.
 */
#ifndef FC_CANN_FA_PARAMS_H
#define FC_CANN_FA_PARAMS_H

typedef enum fa_param {
    FA_QUERY,
    FA_QUERY_ROPE,
    FA_KEY,
    FA_KEY_ROPE,
    FA_VALUE,
    FA_REAL_SHIFT,
    FA_DROP_MASK,
    FA_PADDING_MASK,
    FA_ATTEN_MASK,
    FA_SINK,
    FA_PREFIX,
    FA_ACT_Q,
    FA_ACT_KV,
    FA_Q_START,
    FA_KV_START,
    FA_SCALE,
    FA_KEEP_PROB,
    FA_PRE,
    FA_NEXT,
    FA_HEAD_NUM,
    FA_LAYOUT,
    FA_INNER_PRECISE,
    FA_SPARSE_MODE,
    FA_PSE_TYPE,
    FA_SOFTMAX_LAYOUT,
    FA_SMAX,
    FA_SSUM,
    FA_SOUT,
    FA_OUT,
    FA_DY,      /* backward: the output gradient and the gradients */
    FA_DQ,
    FA_DQ_ROPE,
    FA_DK,
    FA_DK_ROPE,
    FA_DV,
    FA_DPSE,
    FA_DSINK,
    FA_WORKSPACE_SIZE,
    FA_EXECUTOR,
    FA_NPARAMS
} fa_param;

#endif /* FC_CANN_FA_PARAMS_H */
