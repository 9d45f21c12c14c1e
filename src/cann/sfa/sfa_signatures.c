/* The declarations of SparseFlashAttention and its grad (semantics §5.1), as parameter lists. */
#include "sfa_state.h"

#define BIT(id) CANN_BIT(SFA_##id)

static const cann_param forward[] = {
    {SFA_QUERY, "query"}, {SFA_KEY, "key"}, {SFA_VALUE, "value"}, {SFA_INDICES, "sparseIndices"},
    {SFA_BLOCK_TABLE, "blockTable"}, {SFA_ACT_Q, "actualSeqLengthsQuery"}, {SFA_ACT_KV, "actualSeqLengthsKv"},
    {SFA_QUERY_ROPE, "queryRope"}, {SFA_KEY_ROPE, "keyRope"}, {SFA_SCALE, "scaleValue"},
    {SFA_BLOCK_SIZE, "sparseBlockSize"}, {SFA_LAYOUT_Q, "layoutQuery"}, {SFA_LAYOUT_KV, "layoutKv"},
    {SFA_SPARSE_MODE, "sparseMode"}, {SFA_PRE, "preTokens"}, {SFA_NEXT, "nextTokens"},
    {SFA_ATTN_MODE, "attentionMode"}, {SFA_RETURN_LSE, "returnSoftmaxLse"}, {SFA_OUT, "attentionOutOut"},
    {SFA_SMAX, "softmaxMaxOut"}, {SFA_SSUM, "softmaxSumOut"}, {SFA_WORKSPACE_SIZE, "workspaceSize"},
    {SFA_EXECUTOR, "executor"}};

/* softmaxMaxOut / softmaxSumOut are added to the required set when returnSoftmaxLse is true. */
const cann_signature sfa_sig_forward = {
    "aclnnSparseFlashAttentionGetWorkspaceSize", "aclnnSparseFlashAttention", forward,
    (int)(sizeof forward / sizeof forward[0]),
    BIT(QUERY) | BIT(KEY) | BIT(VALUE) | BIT(INDICES) | BIT(LAYOUT_Q) | BIT(LAYOUT_KV) | BIT(OUT) |
        BIT(WORKSPACE_SIZE) | BIT(EXECUTOR)};

static const cann_param grad[] = {
    {SFA_QUERY, "query"}, {SFA_KEY, "key"}, {SFA_VALUE, "value"}, {SFA_INDICES, "sparseIndices"},
    {SFA_DOUT, "dOut"}, {SFA_OUT, "out"}, {SFA_SMAX, "softmaxMax"}, {SFA_SSUM, "softmaxSum"},
    {SFA_ACT_Q, "actualSeqLengthsQueryOptional"}, {SFA_ACT_KV, "actualSeqLengthskvOptional"},
    {SFA_QUERY_ROPE, "queryRopeOptional"}, {SFA_KEY_ROPE, "keyRopeOptional"}, {SFA_SCALE, "scaleValue"},
    {SFA_BLOCK_SIZE, "sparseBlockSize"}, {SFA_LAYOUT, "layoutOptional"}, {SFA_SPARSE_MODE, "sparseMode"},
    {SFA_PRE, "preTokens"}, {SFA_NEXT, "nextTokens"}, {SFA_DETERMINISTIC, "deterministic"},
    {SFA_DQ, "dQueryOut"}, {SFA_DK, "dKeyOut"}, {SFA_DV, "dValueOut"}, {SFA_DQ_ROPE, "dQueryRopeOutOptional"},
    {SFA_DK_ROPE, "dKeyRopeOutOptional"}, {SFA_WORKSPACE_SIZE, "workspaceSize"}, {SFA_EXECUTOR, "executor"}};

/* layoutOptional NULL means "BSND"; the rope gradients are required (161002) only with rope. */
const cann_signature sfa_sig_grad = {
    "aclnnSparseFlashAttentionGradGetWorkspaceSize", "aclnnSparseFlashAttentionGrad", grad,
    (int)(sizeof grad / sizeof grad[0]),
    BIT(QUERY) | BIT(KEY) | BIT(VALUE) | BIT(INDICES) | BIT(DOUT) | BIT(OUT) | BIT(SMAX) | BIT(SSUM) | BIT(DQ) |
        BIT(DK) | BIT(DV) | BIT(WORKSPACE_SIZE) | BIT(EXECUTOR)};
