/*
 * Internals shared by the InfiniCore face (infiniop and infinirt): failure messages, dtype sizes,
 * device support, and the objects the face hands out.
 *
 * Every object is registered in the runtime's registry of live handles while it lives, so NULL
 * gives NULL_POINTER and a destroyed, foreign or garbage pointer gives BAD_PARAM without ever
 * being dereferenced (semantics §7.2).
 */
#ifndef FC_INFINIOP_INFINI_H
#define FC_INFINIOP_INFINI_H

#include <stdbool.h>
#include <stddef.h>

#include "infiniop.h"
#include "infinirt.h"
#include "runtime/registry.h"

/* Records a message for fc_last_error() (the face has no message call of its own) and returns st. */
infiniStatus_t infini_fail(infiniStatus_t st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Bytes per element of an infiniDtype_t; 0 outside the enum and for INVALID. */
size_t infini_dtype_size(int dtype);

/* Whether this build runs on the device type (CPU always; NVIDIA only in CUDA builds). */
bool infini_device_supported(int device);

/* The calling thread's current device type (infinirtSetDevice; CPU until set). */
infiniDevice_t infini_current_device_type(void);

/* Whether p is a live object of kind; NULL_POINTER / BAD_PARAM with a message naming it if not. */
infiniStatus_t infini_check_live(const void *p, const fc_rt_kind *kind, const char *fn, const char *name);

/* Registers a new object; INTERNAL_ERROR (the caller frees the object) when out of memory. */
infiniStatus_t infini_register(const void *p, const fc_rt_kind *kind, const char *fn);

/* Takes an object out of the registry before it is freed: NULL_POINTER, BAD_PARAM (not live,
 * a second destroy included) or SUCCESS (the caller now owns it). */
infiniStatus_t infini_unregister(const void *p, const fc_rt_kind *kind, const char *fn, const char *name);

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

#endif /* FC_INFINIOP_INFINI_H */
