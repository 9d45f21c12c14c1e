/*
 * Operand access: where a row of an operand lives, and fp32 loads and stores of rows in every
 * dtype (fp16/bf16/fp32; int8 through a per-channel affine map; int8 output quantisation).
 */
#ifndef FC_KERNELS_OPERAND_H
#define FC_KERNELS_OPERAND_H

#include "rows.h"


/* Row (n, s) of a query-side or kv-side operand of the item's batch. */
static inline const char *fc_q_row(const fc_view *v, const fc_rows *rw, int64_t n, int64_t s)
{
    return fc_view_row(v, fc_dtype_bytes(v->dtype), rw->b, rw->bt->q_tok, n, s);
}
/* Where a kv tile lives: batch, its kv token offset and the kv head. */
typedef struct fc_kv_at {
    int64_t b, tok, n2;
} fc_kv_at;

static inline fc_kv_at fc_kv_at_rows(const fc_rows *rw)
{
    fc_kv_at at = {rw->b, rw->bt->kv_tok, rw->n2};
    return at;
}

static inline const char *fc_kv_row(const fc_view *v, fc_kv_at at, int64_t s)
{
    return fc_view_row(v, fc_dtype_bytes(v->dtype), at.b, at.tok, at.n2, s);
}

static inline float fc_load_scalar(const char *p, fc_dtype dt)
{
    switch (dt) {
    case FC_F16: return fc_f16_to_f32_inline(*(const uint16_t *)p);
    case FC_BF16: return fc_bf16_to_f32_inline(*(const uint16_t *)p);
    case FC_I8: return (float)*(const int8_t *)p;
    case FC_U8: return (float)*(const uint8_t *)p;
    default: return *(const float *)p;
    }
}

/* The byte step between the n features of a row at element stride se.  The checked extent bounds
 * the strides of dims with more than one element only: a single feature's stride may be anything
 * (even INT64_MAX) and is never stepped along, so it is not multiplied. */
static inline int64_t fc_feature_step(fc_dtype dt, int64_t se, int n)
{
    return n > 1 ? fc_dtype_bytes(dt) * se : 0;
}

/* dst[0..n) = row[e·se] converted to fp32. */
static inline void fc_load_row(float *dst, const char *row, fc_dtype dt, int64_t se, int n)
{
    int e = 0;
    if (se == 1) {
        switch (dt) {
        case FC_F32: memcpy(dst, row, (size_t)n * 4); return;
        case FC_F16: /* four vectors a pass: at one, NEON's 4-lane loop spent half its instructions counting */
            for (; e + 4 * FC_W <= n; e += 4 * FC_W)
                for (int u = 0; u < 4 * FC_W; u += FC_W)
                    v_store(dst + e + u, v_load_f16((const uint16_t *)row + e + u));
            for (; e + FC_W <= n; e += FC_W) v_store(dst + e, v_load_f16((const uint16_t *)row + e));
            break;
        case FC_BF16:
#if FC_WIDEN_BF16_BY_ELEMENT /* see simd.h */
            for (; e < n; e++)
                dst[e] = fc_bf16_to_f32_inline(((const uint16_t *)row)[e]);
#else
            for (; e + 4 * FC_W <= n; e += 4 * FC_W)
                for (int u = 0; u < 4 * FC_W; u += FC_W)
                    v_store(dst + e + u, v_load_bf16((const uint16_t *)row + e + u));
            for (; e + FC_W <= n; e += FC_W) v_store(dst + e, v_load_bf16((const uint16_t *)row + e));
#endif
            break;
        default: break;
        }
    }
    const int64_t es = fc_feature_step(dt, se, n);
    for (; e < n; e++)
        dst[e] = fc_load_scalar(row + e * es, dt);
}

/* int8 output quantisation (semantics §4.6): x·scale + offset in fp32, rounded to fp16, then to
 * an integer half-to-even, saturated to [−128, 127]; NaN → 0. */
static inline int8_t fc_quantize_i8(float x, float scale, float offset)
{
    const float h = fc_f16_to_f32_inline(fc_f32_to_f16_inline(x * scale + offset));
    if (h != h)
        return 0;
    const float r = nearbyintf(h); /* the default rounding mode: to nearest, ties to even */
    return (int8_t)(r > 127.0f ? 127 : r < -128.0f ? -128 : (int)r);
}

/* Store n fp32 values to a row of any float dtype, rounding to nearest even. */
static inline void fc_store_row(char *row, fc_dtype dt, int64_t se, const float *src, int n)
{
    const int64_t es = fc_feature_step(dt, se, n);
    switch (dt) {
    case FC_F32:
        if (se == 1) { memcpy(row, src, (size_t)n * 4); return; }
        for (int e = 0; e < n; e++) *(float *)(row + e * es) = src[e];
        return;
    case FC_F16:
        for (int e = 0; e < n; e++) *(uint16_t *)(row + e * es) = fc_f32_to_f16_inline(src[e]);
        return;
    case FC_BF16: {
        int e = 0;
        if (se == 1)
            for (; e + FC_W <= n; e += FC_W) v_store_bf16((uint16_t *)row + e, v_load(src + e));
        for (; e < n; e++) *(uint16_t *)(row + e * es) = fc_f32_to_bf16_inline(src[e]);
        return;
    }
    default: return;
    }
}

/* The per-channel values of an affine map for head n: scale[e], offset[e] (0 without offsets). */
static inline void fc_affine_load(const fc_affine_view *a, int64_t n, int width, float *scale, float *offset)
{
    const int64_t es = fc_dtype_bytes(a->dtype);
    for (int e = 0; e < width; e++) {
        const int64_t at = (n * a->sn + e * a->se) * es;
        scale[e] = fc_load_scalar(a->scale + at, a->dtype);
        offset[e] = a->offset ? fc_load_scalar(a->offset + at, a->dtype) : 0.0f;
    }
}

/* dst[e] = (x[e] + offset[e])·scale[e] for an int8 row (unit stride vectorised). */
static inline void fc_load_row_i8(float *dst, const int8_t *row, int64_t se, int n, const float *scale,
                                  const float *offset)
{
    int e = 0;
    if (se == 1)
        for (; e + FC_W <= n; e += FC_W)
            v_store(dst + e, v_mul(v_add(v_load_i8(row + e), v_load(offset + e)), v_load(scale + e)));
    for (; e < n; e++)
        dst[e] = ((float)row[e * se] + offset[e]) * scale[e];
}

#endif /* FC_KERNELS_OPERAND_H */
