/*
 * The aclrt runtime (semantics §6.5, §6.7, §8.18): initialisation, devices, contexts and options,
 * streams, tracked allocations, bounds-checked copies and memsets (every misuse fails with
 * ACL_ERROR_INVALID_PARAM and touches nothing), fp16 conversions, element sizes, the per-thread
 * error queue.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "common/check.h"

#define OK ACL_SUCCESS
#define BAD ACL_ERROR_INVALID_PARAM

static void expect(aclError got, aclError want, const char *needle, const char *what)
{
    const char *msg = aclGetRecentErrMsg();
    TC_CHECK(got == want, "%s: expected %d, got %d (%s)", what, want, got, msg ? msg : "no message");
    if (want != OK)
        TC_CHECK(msg != NULL && (!needle || strstr(msg, needle)), "%s: message must contain \"%s\": %s", what,
                 needle ? needle : "", msg ? msg : "(none)");
    else
        TC_CHECK(msg == NULL, "%s: a successful call left a message: %s", what, msg);
}

static void init_and_devices(void)
{
    tc_context("init and devices");
    expect(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "aclFinalize", "finalize before init");
    expect(aclInit(NULL), OK, NULL, "init");
    expect(aclInit("ignored.json"), ACL_ERROR_REPEAT_INITIALIZE, "aclInit", "second init");
    int32_t dev = -1;
    uint32_t count = 0;
    expect(aclrtGetDevice(&dev), OK, NULL, "get device");
    TC_CHECK(dev == 0, "device 0 is current until another is set, got %d", dev);
    expect(aclrtGetDeviceCount(&count), OK, NULL, "device count");
    TC_CHECK(count == 1, "the CPU backend has one device, got %u", count);
    expect(aclrtSetDevice(0), OK, NULL, "set device 0");
    expect(aclrtSetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID, "device id 1", "set device 1");
    expect(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID, NULL, "set device -1");
    expect(aclrtGetDevice(NULL), BAD, "deviceId", "get device NULL");
    expect(aclrtGetDeviceCount(NULL), BAD, "count", "count NULL");
    void *p;
    expect(aclrtMalloc(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST), OK, NULL, "malloc");
    expect(aclrtResetDevice(0), OK, NULL, "reset device 0");
    expect(aclrtResetDevice(7), ACL_ERROR_RT_INVALID_DEVICEID, NULL, "reset device 7");
    expect(aclrtMemset(p, 16, 1, 16), OK, NULL, "allocations survive aclrtResetDevice");
    expect(aclFinalize(), OK, NULL, "finalize");
    expect(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, NULL, "second finalize");
    expect(aclrtMemset(p, 16, 1, 16), OK, NULL, "allocations survive aclFinalize");
    expect(aclrtFree(p), OK, NULL, "free");
    expect(aclrtSynchronizeDevice(), OK, NULL, "synchronize device");
}

static void contexts(void)
{
    tc_context("contexts and options");
    aclrtContext def = NULL, ctx = NULL, now = NULL;
    expect(aclrtGetCurrentContext(&def), OK, NULL, "default context");
    TC_CHECK(def != NULL, "the default context is a handle");
    expect(aclrtCreateContext(&ctx, 0), OK, NULL, "create");
    expect(aclrtGetCurrentContext(&now), OK, NULL, "current");
    TC_CHECK(now == ctx, "a created context becomes current");
    int64_t v = -1;
    expect(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1), OK, NULL, "set deterministic");
    expect(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v), OK, NULL, "get deterministic");
    TC_CHECK(v == 1, "deterministic reads back 1, got %lld", (long long)v);
    expect(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 4), BAD, "[0, 3]", "deterministic 4");
    expect(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, -1), BAD, NULL, "deterministic -1");
    expect(aclrtCtxSetSysParamOpt((aclSysParamOpt)9, 0), BAD, "opt", "unknown option");
    expect(aclrtCtxSetSysParamOpt(ACL_OPT_STRONG_CONSISTENCY, 12345), OK, NULL, "other options take any value");
    expect(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, NULL), BAD, "value", "get NULL");
    expect(aclrtSetCurrentContext(def), OK, NULL, "back to the default");
    expect(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v), OK, NULL, "default's option");
    TC_CHECK(v == 0, "options live in their context: the default still has 0, got %lld", (long long)v);
    expect(aclrtSetCurrentContext(ctx), OK, NULL, "switch");
    expect(aclrtDestroyContext(ctx), OK, NULL, "destroy the current context");
    expect(aclrtGetCurrentContext(&now), OK, NULL, "current after destroy");
    TC_CHECK(now == def, "destroying the current context leaves the default current");
    expect(aclrtDestroyContext(ctx), BAD, "not a live context", "double destroy");
    expect(aclrtSetCurrentContext(ctx), BAD, "not a live context", "set dead");
    expect(aclrtSetCurrentContext(NULL), BAD, NULL, "set NULL");
    expect(aclrtSetCurrentContext((aclrtContext)&v), BAD, NULL, "set foreign");
    expect(aclrtDestroyContext(def), BAD, "default", "destroy the default");
    expect(aclrtCreateContext(&ctx, 3), ACL_ERROR_RT_INVALID_DEVICEID, NULL, "create on device 3");
    expect(aclrtCreateContext(NULL, 0), BAD, "context", "create NULL");
    expect(aclrtGetCurrentContext(NULL), BAD, NULL, "get NULL");
}

static void streams(void)
{
    tc_context("streams");
    aclrtStream s = NULL;
    expect(aclrtCreateStream(&s), OK, NULL, "create");
    TC_CHECK(s != NULL, "streams are non-NULL handles");
    expect(aclrtSynchronizeStream(s), OK, NULL, "sync");
    expect(aclrtSynchronizeStream(NULL), OK, NULL, "sync the default stream");
    expect(aclrtDestroyStream(s), OK, NULL, "destroy");
    expect(aclrtDestroyStream(s), BAD, "not a live stream", "double destroy");
    expect(aclrtSynchronizeStream(s), BAD, "not a live stream", "sync destroyed");
    expect(aclrtDestroyStream(NULL), BAD, NULL, "destroy NULL");
    expect(aclrtCreateStream(NULL), BAD, "stream", "create NULL");
}

static void allocations(void)
{
    tc_context("allocations");
    void *d = NULL, *h = NULL, *x = NULL;
    expect(aclrtMalloc(NULL, 8, ACL_MEM_MALLOC_HUGE_FIRST), BAD, "devPtr", "NULL out");
    expect(aclrtMalloc(&x, 0, ACL_MEM_MALLOC_NORMAL_ONLY), BAD, "size", "size 0");
    expect(aclrtMalloc(&x, (size_t)1 << 50, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION, NULL, "huge");
    expect(aclrtMallocHost(NULL, 8), BAD, "hostPtr", "host NULL out");
    expect(aclrtMallocHost(&x, 0), BAD, NULL, "host size 0");
    expect(aclrtMalloc(&d, 100, ACL_MEM_TYPE_HIGH_BAND_WIDTH), OK, NULL, "malloc (policy ignored)");
    expect(aclrtMallocHost(&h, 100), OK, NULL, "malloc host");
    TC_CHECK((uintptr_t)d % 64 == 0 && (uintptr_t)h % 64 == 0, "allocations are 64-byte aligned");
    char *foreign = malloc(16);
    int local;
    expect(aclrtFree(NULL), BAD, "NULL", "free NULL");
    expect(aclrtFree((char *)d + 8), BAD, "inside", "interior free");
    expect(aclrtFree(foreign), BAD, "not a live", "foreign free");
    expect(aclrtFree(&local), BAD, NULL, "stack free");
    expect(aclrtFree(h), BAD, "host allocation", "device free of a host allocation");
    expect(aclrtFreeHost(d), BAD, "device allocation", "host free of a device allocation");
    expect(aclrtFreeHost(NULL), BAD, NULL, "host free NULL");
    expect(aclrtFree(d), OK, NULL, "free");
    expect(aclrtFree(d), BAD, "not a live", "double free");
    expect(aclrtFreeHost(h), OK, NULL, "free host");
    expect(aclrtFreeHost(h), BAD, NULL, "double free host");
    free(foreign);
}

static void copies(void)
{
    tc_context("bounds-checked copies");
    unsigned char *d1, *d2, *hh, src[256], dst[256];
    aclrtMalloc((void **)&d1, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&d2, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMallocHost((void **)&hh, 16);
    for (int k = 0; k < 256; k++)
        src[k] = (unsigned char)k, dst[k] = 0xEE;
    expect(aclrtMemset(d1, 64, 0, 64), OK, NULL, "clear d1");
    expect(aclrtMemcpy(NULL, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE), OK, NULL, "count 0 needs no pointers");
    expect(aclrtMemcpy(NULL, 8, src, 8, ACL_MEMCPY_HOST_TO_DEVICE), BAD, "dst is NULL", "NULL dst");
    expect(aclrtMemcpy(d1, 8, NULL, 8, ACL_MEMCPY_HOST_TO_DEVICE), BAD, "src is NULL", "NULL src");
    expect(aclrtMemcpy(d1, 8, src, 9, ACL_MEMCPY_HOST_TO_DEVICE), BAD, "destMax", "count > destMax");
    expect(aclrtMemcpy(d1, 64, src, 8, (aclrtMemcpyKind)8), BAD, "kind", "kind 8");
    expect(aclrtMemcpy(d1, 64, src, 8, (aclrtMemcpyKind)-1), BAD, "kind", "kind -1");
    expect(aclrtMemcpy(d1, 256, src, 65, ACL_MEMCPY_HOST_TO_DEVICE), BAD, "dst range", "H2D past the end");
    expect(aclrtMemcpy(d1 + 60, 256, src, 5, ACL_MEMCPY_HOST_TO_DEVICE), BAD, "64-byte device allocation", "H2D interior past the end");
    expect(aclrtMemcpy(dst, 256, d1, 65, ACL_MEMCPY_DEVICE_TO_HOST), BAD, "src range", "D2H past the end");
    expect(aclrtMemcpy(src, 256, src + 8, 8, ACL_MEMCPY_HOST_TO_DEVICE), BAD, "no live device allocation", "H2D to host memory");
    expect(aclrtMemcpy(d2, 32, d1, 8, ACL_MEMCPY_DEVICE_TO_HOST), BAD, "host-side", "D2H into device memory");
    expect(aclrtMemcpy(d1, 64, d2, 8, ACL_MEMCPY_HOST_TO_DEVICE), BAD, "host-side", "H2D from device memory");
    expect(aclrtMemcpy(hh, 64, src, 17, ACL_MEMCPY_HOST_TO_HOST), BAD, "16-byte host allocation", "H2H past a host allocation");
    expect(aclrtMemcpy(d1, 64, d2, 33, ACL_MEMCPY_DEVICE_TO_DEVICE), BAD, "src", "D2D past the source");
    expect(aclrtMemcpy(d1, 64, src, 8, ACL_MEMCPY_DEVICE_TO_DEVICE), BAD, "src", "D2D from host memory");
    unsigned char *check = malloc(64);
    aclrtMemcpy(check, 64, d1, 64, ACL_MEMCPY_DEVICE_TO_HOST);
    bool zero = true;
    for (int k = 0; k < 64; k++)
        zero &= check[k] == 0;
    TC_CHECK(zero, "failed copies wrote into the allocation");
    bool untouched = true;
    for (int k = 0; k < 256; k++)
        untouched &= dst[k] == 0xEE;
    TC_CHECK(untouched, "a failed D2H copy wrote into the host buffer");
    /* valid copies of every kind */
    expect(aclrtMemcpy(d1, 64, src, 64, ACL_MEMCPY_HOST_TO_DEVICE), OK, NULL, "H2D");
    expect(aclrtMemcpy(d2, 32, d1 + 16, 32, ACL_MEMCPY_DEVICE_TO_DEVICE), OK, NULL, "D2D");
    expect(aclrtMemcpy(dst, 32, d2, 32, ACL_MEMCPY_DEVICE_TO_HOST), OK, NULL, "D2H");
    TC_CHECK(dst[0] == 16 && dst[31] == 47, "copies carry the data");
    expect(aclrtMemcpy(d1, 64, d1 + 8, 32, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE), OK, NULL, "overlapping D2D");
    aclrtMemcpy(dst, 64, d1, 64, ACL_MEMCPY_DEVICE_TO_HOST);
    TC_CHECK(dst[0] == 8 && dst[31] == 39 && dst[32] == 32, "overlap copies as if through a temporary");
    expect(aclrtMemcpy(d2, 32, d1, 32, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE), OK, NULL, "inter D2D");
    expect(aclrtMemcpy(d1, 64, src, 16, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE), OK, NULL, "H2BUF2D");
    expect(aclrtMemcpy(hh, 16, src, 16, ACL_MEMCPY_HOST_TO_HOST), OK, NULL, "H2H into a host allocation");
    expect(aclrtMemcpy(dst, 256, src, 256, ACL_MEMCPY_HOST_TO_HOST), OK, NULL, "H2H untracked");
    expect(aclrtMemcpy(dst, 64, d1, 64, ACL_MEMCPY_DEFAULT), OK, NULL, "DEFAULT device to host");
    expect(aclrtMemcpy(d2, 32, hh, 16, ACL_MEMCPY_DEFAULT), OK, NULL, "DEFAULT host allocation to device");
    expect(aclrtMemcpy(dst, 256, d1, 65, ACL_MEMCPY_DEFAULT), BAD, "src", "DEFAULT past a device allocation");
    expect(aclrtMemcpy(dst, 256, hh, 17, ACL_MEMCPY_DEFAULT), BAD, "host allocation", "DEFAULT past a host allocation");
    /* freed memory is not device memory any more */
    aclrtFree(d2);
    expect(aclrtMemcpy(dst, 32, d2, 8, ACL_MEMCPY_DEVICE_TO_HOST), BAD, "no live device allocation", "D2H from freed");
    aclrtFree(d1);
    aclrtFreeHost(hh);
    free(check);
}

