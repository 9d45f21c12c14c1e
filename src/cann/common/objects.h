/*
 * The aclnn objects (semantics §6.4) and their registry kinds.  Everything an operator reads from
 * an object goes through the cann_*_live checks first: an unregistered pointer is never
 * dereferenced.
 */
#ifndef FC_CANN_OBJECTS_H
#define FC_CANN_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>

#include "aclnn/acl_meta.h"
#include "runtime/registry.h"

#define CANN_MAX_RANK 8

struct aclTensor {
    uint64_t rank;
    int64_t dims[CANN_MAX_RANK];
    int64_t strides[CANN_MAX_RANK]; /* elements */
    int64_t offset;                 /* elements */
    aclDataType dtype;
    aclFormat format;
    uint64_t storage_rank;          /* 0 = no storage shape given */
    int64_t storage[CANN_MAX_RANK];
    void *data;
};

struct aclIntArray {
    uint64_t size;
    int64_t *value;
};

struct aclFloatArray {
    uint64_t size;
    float *value;
};

struct aclBoolArray {
    uint64_t size;
    bool *value;
};

struct aclScalar {
    aclDataType dtype;
    unsigned char value[16];
};

struct aclTensorList {
    uint64_t size;
    aclTensor **value;
    unsigned long long *serial; /* registry serial of each member when the list was made */
};

extern const fc_rt_kind cann_kind_tensor, cann_kind_int_array, cann_kind_float_array, cann_kind_bool_array,
    cann_kind_scalar, cann_kind_tensor_list;

static inline bool cann_tensor_live(const aclTensor *t) { return fc_rt_registry_has(t, &cann_kind_tensor); }
static inline bool cann_int_array_live(const aclIntArray *a) { return fc_rt_registry_has(a, &cann_kind_int_array); }
static inline bool cann_tensor_list_live(const aclTensorList *l)
{
    return fc_rt_registry_has(l, &cann_kind_tensor_list);
}

#endif /* FC_CANN_OBJECTS_H */
