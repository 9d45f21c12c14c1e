/*
 * What the two halves of the InfiniCore face (infiniop and infinirt) share: failure messages,
 * dtype sizes, device support, the calling thread's current device, and liveness checks.
 *
 * Every object is registered in the runtime's registry of live handles while it lives, so NULL
 * gives NULL_POINTER and a destroyed, foreign or garbage pointer gives BAD_PARAM without ever
 * being dereferenced (semantics §7.2).
 */
#ifndef FC_INFINI_INFINI_H
#define FC_INFINI_INFINI_H

#include <stdbool.h>
#include <stddef.h>

#include "infiniop.h"
#include "infinirt.h"
#include "runtime/registry.h"

/* Records a message for fc_last_error() (the face has no message call of its own) and returns st. */
infiniStatus_t infini_fail(infiniStatus_t st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Bytes per element of an infiniDtype_t; 0 outside the enum and for INVALID. */
size_t infini_dtype_size(int dtype);

/* Whether this build runs on the device type: CPU always; NVIDIA when the runtime's device memory
 * is CUDA's (a CUDA build with a GPU present and FLASHC_DEVICE not "cpu"). */
bool infini_device_supported(int device);

/* Devices of a type: 1 CPU; the runtime's devices for NVIDIA; 0 when not supported. */
int infini_device_count(int device);

/* The runtime device id for allocations of the calling thread's current device type
 * (FC_RT_CPU_DEVICE for the CPU: host memory even while a GPU is in use). */
int infini_runtime_device(void);

/* The calling thread's current device type (infinirtSetDevice; CPU until set). */
infiniDevice_t infini_current_device_type(void);
void infini_set_current_device_type(infiniDevice_t device);

/* Whether p is a live object of kind; NULL_POINTER / BAD_PARAM with a message naming it if not. */
infiniStatus_t infini_check_live(const void *p, const fc_rt_kind *kind, const char *fn, const char *name);

/* Registers a new object; INTERNAL_ERROR (the caller frees the object) when out of memory. */
infiniStatus_t infini_register(const void *p, const fc_rt_kind *kind, const char *fn);

/* Takes an object out of the registry before it is freed: NULL_POINTER, BAD_PARAM (not live,
 * a second destroy included) or SUCCESS (the caller now owns it). */
infiniStatus_t infini_unregister(const void *p, const fc_rt_kind *kind, const char *fn, const char *name);

#endif /* FC_INFINI_INFINI_H */
