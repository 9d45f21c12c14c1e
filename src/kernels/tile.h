/*
 * The pieces of a query-tile × kv-tile loop shared by the forward and backward kernels:
 * the rows of a work item and what each row sees, kv-tile classification, and packing of operand
 * rows into fp32 buffers.
 *
 * A work item is a set of query rows of one batch that share a kv head: heads
 * [n_first, n_first + n_count) × positions [i0, i0 + i_count), row r = h·i_count + i.
 * Score tiles are stored transposed, S[j][r] (kv column major), so per-row softmax work runs
 * down vector lanes without horizontal reductions.
 */
#ifndef FC_KERNELS_TILE_H
#define FC_KERNELS_TILE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "../core/dtype.h"
#include "../core/problem.h"
#include "../core/visibility.h"
#include "../cpu/work.h"
#include "simd.h"

static inline int64_t fc_round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* What one row sees: columns in [lo1, hi1) ∪ [lo2, hi2), stored as floats (exact below 2^24)
 * so that visibility tests vectorize. */
typedef struct fc_rows {
    int count, padded;       /* R rows, Rp = R rounded up to FC_W */
    const fc_batch *bt;
    int64_t b, n2;
    int32_t *head;           /* query head of each row */
    int64_t *pos;            /* position of each row in its batch */
    float *lo1, *hi1, *lo2, *hi2;
    float *slope, *apos;     /* ALiBi: x −= slope·|j − apos| per row (when the problem has ALiBi) */
    int64_t kv_begin, kv_end; /* union of the rows' visible columns, [kv_begin, kv_end) */
} fc_rows;

/* The rows of an item and their visible spans. */
static inline void fc_rows_init(fc_rows *rw, const fc_problem *p, const fc_item *it)
{
    const fc_batch *bt = &p->batch[it->b];
    rw->bt = bt;
    rw->b = it->b;
    rw->n2 = it->n_first / p->G;
    rw->count = it->n_count * it->i_count;
    rw->padded = (int)fc_round_up(rw->count, FC_W);
    rw->kv_begin = bt->skv;
    rw->kv_end = 0;
    for (int r = 0; r < rw->padded; r++) {
        float lo1 = 0, hi1 = 0, lo2 = 0, hi2 = 0;
        if (r < rw->count) {
            const int64_t i = it->i0 + r % it->i_count;
            rw->head[r] = (int32_t)(it->n_first + r / it->i_count);
            rw->pos[r] = i;
            int64_t sp[4];
            if (fc_row_spans(bt, i, sp) > 0) {
                lo1 = (float)sp[0], hi1 = (float)sp[1], lo2 = (float)sp[2], hi2 = (float)sp[3];
                const int64_t first = sp[1] > sp[0] ? sp[0] : sp[2], last = sp[3] > sp[2] ? sp[3] : sp[1];
                rw->kv_begin = first < rw->kv_begin ? first : rw->kv_begin;
                rw->kv_end = last > rw->kv_end ? last : rw->kv_end;
            }
        } else {
            rw->head[r] = rw->head[0];
            rw->pos[r] = rw->pos[0];
        }
        rw->lo1[r] = lo1, rw->hi1[r] = hi1, rw->lo2[r] = lo2, rw->hi2[r] = hi2;
        if (p->alibi.slopes) {
            rw->slope[r] = p->alibi.slopes[it->b * p->alibi.sb + rw->head[r] * p->alibi.sn];
            rw->apos[r] = (float)(rw->pos[r] - bt->alibi_dpos);
        }
    }
    if (rw->kv_begin >= rw->kv_end)
        rw->kv_begin = rw->kv_end = 0;
}

typedef enum { FC_TILE_SKIP, FC_TILE_PARTIAL, FC_TILE_FULL } fc_tile_kind;

/* Whether kv columns [j0, j1) are invisible to every row, visible to every row, or in between. */
static inline fc_tile_kind fc_rows_classify(const fc_rows *rw, int64_t j0, int64_t j1)
{
    bool any = false, all = true;
    const float a = (float)j0, z = (float)j1;
    for (int r = 0; r < rw->count; r++) {
        const bool touch1 = rw->lo1[r] < z && a < rw->hi1[r];
        const bool touch2 = rw->lo2[r] < z && a < rw->hi2[r];
        any |= touch1 | touch2;
        all &= (rw->lo1[r] <= a && z <= rw->hi1[r]) || (rw->lo2[r] <= a && z <= rw->hi2[r]);
    }
    return !any ? FC_TILE_SKIP : all ? FC_TILE_FULL : FC_TILE_PARTIAL;
}

/* ---------------------------------------------------------------------------------------------- */
/* Operand access                                                                                 */

