/* The objects infiniop hands out (handles, tensor descriptors, operator descriptors) and their
 * registry kinds. */
#ifndef FC_INFINIOP_OBJECTS_H
#define FC_INFINIOP_OBJECTS_H

#include <stddef.h>

#include "infini/infini.h"

struct InfiniopHandle {
    int device, device_id;
};

/* The first member of every operator descriptor (semantics §7.2: it begins with the device). */
struct InfiniopDescriptor {
    int device, device_id;
};

struct InfiniopTensorDescriptor {
    infiniDtype_t dtype;
    size_t ndim;
    size_t *shape;       /* ndim entries */
    ptrdiff_t *strides;  /* ndim entries, in elements */
};

extern const fc_rt_kind infini_kind_handle;
extern const fc_rt_kind infini_kind_tensor;
extern const fc_rt_kind infini_kind_flash_attention;

#endif /* FC_INFINIOP_OBJECTS_H */
