/* Device discovery, pointer classification and waiting for a stream: the only CUDA runtime calls
 * the backend needs outside its kernels and plans.  The runtime is linked statically, so the
 * library loads without a driver; these calls are where a missing driver or device shows up. */
#include <cuda_runtime.h>

#include "cuda.h"
#include "launch.h"

extern "C" bool fc_cuda_available(const char **why)
{
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaErrorInsufficientDriver) {
        *why = "no usable NVIDIA driver (cudaGetDeviceCount: cudaErrorInsufficientDriver: the driver is missing or older "
               "than the CUDA runtime this library was built with)";
        return false;
    }
    if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0)) {
        *why = "no CUDA device is present (cudaGetDeviceCount found none)";
        return false;
    }
    if (err != cudaSuccess) {
        *why = cudaGetErrorString(err);
        return false;
    }
    return true;
}

/* A one-call form's workspace in device memory; cudaFree waits for the work queued before it. */
extern "C" void *fc_cuda_workspace_alloc(size_t bytes)
{
    void *p = NULL;
    return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
}

extern "C" void fc_cuda_workspace_free(void *workspace) { cudaFree(workspace); }

extern "C" fc_status fc_cuda_stream_wait(void *stream)
{
    const cudaError_t err = cudaStreamSynchronize((cudaStream_t)stream);
    return err == cudaSuccess ? FC_OK : fc_cuda_err(err, "cudaStreamSynchronize");
}

extern "C" int fc_cuda_is_device_pointer(const void *ptr)
{
    cudaPointerAttributes attr;
    if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
        (void)cudaGetLastError(); /* clear the sticky-free error of an unknown address */
        return -1;
    }
    return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged ? 1 : 0;
}
