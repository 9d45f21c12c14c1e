/*
 * Device memory of the runtime.  Without a device (a CPU-only build, no GPU, or FLASHC_DEVICE=cpu)
 * the runtime's "device" allocations are host memory and its streams are bookkeeping.  With one,
 * device allocations, copies that touch them, fills, streams and synchronisation go through a
 * provider: a table of C calls that a device backend defines in its own folder (the CUDA one is
 * src/cuda/devmem.cu).  The runtime reaches device memory only through this table; the list of
 * providers lives in devmem.c alone, as the list of backends lives in core/backend.c.
 *
 * Every call is synchronous unless it says otherwise and returns NULL on success or a static
 * message saying what failed.
 */
#ifndef FC_RUNTIME_DEVMEM_H
#define FC_RUNTIME_DEVMEM_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fc_rt_devmem {
    const char *name;                                 /* "CUDA" */
    bool (*available)(const char **why);              /* a usable device is present */
    int (*device_count)(void);
    const char *(*set_device)(int device);            /* the calling thread's current device */
    const char *(*alloc)(void **out, size_t bytes);   /* on the current device */
    const char *(*release)(void *p);
    /* bytes from src to dst; *_device says which side is device memory; overlap-safe */
    const char *(*copy)(void *dst, bool dst_device, const void *src, bool src_device, size_t bytes);
    const char *(*fill)(void *p, int value, size_t bytes);
    int (*is_device)(const void *p);                  /* 1 device memory, 0 not, −1 unknown */
    const char *(*stream_create)(void **out);
    const char *(*stream_destroy)(void *stream);
    const char *(*stream_sync)(void *stream);         /* NULL = the default stream */
    const char *(*device_sync)(void);
} fc_rt_devmem;

#ifdef FLASHC_CUDA
extern const fc_rt_devmem fc_cuda_devmem; /* src/cuda/devmem.cu */
#endif

/* The provider in use, chosen once per process: none when FLASHC_DEVICE is "cpu"; else the first
 * built provider with a usable device (FLASHC_DEVICE unset, "" or "auto"), or the one it names
 * ("cuda").  NULL: device memory is host memory. */
const fc_rt_devmem *fc_rt_devmem_active(void);

/* Why the runtime has no device although FLASHC_DEVICE asked for one (or names none we know);
 * NULL when the choice is fine.  Setting a device and allocating device memory fail with it. */
const char *fc_rt_devmem_error(void);

/* The runtime's device kind in words: "cpu" or the provider's name. */
const char *fc_rt_devmem_name(void);

#ifdef __cplusplus
}
#endif

#endif /* FC_RUNTIME_DEVMEM_H */
