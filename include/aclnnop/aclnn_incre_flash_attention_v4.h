/*
 * flashc's CANN-compatible face: IncreFlashAttentionV4, incremental decode (semantics §4).
 * The parameter list is that of upstream aclnn.  The query has one position per batch; key and
 * value are tensor lists (one full-batch tensor, B per-batch tensors, or one paged cache with a
 * block table).  inputLayout is "BSH", "BSND" or "BNSD".
 */
#ifndef FLASHC_ACLNNOP_ACLNN_INCRE_FLASH_ATTENTION_V4_H
#define FLASHC_ACLNNOP_ACLNN_INCRE_FLASH_ATTENTION_V4_H

#include "../aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclnnStatus aclnnIncreFlashAttentionV4GetWorkspaceSize(
    const aclTensor *query, const aclTensorList *key, const aclTensorList *value, const aclTensor *pseShift,
    const aclTensor *attenMask, const aclIntArray *actualSeqLengths, const aclTensor *dequantScale1,
    const aclTensor *quantScale1, const aclTensor *dequantScale2, const aclTensor *quantScale2,
    const aclTensor *quantOffset2, const aclTensor *antiquantScale, const aclTensor *antiquantOffset,
    const aclTensor *blocktable, const aclTensor *kvPaddingSize, int64_t numHeads, double scaleValue,
    char *inputLayout, int64_t numKeyValueHeads, int64_t blockSize, int64_t innerPrecise,
    const aclTensor *attentionOut, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnIncreFlashAttentionV4(void *workspace, uint64_t workspaceSize,
                                                           aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif /* FLASHC_ACLNNOP_ACLNN_INCRE_FLASH_ATTENTION_V4_H */
