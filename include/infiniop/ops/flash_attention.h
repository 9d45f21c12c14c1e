/*
 * infiniop FlashAttention (semantics §7.3, §7.4; the seed infiniopFlashAttention.md).
 *
 * q, k, v, out: (batch, heads, seq, head_dim) or (heads, seq, head_dim); F16, F32 or BF16; last
 * dim contiguous.  k/v may have fewer heads (GQA) and another length; v another head_dim.
 * mask: optional key-padding mask (batch, kv_len) or (kv_len), BOOL/BYTE or any integer dtype,
 * nonzero = key hidden.  scale = 1/sqrt(head_dim); rows whose keys are all hidden are 0.
 */
#ifndef __INFINIOP_FLASH_ATTENTION_API_H__
#define __INFINIOP_FLASH_ATTENTION_API_H__

#include "../operator_descriptor.h"

typedef struct InfiniopDescriptor *infiniopFlashAttentionDescriptor_t;

__INFINI_C __export infiniStatus_t infiniopCreateFlashAttentionDescriptor(
    infiniopHandle_t handle, infiniopFlashAttentionDescriptor_t *desc_ptr, infiniopTensorDescriptor_t out_desc,
    infiniopTensorDescriptor_t q_desc, infiniopTensorDescriptor_t k_desc, infiniopTensorDescriptor_t v_desc,
    infiniopTensorDescriptor_t mask_desc);

__INFINI_C __export infiniStatus_t infiniopGetFlashAttentionWorkspaceSize(infiniopFlashAttentionDescriptor_t desc,
                                                                          size_t *size);

__INFINI_C __export infiniStatus_t infiniopFlashAttention(infiniopFlashAttentionDescriptor_t desc, void *workspace,
                                                          size_t workspace_size, void *out, const void *q,
                                                          const void *k, const void *v, const void *mask,
                                                          void *stream);

/* Both spellings behave identically: InfiniCore code says Destroy, the seed document Destory. */
__INFINI_C __export infiniStatus_t infiniopDestroyFlashAttentionDescriptor(infiniopFlashAttentionDescriptor_t desc);
__INFINI_C __export infiniStatus_t infiniopDestoryFlashAttentionDescriptor(infiniopFlashAttentionDescriptor_t desc);

#endif /* __INFINIOP_FLASH_ATTENTION_API_H__ */
