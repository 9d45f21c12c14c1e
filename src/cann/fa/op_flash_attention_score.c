/*
 * The five FlashAttentionScore forward entry pairs (semantics §2.1).  Each first phase only
 * gathers its arguments for fa_forward_prepare; each second phase is the shared executor run.
 * Functions without a parameter behave as if it were absent (pseType 1, no start indices, no sink,
 * no rope, softmaxOutLayout "").
 */
#include "aclnnop/aclnn_flash_attention_score.h"

#include "cann/common/executor.h"
#include "fa_forward.h"

/* Arguments every function has. */
#define COMMON(sig_, scale_, keep_, pre_, next_, inner_, mode_)                                                        \
    fa_call c = {.sig = &sig_, .scale = scale_, .keep_prob = keep_, .pre = pre_, .next = next_, .head_num = headNum,  \
                 .inner_precise = inner_, .sparse_mode = mode_, .pse_type = 1};                                        \
    c.ptr[FA_QUERY] = query;                                                                                           \
    c.ptr[FA_KEY] = key;                                                                                               \
    c.ptr[FA_VALUE] = value;                                                                                           \
    c.ptr[FA_REAL_SHIFT] = realShiftOptional;                                                                          \
    c.ptr[FA_DROP_MASK] = dropMaskOptional;                                                                            \
    c.ptr[FA_PADDING_MASK] = paddingMaskOptional;                                                                      \
    c.ptr[FA_ATTEN_MASK] = attenMaskOptional;                                                                          \
    c.ptr[FA_PREFIX] = prefixOptional;                                                                                 \
    c.ptr[FA_LAYOUT] = inputLayout;                                                                                    \
    c.ptr[FA_SMAX] = softmaxMaxOut;                                                                                    \
    c.ptr[FA_SSUM] = softmaxSumOut;                                                                                    \
    c.ptr[FA_SOUT] = softmaxOutOut;                                                                                    \
    c.ptr[FA_OUT] = attentionOutOut

aclnnStatus aclnnFlashAttentionScoreGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional,
    const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclIntArray *prefixOptional, double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens,
    int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t sparseMode, const aclTensor *softmaxMaxOut,
    const aclTensor *softmaxSumOut, const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut,
    uint64_t *workspaceSize, aclOpExecutor **executor)
{
    COMMON(fa_sig_score, scaleValue, keepProb, preTokens, nextTokens, innerPrecise, sparseMode);
    return fa_forward_prepare(&c, workspaceSize, executor);
}

aclnnStatus aclnnFlashAttentionScore(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                     const aclrtStream stream)
{
    return cann_executor_run(fa_sig_score.run_fn, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnFlashAttentionScoreV2GetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional,
    const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclIntArray *prefixOptional, const aclIntArray *qStartIdxOptional, const aclIntArray *kvStartIdxOptional,
    double scaleValueOptional, double keepProbOptional, int64_t preTokensOptional, int64_t nextTokensOptional,
    int64_t headNum, char *inputLayout, int64_t innerPreciseOptional, int64_t sparseModeOptional,
    int64_t pseTypeOptional, const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut,
    const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut, uint64_t *workspaceSize,
    aclOpExecutor **executor)
{
    COMMON(fa_sig_score_v2, scaleValueOptional, keepProbOptional, preTokensOptional, nextTokensOptional,
           innerPreciseOptional, sparseModeOptional);
    c.ptr[FA_Q_START] = qStartIdxOptional;
    c.ptr[FA_KV_START] = kvStartIdxOptional;
    c.pse_type = pseTypeOptional;
    return fa_forward_prepare(&c, workspaceSize, executor);
}

aclnnStatus aclnnFlashAttentionScoreV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                       const aclrtStream stream)
{
    return cann_executor_run(fa_sig_score_v2.run_fn, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnFlashAttentionScoreV3GetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional,
    const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclTensor *sinkOptional, const aclIntArray *prefixOptional, const aclIntArray *qStartIdxOptional,
    const aclIntArray *kvStartIdxOptional, double scaleValue, double keepProb, int64_t preTokens,
    int64_t nextTokens, int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t sparseMode,
    int64_t pseType, const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut,
    const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut, uint64_t *workspaceSize,
    aclOpExecutor **executor)
{
    COMMON(fa_sig_score_v3, scaleValue, keepProb, preTokens, nextTokens, innerPrecise, sparseMode);
    c.ptr[FA_SINK] = sinkOptional;
    c.ptr[FA_Q_START] = qStartIdxOptional;
    c.ptr[FA_KV_START] = kvStartIdxOptional;
    c.pse_type = pseType;
    return fa_forward_prepare(&c, workspaceSize, executor);
}

aclnnStatus aclnnFlashAttentionScoreV3(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                       const aclrtStream stream)
{
    return cann_executor_run(fa_sig_score_v3.run_fn, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnFlashAttentionVarLenScoreGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional,
    const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclIntArray *prefixOptional, const aclIntArray *actualSeqQLenOptional,
    const aclIntArray *actualSeqKvLenOptional, double scaleValue, double keepProb, int64_t preTokens,
    int64_t nextTokens, int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t sparseMode,
    const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut, const aclTensor *softmaxOutOut,
    const aclTensor *attentionOutOut, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    COMMON(fa_sig_varlen, scaleValue, keepProb, preTokens, nextTokens, innerPrecise, sparseMode);
    c.ptr[FA_ACT_Q] = actualSeqQLenOptional;
    c.ptr[FA_ACT_KV] = actualSeqKvLenOptional;
    return fa_forward_prepare(&c, workspaceSize, executor);
}

aclnnStatus aclnnFlashAttentionVarLenScore(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                           const aclrtStream stream)
{
    return cann_executor_run(fa_sig_varlen.run_fn, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnFlashAttentionVarLenScoreV5GetWorkspaceSize(
    const aclTensor *query, const aclTensor *queryRope, const aclTensor *key, const aclTensor *keyRope,
    const aclTensor *value, const aclTensor *realShiftOptional, const aclTensor *dropMaskOptional,
    const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional, const aclTensor *sinkOptional,
    const aclIntArray *prefixOptional, const aclIntArray *actualSeqQLenOptional,
    const aclIntArray *actualSeqKvLenOptional, const aclIntArray *qStartIdxOptional,
    const aclIntArray *kvStartIdxOptional, double scaleValue, double keepProb, int64_t preTokens,
    int64_t nextTokens, int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t sparseMode,
    int64_t pseType, char *softmaxOutLayout, const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut,
    const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut, uint64_t *workspaceSize,
    aclOpExecutor **executor)
{
    COMMON(fa_sig_varlen_v5, scaleValue, keepProb, preTokens, nextTokens, innerPrecise, sparseMode);
    c.ptr[FA_QUERY_ROPE] = queryRope;
    c.ptr[FA_KEY_ROPE] = keyRope;
    c.ptr[FA_SINK] = sinkOptional;
    c.ptr[FA_ACT_Q] = actualSeqQLenOptional;
    c.ptr[FA_ACT_KV] = actualSeqKvLenOptional;
    c.ptr[FA_Q_START] = qStartIdxOptional;
    c.ptr[FA_KV_START] = kvStartIdxOptional;
    c.ptr[FA_SOFTMAX_LAYOUT] = softmaxOutLayout;
    c.pse_type = pseType;
    return fa_forward_prepare(&c, workspaceSize, executor);
}

aclnnStatus aclnnFlashAttentionVarLenScoreV5(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                             const aclrtStream stream)
{
    return cann_executor_run(fa_sig_varlen_v5.run_fn, workspace, workspaceSize, executor, stream);
}
