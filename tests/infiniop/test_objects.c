/*
 * infiniop objects (semantics §7.2): handles, tensor descriptors (copies, NULL strides =
 * contiguous, validation), the device queries of operator descriptors, descriptors outliving
 * their handle and tensor descriptors, and the exact workspace size (the wide-mask bytes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void handles(void)
{
    tc_context("handles");
    infiniopHandle_t h = NULL;
    EXPECT(infiniopCreateHandle(NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopCreateHandle(&h), INFINI_STATUS_SUCCESS);
    TC_CHECK(h != NULL, "no handle");
    TC_CHECK(((const int *)h)[0] == INFINI_DEVICE_CPU && ((const int *)h)[1] == 0, "handle begins with (device, id)");
    EXPECT(infiniopDestroyHandle(NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopDestroyHandle(h), INFINI_STATUS_SUCCESS);
    EXPECT(infiniopDestroyHandle(h), INFINI_STATUS_BAD_PARAM);
    int garbage[4] = {0};
    EXPECT(infiniopDestroyHandle((infiniopHandle_t)garbage), INFINI_STATUS_BAD_PARAM);
}

static void tensor_descriptors(void)
{
    tc_context("tensor descriptors");
    infiniopTensorDescriptor_t d = (infiniopTensorDescriptor_t)(uintptr_t)0x99;
    const size_t shape[3] = {2, 3, 4};
    const ptrdiff_t strides[3] = {-12, 0, 1};
    EXPECT(infiniopCreateTensorDescriptor(NULL, 3, shape, NULL, INFINI_DTYPE_F32), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopCreateTensorDescriptor(&d, 3, NULL, NULL, INFINI_DTYPE_F32), INFINI_STATUS_NULL_POINTER);
    TC_CHECK(d == NULL, "*desc_ptr not cleared");
    EXPECT(infiniopCreateTensorDescriptor(&d, 3, shape, NULL, (infiniDtype_t)20), INFINI_STATUS_BAD_TENSOR_DTYPE);
    EXPECT(infiniopCreateTensorDescriptor(&d, 3, shape, NULL, (infiniDtype_t)-1), INFINI_STATUS_BAD_TENSOR_DTYPE);
    const size_t huge[2] = {(size_t)PTRDIFF_MAX + 1, 1};
    EXPECT(infiniopCreateTensorDescriptor(&d, 2, huge, NULL, INFINI_DTYPE_F32), INFINI_STATUS_BAD_TENSOR_SHAPE);
    const size_t overflow[3] = {(size_t)1 << 40, (size_t)1 << 40, 2};
    EXPECT(infiniopCreateTensorDescriptor(&d, 3, overflow, NULL, INFINI_DTYPE_F32), INFINI_STATUS_BAD_TENSOR_SHAPE);
    /* every dtype of the enum, scalars, zero-sized dims, 0 and negative strides are descriptors */
    for (int dt = INFINI_DTYPE_INVALID; dt <= INFINI_DTYPE_BF16; dt++) {
        EXPECT(infiniopCreateTensorDescriptor(&d, 3, shape, strides, (infiniDtype_t)dt), INFINI_STATUS_SUCCESS);
        EXPECT(infiniopDestroyTensorDescriptor(d), INFINI_STATUS_SUCCESS);
    }
    EXPECT(infiniopCreateTensorDescriptor(&d, 0, NULL, NULL, INFINI_DTYPE_F32), INFINI_STATUS_SUCCESS);
    EXPECT(infiniopDestroyTensorDescriptor(d), INFINI_STATUS_SUCCESS);
    const size_t empty[2] = {0, 5};
    EXPECT(infiniopCreateTensorDescriptor(&d, 2, empty, NULL, INFINI_DTYPE_F32), INFINI_STATUS_SUCCESS);
    EXPECT(infiniopDestroyTensorDescriptor(d), INFINI_STATUS_SUCCESS);
    EXPECT(infiniopDestroyTensorDescriptor(d), INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopDestroyTensorDescriptor(NULL), INFINI_STATUS_NULL_POINTER);
    infiniopHandle_t h;
    infiniopCreateHandle(&h);
    EXPECT(infiniopDestroyTensorDescriptor((infiniopTensorDescriptor_t)h), INFINI_STATUS_BAD_PARAM); /* wrong kind */
    EXPECT(infiniopDestroyHandle(h), INFINI_STATUS_SUCCESS);
}

/* Creates the (2, 4, 8, 16) F32 case with a (2, 12) mask of dtype mdt (0 = none); the arrays the
 * descriptor was made from are scribbled over and freed right after, to show it copied them. */
static infiniopFlashAttentionDescriptor_t create_case(infiniopHandle_t h, infiniDtype_t mdt)
{
    size_t *shape = malloc(4 * sizeof *shape);
    infiniopTensorDescriptor_t t[5] = {NULL};
    const size_t qs[4] = {2, 4, 8, 16}, ks[4] = {2, 2, 12, 16}, ms[2] = {2, 12};
    for (int x = 0; x < 4; x++) {
        memcpy(shape, x < 2 ? qs : ks, sizeof qs);
        infiniopCreateTensorDescriptor(&t[x], 4, shape, NULL, INFINI_DTYPE_F32);
        memset(shape, 0xFF, 4 * sizeof *shape);
    }
    if (mdt)
        infiniopCreateTensorDescriptor(&t[4], 2, ms, NULL, mdt);
    free(shape);
    infiniopFlashAttentionDescriptor_t fa = NULL;
    EXPECT(infiniopCreateFlashAttentionDescriptor(h, &fa, t[0], t[1], t[2], t[3], t[4]), INFINI_STATUS_SUCCESS);
    for (int x = 0; x < 5; x++)
        if (t[x])
            infiniopDestroyTensorDescriptor(t[x]);
    return fa;
}

