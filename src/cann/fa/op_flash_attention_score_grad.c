/*
 * The four FlashAttentionScoreGrad entry pairs (semantics §3.1).  Each first phase only gathers
 * its arguments for fa_grad_prepare; each second phase is the shared executor run.  Functions
 * without a parameter behave as if it were absent (V1: pseType 1 and no start indices; V1, V2: no
 * sink; V1–V3: no rope, softmaxInLayout "").
 */
#include "aclnnop/aclnn_flash_attention_score_grad.h"

#include "cann/common/executor.h"
#include "fa_grad.h"

/* Arguments every function has. */
#define COMMON(sig_)                                                                                                   \
    fa_call c = {.sig = &sig_, .scale = scaleValue, .keep_prob = keepProb, .pre = preTokens, .next = nextTokens,     \
                 .head_num = headNum, .inner_precise = innerPrecise, .sparse_mode = sparseMode, .pse_type = 1};        \
    c.ptr[FA_QUERY] = query;                                                                                           \
    c.ptr[FA_KEY] = keyIn;                                                                                             \
    c.ptr[FA_VALUE] = value;                                                                                           \
    c.ptr[FA_DY] = dy;                                                                                                 \
    c.ptr[FA_REAL_SHIFT] = pseShiftOptional;                                                                           \
    c.ptr[FA_DROP_MASK] = dropMaskOptional;                                                                            \
    c.ptr[FA_PADDING_MASK] = paddingMaskOptional;                                                                      \
    c.ptr[FA_ATTEN_MASK] = attenMaskOptional;                                                                          \
    c.ptr[FA_SMAX] = softmaxMaxOptional;                                                                               \
    c.ptr[FA_SSUM] = softmaxSumOptional;                                                                               \
    c.ptr[FA_SOUT] = softmaxInOptional;                                                                                \
    c.ptr[FA_OUT] = attentionInOptional;                                                                               \
    c.ptr[FA_PREFIX] = prefixOptional;                                                                                 \
    c.ptr[FA_LAYOUT] = inputLayout;                                                                                    \
    c.ptr[FA_DQ] = dqOut;                                                                                              \
    c.ptr[FA_DK] = dkOut;                                                                                              \
    c.ptr[FA_DV] = dvOut;                                                                                              \
    c.ptr[FA_DPSE] = dpseOut

aclnnStatus aclnnFlashAttentionScoreGradGetWorkspaceSize(
    const aclTensor *query, const aclTensor *keyIn, const aclTensor *value, const aclTensor *dy,
    const aclTensor *pseShiftOptional, const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional,
    const aclTensor *attenMaskOptional, const aclTensor *softmaxMaxOptional, const aclTensor *softmaxSumOptional,
    const aclTensor *softmaxInOptional, const aclTensor *attentionInOptional, const aclIntArray *prefixOptional,
    double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens, int64_t headNum, char *inputLayout,
    int64_t innerPrecise, int64_t sparseMode, const aclTensor *dqOut, const aclTensor *dkOut, const aclTensor *dvOut,
    const aclTensor *dpseOut, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    COMMON(fa_sig_grad);
    return fa_grad_prepare(&c, workspaceSize, executor);
}

aclnnStatus aclnnFlashAttentionScoreGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                         const aclrtStream stream)
{
    return cann_executor_run(fa_sig_grad.run_fn, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnFlashAttentionScoreGradV2GetWorkspaceSize(
    const aclTensor *query, const aclTensor *keyIn, const aclTensor *value, const aclTensor *dy,
    const aclTensor *pseShiftOptional, const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional,
    const aclTensor *attenMaskOptional, const aclTensor *softmaxMaxOptional, const aclTensor *softmaxSumOptional,
    const aclTensor *softmaxInOptional, const aclTensor *attentionInOptional, const aclIntArray *prefixOptional,
    const aclIntArray *qStartIdxOptional, const aclIntArray *kvStartIdxOptional, double scaleValue, double keepProb,
    int64_t preTokens, int64_t nextTokens, int64_t headNum, char *inputLayout, int64_t innerPrecise,
    int64_t sparseMode, int64_t pseType, const aclTensor *dqOut, const aclTensor *dkOut, const aclTensor *dvOut,
    const aclTensor *dpseOut, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    COMMON(fa_sig_grad_v2);
    c.ptr[FA_Q_START] = qStartIdxOptional;
    c.ptr[FA_KV_START] = kvStartIdxOptional;
    c.pse_type = pseType;
    return fa_grad_prepare(&c, workspaceSize, executor);
}

aclnnStatus aclnnFlashAttentionScoreGradV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                           const aclrtStream stream)
{
    return cann_executor_run(fa_sig_grad_v2.run_fn, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnFlashAttentionScoreGradV3GetWorkspaceSize(
    const aclTensor *query, const aclTensor *keyIn, const aclTensor *value, const aclTensor *dy,
    const aclTensor *pseShiftOptional, const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional,
    const aclTensor *attenMaskOptional, const aclTensor *softmaxMaxOptional, const aclTensor *softmaxSumOptional,
    const aclTensor *softmaxInOptional, const aclTensor *attentionInOptional, const aclTensor *sinkInOptional,
    const aclIntArray *prefixOptional, const aclIntArray *qStartIdxOptional, const aclIntArray *kvStartIdxOptional,
    double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens, int64_t headNum, char *inputLayout,
    int64_t innerPrecise, int64_t sparseMode, int64_t pseType, const aclTensor *dqOut, const aclTensor *dkOut,
    const aclTensor *dvOut, const aclTensor *dpseOut, const aclTensor *dsinkOut, uint64_t *workspaceSize,
    aclOpExecutor **executor)
{
    COMMON(fa_sig_grad_v3);
    c.ptr[FA_SINK] = sinkInOptional;
    c.ptr[FA_Q_START] = qStartIdxOptional;
    c.ptr[FA_KV_START] = kvStartIdxOptional;
    c.ptr[FA_DSINK] = dsinkOut;
    c.pse_type = pseType;
    return fa_grad_prepare(&c, workspaceSize, executor);
}

aclnnStatus aclnnFlashAttentionScoreGradV3(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                           const aclrtStream stream)
{
    return cann_executor_run(fa_sig_grad_v3.run_fn, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
    const aclTensor *query, const aclTensor *queryRope, const aclTensor *keyIn, const aclTensor *keyInRope,
    const aclTensor *value, const aclTensor *dy, const aclTensor *pseShiftOptional, const aclTensor *dropMaskOptional,
    const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional, const aclTensor *softmaxMaxOptional,
    const aclTensor *softmaxSumOptional, const aclTensor *softmaxInOptional, const aclTensor *attentionInOptional,
    const aclTensor *sinkInOptional, const aclIntArray *prefixOptional, const aclIntArray *actualSeqQLenOptional,
    const aclIntArray *actualSeqKvLenOptional, const aclIntArray *qStartIdxOptional,
    const aclIntArray *kvStartIdxOptional, double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens,
    int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t sparseMode, int64_t pseType,
    char *softmaxInLayout, const aclTensor *dqOut, const aclTensor *dqRopeOut, const aclTensor *dkOut,
    const aclTensor *dkRopeOut, const aclTensor *dvOut, const aclTensor *dpseOut, const aclTensor *dsinkOut,
    uint64_t *workspaceSize, aclOpExecutor **executor)
{
    COMMON(fa_sig_unpadding_v5);
    c.ptr[FA_QUERY_ROPE] = queryRope;
    c.ptr[FA_KEY_ROPE] = keyInRope;
    c.ptr[FA_SINK] = sinkInOptional;
    c.ptr[FA_ACT_Q] = actualSeqQLenOptional;
    c.ptr[FA_ACT_KV] = actualSeqKvLenOptional;
    c.ptr[FA_Q_START] = qStartIdxOptional;
    c.ptr[FA_KV_START] = kvStartIdxOptional;
    c.ptr[FA_SOFTMAX_LAYOUT] = softmaxInLayout;
    c.ptr[FA_DQ_ROPE] = dqRopeOut;
    c.ptr[FA_DK_ROPE] = dkRopeOut;
    c.ptr[FA_DSINK] = dsinkOut;
    c.pse_type = pseType;
    return fa_grad_prepare(&c, workspaceSize, executor);
}

aclnnStatus aclnnFlashAttentionUnpaddingScoreGradV5(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                                    const aclrtStream stream)
{
    return cann_executor_run(fa_sig_unpadding_v5.run_fn, workspace, workspaceSize, executor, stream);
}
