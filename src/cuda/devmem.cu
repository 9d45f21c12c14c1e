/*
 * The runtime's device memory on CUDA (src/runtime/devmem.h): what aclrt* and infinirt* reach
 * when a GPU is present.  Allocations are cudaMalloc on the thread's current device, copies are
 * cudaMemcpy with the direction the runtime checked, fills are cudaMemset, streams are
 * cudaStream_t.  Every call returns when its work is done, as the aclrt calls it serves promise.
 */
#include <cuda_runtime.h>

#include "cuda.h"
#include "runtime/devmem.h"

/* NULL on success, else the error's text (a static string), with the sticky error cleared. */
static const char *said(cudaError_t err)
{
    if (err == cudaSuccess)
        return NULL;
    (void)cudaGetLastError();
    return cudaGetErrorString(err);
}

static int device_count(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

static const char *set_device(int device) { return said(cudaSetDevice(device)); }

static const char *alloc(void **out, size_t bytes) { return said(cudaMalloc(out, bytes)); }

static const char *release(void *p) { return said(cudaFree(p)); }

static cudaMemcpyKind direction(bool dst_device, bool src_device)
{
    if (dst_device)
        return src_device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
    return src_device ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost;
}

static bool overlap(const void *a, const void *b, size_t bytes)
{
    const char *x = (const char *)a, *y = (const char *)b;
    return x < y + bytes && y < x + bytes;
}

static const char *copy(void *dst, bool dst_device, const void *src, bool src_device, size_t bytes)
{
    const cudaMemcpyKind kind = direction(dst_device, src_device);
    if (kind != cudaMemcpyDeviceToDevice || !overlap(dst, src, bytes))
        return said(cudaMemcpy(dst, src, bytes, kind));
    /* overlapping ranges of one allocation: through a temporary, as memmove would */
    void *tmp = NULL;
    const char *err = said(cudaMalloc(&tmp, bytes));
    if (!err)
        err = said(cudaMemcpy(tmp, src, bytes, cudaMemcpyDeviceToDevice));
    if (!err)
        err = said(cudaMemcpy(dst, tmp, bytes, cudaMemcpyDeviceToDevice));
    if (tmp)
        cudaFree(tmp);
    return err;
}

static const char *fill(void *p, int value, size_t bytes)
{
    const char *err = said(cudaMemset(p, value, bytes));
    return err ? err : said(cudaStreamSynchronize(0)); /* cudaMemset may return before it is done */
}

static const char *stream_create(void **out)
{
    cudaStream_t s = NULL;
    const char *err = said(cudaStreamCreate(&s));
    *out = s;
    return err;
}

static const char *stream_destroy(void *stream) { return said(cudaStreamDestroy((cudaStream_t)stream)); }

static const char *stream_sync(void *stream) { return said(cudaStreamSynchronize((cudaStream_t)stream)); }

static const char *device_sync(void) { return said(cudaDeviceSynchronize()); }

extern "C" const fc_rt_devmem fc_cuda_devmem = {
    "CUDA",        fc_cuda_available, device_count,   set_device,     alloc,       release,     copy,
    fill,          fc_cuda_is_device_pointer, stream_create, stream_destroy, stream_sync, device_sync,
};
