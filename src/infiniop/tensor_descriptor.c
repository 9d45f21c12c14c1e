/* infiniop tensor descriptors (semantics §7.2): validated copies of shape, strides and dtype. */
#include <stdint.h>
#include <stdlib.h>

#include "objects.h"

const fc_rt_kind infini_kind_tensor = {"infiniopTensorDescriptor_t"};

static void free_tensor(struct InfiniopTensorDescriptor *t)
{
    free(t->shape);
    free(t->strides);
    free(t);
}

/* Row-major contiguous strides; false when they cannot be represented in ptrdiff_t. */
static bool contiguous_strides(size_t ndim, const size_t *shape, ptrdiff_t *strides)
{
    ptrdiff_t run = 1;
    for (size_t k = ndim; k-- > 0;) {
        strides[k] = run;
        if (shape[k] > 0 && __builtin_mul_overflow(run, (ptrdiff_t)shape[k], &run))
            return false;
    }
    return true;
}

infiniStatus_t infiniopCreateTensorDescriptor(infiniopTensorDescriptor_t *desc_ptr, size_t ndim, const size_t *shape,
                                              const ptrdiff_t *strides, infiniDtype_t dtype)
{
    static const char fn[] = "infiniopCreateTensorDescriptor";
    if (!desc_ptr)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: desc_ptr is NULL", fn);
    *desc_ptr = NULL;
    if (ndim > 0 && !shape)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: shape is NULL but ndim is %zu", fn, ndim);
    if ((int)dtype < INFINI_DTYPE_INVALID || (int)dtype > INFINI_DTYPE_BF16)
        return infini_fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "%s: dtype %d is not an infiniDtype_t", fn, (int)dtype);
    for (size_t k = 0; k < ndim; k++)
        if (shape[k] > (size_t)PTRDIFF_MAX)
            return infini_fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "%s: shape[%zu] is %zu, beyond PTRDIFF_MAX", fn, k, shape[k]);
    struct InfiniopTensorDescriptor *t = calloc(1, sizeof *t);
    if (t) {
        t->shape = calloc(ndim ? ndim : 1, sizeof *t->shape);
        t->strides = calloc(ndim ? ndim : 1, sizeof *t->strides);
    }
    if (!t || !t->shape || !t->strides) {
        if (t)
            free_tensor(t);
        return infini_fail(INFINI_STATUS_INTERNAL_ERROR, "%s: out of host memory for %zu dims", fn, ndim);
    }
    t->dtype = dtype;
    t->ndim = ndim;
    for (size_t k = 0; k < ndim; k++) {
        t->shape[k] = shape[k];
        if (strides)
            t->strides[k] = strides[k];
    }
    if (!strides && !contiguous_strides(ndim, shape, t->strides)) {
        free_tensor(t);
        return infini_fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "%s: the contiguous strides of this shape overflow ptrdiff_t", fn);
    }
    const infiniStatus_t st = infini_register(t, &infini_kind_tensor, fn);
    if (st != INFINI_STATUS_SUCCESS) {
        free_tensor(t);
        return st;
    }
    *desc_ptr = t;
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniopDestroyTensorDescriptor(infiniopTensorDescriptor_t desc)
{
    const infiniStatus_t st = infini_unregister(desc, &infini_kind_tensor, "infiniopDestroyTensorDescriptor", "desc");
    if (st == INFINI_STATUS_SUCCESS)
        free_tensor(desc);
    return st;
}
