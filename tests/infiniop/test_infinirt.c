/*
 * The infinirt subset (semantics §7.6): device counts and selection, streams, tracked
 * allocations (one table shared with aclrt, §6.5) and bounds-checked copies that touch nothing
 * when they fail.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "harness.h"

static void *other_thread(void *arg)
{
    infiniDevice_t d = INFINI_DEVICE_ALI;
    int id = -1;
    *(int *)arg = infinirtGetDevice(&d, &id) == INFINI_STATUS_SUCCESS && d == INFINI_DEVICE_CPU && id == 0;
    return NULL;
}

static void devices(void)
{
    tc_context("devices");
    EXPECT(infinirtInit(), INFINI_STATUS_SUCCESS);
    EXPECT(infinirtInit(), INFINI_STATUS_SUCCESS);
    int counts[INFINI_DEVICE_TYPE_COUNT];
    memset(counts, 0x7F, sizeof counts);
    EXPECT(infinirtGetAllDeviceCount(NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infinirtGetAllDeviceCount(counts), INFINI_STATUS_SUCCESS);
    TC_CHECK(counts[INFINI_DEVICE_CPU] == 1, "CPU count %d", counts[INFINI_DEVICE_CPU]);
    for (int d = 1; d < INFINI_DEVICE_TYPE_COUNT; d++)
        TC_CHECK(counts[d] == 0, "device type %d count %d", d, counts[d]);
    int n = -1;
    EXPECT(infinirtGetDeviceCount(INFINI_DEVICE_CPU, &n), INFINI_STATUS_SUCCESS);
    TC_CHECK(n == 1, "count %d", n);
    EXPECT(infinirtGetDeviceCount(INFINI_DEVICE_CPU, NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infinirtGetDeviceCount(INFINI_DEVICE_NVIDIA, &n), INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED);
    EXPECT(infinirtGetDeviceCount((infiniDevice_t)99, &n), INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED);
    EXPECT(infinirtSetDevice(INFINI_DEVICE_CPU, 0), INFINI_STATUS_SUCCESS);
    EXPECT(infinirtSetDevice(INFINI_DEVICE_CPU, 1), INFINI_STATUS_DEVICE_NOT_FOUND);
    EXPECT(infinirtSetDevice(INFINI_DEVICE_CPU, -1), INFINI_STATUS_DEVICE_NOT_FOUND);
    EXPECT(infinirtSetDevice(INFINI_DEVICE_ASCEND, 0), INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED);
    EXPECT(infinirtSetDevice((infiniDevice_t)-3, 0), INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED);
    infiniDevice_t d = INFINI_DEVICE_ALI;
    int id = -1;
    EXPECT(infinirtGetDevice(&d, &id), INFINI_STATUS_SUCCESS);
    TC_CHECK(d == INFINI_DEVICE_CPU && id == 0, "device %d id %d", (int)d, id);
    EXPECT(infinirtGetDevice(NULL, &id), INFINI_STATUS_NULL_POINTER);
    EXPECT(infinirtGetDevice(&d, NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infinirtDeviceSynchronize(), INFINI_STATUS_SUCCESS);
    int ok = 0; /* a fresh thread starts on the CPU, device 0 */
    pthread_t t;
    pthread_create(&t, NULL, other_thread, &ok);
    pthread_join(t, NULL);
    TC_CHECK(ok, "a new thread's current device is not (CPU, 0)");
}

