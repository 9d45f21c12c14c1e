/*
 * The infinirt subset flashc provides (semantics §7.6): devices, streams, tracked allocations and
 * bounds-checked copies.  Allocations share the runtime's tracking table with aclrt (§6.5).
 * On the CPU backend "device" memory is host memory tracked as device memory, and stream work
 * completes before the call returns.
 */
#ifndef __INFINIRT_API_H__
#define __INFINIRT_API_H__

#include "infinicore.h"

typedef void *infinirtStream_t;

typedef enum {
    INFINIRT_MEMCPY_H2H = 0,
    INFINIRT_MEMCPY_H2D = 1,
    INFINIRT_MEMCPY_D2H = 2,
    INFINIRT_MEMCPY_D2D = 3
} infinirtMemcpyKind_t;

__INFINI_C __export infiniStatus_t infinirtInit(void);

/* count_array has INFINI_DEVICE_TYPE_COUNT entries. */
__INFINI_C __export infiniStatus_t infinirtGetAllDeviceCount(int *count_array);
__INFINI_C __export infiniStatus_t infinirtGetDeviceCount(infiniDevice_t device, int *count);
__INFINI_C __export infiniStatus_t infinirtSetDevice(infiniDevice_t device, int device_id);
__INFINI_C __export infiniStatus_t infinirtGetDevice(infiniDevice_t *device_ptr, int *device_id_ptr);
__INFINI_C __export infiniStatus_t infinirtDeviceSynchronize(void);

__INFINI_C __export infiniStatus_t infinirtStreamCreate(infinirtStream_t *stream_ptr);
__INFINI_C __export infiniStatus_t infinirtStreamDestroy(infinirtStream_t stream);
__INFINI_C __export infiniStatus_t infinirtStreamSynchronize(infinirtStream_t stream);

__INFINI_C __export infiniStatus_t infinirtMalloc(void **p_ptr, size_t size);
__INFINI_C __export infiniStatus_t infinirtMallocHost(void **p_ptr, size_t size);
__INFINI_C __export infiniStatus_t infinirtFree(void *ptr);
__INFINI_C __export infiniStatus_t infinirtFreeHost(void *ptr);

__INFINI_C __export infiniStatus_t infinirtMemcpy(void *dst, const void *src, size_t size, infinirtMemcpyKind_t kind);
__INFINI_C __export infiniStatus_t infinirtMemcpyAsync(void *dst, const void *src, size_t size,
                                                       infinirtMemcpyKind_t kind, infinirtStream_t stream);

#endif /* __INFINIRT_API_H__ */
