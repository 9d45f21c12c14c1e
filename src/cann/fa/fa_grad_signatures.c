/* The declarations of the four backward functions (semantics §3.1), as parameter lists. */
#include "fa_grad.h"

/* softmaxMax/Sum and attentionIn are required by flashc (§3.2); softmaxInLayout NULL means "". */
#define REQUIRED                                                                                                       \
    (CANN_BIT(FA_QUERY) | CANN_BIT(FA_KEY) | CANN_BIT(FA_VALUE) | CANN_BIT(FA_DY) | CANN_BIT(FA_SMAX) |              \
     CANN_BIT(FA_SSUM) | CANN_BIT(FA_OUT) | CANN_BIT(FA_LAYOUT) | CANN_BIT(FA_DQ) | CANN_BIT(FA_DK) |                \
     CANN_BIT(FA_DV) | CANN_BIT(FA_WORKSPACE_SIZE) | CANN_BIT(FA_EXECUTOR))
#define SIG(var, name, params)                                                                                         \
    const cann_signature var = {name "GetWorkspaceSize", name, params, (int)(sizeof params / sizeof params[0]), REQUIRED}

/* The operands every function starts with, up to attentionInOptional. */
#define DENSE_HEAD                                                                                                     \
    {FA_QUERY, "query"}, {FA_KEY, "keyIn"}, {FA_VALUE, "value"}, {FA_DY, "dy"}, {FA_REAL_SHIFT, "pseShiftOptional"},  \
        {FA_DROP_MASK, "dropMaskOptional"}, {FA_PADDING_MASK, "paddingMaskOptional"},                                 \
        {FA_ATTEN_MASK, "attenMaskOptional"}, {FA_SMAX, "softmaxMaxOptional"}, {FA_SSUM, "softmaxSumOptional"},      \
        {FA_SOUT, "softmaxInOptional"}, {FA_OUT, "attentionInOptional"}
/* The attributes from scaleValue to sparseMode. */
#define ATTRS                                                                                                          \
    {FA_SCALE, "scaleValue"}, {FA_KEEP_PROB, "keepProb"}, {FA_PRE, "preTokens"}, {FA_NEXT, "nextTokens"},             \
        {FA_HEAD_NUM, "headNum"}, {FA_LAYOUT, "inputLayout"}, {FA_INNER_PRECISE, "innerPrecise"},                     \
        {FA_SPARSE_MODE, "sparseMode"}
#define TAIL {FA_WORKSPACE_SIZE, "workspaceSize"}, {FA_EXECUTOR, "executor"}
/* The sequence starts of V2 on, and the gradients every function writes. */
#define STARTS {FA_Q_START, "qStartIdxOptional"}, {FA_KV_START, "kvStartIdxOptional"}
#define GRADS {FA_DQ, "dqOut"}, {FA_DK, "dkOut"}, {FA_DV, "dvOut"}, {FA_DPSE, "dpseOut"}

static const cann_param grad[] = {DENSE_HEAD, {FA_PREFIX, "prefixOptional"}, ATTRS, GRADS, TAIL};
SIG(fa_sig_grad, "aclnnFlashAttentionScoreGrad", grad);

static const cann_param grad_v2[] = {DENSE_HEAD, {FA_PREFIX, "prefixOptional"}, STARTS, ATTRS, {FA_PSE_TYPE, "pseType"},
                                     GRADS, TAIL};
SIG(fa_sig_grad_v2, "aclnnFlashAttentionScoreGradV2", grad_v2);

static const cann_param grad_v3[] = {DENSE_HEAD, {FA_SINK, "sinkInOptional"}, {FA_PREFIX, "prefixOptional"}, STARTS,
                                     ATTRS, {FA_PSE_TYPE, "pseType"}, GRADS, {FA_DSINK, "dsinkOut"}, TAIL};
SIG(fa_sig_grad_v3, "aclnnFlashAttentionScoreGradV3", grad_v3);

static const cann_param unpadding_v5[] = {
    {FA_QUERY, "query"}, {FA_QUERY_ROPE, "queryRope"}, {FA_KEY, "keyIn"}, {FA_KEY_ROPE, "keyInRope"},
    {FA_VALUE, "value"}, {FA_DY, "dy"}, {FA_REAL_SHIFT, "pseShiftOptional"}, {FA_DROP_MASK, "dropMaskOptional"},
    {FA_PADDING_MASK, "paddingMaskOptional"}, {FA_ATTEN_MASK, "attenMaskOptional"},
    {FA_SMAX, "softmaxMaxOptional"}, {FA_SSUM, "softmaxSumOptional"}, {FA_SOUT, "softmaxInOptional"},
    {FA_OUT, "attentionInOptional"}, {FA_SINK, "sinkInOptional"}, {FA_PREFIX, "prefixOptional"},
    {FA_ACT_Q, "actualSeqQLenOptional"}, {FA_ACT_KV, "actualSeqKvLenOptional"}, {FA_Q_START, "qStartIdxOptional"},
    {FA_KV_START, "kvStartIdxOptional"}, ATTRS, {FA_PSE_TYPE, "pseType"}, {FA_SOFTMAX_LAYOUT, "softmaxInLayout"},
    {FA_DQ, "dqOut"}, {FA_DQ_ROPE, "dqRopeOut"}, {FA_DK, "dkOut"}, {FA_DK_ROPE, "dkRopeOut"}, {FA_DV, "dvOut"},
    {FA_DPSE, "dpseOut"}, {FA_DSINK, "dsinkOut"}, TAIL};
SIG(fa_sig_unpadding_v5, "aclnnFlashAttentionUnpaddingScoreGradV5", unpadding_v5);
