/*
 * aclnnSparseFlashAttention (semantics §5): the first phase gathers its arguments for sfa_prepare;
 * the second is the shared executor run.
 */
#include "aclnnop/aclnn_sparse_flash_attention.h"

#include "cann/common/executor.h"
#include "sfa_state.h"

aclnnStatus aclnnSparseFlashAttentionGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *sparseIndices,
    const aclTensor *blockTable, const aclTensor *actualSeqLengthsQuery, const aclTensor *actualSeqLengthsKv,
    const aclTensor *queryRope, const aclTensor *keyRope, double scaleValue, int64_t sparseBlockSize,
    char *layoutQuery, char *layoutKv, int64_t sparseMode, int64_t preTokens, int64_t nextTokens,
    int64_t attentionMode, bool returnSoftmaxLse, const aclTensor *attentionOutOut,
    const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut, uint64_t *workspaceSize,
    aclOpExecutor **executor)
{
    sfa_call c = {.sig = &sfa_sig_forward, .scale = scaleValue, .block_size = sparseBlockSize,
                  .sparse_mode = sparseMode, .pre = preTokens, .next = nextTokens, .attention_mode = attentionMode,
                  .return_lse = returnSoftmaxLse};
    c.ptr[SFA_QUERY] = query;
    c.ptr[SFA_KEY] = key;
    c.ptr[SFA_VALUE] = value;
    c.ptr[SFA_INDICES] = sparseIndices;
    c.ptr[SFA_BLOCK_TABLE] = blockTable;
    c.ptr[SFA_ACT_Q] = actualSeqLengthsQuery;
    c.ptr[SFA_ACT_KV] = actualSeqLengthsKv;
    c.ptr[SFA_QUERY_ROPE] = queryRope;
    c.ptr[SFA_KEY_ROPE] = keyRope;
    c.ptr[SFA_LAYOUT_Q] = layoutQuery;
    c.ptr[SFA_LAYOUT_KV] = layoutKv;
    c.ptr[SFA_OUT] = attentionOutOut;
    c.ptr[SFA_SMAX] = softmaxMaxOut;
    c.ptr[SFA_SSUM] = softmaxSumOut;
    return sfa_prepare(&c, workspaceSize, executor);
}

aclnnStatus aclnnSparseFlashAttention(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                      const aclrtStream stream)
{
    return cann_executor_run(sfa_sig_forward.run_fn, workspace, workspaceSize, executor, stream);
}
