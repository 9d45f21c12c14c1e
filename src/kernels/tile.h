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

/* Workspace carving: kernels lay out their per-thread buffers with fc_take from a 64-byte aligned
 * base; carving from NULL measures the layout. */
static inline void *fc_take(char **cur, size_t bytes)
{
    char *at = *cur;
    *cur += (bytes + 63) & ~(size_t)63;
    return at;
}

static inline char *fc_align64(void *p) { return (char *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }

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

static inline void fc_rows_carve(fc_rows *rw, char **cur, int64_t Rp)
{
    rw->head = fc_take(cur, (size_t)Rp * sizeof(int32_t));
    rw->pos = fc_take(cur, (size_t)Rp * sizeof(int64_t));
    float **f[] = {&rw->lo1, &rw->hi1, &rw->lo2, &rw->hi2, &rw->slope, &rw->apos};
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
        *f[k] = fc_take(cur, (size_t)Rp * sizeof(float));
}

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
/* Which kv tiles an item visits                                                                  */

/* The kv tiles an item visits, in order, within the slice [lo, hi): dense items step through
 * their rows' visible range in tiles of `cols` and skip tiles no row sees; sparse items walk the
 * blocks listed in their index row (all rows of a sparse item share one position and kv head),
 * each cut into pieces of at most `cols`, every piece fully visible. */
typedef struct fc_kv_walk {
    const fc_rows *rw;
    int cols;
    int64_t lo, hi, next;
    const fc_sparse_view *sparse; /* NULL = dense */
    const char *ind;      /* sparse: the index row, NULL when the row selects nothing */
    int64_t k, thr, span_hi;
} fc_kv_walk;

static inline void fc_walk_init(fc_kv_walk *w, const fc_problem *p, const fc_rows *rw, int cols, int64_t lo, int64_t hi)
{
    memset(w, 0, sizeof *w);
    w->rw = rw;
    w->cols = cols;
    w->sparse = p->sparse.data ? &p->sparse : NULL;
    if (!w->sparse) {
        w->lo = lo > rw->kv_begin ? lo : rw->kv_begin;
        w->hi = hi < rw->kv_end ? hi : rw->kv_end;
        w->next = w->lo;
        return;
    }
    const int64_t i = rw->pos[0];
    w->lo = lo, w->hi = hi;
    w->thr = fc_sparse_threshold(w->sparse, rw->bt, i);
    if (i < rw->bt->sq && w->thr > 0)
        w->ind = fc_sparse_row(w->sparse, rw->bt, rw->b, i, rw->n2);
}

static inline bool fc_walk_next(fc_kv_walk *w, int64_t *j0, int *jn, fc_tile_kind *kind)
{
    if (!w->sparse) {
        while (w->next < w->hi) {
            *j0 = w->next;
            *jn = (int)(w->hi - w->next < w->cols ? w->hi - w->next : w->cols);
            w->next += w->cols;
            *kind = fc_rows_classify(w->rw, *j0, *j0 + *jn);
            if (*kind != FC_TILE_SKIP)
                return true;
        }
        return false;
    }
    for (;;) {
        if (w->next < w->span_hi) { /* the rest of the current block */
            *j0 = w->next;
            *jn = (int)(w->span_hi - w->next < w->cols ? w->span_hi - w->next : w->cols);
            w->next += *jn;
            *kind = FC_TILE_FULL;
            return true;
        }
        int64_t a, z;
        const int got = w->ind ? fc_sparse_span(w->sparse, w->ind, w->k++, w->thr, &a, &z) : -1;
        if (got < 0) {
            w->ind = NULL;
            return false;
        }
        if (got == 0)
            continue;
        a = a > w->lo ? a : w->lo;
        z = z < w->hi ? z : w->hi;
        w->next = a, w->span_hi = z;
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Operand access                                                                                 */

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

/* int8 output quantisation (semantics §4.6): x·scale + offset in fp32, rounded to fp16, then to
 * an integer half-to-even, saturated to [−128, 127]; NaN → 0. */
static inline int8_t fc_quantize_i8(float x, float scale, float offset)
{
    const float h = fc_f16_to_f32(fc_f32_to_f16(x * scale + offset));
    if (h != h)
        return 0;
    const float r = nearbyintf(h); /* the default rounding mode: to nearest, ties to even */
    return (int8_t)(r > 127.0f ? 127 : r < -128.0f ? -128 : (int)r);
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

/* The item's rows of a query-side operand a (width wa), optionally followed by the features of a
 * second operand b (width wb, e.g. the rope part), as fp32 rows[r][e] and, when t is given,
 * transposed into t[e][r] (row stride Rp; padding rows zero).  Returns the row-major rows and
 * their stride: the caller's memory itself when it already is fp32 rows of one head, else `rows`
 * (stride ldr) filled here. */
static inline const float *fc_pack_rows(const fc_rows *rw, const fc_view *a, int wa, const fc_view *b, int wb,
                                        float *rows, int64_t ldr, float *t, int64_t *ld)
{
    const int Rp = rw->padded, R = rw->count;
    const float *src = rows;
    *ld = ldr;
    if (a->dtype == FC_F32 && a->se == 1 && a->ss > 0 && wb == 0 && rw->head[0] == rw->head[R - 1]) {
        src = (const float *)fc_q_row(a, rw, rw->head[0], rw->pos[0]);
        *ld = a->ss;
    } else {
        for (int r = 0; r < R; r++) {
            fc_load_row(rows + r * ldr, fc_q_row(a, rw, rw->head[r], rw->pos[r]), a->dtype, a->se, wa);
            if (wb)
                fc_load_row(rows + r * ldr + wa, fc_q_row(b, rw, rw->head[r], rw->pos[r]), b->dtype, b->se, wb);
        }
    }
    if (t) {
        fc_transpose(src, *ld, t, Rp, R, wa + wb);
        for (int e = 0; e < wa + wb && R < Rp; e++)
            memset(t + (ptrdiff_t)e * Rp + R, 0, (size_t)(Rp - R) * sizeof(float));
    }
    return src;
}

/* QT[e][r]: the rows' query features followed by their rope features, transposed (qrows is
 * scratch for them row-major, [Rp][Dqk + Dr]). */
static inline void fc_pack_q_transposed(float *qt, float *qrows, const fc_problem *p, const fc_rows *rw)
{
    int64_t ld;
    fc_pack_rows(rw, &p->q, (int)p->Dqk, &p->q_rope, (int)p->Dr, qrows, p->Dqk + p->Dr, qt, &ld);
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

/* A kv-tile operand as fp32 rows: either the caller's memory itself (fp32 rows at a fixed stride)
 * or rows converted into buf (aff: 2·width floats of scratch for int8 dequantisation).  Returns
 * the row pointer base and sets *ld. */
static inline const float *fc_kv_rows(float *buf, int64_t ldbuf, const fc_view *v, fc_kv_at at, int64_t j0, int rows,
                                      int width, int64_t *ld, float *aff)
{
    if (v->dtype == FC_F32 && v->se == 1 && v->ss > 0 && !v->pages.table) {
        *ld = v->ss;
        return (const float *)fc_kv_row(v, at, j0);
    }
    if (v->dtype == FC_I8) {
        fc_affine_load(&v->dequant, at.n2, width, aff, aff + width);
        for (int j = 0; j < rows; j++)
            fc_load_row_i8(buf + j * ldbuf, (const int8_t *)fc_kv_row(v, at, j0 + j), v->se, width, aff, aff + width);
        *ld = ldbuf;
        return buf;
    }
    for (int j = 0; j < rows; j++)
        fc_load_row(buf + j * ldbuf, fc_kv_row(v, at, j0 + j), v->dtype, v->se, width);
    *ld = ldbuf;
    return buf;
}

/* The key (+ rope) and value rows of one kv tile as fp32 operands. */
typedef struct fc_kv_tile {
    const float *k, *kr, *v; /* kr NULL when there is no rope or it was appended to k's rows */
    int64_t ldk, ldkr, ldv;
    int k_width;             /* features per k row: Dqk, or Dqk + Dr when rope was appended */
} fc_kv_tile;

/* Loads kv rows [j0, j0 + jn) of one kv head; kb holds [cols][Dt], vb [cols][Dvp], aff
 * 2·max(Dt, Dv) floats of scratch. */
static inline void fc_kv_tile_load(fc_kv_tile *t, const fc_problem *p, fc_kv_at at, int64_t j0, int jn, float *kb,
                                   float *vb, float *aff)
{
    const int Dqk = (int)p->Dqk, Dr = (int)p->Dr, Dt = Dqk + Dr, Dvp = (int)fc_round_up(p->Dv, FC_W);
    t->k = fc_kv_rows(kb, Dt, &p->k, at, j0, jn, Dqk, &t->ldk, aff);
    t->k_width = Dqk;
    t->kr = NULL;
    if (Dr && t->k == kb) { /* converted: append the rope features to the same rows */
        for (int j = 0; j < jn; j++)
            fc_load_row(kb + (ptrdiff_t)j * Dt + Dqk, fc_kv_row(&p->k_rope, at, j0 + j), p->k_rope.dtype,
                        p->k_rope.se, Dr);
        t->k_width = Dt;
    } else if (Dr) {
        t->kr = fc_kv_rows(kb, Dt, &p->k_rope, at, j0, jn, Dr, &t->ldkr, aff);
    }
    t->v = fc_kv_rows(vb, Dvp, &p->v, at, j0, jn, (int)p->Dv, &t->ldv, aff);
}

#endif /* FC_KERNELS_TILE_H */
