/* The declaration of IncreFlashAttentionV4 (semantics §4.1) as a parameter list. */
#include "ifa.h"

static const cann_param ifa_params[] = {
    {IFA_QUERY, "query"}, {IFA_KEY, "key"}, {IFA_VALUE, "value"}, {IFA_PSE, "pseShift"},
    {IFA_MASK, "attenMask"}, {IFA_ACT_LEN, "actualSeqLengths"}, {IFA_DEQ_SCALE1, "dequantScale1"},
    {IFA_Q_SCALE1, "quantScale1"}, {IFA_DEQ_SCALE2, "dequantScale2"}, {IFA_Q_SCALE2, "quantScale2"},
    {IFA_Q_OFFSET2, "quantOffset2"}, {IFA_AQ_SCALE, "antiquantScale"}, {IFA_AQ_OFFSET, "antiquantOffset"},
    {IFA_BLOCK_TABLE, "blocktable"}, {IFA_KV_PAD, "kvPaddingSize"}, {IFA_NUM_HEADS, "numHeads"},
    {IFA_SCALE, "scaleValue"}, {IFA_LAYOUT, "inputLayout"}, {IFA_NUM_KV_HEADS, "numKeyValueHeads"},
    {IFA_BLOCK_SIZE, "blockSize"}, {IFA_INNER_PRECISE, "innerPrecise"}, {IFA_OUT, "attentionOut"},
    {IFA_WORKSPACE_SIZE, "workspaceSize"}, {IFA_EXECUTOR, "executor"}};

const cann_signature ifa_sig = {
    "aclnnIncreFlashAttentionV4GetWorkspaceSize", "aclnnIncreFlashAttentionV4", ifa_params,
    (int)(sizeof ifa_params / sizeof ifa_params[0]),
    CANN_BIT(IFA_QUERY) | CANN_BIT(IFA_KEY) | CANN_BIT(IFA_VALUE) | CANN_BIT(IFA_LAYOUT) | CANN_BIT(IFA_OUT) |
        CANN_BIT(IFA_WORKSPACE_SIZE) | CANN_BIT(IFA_EXECUTOR)};
