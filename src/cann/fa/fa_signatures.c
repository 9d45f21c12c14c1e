/* The declarations of the five forward functions (semantics §2.1), as parameter lists. */
#include "fa_forward.h"

#define REQUIRED                                                                                                       \
    (CANN_BIT(FA_QUERY) | CANN_BIT(FA_KEY) | CANN_BIT(FA_VALUE) | CANN_BIT(FA_LAYOUT) | CANN_BIT(FA_SMAX) |           \
     CANN_BIT(FA_SSUM) | CANN_BIT(FA_OUT) | CANN_BIT(FA_WORKSPACE_SIZE) | CANN_BIT(FA_EXECUTOR))
#define SIG(var, name, params)                                                                                         \
    const cann_signature var = {name "GetWorkspaceSize", name, params, (int)(sizeof params / sizeof params[0]), REQUIRED}

static const cann_param score[] = {
    {FA_QUERY, "query"}, {FA_KEY, "key"}, {FA_VALUE, "value"}, {FA_REAL_SHIFT, "realShiftOptional"},
    {FA_DROP_MASK, "dropMaskOptional"}, {FA_PADDING_MASK, "paddingMaskOptional"},
    {FA_ATTEN_MASK, "attenMaskOptional"}, {FA_PREFIX, "prefixOptional"}, {FA_SCALE, "scaleValue"},
    {FA_KEEP_PROB, "keepProb"}, {FA_PRE, "preTokens"}, {FA_NEXT, "nextTokens"}, {FA_HEAD_NUM, "headNum"},
    {FA_LAYOUT, "inputLayout"}, {FA_INNER_PRECISE, "innerPrecise"}, {FA_SPARSE_MODE, "sparseMode"},
    {FA_SMAX, "softmaxMaxOut"}, {FA_SSUM, "softmaxSumOut"}, {FA_SOUT, "softmaxOutOut"},
    {FA_OUT, "attentionOutOut"}, {FA_WORKSPACE_SIZE, "workspaceSize"}, {FA_EXECUTOR, "executor"}};
SIG(fa_sig_score, "aclnnFlashAttentionScore", score);

static const cann_param score_v2[] = {
    {FA_QUERY, "query"}, {FA_KEY, "key"}, {FA_VALUE, "value"}, {FA_REAL_SHIFT, "realShiftOptional"},
    {FA_DROP_MASK, "dropMaskOptional"}, {FA_PADDING_MASK, "paddingMaskOptional"},
    {FA_ATTEN_MASK, "attenMaskOptional"}, {FA_PREFIX, "prefixOptional"}, {FA_Q_START, "qStartIdxOptional"},
    {FA_KV_START, "kvStartIdxOptional"}, {FA_SCALE, "scaleValueOptional"}, {FA_KEEP_PROB, "keepProbOptional"},
    {FA_PRE, "preTokensOptional"}, {FA_NEXT, "nextTokensOptional"}, {FA_HEAD_NUM, "headNum"},
    {FA_LAYOUT, "inputLayout"}, {FA_INNER_PRECISE, "innerPreciseOptional"}, {FA_SPARSE_MODE, "sparseModeOptional"},
    {FA_PSE_TYPE, "pseTypeOptional"}, {FA_SMAX, "softmaxMaxOut"}, {FA_SSUM, "softmaxSumOut"},
    {FA_SOUT, "softmaxOutOut"}, {FA_OUT, "attentionOutOut"}, {FA_WORKSPACE_SIZE, "workspaceSize"},
    {FA_EXECUTOR, "executor"}};
SIG(fa_sig_score_v2, "aclnnFlashAttentionScoreV2", score_v2);

