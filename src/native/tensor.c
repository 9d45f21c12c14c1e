/* Constructors for the common contiguous layouts and dtype sizes of the native API. */
#include "../core/dtype.h"

size_t fc_dtype_size(fc_dtype dtype) { return (size_t)fc_dtype_bytes(dtype); }

static fc_tensor make(void *data, fc_dtype dtype, int64_t sb, int64_t sn, int64_t ss)
{
    fc_tensor t = {.data = data, .dtype = dtype, .stride_batch = sb, .stride_head = sn, .stride_seq = ss, .stride_dim = 1};
    return t;
}

fc_tensor fc_tensor_bnsd(void *data, fc_dtype dtype, int64_t n, int64_t s, int64_t e)
{
    return make(data, dtype, n * s * e, s * e, e);
}

fc_tensor fc_tensor_bsnd(void *data, fc_dtype dtype, int64_t n, int64_t s, int64_t e)
{
    return make(data, dtype, s * n * e, e, n * e);
}

fc_tensor fc_tensor_sbnd(void *data, fc_dtype dtype, int64_t b, int64_t n, int64_t e)
{
    return make(data, dtype, n * e, e, b * n * e);
}

fc_tensor fc_tensor_tnd(void *data, fc_dtype dtype, int64_t n, int64_t e)
{
    return make(data, dtype, 0, e, n * e);
}