static void memsets(void)
{
    tc_context("bounds-checked memsets");
    unsigned char *d, *h, out[32];
    aclrtMalloc((void **)&d, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMallocHost((void **)&h, 8);
    unsigned char *foreign = malloc(8);
    expect(aclrtMemset(d, 32, 0x1ab, 32), OK, NULL, "memset writes the low 8 bits");
    aclrtMemcpy(out, 32, d, 32, ACL_MEMCPY_DEVICE_TO_HOST);
    TC_CHECK(out[0] == 0xab && out[31] == 0xab, "memset value");
    expect(aclrtMemset(NULL, 8, 0, 8), BAD, "devPtr is NULL", "NULL");
    expect(aclrtMemset(d, 8, 0, 9), BAD, "maxCount", "count > maxCount");
    expect(aclrtMemset(d + 8, 64, 0, 25), BAD, "32-byte device allocation", "past the end");
    expect(aclrtMemset(foreign, 8, 0, 8), BAD, "no live allocation", "untracked memory");
    expect(aclrtMemset(h, 8, 7, 8), OK, NULL, "host allocation");
    expect(aclrtMemset(h, 16, 7, 9), BAD, NULL, "past a host allocation");
    expect(aclrtMemset(d, 0, 0, 0), OK, NULL, "count 0");
    aclrtMemcpy(out, 32, d, 32, ACL_MEMCPY_DEVICE_TO_HOST);
    TC_CHECK(out[8] == 0xab && out[31] == 0xab, "failed memsets wrote nothing");
    aclrtFree(d);
    expect(aclrtMemset(d, 32, 0, 1), BAD, NULL, "freed memory");
    aclrtFreeHost(h);
    free(foreign);
}

static void conversions(void)
{
    tc_context("fp16 and element sizes");
    TC_CHECK(aclFloatToFloat16(1.0f) == 0x3C00 && aclFloat16ToFloat(0x3C00) == 1.0f, "1.0");
    TC_CHECK(aclFloatToFloat16(65504.0f) == 0x7BFF, "max half");
    TC_CHECK(aclFloatToFloat16(65520.0f) == 0x7C00, "overflow rounds to inf");
    TC_CHECK(aclFloatToFloat16(1.0f + 0x1p-11f) == 0x3C00, "tie to even (down)");
    TC_CHECK(aclFloatToFloat16(1.0f + 3 * 0x1p-11f) == 0x3C02, "tie to even (up)");
    TC_CHECK(aclFloatToFloat16(0x1p-24f) == 0x0001 && aclFloat16ToFloat(0x0001) == 0x1p-24f, "smallest subnormal");
    TC_CHECK(aclFloatToFloat16(-2.0f) == 0xC000, "sign");
    TC_CHECK(isnan(aclFloat16ToFloat(aclFloatToFloat16(NAN))), "NaN stays NaN");
    TC_CHECK(aclFloat16ToFloat(0xFC00) == -INFINITY, "-inf");
    const struct { aclDataType t; size_t n; } sizes[] = {
        {ACL_FLOAT, 4}, {ACL_FLOAT16, 2}, {ACL_BF16, 2}, {ACL_INT8, 1}, {ACL_UINT8, 1}, {ACL_BOOL, 1},
        {ACL_INT16, 2}, {ACL_UINT16, 2}, {ACL_INT32, 4}, {ACL_UINT32, 4}, {ACL_INT64, 8}, {ACL_UINT64, 8},
        {ACL_DOUBLE, 8}, {ACL_STRING, 0}, {ACL_DT_UNDEFINED, 0}, {ACL_INT4, 0}, {(aclDataType)99, 0}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        TC_CHECK(aclDataTypeSize(sizes[k].t) == sizes[k].n, "aclDataTypeSize(%d) = %zu, want %zu", (int)sizes[k].t,
                 aclDataTypeSize(sizes[k].t), sizes[k].n);
}

static void *other_thread(void *arg)
{
    (void)arg;
    aclrtFree(NULL); /* a failure in this thread only */
    const char *m = aclGetRecentErrMsg();
    TC_CHECK(m && strstr(m, "aclrtFree"), "the failing thread sees its message");
    return NULL;
}

static void messages(void)
{
    tc_context("aclGetRecentErrMsg");
    aclGetRecentErrMsg();
    TC_CHECK(aclGetRecentErrMsg() == NULL, "NULL when nothing is pending");
    aclrtFree(NULL);
    aclrtSetDevice(5);
    const char *m = aclGetRecentErrMsg();
    TC_CHECK(m && strncmp(m, "aclrtSetDevice", 14) == 0 && strstr(m, "\naclrtFree"),
             "newest first, one per line: %s", m ? m : "(none)");
    TC_CHECK(aclGetRecentErrMsg() == NULL, "retrieval clears the queue");
    pthread_t t;
    pthread_create(&t, NULL, other_thread, NULL);
    pthread_join(t, NULL);
    TC_CHECK(aclGetRecentErrMsg() == NULL, "another thread's failures are not ours");
    for (int k = 0; k < 100; k++)
        aclrtFree(NULL);
    m = aclGetRecentErrMsg();
    TC_CHECK(m != NULL && strlen(m) < 100 * 200, "a long queue stays bounded");
}

/* The allocation table and handle registry under concurrent use. */
static void *churn(void *arg)
{
    bool *ok = arg;
    unsigned char buf[64];
    for (int k = 0; k < 2000; k++) {
        void *d = NULL;
        aclrtStream s = NULL;
        *ok &= aclrtMalloc(&d, 64 + (size_t)(k % 7), ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS;
        *ok &= aclrtMemcpy(d, 64, buf, 64, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS;
        *ok &= aclrtMemcpy(buf, 64, d, 65 + (size_t)(k % 7), ACL_MEMCPY_DEVICE_TO_HOST) == BAD;
        *ok &= aclrtCreateStream(&s) == ACL_SUCCESS && aclrtDestroyStream(s) == ACL_SUCCESS;
        *ok &= aclrtFree(d) == ACL_SUCCESS && aclrtFree(d) == BAD;
    }
    aclGetRecentErrMsg();
    return NULL;
}

static void concurrency(void)
{
    tc_context("concurrent runtime use");
    pthread_t t[3];
    bool ok[3] = {true, true, true};
    for (int k = 0; k < 3; k++)
        pthread_create(&t[k], NULL, churn, &ok[k]);
    for (int k = 0; k < 3; k++) {
        pthread_join(t[k], NULL);
        TC_CHECK(ok[k], "thread %d saw a wrong result", k);
    }
}

int main(void)
{
    init_and_devices();
    contexts();
    streams();
    allocations();
    copies();
    memsets();
    conversions();
    messages();
    concurrency();
    return tc_summary("cann_runtime");
}