static void streams(void)
{
    tc_context("streams");
    infinirtStream_t s = NULL;
    EXPECT(infinirtStreamCreate(NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infinirtStreamCreate(&s), INFINI_STATUS_SUCCESS);
    TC_CHECK(s != NULL, "NULL stream handle");
    EXPECT(infinirtStreamSynchronize(s), INFINI_STATUS_SUCCESS);
    EXPECT(infinirtStreamSynchronize(NULL), INFINI_STATUS_SUCCESS); /* the default stream */
    EXPECT(infinirtStreamDestroy(s), INFINI_STATUS_SUCCESS);
    EXPECT(infinirtStreamDestroy(s), INFINI_STATUS_BAD_PARAM);
    EXPECT(infinirtStreamSynchronize(s), INFINI_STATUS_BAD_PARAM);
    EXPECT(infinirtStreamDestroy(NULL), INFINI_STATUS_NULL_POINTER);
    int garbage[4];
    EXPECT(infinirtStreamDestroy(garbage), INFINI_STATUS_BAD_PARAM);
    /* aclrt streams live in the same registry */
    aclrtStream as = NULL;
    TC_CHECK(aclrtCreateStream(&as) == ACL_SUCCESS, "aclrtCreateStream");
    EXPECT(infinirtStreamSynchronize(as), INFINI_STATUS_SUCCESS);
    EXPECT(infinirtStreamDestroy(as), INFINI_STATUS_SUCCESS);
}

static void allocations(void)
{
    tc_context("allocations");
    void *p = (void *)(uintptr_t)1, *h = NULL;
    EXPECT(infinirtMalloc(NULL, 16), INFINI_STATUS_NULL_POINTER);
    EXPECT(infinirtMalloc(&p, 0), INFINI_STATUS_BAD_PARAM);
    TC_CHECK(p == NULL, "*p_ptr not cleared");
    EXPECT(infinirtMallocHost(NULL, 16), INFINI_STATUS_NULL_POINTER);
    EXPECT(infinirtMallocHost(&h, 0), INFINI_STATUS_BAD_PARAM);
    EXPECT(infinirtMalloc(&p, 100), INFINI_STATUS_SUCCESS);
    EXPECT(infinirtMallocHost(&h, 100), INFINI_STATUS_SUCCESS);
    TC_CHECK((uintptr_t)p % 64 == 0 && (uintptr_t)h % 64 == 0, "not 64-byte aligned");
    EXPECT(infinirtMalloc(&p, SIZE_MAX), INFINI_STATUS_INTERNAL_ERROR);
    TC_CHECK(p == NULL, "*p_ptr not cleared on exhaustion");
    EXPECT(infinirtMalloc(&p, 100), INFINI_STATUS_SUCCESS);
    EXPECT(infinirtFree(NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infinirtFree((char *)p + 8), INFINI_STATUS_BAD_PARAM); /* interior */
    EXPECT(infinirtFree(h), INFINI_STATUS_BAD_PARAM);             /* a host allocation */
    EXPECT(infinirtFreeHost(p), INFINI_STATUS_BAD_PARAM);         /* a device allocation */
    int local;
    EXPECT(infinirtFree(&local), INFINI_STATUS_BAD_PARAM);        /* foreign */
    EXPECT(infinirtFree(p), INFINI_STATUS_SUCCESS);
    EXPECT(infinirtFree(p), INFINI_STATUS_BAD_PARAM);             /* already freed */
    EXPECT(infinirtFreeHost(h), INFINI_STATUS_SUCCESS);
    EXPECT(infinirtFreeHost(h), INFINI_STATUS_BAD_PARAM);
    EXPECT(infinirtFreeHost(NULL), INFINI_STATUS_NULL_POINTER);

    /* one table with aclrt: each face frees the other's allocations of the same kind */
    void *a = NULL;
    EXPECT(infinirtMalloc(&a, 32), INFINI_STATUS_SUCCESS);
    TC_CHECK(aclrtFree(a) == ACL_SUCCESS, "aclrtFree of an infinirtMalloc allocation");
    TC_CHECK(aclrtMallocHost(&a, 32) == ACL_SUCCESS, "aclrtMallocHost");
    EXPECT(infinirtFree(a), INFINI_STATUS_BAD_PARAM);
    EXPECT(infinirtFreeHost(a), INFINI_STATUS_SUCCESS);
}

static void copies(void)
{
    tc_context("copies");
    unsigned char host[256], back[256];
    for (int k = 0; k < 256; k++)
        host[k] = (unsigned char)k;
    void *d = NULL, *hh = NULL, *acl = NULL;
    infinirtMalloc(&d, 128);
    infinirtMallocHost(&hh, 64);
    aclrtMalloc(&acl, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    EXPECT(infinirtMemcpy(NULL, NULL, 0, INFINIRT_MEMCPY_H2D), INFINI_STATUS_SUCCESS); /* nothing to do */
    EXPECT(infinirtMemcpy(NULL, host, 4, INFINIRT_MEMCPY_H2D), INFINI_STATUS_NULL_POINTER);
    EXPECT(infinirtMemcpy(d, NULL, 4, INFINIRT_MEMCPY_H2D), INFINI_STATUS_NULL_POINTER);
    EXPECT(infinirtMemcpy(d, host, 4, (infinirtMemcpyKind_t)4), INFINI_STATUS_BAD_PARAM);
    EXPECT(infinirtMemcpy(d, host, 4, (infinirtMemcpyKind_t)-1), INFINI_STATUS_BAD_PARAM);
    EXPECT(infinirtMemcpy(d, host, 128, INFINIRT_MEMCPY_H2D), INFINI_STATUS_SUCCESS);
    EXPECT(infinirtMemcpy(back, d, 128, INFINIRT_MEMCPY_D2H), INFINI_STATUS_SUCCESS);
    TC_CHECK(!memcmp(back, host, 128), "round trip");
    /* failures copy nothing */
    memset(back, 0, sizeof back);
    EXPECT(infinirtMemcpy(d, host, 129, INFINIRT_MEMCPY_H2D), INFINI_STATUS_BAD_PARAM);   /* past the end */
    EXPECT(infinirtMemcpy((char *)d + 64, host, 65, INFINIRT_MEMCPY_H2D), INFINI_STATUS_BAD_PARAM);
    EXPECT(infinirtMemcpy(back, d, 129, INFINIRT_MEMCPY_D2H), INFINI_STATUS_BAD_PARAM);
    EXPECT(infinirtMemcpy(back, host, 8, INFINIRT_MEMCPY_D2H), INFINI_STATUS_BAD_PARAM);  /* src not device */
    EXPECT(infinirtMemcpy(back, hh, 8, INFINIRT_MEMCPY_D2H), INFINI_STATUS_BAD_PARAM);    /* host allocation */
    EXPECT(infinirtMemcpy(host, d, 8, INFINIRT_MEMCPY_H2H), INFINI_STATUS_BAD_PARAM);     /* device as host */
    EXPECT(infinirtMemcpy(hh, host, 65, INFINIRT_MEMCPY_H2H), INFINI_STATUS_BAD_PARAM);   /* past a host allocation */
    EXPECT(infinirtMemcpy(d, back, 8, INFINIRT_MEMCPY_D2D), INFINI_STATUS_BAD_PARAM);     /* src not device */
    size_t zeros = 0;
    for (int k = 0; k < 256; k++)
        zeros += back[k] == 0;
    TC_CHECK(zeros == 256, "a failed copy wrote %zu bytes", 256 - zeros);
    EXPECT(infinirtMemcpy(hh, host, 64, INFINIRT_MEMCPY_H2H), INFINI_STATUS_SUCCESS);
    EXPECT(infinirtMemcpy(back, host, 256, INFINIRT_MEMCPY_H2H), INFINI_STATUS_SUCCESS); /* untracked: trusted */
    /* overlapping device-to-device copies behave like memmove */
    EXPECT(infinirtMemcpy((char *)d + 1, d, 100, INFINIRT_MEMCPY_D2D), INFINI_STATUS_SUCCESS);
    infinirtMemcpy(back, d, 128, INFINIRT_MEMCPY_D2H);
    TC_CHECK(back[0] == 0 && back[1] == 0 && back[2] == 1 && back[100] == 99 && back[101] == 101, "overlap");
    /* aclrtMalloc memory is device memory to infinirt too */
    EXPECT(infinirtMemcpy(acl, host, 64, INFINIRT_MEMCPY_H2D), INFINI_STATUS_SUCCESS);
    EXPECT(infinirtMemcpy(acl, host, 65, INFINIRT_MEMCPY_H2D), INFINI_STATUS_BAD_PARAM);
    EXPECT(infinirtMemcpy(d, acl, 64, INFINIRT_MEMCPY_D2D), INFINI_STATUS_SUCCESS);
    /* async: the stream is checked, the copy done before returning */
    infinirtStream_t s;
    infinirtStreamCreate(&s);
    memset(back, 0, sizeof back);
    EXPECT(infinirtMemcpyAsync(back, d, 64, INFINIRT_MEMCPY_D2H, s), INFINI_STATUS_SUCCESS);
    TC_CHECK(!memcmp(back, host, 64), "async copy");
    EXPECT(infinirtMemcpyAsync(back, d, 64, INFINIRT_MEMCPY_D2H, NULL), INFINI_STATUS_SUCCESS);
    EXPECT(infinirtMemcpyAsync(back, d, 129, INFINIRT_MEMCPY_D2H, s), INFINI_STATUS_BAD_PARAM);
    infinirtStreamDestroy(s);
    EXPECT(infinirtMemcpyAsync(back, d, 64, INFINIRT_MEMCPY_D2H, s), INFINI_STATUS_BAD_PARAM);
    infinirtFree(d);
    infinirtFreeHost(hh);
    aclrtFree(acl);
}

int main(void)
{
    devices();
    streams();
    allocations();
    copies();
    return tc_summary("infiniop_infinirt");
}
