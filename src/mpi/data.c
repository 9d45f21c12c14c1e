/* Caller tensors and the ring's own buffers: packing shards, element access, statistics order. */
#include <stdlib.h>
#include <string.h>

#include "ring.h"

void *ring_alloc(size_t count, size_t size, const char *what)
{
    if (count == 0 || size == 0)
        count = size = 1;
    if (count > SIZE_MAX / size) {
        ring_fail(FC_ERR_NO_MEMORY, "ring: %s needs more than SIZE_MAX bytes", what);
        return NULL;
    }
    void *p = malloc(count * size);
    if (!p)
        ring_fail(FC_ERR_NO_MEMORY, "ring: out of memory for %s (%zu bytes)", what, count * size);
    return p;
}

size_t ring_kv_bytes(const ring_ctx *c, int64_t rows)
{
    const double need = (double)c->B * (double)c->Nkv * (double)rows *
                        ((double)c->D * (double)fc_dtype_size(c->d->k.dtype) +
                         (double)c->Dv * (double)fc_dtype_size(c->d->v.dtype));
    return need >= (double)SIZE_MAX / 2 ? SIZE_MAX : (size_t)need;
}

static char *element(const fc_tensor *t, int64_t b, int64_t n, int64_t i, int64_t e)
{
    return (char *)t->data +
           (b * t->stride_batch + n * t->stride_head + i * t->stride_seq + e * t->stride_dim) *
               (int64_t)fc_dtype_size(t->dtype);
}

static void pack_one(const ring_ctx *c, const fc_tensor *t, int64_t dim, char *dst)
{
    const size_t es = fc_dtype_size(t->dtype);
    const int64_t rows = c->d->kv_len;
    for (int64_t b = 0; b < c->B; b++)
        for (int64_t n = 0; n < c->Nkv; n++)
            for (int64_t i = 0; i < rows; i++, dst += dim * es) {
                if (t->stride_dim == 1) {
                    memcpy(dst, element(t, b, n, i, 0), dim * es);
                    continue;
                }
                for (int64_t e = 0; e < dim; e++)
                    memcpy(dst + e * es, element(t, b, n, i, e), es);
            }
}

void ring_pack_kv(const ring_ctx *c, void *buf)
{
    const int64_t rows = c->d->kv_len;
    pack_one(c, &c->d->k, c->D, buf);
    pack_one(c, &c->d->v, c->Dv, (char *)buf + c->B * c->Nkv * rows * c->D * fc_dtype_size(c->d->k.dtype));
}

fc_tensor ring_kv_key(const ring_ctx *c, void *buf, int64_t rows, int64_t off)
{
    fc_tensor t = fc_tensor_bnsd(buf, c->d->k.dtype, c->Nkv, rows, c->D);
    t.data = (char *)buf + off * c->D * fc_dtype_size(t.dtype);
    return t;
}

fc_tensor ring_kv_value(const ring_ctx *c, void *buf, int64_t rows, int64_t off)
{
    char *v = (char *)buf + c->B * c->Nkv * rows * c->D * fc_dtype_size(c->d->k.dtype);
    fc_tensor t = fc_tensor_bnsd(v, c->d->v.dtype, c->Nkv, rows, c->Dv);
    t.data = v + off * c->Dv * fc_dtype_size(t.dtype);
    return t;
}

fc_tensor ring_rows(fc_tensor t, int64_t row)
{
    if (t.data)
        t.data = (char *)t.data + row * t.stride_seq * (int64_t)fc_dtype_size(t.dtype);
    return t;
}

float ring_load(const fc_tensor *t, int64_t b, int64_t n, int64_t i, int64_t e)
{
    const void *p = element(t, b, n, i, e);
    uint16_t h;
    switch (t->dtype) {
    case FC_F16: memcpy(&h, p, 2); return fc_f16_to_f32(h);
    case FC_BF16: memcpy(&h, p, 2); return fc_bf16_to_f32(h);
    default: { float f; memcpy(&f, p, 4); return f; }
    }
}

void ring_store_row(const fc_tensor *t, int64_t b, int64_t n, int64_t i, const float *x, int64_t len)
{
    char *p = element(t, b, n, i, 0);
    const int64_t step = t->stride_dim * (int64_t)fc_dtype_size(t->dtype);
    for (int64_t e = 0; e < len; e++, p += step) {
        const float v = x ? x[e] : 0.0f;
        uint16_t h;
        switch (t->dtype) {
        case FC_F16: h = fc_f32_to_f16(v); memcpy(p, &h, 2); break;
        case FC_BF16: h = fc_f32_to_bf16(v); memcpy(p, &h, 2); break;
        default: memcpy(p, &v, 4); break;
        }
    }
}

int64_t ring_stats_replicas(const ring_ctx *c) { return c->d->stats.replicas > 0 ? c->d->stats.replicas : 1; }

int64_t ring_stats_index(const ring_ctx *c, int64_t q_len, int64_t b, int64_t n, int64_t i)
{
    const int64_t r = ring_stats_replicas(c), G = c->Nq / c->Nkv, n2 = n / G, gi = n % G;
    switch (c->d->stats.order) {
    case FC_STATS_TOKEN_MAJOR: return ((b * q_len + i) * c->Nq + n) * r;
    case FC_STATS_KV_GROUP: return ((b * c->Nkv + n2) * q_len + i) * G + gi;
    case FC_STATS_KV_TOKEN_GROUP: return (n2 * c->B * q_len + b * q_len + i) * G + gi;
    default: return ((b * c->Nq + n) * q_len + i) * r;
    }
}
