/*
 * flashc's CANN-compatible face: the FlashAttentionScore forward family (semantics §2).
 * Parameter lists are those of upstream aclnn (V2 names follow the project's operator document).
 * V1–V3 take "BSH", "SBH", "BSND" or "BNSD"; the VarLen functions take "TND" only.
 * As on the NPU, a NULL attenMaskOptional masks nothing whatever sparseMode, preTokens and
 * nextTokens say: sparseMode 2 or 3 is causal only with the compressed [2048, 2048] mask tensor
 * (semantics §2.5, §8.2; docs/porting-from-ascend.md).
 */
#ifndef FLASHC_ACLNNOP_ACLNN_FLASH_ATTENTION_SCORE_H
#define FLASHC_ACLNNOP_ACLNN_FLASH_ATTENTION_SCORE_H

#include "../aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionScoreGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional,
    const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclIntArray *prefixOptional, double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens,
    int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t sparseMode, const aclTensor *softmaxMaxOut,
    const aclTensor *softmaxSumOut, const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionScore(void *workspace, uint64_t workspaceSize,
                                                         aclOpExecutor *executor, const aclrtStream stream);

ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionScoreV2GetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional,
    const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclIntArray *prefixOptional, const aclIntArray *qStartIdxOptional, const aclIntArray *kvStartIdxOptional,
    double scaleValueOptional, double keepProbOptional, int64_t preTokensOptional, int64_t nextTokensOptional,
    int64_t headNum, char *inputLayout, int64_t innerPreciseOptional, int64_t sparseModeOptional,
    int64_t pseTypeOptional, const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut,
    const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionScoreV2(void *workspace, uint64_t workspaceSize,
                                                           aclOpExecutor *executor, const aclrtStream stream);

ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionScoreV3GetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional,
    const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclTensor *sinkOptional, const aclIntArray *prefixOptional, const aclIntArray *qStartIdxOptional,
    const aclIntArray *kvStartIdxOptional, double scaleValue, double keepProb, int64_t preTokens,
    int64_t nextTokens, int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t sparseMode,
    int64_t pseType, const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut,
    const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionScoreV3(void *workspace, uint64_t workspaceSize,
                                                           aclOpExecutor *executor, const aclrtStream stream);

ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionVarLenScoreGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional,
    const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclIntArray *prefixOptional, const aclIntArray *actualSeqQLenOptional,
    const aclIntArray *actualSeqKvLenOptional, double scaleValue, double keepProb, int64_t preTokens,
    int64_t nextTokens, int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t sparseMode,
    const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut, const aclTensor *softmaxOutOut,
    const aclTensor *attentionOutOut, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionVarLenScore(void *workspace, uint64_t workspaceSize,
                                                               aclOpExecutor *executor, const aclrtStream stream);

ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionVarLenScoreV5GetWorkspaceSize(
    const aclTensor *query, const aclTensor *queryRope, const aclTensor *key, const aclTensor *keyRope,
    const aclTensor *value, const aclTensor *realShiftOptional, const aclTensor *dropMaskOptional,
    const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional, const aclTensor *sinkOptional,
    const aclIntArray *prefixOptional, const aclIntArray *actualSeqQLenOptional,
    const aclIntArray *actualSeqKvLenOptional, const aclIntArray *qStartIdxOptional,
    const aclIntArray *kvStartIdxOptional, double scaleValue, double keepProb, int64_t preTokens,
    int64_t nextTokens, int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t sparseMode,
    int64_t pseType, char *softmaxOutLayout, const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut,
    const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionVarLenScoreV5(void *workspace, uint64_t workspaceSize,
                                                                 aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif /* FLASHC_ACLNNOP_ACLNN_FLASH_ATTENTION_SCORE_H */