static void descriptor_queries(void)
{
    tc_context("descriptor device queries");
    infiniopHandle_t h;
    infiniopCreateHandle(&h);
    infiniopFlashAttentionDescriptor_t fa = create_case(h, INFINI_DTYPE_BOOL);
    EXPECT(infiniopDestroyHandle(h), INFINI_STATUS_SUCCESS); /* the descriptor copied the device */
    infiniDevice_t dev = INFINI_DEVICE_ALI;
    int id = -1;
    EXPECT(infiniopGetDescriptorDeviceType(fa, &dev), INFINI_STATUS_SUCCESS);
    EXPECT(infiniopGetDescriptorDeviceId(fa, &id), INFINI_STATUS_SUCCESS);
    TC_CHECK(dev == INFINI_DEVICE_CPU && id == 0, "device %d id %d", (int)dev, id);
    TC_CHECK(((const int *)fa)[0] == INFINI_DEVICE_CPU && ((const int *)fa)[1] == 0, "descriptor begins with (device, id)");
    EXPECT(infiniopGetDescriptorDeviceType(NULL, &dev), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopGetDescriptorDeviceType(fa, NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopGetDescriptorDeviceId(NULL, &id), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopGetDescriptorDeviceId(fa, NULL), INFINI_STATUS_NULL_POINTER);
    infiniopTensorDescriptor_t t;
    const size_t s1[1] = {3};
    infiniopCreateTensorDescriptor(&t, 1, s1, NULL, INFINI_DTYPE_F32);
    EXPECT(infiniopGetDescriptorDeviceType((const struct InfiniopDescriptor *)(const void *)t, &dev), INFINI_STATUS_BAD_PARAM);
    infiniopDestroyTensorDescriptor(t);

    /* it still runs after its handle and tensor descriptors are gone */
    size_t ws;
    EXPECT(infiniopGetFlashAttentionWorkspaceSize(fa, &ws), INFINI_STATUS_SUCCESS);
    float *q = calloc(2 * 4 * 8 * 16, sizeof *q), *out = calloc(2 * 4 * 8 * 16, sizeof *out);
    float *kv = calloc(2 * 2 * 12 * 16, sizeof *kv);
    for (int k = 0; k < 2 * 2 * 12 * 16; k++)
        kv[k] = (float)(k % 7);
    void *w = malloc(ws);
    EXPECT(infiniopFlashAttention(fa, w, ws, out, q, kv, kv, NULL, NULL), INFINI_STATUS_SUCCESS);
    /* q = 0: uniform attention, out = the mean of v over the 12 keys */
    double mean = 0;
    for (int j = 0; j < 12; j++)
        mean += kv[j * 16 + 3];
    TC_CHECK(out[3] > mean / 12 - 1e-4 && out[3] < mean / 12 + 1e-4, "out %g, want %g", out[3], mean / 12);
    free(w), free(q), free(out), free(kv);
    EXPECT(infiniopDestroyFlashAttentionDescriptor(fa), INFINI_STATUS_SUCCESS);
    EXPECT(infiniopGetDescriptorDeviceType(fa, &dev), INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopGetDescriptorDeviceId(fa, &id), INFINI_STATUS_BAD_PARAM);
}

/* The reported size is exact: wide masks add exactly one byte per (mask row, key). */
static void workspace_sizes(void)
{
    tc_context("workspace sizes");
    size_t none, byte_mask[4], wide[6];
    infiniopFlashAttentionDescriptor_t fa = create_case(ifa_handle(), (infiniDtype_t)0);
    infiniopGetFlashAttentionWorkspaceSize(fa, &none);
    infiniopDestroyFlashAttentionDescriptor(fa);
    const infiniDtype_t bytes[4] = {INFINI_DTYPE_BOOL, INFINI_DTYPE_BYTE, INFINI_DTYPE_I8, INFINI_DTYPE_U8};
    const infiniDtype_t wides[6] = {INFINI_DTYPE_I16, INFINI_DTYPE_I32, INFINI_DTYPE_I64,
                                    INFINI_DTYPE_U16, INFINI_DTYPE_U32, INFINI_DTYPE_U64};
    for (int k = 0; k < 4; k++) {
        fa = create_case(ifa_handle(), bytes[k]);
        infiniopGetFlashAttentionWorkspaceSize(fa, &byte_mask[k]);
        infiniopDestroyFlashAttentionDescriptor(fa);
        TC_CHECK(byte_mask[k] == none, "byte mask dtype %d: %zu, without mask %zu", (int)bytes[k], byte_mask[k], none);
    }
    for (int k = 0; k < 6; k++) {
        fa = create_case(ifa_handle(), wides[k]);
        infiniopGetFlashAttentionWorkspaceSize(fa, &wide[k]);
        infiniopDestroyFlashAttentionDescriptor(fa);
        TC_CHECK(wide[k] == none + 2 * 12, "wide mask dtype %d: %zu, want %zu", (int)wides[k], wide[k], none + 24);
    }
}

int main(void)
{
    handles();
    tensor_descriptors();
    descriptor_queries();
    workspace_sizes();
    return tc_summary("infiniop_objects");
}
