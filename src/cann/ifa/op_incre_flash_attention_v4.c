/*
 * The IncreFlashAttentionV4 entry pair (semantics §4.1).  The first phase gathers its arguments
 * for ifa_prepare; the second phase is the shared executor run.
 */
#include "aclnnop/aclnn_incre_flash_attention_v4.h"

#include "cann/common/executor.h"
#include "ifa.h"

aclnnStatus aclnnIncreFlashAttentionV4GetWorkspaceSize(
    const aclTensor *query, const aclTensorList *key, const aclTensorList *value, const aclTensor *pseShift,
    const aclTensor *attenMask, const aclIntArray *actualSeqLengths, const aclTensor *dequantScale1,
    const aclTensor *quantScale1, const aclTensor *dequantScale2, const aclTensor *quantScale2,
    const aclTensor *quantOffset2, const aclTensor *antiquantScale, const aclTensor *antiquantOffset,
    const aclTensor *blocktable, const aclTensor *kvPaddingSize, int64_t numHeads, double scaleValue,
    char *inputLayout, int64_t numKeyValueHeads, int64_t blockSize, int64_t innerPrecise,
    const aclTensor *attentionOut, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ifa_call c = {.num_heads = numHeads, .num_kv_heads = numKeyValueHeads, .block_size = blockSize,
                  .inner_precise = innerPrecise, .scale = scaleValue};
    c.ptr[IFA_QUERY] = query;
    c.ptr[IFA_KEY] = key;
    c.ptr[IFA_VALUE] = value;
    c.ptr[IFA_PSE] = pseShift;
    c.ptr[IFA_MASK] = attenMask;
    c.ptr[IFA_ACT_LEN] = actualSeqLengths;
    c.ptr[IFA_DEQ_SCALE1] = dequantScale1;
    c.ptr[IFA_Q_SCALE1] = quantScale1;
    c.ptr[IFA_DEQ_SCALE2] = dequantScale2;
    c.ptr[IFA_Q_SCALE2] = quantScale2;
    c.ptr[IFA_Q_OFFSET2] = quantOffset2;
    c.ptr[IFA_AQ_SCALE] = antiquantScale;
    c.ptr[IFA_AQ_OFFSET] = antiquantOffset;
    c.ptr[IFA_BLOCK_TABLE] = blocktable;
    c.ptr[IFA_KV_PAD] = kvPaddingSize;
    c.ptr[IFA_LAYOUT] = inputLayout;
    c.ptr[IFA_OUT] = attentionOut;
    return ifa_prepare(&c, workspaceSize, executor);
}

aclnnStatus aclnnIncreFlashAttentionV4(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                       const aclrtStream stream)
{
    return cann_executor_run(ifa_sig.run_fn, workspace, workspaceSize, executor, stream);
}
