/*
 * The aclrt runtime on a GPU (semantics §6.5): aclrtMalloc gives CUDA device memory, tracked with
 * its size, so every copy and memset keeps its bounds check; aclrtMemcpy moves data in each
 * direction (overlapping device-to-device ranges as memmove); streams are CUDA streams; the
 * operator's operand checks refuse a view that leaves its device allocation.  With the argument
 * "cpu" (run under FLASHC_DEVICE=cpu) the same calls must give host memory instead.  Skips (77)
 * without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "acl/acl.h"
#include "common/check.h"
#include "gpu_case.h"

enum { N = 4096 };

/* A refused call: its code, and a message that contains needle. */
static void expect_refused(aclError got, aclError want, const char *needle, const char *what)
{
    const char *msg = aclGetRecentErrMsg();
    TC_CHECK(got == want, "%s: code %d, want %d (%s)", what, (int)got, (int)want, msg ? msg : "");
    TC_CHECK(msg && strstr(msg, needle), "%s: the message names \"%s\": %s", what, needle, msg ? msg : "(none)");
}

/* A call that must succeed (the message is read after it: argument order is unspecified). */
static void expect_ok(aclError got, const char *what)
{
    const char *msg = got == ACL_SUCCESS ? "" : aclGetRecentErrMsg();
    TC_CHECK(got == ACL_SUCCESS, "%s: code %d: %s", what, (int)got, msg ? msg : "");
}

static void round_trips(unsigned char *dev)
{
    unsigned char *in = malloc(N), *out = malloc(N);
    for (int i = 0; i < N; i++)
        in[i] = (unsigned char)(i * 7 + 3);
    expect_ok(aclrtMemcpy(dev, N, in, N, ACL_MEMCPY_HOST_TO_DEVICE), "H2D");
    /* overlapping device ranges behave as memmove: bytes [0, N−16) move up by 16 */
    expect_ok(aclrtMemcpy(dev + 16, N - 16, dev, N - 16, ACL_MEMCPY_DEVICE_TO_DEVICE), "D2D overlapping");
    expect_ok(aclrtMemset(dev, N, 0x5A, 16), "memset");
    memset(out, 0, N);
    expect_ok(aclrtMemcpy(out, N, dev, N, ACL_MEMCPY_DEFAULT), "D2H (DEFAULT)");
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += out[i] != (i < 16 ? 0x5A : in[i - 16]);
    TC_CHECK(bad == 0, "round trip through the device: %d bytes differ", bad);
    free(in);
    free(out);
}

static void bounds(unsigned char *dev, void *foreign)
{
    unsigned char host[2 * N];
    memset(host, 0, sizeof host);
    expect_refused(aclrtMemcpy(dev, 2 * N, host, N + 1, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "leaves",
                   "H2D past the device allocation");
    expect_refused(aclrtMemcpy(host, 2 * N, dev + 8, N, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM, "leaves",
                   "D2H from an interior pointer past the end");
    expect_refused(aclrtMemcpy(dev, N, host, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM, "device allocation",
                   "a device pointer as the host side");
    expect_refused(aclrtMemcpy(host, N, foreign, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM,
                   "no live device allocation", "device memory the runtime did not allocate, as the device side");
    expect_refused(aclrtMemcpy(foreign, N, host, 16, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM,
                   "did not allocate", "device memory the runtime did not allocate, as the host side");
    expect_refused(aclrtMemset(dev + N - 8, 64, 0, 9), ACL_ERROR_INVALID_PARAM, "leaves", "memset past the end");
    expect_refused(aclrtFree(dev + 8), ACL_ERROR_INVALID_PARAM, "inside", "free of an interior pointer");
}

static void streams(void)
{
    aclrtStream s = NULL;
    expect_ok(aclrtCreateStream(&s), "aclrtCreateStream");
    expect_ok(aclrtSynchronizeStream(s), "aclrtSynchronizeStream");
    expect_ok(aclrtSynchronizeStream(NULL), "default stream");
    expect_ok(aclrtSynchronizeDevice(), "aclrtSynchronizeDevice");
    expect_ok(aclrtDestroyStream(s), "aclrtDestroyStream");
    expect_refused(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM, "not a live stream", "a destroyed stream");
}

int main(int argc, char **argv)
{
    const bool cpu = argc > 1 && strcmp(argv[1], "cpu") == 0;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("test_cuda_runtime: no CUDA device; skipped\n");
        return TC_SKIP;
    }
    expect_ok(aclInit(NULL), "aclInit");
    expect_ok(aclrtSetDevice(0), "aclrtSetDevice(0)");
    uint32_t n = 0;
    expect_ok(aclrtGetDeviceCount(&n), "aclrtGetDeviceCount");
    TC_CHECK(cpu ? n == 1 : n == (uint32_t)count,
             "aclrtGetDeviceCount: %u (%s runtime, %d CUDA devices)", n, cpu ? "CPU" : "GPU", count);
    void *dev = NULL, *pinned = NULL;
    expect_ok(aclrtMalloc(&dev, N, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
    expect_ok(aclrtMallocHost(&pinned, N), "aclrtMallocHost");
    TC_CHECK(gc_is_device_memory(dev) == !cpu, "aclrtMalloc gives %s memory", cpu ? "host" : "CUDA device");
    TC_CHECK(!gc_is_device_memory(pinned), "aclrtMallocHost gives host memory");
    if (cpu) {
        memset(dev, 1, N); /* host memory on the CPU runtime: the host may touch it */
    } else {
        void *foreign = NULL;
        cudaMalloc(&foreign, N);
        round_trips(dev);
        bounds(dev, foreign);
        cudaFree(foreign);
    }
    streams();
    expect_ok(aclrtFree(dev), "aclrtFree");
    expect_ok(aclrtFreeHost(pinned), "aclrtFreeHost");
    expect_refused(aclrtFree(dev), ACL_ERROR_INVALID_PARAM, "not a live", "a second free");
    aclrtResetDevice(0);
    aclFinalize();
    return tc_summary(cpu ? "test_cuda_runtime (FLASHC_DEVICE=cpu)" : "test_cuda_runtime");
}
