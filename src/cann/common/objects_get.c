/* Read access to aclTensor and the arrays.  Every handle is checked against the registry first. */
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "objects.h"

/* NULL pointer arguments first (161001, declaration order), then liveness (161002). */
#define CHECK_NULL(fn, p)                                                                                              \
    do {                                                                                                               \
        if (!(p))                                                                                                      \
            return cann_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: " #p " is NULL", fn);                                      \
    } while (0)
#define CHECK_LIVE(fn, t)                                                                                              \
    do {                                                                                                               \
        if (!cann_tensor_live(t))                                                                                      \
            return cann_fail(ACLNN_ERR_PARAM_INVALID, "%s: tensor %p is not a live aclTensor", fn, (const void *)(t)); \
    } while (0)

/* A malloc'ed copy of n values (at least one slot, so that free/delete[] always get a pointer). */
static aclnnStatus copy_out(const char *fn, const int64_t *src, uint64_t n, int64_t **dst, uint64_t *num)
{
    int64_t *a = malloc((n ? n : 1) * sizeof *a);
    if (!a)
        return cann_fail(ACLNN_ERR_INNER, "%s: out of host memory", fn);
    if (n)
        memcpy(a, src, n * sizeof *a);
    *dst = a;
    *num = n;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims, uint64_t *viewDimsNum)
{
    static const char fn[] = "aclGetViewShape";
    CHECK_NULL(fn, tensor);
    CHECK_NULL(fn, viewDims);
    CHECK_NULL(fn, viewDimsNum);
    CHECK_LIVE(fn, tensor);
    return copy_out(fn, tensor->dims, tensor->rank, viewDims, viewDimsNum);
}

aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims, uint64_t *storageDimsNum)
{
    static const char fn[] = "aclGetStorageShape";
    CHECK_NULL(fn, tensor);
    CHECK_NULL(fn, storageDims);
    CHECK_NULL(fn, storageDimsNum);
    CHECK_LIVE(fn, tensor);
    return copy_out(fn, tensor->storage, tensor->storage_rank, storageDims, storageDimsNum);
}

aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue, uint64_t *stridesNum)
{
    static const char fn[] = "aclGetViewStrides";
    CHECK_NULL(fn, tensor);
    CHECK_NULL(fn, stridesValue);
    CHECK_NULL(fn, stridesNum);
    CHECK_LIVE(fn, tensor);
    return copy_out(fn, tensor->strides, tensor->rank, stridesValue, stridesNum);
}

aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset)
{
    static const char fn[] = "aclGetViewOffset";
    CHECK_NULL(fn, tensor);
    CHECK_NULL(fn, offset);
    CHECK_LIVE(fn, tensor);
    *offset = tensor->offset;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format)
{
    static const char fn[] = "aclGetFormat";
    CHECK_NULL(fn, tensor);
    CHECK_NULL(fn, format);
    CHECK_LIVE(fn, tensor);
    *format = tensor->format;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType)
{
    static const char fn[] = "aclGetDataType";
    CHECK_NULL(fn, tensor);
    CHECK_NULL(fn, dataType);
    CHECK_LIVE(fn, tensor);
    *dataType = tensor->dtype;
    return ACLNN_SUCCESS;
}

aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr)
{
    CHECK_NULL("aclSetRawTensorAddr", tensor);
    CHECK_LIVE("aclSetRawTensorAddr", tensor);
    tensor->data = addr;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetRawTensorAddr(const aclTensor *tensor, void **addr)
{
    static const char fn[] = "aclGetRawTensorAddr";
    CHECK_NULL(fn, tensor);
    CHECK_NULL(fn, addr);
    CHECK_LIVE(fn, tensor);
    *addr = tensor->data;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetIntArraySize(const aclIntArray *array, uint64_t *size)
{
    static const char fn[] = "aclGetIntArraySize";
    CHECK_NULL(fn, array);
    CHECK_NULL(fn, size);
    if (!cann_int_array_live(array))
        return cann_fail(ACLNN_ERR_PARAM_INVALID, "%s: array %p is not a live aclIntArray", fn, (const void *)array);
    *size = array->size;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList, uint64_t *size)
{
    static const char fn[] = "aclGetTensorListSize";
    CHECK_NULL(fn, tensorList);
    CHECK_NULL(fn, size);
    if (!cann_tensor_list_live(tensorList))
        return cann_fail(ACLNN_ERR_PARAM_INVALID, "%s: tensorList %p is not a live aclTensorList", fn,
                         (const void *)tensorList);
    *size = tensorList->size;
    return ACLNN_SUCCESS;
}
