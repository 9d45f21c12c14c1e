/*
 * aclnnSparseFlashAttentionGrad (semantics §5.5): the first phase gathers its arguments for
 * sfa_prepare; the second is the shared executor run.  deterministic is accepted and has no
 * effect on the CPU backend, which is always bit-reproducible (§3.4).
 */
#include "aclnnop/aclnn_sparse_flash_attention_grad.h"

#include "cann/common/executor.h"
#include "sfa_state.h"

aclnnStatus aclnnSparseFlashAttentionGradGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *sparseIndices,
    const aclTensor *dOut, const aclTensor *out, const aclTensor *softmaxMax, const aclTensor *softmaxSum,
    const aclTensor *actualSeqLengthsQueryOptional, const aclTensor *actualSeqLengthskvOptional,
    const aclTensor *queryRopeOptional, const aclTensor *keyRopeOptional, double scaleValue,
    int64_t sparseBlockSize, char *layoutOptional, int64_t sparseMode, int64_t preTokens, int64_t nextTokens,
    bool deterministic, const aclTensor *dQueryOut, const aclTensor *dKeyOut, const aclTensor *dValueOut,
    const aclTensor *dQueryRopeOutOptional, const aclTensor *dKeyRopeOutOptional, uint64_t *workspaceSize,
    aclOpExecutor **executor)
{
    sfa_call c = {.sig = &sfa_sig_grad, .backward = true, .scale = scaleValue, .block_size = sparseBlockSize,
                  .sparse_mode = sparseMode, .pre = preTokens, .next = nextTokens, .deterministic = deterministic};
    c.ptr[SFA_QUERY] = query;
    c.ptr[SFA_KEY] = key;
    c.ptr[SFA_VALUE] = value;
    c.ptr[SFA_INDICES] = sparseIndices;
    c.ptr[SFA_DOUT] = dOut;
    c.ptr[SFA_OUT] = out;
    c.ptr[SFA_SMAX] = softmaxMax;
    c.ptr[SFA_SSUM] = softmaxSum;
    c.ptr[SFA_ACT_Q] = actualSeqLengthsQueryOptional;
    c.ptr[SFA_ACT_KV] = actualSeqLengthskvOptional;
    c.ptr[SFA_QUERY_ROPE] = queryRopeOptional;
    c.ptr[SFA_KEY_ROPE] = keyRopeOptional;
    c.ptr[SFA_LAYOUT] = layoutOptional;
    c.ptr[SFA_DQ] = dQueryOut;
    c.ptr[SFA_DK] = dKeyOut;
    c.ptr[SFA_DV] = dValueOut;
    c.ptr[SFA_DQ_ROPE] = dQueryRopeOutOptional;
    c.ptr[SFA_DK_ROPE] = dKeyRopeOutOptional;
    return sfa_prepare(&c, workspaceSize, executor);
}

aclnnStatus aclnnSparseFlashAttentionGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                          aclrtStream stream)
{
    return cann_executor_run(sfa_sig_grad.run_fn, workspace, workspaceSize, executor, stream);
}
