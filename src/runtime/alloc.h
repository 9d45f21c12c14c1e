/*
 * The allocation table: every live allocation the runtime handed out, device or host, as
 * [base, base + size).  Faces allocate and free through it and look up the allocation that
 * contains a pointer to bounds-check copies, memsets and operator operands.  Thread-safe.
 */
#ifndef FC_RUNTIME_ALLOC_H
#define FC_RUNTIME_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef enum fc_rt_mem {
    FC_RT_MEM_DEVICE = 1, /* aclrtMalloc, infinirtMalloc (without a device: host memory) */
    FC_RT_MEM_HOST = 2    /* aclrtMallocHost, infinirtMallocHost */
} fc_rt_mem;

typedef struct fc_rt_alloc {
    uintptr_t base;
    size_t size;
    fc_rt_mem kind;
    int device;
    bool on_device; /* in the device-memory provider's memory (devmem.h), not addressable by the host */
} fc_rt_alloc;

/* The device id of a device allocation made for the CPU (host memory) while a provider is active:
 * infinirtMalloc with INFINI_DEVICE_CPU current. */
#define FC_RT_CPU_DEVICE (-1)

/* Allocates size > 0 bytes aligned to 64 and records it: device memory of the active provider for
 * FC_RT_MEM_DEVICE when there is one (devmem.h) and device is not FC_RT_CPU_DEVICE, else host
 * memory (aligned to 64).  FC_RT_NO_MEMORY on exhaustion. */
fc_rt_status fc_rt_malloc(void **out, size_t size, fc_rt_mem kind, int device);

/* Frees a live allocation of this kind given by its base; anything else (NULL, interior, foreign,
 * wrong kind, already freed) gives FC_RT_INVALID and is not touched. */
fc_rt_status fc_rt_free(void *base, fc_rt_mem kind);

/* The live allocation containing p, if any. */
bool fc_rt_alloc_find(const void *p, fc_rt_alloc *out);

/* The live allocation that overlaps [p, p + bytes) (bytes > 0, no wrap), if any. */
bool fc_rt_alloc_overlap(uintptr_t p, size_t bytes, fc_rt_alloc *out);

/* Text for a kind ("device", "host"). */
const char *fc_rt_mem_name(fc_rt_mem kind);

#endif /* FC_RUNTIME_ALLOC_H */
