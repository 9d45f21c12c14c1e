/* Create, destroy and inspect the aclnn objects.  Creation copies every array it is given. */
#include "objects.h"

#include <stdlib.h>
#include <string.h>

#include "errmsg.h"

const fc_rt_kind cann_kind_tensor = {"aclTensor"};
const fc_rt_kind cann_kind_int_array = {"aclIntArray"};
const fc_rt_kind cann_kind_float_array = {"aclFloatArray"};
const fc_rt_kind cann_kind_bool_array = {"aclBoolArray"};
const fc_rt_kind cann_kind_scalar = {"aclScalar"};
const fc_rt_kind cann_kind_tensor_list = {"aclTensorList"};

/* Registers obj or frees it; NULL with a message when the registry is out of memory. */
static void *publish(void *obj, const fc_rt_kind *kind, const char *fn)
{
    if (obj && !fc_rt_registry_add(obj, kind)) {
        cann_fail(ACLNN_ERR_INNER, "%s: out of host memory for the handle registry", fn);
        return NULL;
    }
    return obj;
}

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType, const int64_t *stride,
                           int64_t offset, aclFormat format, const int64_t *storageDims, uint64_t storageDimsNum,
                           void *tensorData)
{
    static const char fn[] = "aclCreateTensor";
    if (viewDimsNum > CANN_MAX_RANK)
        return cann_fail_null("%s: viewDimsNum must be at most %d, got %llu", fn, CANN_MAX_RANK,
                         (unsigned long long)viewDimsNum);
    if (storageDimsNum > CANN_MAX_RANK)
        return cann_fail_null("%s: storageDimsNum must be at most %d, got %llu", fn, CANN_MAX_RANK,
                         (unsigned long long)storageDimsNum);
    if (viewDimsNum > 0 && !viewDims)
        return cann_fail_null("%s: viewDims is NULL but viewDimsNum is %llu", fn, (unsigned long long)viewDimsNum);
    if (storageDimsNum > 0 && !storageDims)
        return cann_fail_null("%s: storageDims is NULL but storageDimsNum is %llu", fn,
                         (unsigned long long)storageDimsNum);
    if (offset < 0)
        return cann_fail_null("%s: offset must be >= 0, got %lld", fn, (long long)offset);
    for (uint64_t d = 0; d < viewDimsNum; d++) {
        if (viewDims[d] < 0)
            return cann_fail_null("%s: viewDims[%llu] must be >= 0, got %lld", fn, (unsigned long long)d,
                             (long long)viewDims[d]);
        if (stride && stride[d] < 0)
            return cann_fail_null("%s: stride[%llu] must be >= 0, got %lld", fn, (unsigned long long)d,
                             (long long)stride[d]);
    }
    for (uint64_t d = 0; d < storageDimsNum; d++)
        if (storageDims[d] < 0)
            return cann_fail_null("%s: storageDims[%llu] must be >= 0, got %lld", fn, (unsigned long long)d,
                             (long long)storageDims[d]);
    aclTensor *t = calloc(1, sizeof *t);
    if (!t)
        return cann_fail_null("%s: out of host memory", fn);
    t->rank = viewDimsNum;
    int64_t run = 1; /* contiguous row-major strides when none are given */
    for (uint64_t k = viewDimsNum; k-- > 0;) {
        t->dims[k] = viewDims[k];
        t->strides[k] = stride ? stride[k] : run;
        if (!stride && viewDims[k] > 0 && __builtin_mul_overflow(run, viewDims[k], &run))
            run = INT64_MAX;
    }
    t->offset = offset;
    t->dtype = dataType;
    t->format = format;
    t->storage_rank = storageDimsNum;
    for (uint64_t d = 0; d < storageDimsNum; d++)
        t->storage[d] = storageDims[d];
    t->data = tensorData;
    aclTensor *out = publish(t, &cann_kind_tensor, fn);
    if (!out)
        free(t);
    return out;
}

/* A copy of size elements (at least one byte allocated), or NULL with a message. */
static void *copy_values(const void *value, uint64_t size, size_t elem, const char *fn)
{
    if (size > 0 && !value)
        return cann_fail_null("%s: value is NULL but size is %llu", fn, (unsigned long long)size);
    if (size > ((uint64_t)1 << 40) / elem)
        return cann_fail_null("%s: size %llu is too large", fn, (unsigned long long)size);
    void *copy = malloc(size ? size * elem : 1);
    if (!copy)
        return cann_fail_null("%s: out of host memory", fn);
    if (size)
        memcpy(copy, value, size * elem);
    return copy;
}

/* Allocates the array object T around a copy of the values and registers it. */
#define CREATE_ARRAY(T, kind, fn)                                                                                      \
    do {                                                                                                               \
        void *copy = copy_values(value, size, sizeof *value, fn);                                                      \
        T *a = copy ? calloc(1, sizeof *a) : NULL;                                                                     \
        if (copy && !a)                                                                                                \
            cann_fail_null("%s: out of host memory", fn);                                                             \
        if (a) {                                                                                                       \
            a->size = size;                                                                                            \
            a->value = copy;                                                                                           \
        }                                                                                                              \
        T *out = a ? publish(a, kind, fn) : NULL;                                                                      \
        if (!out) {                                                                                                    \
            free(copy);                                                                                                \
            free(a);                                                                                                   \
        }                                                                                                              \
        return out;                                                                                                    \
    } while (0)

aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size)
{
    CREATE_ARRAY(aclIntArray, &cann_kind_int_array, "aclCreateIntArray");
}

aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size)
{
    CREATE_ARRAY(aclFloatArray, &cann_kind_float_array, "aclCreateFloatArray");
}

aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size)
{
    CREATE_ARRAY(aclBoolArray, &cann_kind_bool_array, "aclCreateBoolArray");
}

aclScalar *aclCreateScalar(void *value, aclDataType dataType)
{
    static const char fn[] = "aclCreateScalar";
    const size_t n = aclDataTypeSize(dataType);
    if (n == 0 || n > sizeof(((aclScalar *)0)->value))
        return cann_fail_null("%s: dataType %d has no scalar element size", fn, (int)dataType);
    if (!value)
        return cann_fail_null("%s: value is NULL", fn);
    aclScalar *s = calloc(1, sizeof *s);
    if (!s)
        return cann_fail_null("%s: out of host memory", fn);
    s->dtype = dataType;
    memcpy(s->value, value, n);
    aclScalar *out = publish(s, &cann_kind_scalar, fn);
    if (!out)
        free(s);
    return out;
}

aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size)
{
    static const char fn[] = "aclCreateTensorList";
    if (size > 0 && !value)
        return cann_fail_null("%s: value is NULL but size is %llu", fn, (unsigned long long)size);
    if (size > ((uint64_t)1 << 32))
        return cann_fail_null("%s: size %llu is too large", fn, (unsigned long long)size);
    for (uint64_t k = 0; k < size; k++)
        if (!cann_tensor_live(value[k]))
            return cann_fail_null("%s: value[%llu] is not a live aclTensor", fn, (unsigned long long)k);
    aclTensorList *l = calloc(1, sizeof *l);
    aclTensor **copy = malloc(size ? size * sizeof *copy : 1);
    unsigned long long *serial = malloc(size ? size * sizeof *serial : 1);
    if (!l || !copy || !serial) {
        free(l);
        free(copy);
        free(serial);
        return cann_fail_null("%s: out of host memory", fn);
    }
    for (uint64_t k = 0; k < size; k++) {
        copy[k] = (aclTensor *)value[k];
        serial[k] = fc_rt_registry_serial(value[k], &cann_kind_tensor);
    }
    l->size = size;
    l->value = copy;
    l->serial = serial;
    aclTensorList *out = publish(l, &cann_kind_tensor_list, fn);
    if (!out) {
        free(copy);
        free(serial);
        free(l);
    }
    return out;
}

/* ---------------------------------------------------------------------------------------------- */

static aclnnStatus destroy(const void *obj, const fc_rt_kind *kind, const char *fn, const char *arg)
{
    if (!obj)
        return ACLNN_SUCCESS;
    if (!fc_rt_registry_remove(obj, kind))
        return cann_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s %p is not a live %s (destroyed already, or foreign)", fn, arg,
                         obj, kind->name);
    return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyTensor(const aclTensor *tensor)
{
    const aclnnStatus st = destroy(tensor, &cann_kind_tensor, "aclDestroyTensor", "tensor");
    if (st == ACLNN_SUCCESS)
        free((void *)tensor);
    return st;
}

aclnnStatus aclDestroyScalar(const aclScalar *scalar)
{
    const aclnnStatus st = destroy(scalar, &cann_kind_scalar, "aclDestroyScalar", "scalar");
    if (st == ACLNN_SUCCESS)
        free((void *)scalar);
    return st;
}

aclnnStatus aclDestroyIntArray(const aclIntArray *array)
{
    const aclnnStatus st = destroy(array, &cann_kind_int_array, "aclDestroyIntArray", "array");
    if (st == ACLNN_SUCCESS && array) {
        free(array->value);
        free((void *)array);
    }
    return st;
}

aclnnStatus aclDestroyFloatArray(const aclFloatArray *array)
{
    const aclnnStatus st = destroy(array, &cann_kind_float_array, "aclDestroyFloatArray", "array");
    if (st == ACLNN_SUCCESS && array) {
        free(array->value);
        free((void *)array);
    }
    return st;
}

aclnnStatus aclDestroyBoolArray(const aclBoolArray *array)
{
    const aclnnStatus st = destroy(array, &cann_kind_bool_array, "aclDestroyBoolArray", "array");
    if (st == ACLNN_SUCCESS && array) {
        free(array->value);
        free((void *)array);
    }
    return st;
}

/* The list owns its tensors: those still live are destroyed, those destroyed already skipped
 * (also when a new tensor now lives at the same address: the serial tells them apart). */
aclnnStatus aclDestroyTensorList(const aclTensorList *array)
{
    const aclnnStatus st = destroy(array, &cann_kind_tensor_list, "aclDestroyTensorList", "array");
    if (st == ACLNN_SUCCESS && array) {
        for (uint64_t k = 0; k < array->size; k++)
            if (fc_rt_registry_remove_serial(array->value[k], &cann_kind_tensor, array->serial[k]))
                free(array->value[k]);
        free(array->value);
        free(array->serial);
        free((void *)array);
    }
    return st;
}
