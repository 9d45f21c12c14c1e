/*
 * The public InfiniCore headers compile warning-free as C11 (built with -Wpedantic -Werror),
 * declare the exact values of semantics §7.1 and §7.6, and link under their C names.
 */
#include "infinicore.h"
#include "infiniop.h"
#include "infiniop/handle.h"
#include "infiniop/operator_descriptor.h"
#include "infiniop/ops/flash_attention.h"
#include "infiniop/tensor_descriptor.h"
#include "infinirt.h"
#include "infiniop.h" /* include guards */

#include <stdio.h>

#define EXPECT(cond)                                                                                                   \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            printf("FAIL: %s\n", #cond);                                                                               \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

int main(void)
{
    int failures = 0;
    EXPECT(INFINI_STATUS_SUCCESS == 0 && INFINI_STATUS_INTERNAL_ERROR == 1 && INFINI_STATUS_NOT_IMPLEMENTED == 2);
    EXPECT(INFINI_STATUS_BAD_PARAM == 3 && INFINI_STATUS_NULL_POINTER == 4 && INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED == 5);
    EXPECT(INFINI_STATUS_DEVICE_NOT_FOUND == 6 && INFINI_STATUS_DEVICE_NOT_INITIALIZED == 7);
    EXPECT(INFINI_STATUS_DEVICE_ARCHITECTURE_NOT_SUPPORTED == 8 && INFINI_STATUS_BAD_TENSOR_DTYPE == 10);
    EXPECT(INFINI_STATUS_BAD_TENSOR_SHAPE == 11 && INFINI_STATUS_BAD_TENSOR_STRIDES == 12);
    EXPECT(INFINI_STATUS_INSUFFICIENT_WORKSPACE == 13);
    EXPECT(INFINI_DEVICE_CPU == 0 && INFINI_DEVICE_NVIDIA == 1 && INFINI_DEVICE_CAMBRICON == 2 && INFINI_DEVICE_ASCEND == 3);
    EXPECT(INFINI_DEVICE_METAX == 4 && INFINI_DEVICE_MOORE == 5 && INFINI_DEVICE_ILUVATAR == 6 && INFINI_DEVICE_KUNLUN == 7);
    EXPECT(INFINI_DEVICE_HYGON == 8 && INFINI_DEVICE_QY == 9 && INFINI_DEVICE_ALI == 10 && INFINI_DEVICE_TYPE_COUNT == 11);
    EXPECT(INFINI_DTYPE_INVALID == 0 && INFINI_DTYPE_BYTE == 1 && INFINI_DTYPE_BOOL == 2 && INFINI_DTYPE_I8 == 3);
    EXPECT(INFINI_DTYPE_I16 == 4 && INFINI_DTYPE_I32 == 5 && INFINI_DTYPE_I64 == 6 && INFINI_DTYPE_U8 == 7);
    EXPECT(INFINI_DTYPE_U16 == 8 && INFINI_DTYPE_U32 == 9 && INFINI_DTYPE_U64 == 10 && INFINI_DTYPE_F8 == 11);
    EXPECT(INFINI_DTYPE_F16 == 12 && INFINI_DTYPE_F32 == 13 && INFINI_DTYPE_F64 == 14 && INFINI_DTYPE_C16 == 15);
    EXPECT(INFINI_DTYPE_C32 == 16 && INFINI_DTYPE_C64 == 17 && INFINI_DTYPE_C128 == 18 && INFINI_DTYPE_BF16 == 19);
    EXPECT(INFINIRT_MEMCPY_H2H == 0 && INFINIRT_MEMCPY_H2D == 1 && INFINIRT_MEMCPY_D2H == 2 && INFINIRT_MEMCPY_D2D == 3);
    EXPECT(sizeof(infinirtStream_t) == sizeof(void *));

    /* every function resolves with its declared type */
    infiniStatus_t (*create)(infiniopHandle_t, infiniopFlashAttentionDescriptor_t *, infiniopTensorDescriptor_t,
                             infiniopTensorDescriptor_t, infiniopTensorDescriptor_t, infiniopTensorDescriptor_t,
                             infiniopTensorDescriptor_t) = infiniopCreateFlashAttentionDescriptor;
    infiniStatus_t (*run)(infiniopFlashAttentionDescriptor_t, void *, size_t, void *, const void *, const void *,
                          const void *, const void *, void *) = infiniopFlashAttention;
    infiniStatus_t (*destroy[2])(infiniopFlashAttentionDescriptor_t) = {infiniopDestroyFlashAttentionDescriptor,
                                                                        infiniopDestoryFlashAttentionDescriptor};
    infiniStatus_t (*size)(infiniopFlashAttentionDescriptor_t, size_t *) = infiniopGetFlashAttentionWorkspaceSize;
    infiniStatus_t (*dev)(const struct InfiniopDescriptor *, infiniDevice_t *) = infiniopGetDescriptorDeviceType;
    infiniStatus_t (*devid)(const struct InfiniopDescriptor *, int *) = infiniopGetDescriptorDeviceId;
    infiniStatus_t (*tcreate)(infiniopTensorDescriptor_t *, size_t, const size_t *, const ptrdiff_t *, infiniDtype_t) =
        infiniopCreateTensorDescriptor;
    infiniStatus_t (*copy)(void *, const void *, size_t, infinirtMemcpyKind_t, infinirtStream_t) = infinirtMemcpyAsync;
    EXPECT(create(NULL, NULL, NULL, NULL, NULL, NULL, NULL) == INFINI_STATUS_NULL_POINTER);
    EXPECT(run(NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL) == INFINI_STATUS_NULL_POINTER);
    EXPECT(destroy[0](NULL) == INFINI_STATUS_NULL_POINTER && destroy[1](NULL) == INFINI_STATUS_NULL_POINTER);
    EXPECT(size(NULL, NULL) == INFINI_STATUS_NULL_POINTER && dev(NULL, NULL) == INFINI_STATUS_NULL_POINTER);
    EXPECT(devid(NULL, NULL) == INFINI_STATUS_NULL_POINTER && tcreate(NULL, 0, NULL, NULL, INFINI_DTYPE_F16) == 4);
    EXPECT(copy(NULL, NULL, 0, INFINIRT_MEMCPY_H2H, NULL) == INFINI_STATUS_SUCCESS);
    EXPECT(infinirtInit() == INFINI_STATUS_SUCCESS && infiniopCreateHandle(NULL) == INFINI_STATUS_NULL_POINTER);
    printf("infiniop_headers_c: %d failures\n", failures);
    return failures;
}
