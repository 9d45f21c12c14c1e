/* Device tensors for the CANN tests: a host image laid out with chosen strides, uploaded with
 * aclrtMalloc + aclrtMemcpy, wrapped in an aclTensor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

size_t dt_esize(aclDataType dt)
{
    return aclDataTypeSize(dt);
}

void dt_layout(dev_tensor *x, aclDataType dt, int rank, const int64_t *dims, fa_strides st, unsigned char fill_byte)
{
    memset(x, 0, sizeof *x);
    x->dt = dt;
    x->rank = rank;
    for (int k = 0; k < rank; k++)
        x->dims[k] = dims[k];
    int64_t run = 1;
    if (st == ST_REVERSED) {
        for (int k = 0; k < rank; k++) {
            x->strides[k] = run;
            run *= dims[k];
        }
    } else {
        for (int k = rank - 1; k >= 0; k--) {
            x->strides[k] = st == ST_GAPS ? 2 * run : run;
            run *= st == ST_GAPS ? 2 * dims[k] : dims[k];
        }
        x->offset = st == ST_GAPS ? 3 : 0;
    }
    int64_t hi = x->offset;
    for (int k = 0; k < rank; k++)
        hi += (dims[k] - 1) * x->strides[k];
    x->bytes = (size_t)(hi + 1 + (st == ST_GAPS ? 2 : 0)) * dt_esize(dt);
    x->host = malloc(x->bytes);
    memset(x->host, fill_byte, x->bytes);
}

int64_t dt_at(const dev_tensor *x, const int64_t *idx)
{
    int64_t e = x->offset;
    for (int k = 0; k < x->rank; k++)
        e += idx[k] * x->strides[k];
    return e;
}

void dt_set(dev_tensor *x, const int64_t *idx, double v)
{
    const int64_t e = dt_at(x, idx);
    switch (x->dt) {
    case ACL_FLOAT: tc_store(TC_F32, x->host, e, v); break;
    case ACL_FLOAT16: tc_store(TC_F16, x->host, e, v); break;
    case ACL_BF16: tc_store(TC_BF16, x->host, e, v); break;
    case ACL_INT64: ((int64_t *)x->host)[e] = (int64_t)v; break;
    default: x->host[e] = (unsigned char)v; break; /* BOOL, UINT8 */
    }
}

double dt_get(const dev_tensor *x, const unsigned char *image, const int64_t *idx)
{
    const int64_t e = dt_at(x, idx);
    switch (x->dt) {
    case ACL_FLOAT: return tc_load(TC_F32, image, e);
    case ACL_FLOAT16: return tc_load(TC_F16, image, e);
    case ACL_BF16: return tc_load(TC_BF16, image, e);
    default: return image[e];
    }
}

void dt_upload(dev_tensor *x)
{
    if (aclrtMalloc(&x->dev, x->bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMemcpy(x->dev, x->bytes, x->host, x->bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) {
        fprintf(stderr, "dt_upload: runtime failure: %s\n", aclGetRecentErrMsg());
        abort();
    }
    x->t = aclCreateTensor(x->dims, (uint64_t)x->rank, x->dt, x->strides, x->offset, ACL_FORMAT_ND, NULL, 0, x->dev);
}

unsigned char *dt_download(const dev_tensor *x)
{
    unsigned char *img = malloc(x->bytes);
    if (aclrtMemcpy(img, x->bytes, x->dev, x->bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) {
        fprintf(stderr, "dt_download: runtime failure: %s\n", aclGetRecentErrMsg());
        abort();
    }
    return img;
}

void dt_free(dev_tensor *x)
{
    if (x->t)
        aclDestroyTensor(x->t);
    if (x->dev)
        aclrtFree(x->dev);
    free(x->host);
    memset(x, 0, sizeof *x);
}

dev_tensor dt_simple(aclDataType dt, int rank, const int64_t *dims)
{
    dev_tensor x;
    dt_layout(&x, dt, rank, dims, ST_CONTIGUOUS, 0);
    dt_upload(&x);
    return x;
}