static const cann_param score_v3[] = {
    {FA_QUERY, "query"}, {FA_KEY, "key"}, {FA_VALUE, "value"}, {FA_REAL_SHIFT, "realShiftOptional"},
    {FA_DROP_MASK, "dropMaskOptional"}, {FA_PADDING_MASK, "paddingMaskOptional"},
    {FA_ATTEN_MASK, "attenMaskOptional"}, {FA_SINK, "sinkOptional"}, {FA_PREFIX, "prefixOptional"},
    {FA_Q_START, "qStartIdxOptional"}, {FA_KV_START, "kvStartIdxOptional"}, {FA_SCALE, "scaleValue"},
    {FA_KEEP_PROB, "keepProb"}, {FA_PRE, "preTokens"}, {FA_NEXT, "nextTokens"}, {FA_HEAD_NUM, "headNum"},
    {FA_LAYOUT, "inputLayout"}, {FA_INNER_PRECISE, "innerPrecise"}, {FA_SPARSE_MODE, "sparseMode"},
    {FA_PSE_TYPE, "pseType"}, {FA_SMAX, "softmaxMaxOut"}, {FA_SSUM, "softmaxSumOut"}, {FA_SOUT, "softmaxOutOut"},
    {FA_OUT, "attentionOutOut"}, {FA_WORKSPACE_SIZE, "workspaceSize"}, {FA_EXECUTOR, "executor"}};
SIG(fa_sig_score_v3, "aclnnFlashAttentionScoreV3", score_v3);

static const cann_param varlen[] = {
    {FA_QUERY, "query"}, {FA_KEY, "key"}, {FA_VALUE, "value"}, {FA_REAL_SHIFT, "realShiftOptional"},
    {FA_DROP_MASK, "dropMaskOptional"}, {FA_PADDING_MASK, "paddingMaskOptional"},
    {FA_ATTEN_MASK, "attenMaskOptional"}, {FA_PREFIX, "prefixOptional"}, {FA_ACT_Q, "actualSeqQLenOptional"},
    {FA_ACT_KV, "actualSeqKvLenOptional"}, {FA_SCALE, "scaleValue"}, {FA_KEEP_PROB, "keepProb"},
    {FA_PRE, "preTokens"}, {FA_NEXT, "nextTokens"}, {FA_HEAD_NUM, "headNum"}, {FA_LAYOUT, "inputLayout"},
    {FA_INNER_PRECISE, "innerPrecise"}, {FA_SPARSE_MODE, "sparseMode"}, {FA_SMAX, "softmaxMaxOut"},
    {FA_SSUM, "softmaxSumOut"}, {FA_SOUT, "softmaxOutOut"}, {FA_OUT, "attentionOutOut"},
    {FA_WORKSPACE_SIZE, "workspaceSize"}, {FA_EXECUTOR, "executor"}};
SIG(fa_sig_varlen, "aclnnFlashAttentionVarLenScore", varlen);

static const cann_param varlen_v5[] = {
    {FA_QUERY, "query"}, {FA_QUERY_ROPE, "queryRope"}, {FA_KEY, "key"}, {FA_KEY_ROPE, "keyRope"},
    {FA_VALUE, "value"}, {FA_REAL_SHIFT, "realShiftOptional"}, {FA_DROP_MASK, "dropMaskOptional"},
    {FA_PADDING_MASK, "paddingMaskOptional"}, {FA_ATTEN_MASK, "attenMaskOptional"}, {FA_SINK, "sinkOptional"},
    {FA_PREFIX, "prefixOptional"}, {FA_ACT_Q, "actualSeqQLenOptional"}, {FA_ACT_KV, "actualSeqKvLenOptional"},
    {FA_Q_START, "qStartIdxOptional"}, {FA_KV_START, "kvStartIdxOptional"}, {FA_SCALE, "scaleValue"},
    {FA_KEEP_PROB, "keepProb"}, {FA_PRE, "preTokens"}, {FA_NEXT, "nextTokens"}, {FA_HEAD_NUM, "headNum"},
    {FA_LAYOUT, "inputLayout"}, {FA_INNER_PRECISE, "innerPrecise"}, {FA_SPARSE_MODE, "sparseMode"},
    {FA_PSE_TYPE, "pseType"}, {FA_SOFTMAX_LAYOUT, "softmaxOutLayout"}, {FA_SMAX, "softmaxMaxOut"},
    {FA_SSUM, "softmaxSumOut"}, {FA_SOUT, "softmaxOutOut"}, {FA_OUT, "attentionOutOut"},
    {FA_WORKSPACE_SIZE, "workspaceSize"}, {FA_EXECUTOR, "executor"}};
SIG(fa_sig_varlen_v5, "aclnnFlashAttentionVarLenScoreV5", varlen_v5);
