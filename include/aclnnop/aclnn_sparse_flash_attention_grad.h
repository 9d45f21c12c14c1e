/*
 * flashc's CANN-compatible face: SparseFlashAttentionGrad, the backward of SparseFlashAttention
 * (semantics §5.5).  Upstream parameter list in its compilable form (the project document omits
 * the commas after scaleValue and sparseBlockSize).  layoutOptional NULL means "BSND"; "BSND" or
 * "TND" applies to every tensor.  dKeyOut and dValueOut are separate gradients.
 */
#ifndef FLASHC_ACLNNOP_ACLNN_SPARSE_FLASH_ATTENTION_GRAD_H
#define FLASHC_ACLNNOP_ACLNN_SPARSE_FLASH_ATTENTION_GRAD_H

#include "../aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclnnStatus aclnnSparseFlashAttentionGradGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *sparseIndices,
    const aclTensor *dOut, const aclTensor *out, const aclTensor *softmaxMax, const aclTensor *softmaxSum,
    const aclTensor *actualSeqLengthsQueryOptional, const aclTensor *actualSeqLengthskvOptional,
    const aclTensor *queryRopeOptional, const aclTensor *keyRopeOptional, double scaleValue,
    int64_t sparseBlockSize, char *layoutOptional, int64_t sparseMode, int64_t preTokens, int64_t nextTokens,
    bool deterministic, const aclTensor *dQueryOut, const aclTensor *dKeyOut, const aclTensor *dValueOut,
    const aclTensor *dQueryRopeOutOptional, const aclTensor *dKeyRopeOutOptional, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnSparseFlashAttentionGrad(void *workspace, uint64_t workspaceSize,
                                                              aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif /* FLASHC_ACLNNOP_ACLNN_SPARSE_FLASH_ATTENTION_GRAD_H */
