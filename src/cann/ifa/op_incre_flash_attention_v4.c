/*
 * The IncreFlashAttentionV4 entry pair (semantics §4.1), defined from its parameter list
 * (cann/common/entry.h): the first phase fills an ifa_call for ifa_prepare, the second is the
 * shared executor run.
 */
#include "aclnnop/aclnn_incre_flash_attention_v4.h"

#include "cann/common/entry.h"
#include "ifa.h"

CANN_ENTRY_ALIASES(IFA_PARAMS)

#define REQUIRED                                                                                                       \
    (CANN_BIT(IFA_QUERY) | CANN_BIT(IFA_KEY) | CANN_BIT(IFA_VALUE) | CANN_BIT(IFA_LAYOUT) | CANN_BIT(IFA_OUT) |        \
     CANN_BIT(IFA_WORKSPACE_SIZE) | CANN_BIT(IFA_EXECUTOR))

#define V4(P)                                                                                                          \
    P(query, query) P(key, key) P(value, value) P(pse, pseShift) P(mask, attenMask) P(act_len, actualSeqLengths)       \
        P(deq_scale1, dequantScale1) P(q_scale1, quantScale1) P(deq_scale2, dequantScale2)                             \
            P(q_scale2, quantScale2) P(q_offset2, quantOffset2) P(aq_scale, antiquantScale)                            \
                P(aq_offset, antiquantOffset) P(block_table, blocktable) P(kv_pad, kvPaddingSize)                      \
                    P(num_heads, numHeads) P(scale, scaleValue) P(layout, inputLayout)                                 \
                        P(num_kv_heads, numKeyValueHeads) P(block_size, blockSize) P(inner_precise, innerPrecise)      \
                            P(out, attentionOut)
CANN_ENTRY_PAIR(aclnnIncreFlashAttentionV4, ifa_sig, V4, REQUIRED, ifa_call, , ifa_prepare)
