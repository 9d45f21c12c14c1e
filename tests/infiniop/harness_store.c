/* Stored tensors (strided host images, optionally in infinirt allocations) and element helpers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Strides of row-major storage over dims taken in the order `order` (outermost first), each dim
 * padded by pad[k] elements. */
static void row_major(st_tensor *t, const int *order, const size_t *pad)
{
    int64_t run = 1;
    for (int m = t->rank - 1; m >= 0; m--) {
        const int k = order[m];
        t->strides[k] = run;
        run *= (int64_t)(t->shape[k] + pad[k]);
    }
}

void st_layout(st_tensor *t, int rank, const size_t *shape, size_t esize, ifa_layout lay, unsigned char fill)
{
    memset(t, 0, sizeof *t);
    t->rank = rank;
    t->esize = esize;
    int order[4] = {0, 1, 2, 3};
    size_t pad[4] = {0, 0, 0, 0};
    for (int k = 0; k < rank; k++)
        t->shape[k] = shape[k];
    if (lay == LAY_GAPS)
        for (int k = 0; k < rank; k++)
            pad[k] = k == rank - 1 ? 3 : 1;
    if (lay == LAY_PERMUTED && rank >= 3) {
        order[rank - 3] = rank - 2;
        order[rank - 2] = rank - 3;
    }
    row_major(t, order, pad);
    if (lay == LAY_BROADCAST && rank > 1)
        t->strides[0] = 0;
    int64_t lo = 0, hi = 0;
    for (int k = 0; k < rank; k++) {
        if (lay == LAY_NEGATIVE && k < rank - 1)
            t->strides[k] = -t->strides[k];
        const int64_t ext = (int64_t)(t->shape[k] - 1) * t->strides[k];
        if (ext < 0)
            lo += ext;
        else
            hi += ext;
    }
    const int64_t lead = lay == LAY_GAPS ? 2 : 0, tail = lay == LAY_GAPS ? 5 : 0;
    t->base = lead - lo;
    t->bytes = (size_t)(t->base + hi + 1 + tail) * esize;
    t->host = malloc(t->bytes);
    memset(t->host, fill, t->bytes);
}

int64_t st_offset(const st_tensor *t, const int64_t *idx)
{
    int64_t e = t->base;
    for (int k = 0; k < t->rank; k++)
        e += idx[k] * t->strides[k];
    return e;
}

void st_place(st_tensor *t, bool runtime)
{
    unsigned char *at = t->host;
    if (runtime) {
        void *p = NULL;
        if (infinirtMalloc(&p, t->bytes) != INFINI_STATUS_SUCCESS ||
            infinirtMemcpy(p, t->host, t->bytes, INFINIRT_MEMCPY_H2D) != INFINI_STATUS_SUCCESS) {
            fprintf(stderr, "st_place: infinirt failed\n");
            abort();
        }
        t->alloc = at = p;
    }
    t->data = at + t->base * (int64_t)t->esize;
}

void st_fetch(st_tensor *t)
{
    if (t->alloc && infinirtMemcpy(t->host, t->alloc, t->bytes, INFINIRT_MEMCPY_D2H) != INFINI_STATUS_SUCCESS) {
        fprintf(stderr, "st_fetch: infinirtMemcpy failed\n");
        abort();
    }
}

void st_free(st_tensor *t)
{
    if (t->alloc)
        infinirtFree(t->alloc);
    free(t->host);
    memset(t, 0, sizeof *t);
}

infiniopTensorDescriptor_t st_desc(const st_tensor *t, infiniDtype_t dt)
{
    infiniopTensorDescriptor_t d = NULL;
    if (infiniopCreateTensorDescriptor(&d, (size_t)t->rank, t->shape, t->strides, dt) != INFINI_STATUS_SUCCESS) {
        fprintf(stderr, "st_desc: infiniopCreateTensorDescriptor failed\n");
        abort();
    }
    return d;
}

infiniDtype_t ifa_dtype(tc_dtype t)
{
    return t == TC_F16 ? INFINI_DTYPE_F16 : t == TC_BF16 ? INFINI_DTYPE_BF16 : INFINI_DTYPE_F32;
}

size_t mask_esize(infiniDtype_t dt)
{
    switch (dt) {
    case INFINI_DTYPE_I16: case INFINI_DTYPE_U16: return 2;
    case INFINI_DTYPE_I32: case INFINI_DTYPE_U32: return 4;
    case INFINI_DTYPE_I64: case INFINI_DTYPE_U64: return 8;
    default: return 1;
    }
}

void mask_store(infiniDtype_t dt, void *base, int64_t k, int64_t v)
{
    switch (mask_esize(dt)) {
    case 2: ((uint16_t *)base)[k] = (uint16_t)v; break;
    case 4: ((uint32_t *)base)[k] = (uint32_t)v; break;
    case 8: ((uint64_t *)base)[k] = (uint64_t)v; break;
    default: ((uint8_t *)base)[k] = (uint8_t)v; break;
    }
}

int64_t mask_load(infiniDtype_t dt, const void *base, int64_t k)
{
    switch (mask_esize(dt)) {
    case 2: return ((const uint16_t *)base)[k];
    case 4: return ((const uint32_t *)base)[k];
    case 8: return (int64_t)((const uint64_t *)base)[k];
    default: return ((const uint8_t *)base)[k];
    }
}

int64_t mask_hidden_value(infiniDtype_t dt, int k)
{
    const bool is_signed = dt == INFINI_DTYPE_I8 || dt == INFINI_DTYPE_I16 || dt == INFINI_DTYPE_I32 || dt == INFINI_DTYPE_I64;
    switch (mask_esize(dt)) {
    case 2: { const int64_t v[3] = {256, 1, is_signed ? -256 : 0x8000}; return v[k % 3]; }
    case 4: { const int64_t v[3] = {65536, 1 << 8, is_signed ? -1 : (int64_t)0x80000000u}; return v[k % 3]; }
    case 8: { const int64_t v[3] = {(int64_t)1 << 40, (int64_t)1 << 32, is_signed ? INT64_MIN : -1}; return v[k % 3]; }
    default:
        if (dt == INFINI_DTYPE_BOOL)
            return 1;
        { const int64_t v[3] = {1, 0x80, 0xFF}; return v[k % 3]; }
    }
}
