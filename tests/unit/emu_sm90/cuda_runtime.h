/*
 * The CTA emulator's stand-in for the CUDA runtime header, for the host side of the Hopper kernels
 * compiled into a CPU test (tests/unit/test_hopper_*_emu.cc): device memory is host memory, the
 * device an sm_90 with cta_emu_sm90's SM count, and the driver's cuTensorMapEncodeTiled the
 * emulator's encoder.  Launches are the test's own (it defines the kernels' launchers).
 */
#ifndef FLASHC_EMU_CUDA_RUNTIME_H
#define FLASHC_EMU_CUDA_RUNTIME_H

#include <stdlib.h>
#include <string.h>

#include "cuda.h"

typedef enum {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
} cudaError_t;
typedef struct cta_emu_stream *cudaStream_t;
typedef enum { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3 } cudaMemcpyKind;
typedef enum {
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
} cudaDeviceAttr;
typedef enum { cudaDriverEntryPointSuccess = 0, cudaDriverEntryPointSymbolNotFound = 1 } cudaDriverEntryPointQueryResult;
enum { cudaEnableDefault = 0 };
typedef enum { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 } cudaFuncAttribute;

/* What the emulated device reports (cta_emu_sm90.h sets the SM count per test). */
struct CtaEmuDevice {
    int sms = 132, l2 = 50 * 1024 * 1024;
};
inline CtaEmuDevice &cta_emu_device()
{
    static CtaEmuDevice d;
    return d;
}
/* The emulator's cuTensorMapEncodeTiled (cta_emu_sm90.h). */
CUresult cta_emu_tensor_map_encode(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *, const cuuint64_t *,
                                   const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                   CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

inline const char *cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "emulated runtime error"; }
inline const char *cudaGetErrorName(cudaError_t e) { return cudaGetErrorString(e); }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaPeekAtLastError() { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaMalloc(void **p, size_t bytes)
{
    *p = malloc(bytes);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind)
{
    memcpy(d, s, n);
    return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t = 0) { return cudaMemcpy(d, s, n, k); }
inline cudaError_t cudaGetDevice(int *d)
{
    *d = 0;
    return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int)
{
    switch (a) {
    case cudaDevAttrMultiProcessorCount: *v = cta_emu_device().sms; break;
    case cudaDevAttrL2CacheSize: *v = cta_emu_device().l2; break;
    case cudaDevAttrComputeCapabilityMajor: *v = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
    default: return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}
inline cudaError_t cudaGetDriverEntryPointByVersion(const char *name, void **fn, unsigned, unsigned long long,
                                                    cudaDriverEntryPointQueryResult *found)
{
    const bool ok = strcmp(name, "cuTensorMapEncodeTiled") == 0;
    *fn = ok ? (void *)&cta_emu_tensor_map_encode : nullptr;
    *found = ok ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}

#endif /* FLASHC_EMU_CUDA_RUNTIME_H */
