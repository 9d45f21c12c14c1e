/*
 * flashc's CANN-compatible face: SparseFlashAttention, DeepSeek-style top-k block-sparse attention
 * forward (semantics §5).  Parameter list of upstream aclnn (attention/sparse_flash_attention).
 * layoutQuery "BSND" or "TND"; layoutKv "BSND", "TND" or "PA_BSND" (paged, with blockTable).
 * Actual lengths and sparseIndices are device tensors, INT32 or INT64, read in the second phase.
 */
#ifndef FLASHC_ACLNNOP_ACLNN_SPARSE_FLASH_ATTENTION_H
#define FLASHC_ACLNNOP_ACLNN_SPARSE_FLASH_ATTENTION_H

#include "../aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclnnStatus aclnnSparseFlashAttentionGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *sparseIndices,
    const aclTensor *blockTable, const aclTensor *actualSeqLengthsQuery, const aclTensor *actualSeqLengthsKv,
    const aclTensor *queryRope, const aclTensor *keyRope, double scaleValue, int64_t sparseBlockSize,
    char *layoutQuery, char *layoutKv, int64_t sparseMode, int64_t preTokens, int64_t nextTokens,
    int64_t attentionMode, bool returnSoftmaxLse, const aclTensor *attentionOutOut,
    const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnSparseFlashAttention(void *workspace, uint64_t workspaceSize,
                                                          aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif /* FLASHC_ACLNNOP_ACLNN_SPARSE_FLASH_ATTENTION_H */