/* Row (n, s) of a query-side or kv-side operand of the item's batch. */
static inline const char *fc_q_row(const fc_view *v, const fc_rows *rw, int64_t n, int64_t s)
{
    return fc_view_row(v, fc_dtype_bytes(v->dtype), rw->b, rw->bt->q_tok, n, s);
}
static inline const char *fc_kv_row(const fc_view *v, const fc_rows *rw, int64_t n, int64_t s)
{
    return fc_view_row(v, fc_dtype_bytes(v->dtype), rw->b, rw->bt->kv_tok, n, s);
}

static inline float fc_load_scalar(const char *p, fc_dtype dt)
{
    switch (dt) {
    case FC_F16: return fc_f16_to_f32(*(const uint16_t *)p);
    case FC_BF16: return fc_bf16_to_f32(*(const uint16_t *)p);
    case FC_I8: return (float)*(const int8_t *)p;
    case FC_U8: return (float)*(const uint8_t *)p;
    default: return *(const float *)p;
    }
}

/* dst[0..n) = row[e·se] converted to fp32. */
static inline void fc_load_row(float *dst, const char *row, fc_dtype dt, int64_t se, int n)
{
    int e = 0;
    if (se == 1) {
        switch (dt) {
        case FC_F32: memcpy(dst, row, (size_t)n * 4); return;
        case FC_F16:
            for (; e + FC_W <= n; e += FC_W) v_store(dst + e, v_load_f16((const uint16_t *)row + e));
            break;
        case FC_BF16:
            for (; e + FC_W <= n; e += FC_W) v_store(dst + e, v_load_bf16((const uint16_t *)row + e));
            break;
        default: break;
        }
    }
    const int64_t es = fc_dtype_bytes(dt) * se;
    for (; e < n; e++)
        dst[e] = fc_load_scalar(row + e * es, dt);
}

/* Store n fp32 values to a row of any float dtype, rounding to nearest even. */
static inline void fc_store_row(char *row, fc_dtype dt, int64_t se, const float *src, int n)
{
    const int64_t es = fc_dtype_bytes(dt) * se;
    switch (dt) {
    case FC_F32:
        if (se == 1) { memcpy(row, src, (size_t)n * 4); return; }
        for (int e = 0; e < n; e++) *(float *)(row + e * es) = src[e];
        return;
    case FC_F16:
        for (int e = 0; e < n; e++) *(uint16_t *)(row + e * es) = fc_f32_to_f16(src[e]);
        return;
    case FC_BF16:
        for (int e = 0; e < n; e++) *(uint16_t *)(row + e * es) = fc_f32_to_bf16(src[e]);
        return;
    default: return;
    }
}

/* QT[e][r] (row stride Rp): the item's query rows, transposed, with the rope features appended
 * after the first Dqk features; padding rows are zero. */
static inline void fc_pack_q_transposed(float *qt, float *scratch, const fc_problem *p, const fc_rows *rw)
{
    const int Dqk = (int)p->Dqk, Dr = (int)p->Dr, Rp = rw->padded;
    for (int r = 0; r < Rp; r++) {
        if (r < rw->count) {
            fc_load_row(scratch, fc_q_row(&p->q, rw, rw->head[r], rw->pos[r]), p->q.dtype, p->q.se, Dqk);
            if (Dr)
                fc_load_row(scratch + Dqk, fc_q_row(&p->q_rope, rw, rw->head[r], rw->pos[r]),
                            p->q_rope.dtype, p->q_rope.se, Dr);
        } else {
            memset(scratch, 0, (size_t)(Dqk + Dr) * 4);
        }
        for (int e = 0; e < Dqk + Dr; e++)
            qt[(ptrdiff_t)e * Rp + r] = scratch[e];
    }
}

/* A kv-tile operand as fp32 rows: either the caller's memory itself (fp32 with unit feature
 * stride) or rows converted into buf.  Returns the row pointer base and sets *ld. */
static inline const float *fc_kv_rows(float *buf, int64_t ldbuf, const fc_view *v, const fc_rows *rw, int64_t j0,
                                      int rows, int width, int64_t *ld)
{
    if (v->dtype == FC_F32 && v->se == 1 && v->ss > 0) {
        *ld = v->ss;
        return (const float *)fc_kv_row(v, rw, rw->n2, j0);
    }
    for (int j = 0; j < rows; j++)
        fc_load_row(buf + j * ldbuf, fc_kv_row(v, rw, rw->n2, j0 + j), v->dtype, v->se, width);
    *ld = ldbuf;
    return buf;
}

#endif /* FC_KERNELS_TILE_H */
