/*
 * The operands of one (rows, kv tile) pair as fp32 GEMM inputs: the rows' query-side features
 * (row-major and transposed) and the key/value rows of a kv tile — used in place when they
 * already are fp32 rows at a fixed stride, converted into workspace buffers otherwise.
 */
#ifndef FC_KERNELS_PACK_H
#define FC_KERNELS_PACK_H

#include "gemm.h"
#include "operand.h"

/* t[e][r] = rows[r][e] for R rows of w features (t: [w][Rp]), zeros in columns R..Rp. */
static inline void fc_transpose_rows(const float *rows, int64_t ld, float *t, int Rp, int R, int w)
{
    fc_transpose(rows, ld, t, Rp, R, w);
    for (int e = 0; e < w && R < Rp; e++)
        memset(t + (ptrdiff_t)e * Rp + R, 0, (size_t)(Rp - R) * sizeof(float));
}

/* Whether n rows of width w at stride ss (elements) lie back to back, so that the GEMMs may read
 * them in place: rows a head's width apart (BSND, TND: 4 KB at 8 heads of 128) put a GEMM
 * operand's rows into a few L1 sets, which the kernels then re-read from L2 (19 % CPU time on the
 * avx2 forward at S = 4096); copied, they read as BNSD does. */
static inline bool fc_rows_compact(int64_t ss, int w, int n)
{
    return ss == w || (n == 1 && ss > 0);
}

/* The item's rows of a query-side operand a (width wa), optionally followed by the features of a
 * second operand b (width wb, e.g. the rope part), as fp32 rows[r][e] and, when t is given,
 * transposed into t[e][r] (row stride Rp; padding rows zero).  Returns the row-major rows and
 * their stride: the caller's memory itself when it already is compact fp32 rows of one head
 * (fc_rows_compact), else `rows` (stride ldr) filled here. */
static inline const float *fc_pack_rows(const fc_rows *rw, const fc_view *a, int wa, const fc_view *b, int wb,
                                        float *rows, int64_t ldr, float *t, int64_t *ld)
{
    const int Rp = rw->padded, R = rw->count;
    const float *src = rows;
    *ld = ldr;
    if (a->dtype == FC_F32 && a->se == 1 && fc_rows_compact(a->ss, wa, R) && wb == 0 && rw->head[0] == rw->head[R - 1]) {
        src = (const float *)fc_q_row(a, rw, rw->head[0], rw->pos[0]);
        *ld = R > 1 ? a->ss : wa; /* one row: ss may be the unbounded stride of a size-1 dim */
    } else {
        for (int r = 0; r < R; r++) {
            fc_load_row(rows + r * ldr, fc_q_row(a, rw, rw->head[r], rw->pos[r]), a->dtype, a->se, wa);
            if (wb)
                fc_load_row(rows + r * ldr + wa, fc_q_row(b, rw, rw->head[r], rw->pos[r]), b->dtype, b->se, wb);
        }
    }
    if (t)
        fc_transpose_rows(src, *ld, t, Rp, R, wa + wb);
    return src;
}

/* Asks for kv row s of v to be brought into L2.  A tile's rows are prefetched while the tile
 * before them is converted, so that they arrive during that tile's GEMMs: the hardware prefetcher
 * follows demand loads and idles while the GEMMs run, which leaves a memory-bound loop (decode)
 * waiting for every tile.  Always inlined: GCC takes a function of prefetches alone for a pure
 * one and drops the calls. */
FC_INLINE void fc_prefetch_kv_row(const fc_view *v, fc_kv_at at, int64_t s, int width)
{
    const char *row = fc_kv_row(v, at, s);
    const int64_t bytes = (width - 1) * fc_feature_step(v->dtype, v->se, width) + fc_dtype_bytes(v->dtype);
    for (int64_t o = 0; o < bytes; o += 64)
        __builtin_prefetch(row + o, 0, 2);
}

/* Whether compact fp32 rows from `row` on, stride ss elements, all start off a vector boundary:
 * every vector load of them then straddles two cache lines (AVX-512) or every other one does
 * (AVX2): a caller's malloc'd BNSD values, 16-byte aligned, read in place cost the fp32 forward
 * 5–6 % against a copy into aligned scratch (Emerald Rapids, avx512, docs/PERFORMANCE.md). */
static inline bool fc_rows_split_vectors(const float *row, int64_t ss)
{
    const uintptr_t vb = FC_W * sizeof(float);
    return (uintptr_t)row % vb != 0 && (uintptr_t)ss * sizeof(float) % vb == 0;
}

/* A kv-tile operand as fp32 rows: either the caller's memory itself (compact fp32 rows,
 * fc_rows_compact: one stream the hardware prefetcher follows, as software prefetches there cost
 * more than they gain, 2 % on the avx2 forward) or rows converted or copied into buf (aff: 2·width
 * floats of scratch for int8 dequantisation), the first `ahead` rows after the tile prefetched on
 * the way.  vectors: the product loads the rows as whole vectors (P·V's values), so rows that
 * would split every load (fc_rows_split_vectors) are copied.  Returns the row pointer base and
 * sets *ld. */
static inline const float *fc_kv_rows(float *buf, int64_t ldbuf, const fc_view *v, fc_kv_at at, int64_t j0, int rows,
                                      int ahead, int width, int64_t *ld, float *aff, bool vectors)
{
    if (v->dtype == FC_F32 && v->se == 1 && fc_rows_compact(v->ss, width, rows) && !v->pages.table) {
        const float *first = (const float *)fc_kv_row(v, at, j0);
        if (!(vectors && fc_rows_split_vectors(first, v->ss))) {
            *ld = rows > 1 ? v->ss : width; /* one row: ss may be the unbounded stride of a size-1 dim */
            return first;
        }
    }
    const bool i8 = v->dtype == FC_I8;
    if (i8)
        fc_affine_load(&v->dequant, at.n2, width, aff, aff + width);
    for (int j = 0; j < rows; j++) {
        if (j < ahead)
            fc_prefetch_kv_row(v, at, j0 + rows + j, width);
        const char *row = fc_kv_row(v, at, j0 + j);
        if (i8)
            fc_load_row_i8(buf + j * ldbuf, (const int8_t *)row, v->se, width, aff, aff + width);
        else
            fc_load_row(buf + j * ldbuf, row, v->dtype, v->se, width);
    }
    *ld = ldbuf;
    return buf;
}

/* The key (+ rope) and value rows of one kv tile as fp32 operands. */
typedef struct fc_kv_tile {
    const float *k, *kr, *v; /* kr NULL when there is no rope or it was appended to k's rows */
    int64_t ldk, ldkr, ldv;
    int k_width;             /* features per k row: Dqk, or Dqk + Dr when rope was appended */
    fc_prefetch_rows next_k, next_v; /* the next tile's rows where this one reads them in place */
} fc_kv_tile;

/* `rows` fp32 rows of v in place from kv row s on, as rows to prefetch during a product. */
static inline fc_prefetch_rows fc_rows_to_prefetch(const fc_view *v, fc_kv_at at, int64_t s, int rows, int width)
{
    const char *row = fc_kv_row(v, at, s);
    const int skew = (int)((uintptr_t)row % 64);
    return (fc_prefetch_rows){row - skew, (ptrdiff_t)v->ss * (ptrdiff_t)sizeof(float), rows,
                              (skew + width * (int)sizeof(float) + 63) / 64};
}

/* Loads kv rows [j0, j0 + jn) of one kv head; kb holds [cols][Dt], vb [cols][Dvp], aff
 * 2·max(Dt, Dv) floats of scratch.  A streaming caller (next tile at j0 + jn) sets `streaming`
 * to have that tile's rows prefetched.  keys false: the key rows are left where they are (t->k
 * NULL; the caller reads them itself, see fc_qk_reads_keys). */
static inline void fc_kv_tile_load(fc_kv_tile *t, const fc_problem *p, fc_kv_at at, int64_t j0, int jn, bool streaming,
                                   bool keys, float *kb, float *vb, float *aff)
{
    const int Dqk = (int)p->Dqk, Dr = (int)p->Dr, Dt = Dqk + Dr, Dvp = (int)fc_round_up(p->Dv, FC_W);
    const int64_t left = p->batch[at.b].skv - (j0 + jn);
    const int ahead = !streaming || left <= 0 ? 0 : left < jn ? (int)left : jn;
    t->v = fc_kv_rows(vb, Dvp, &p->v, at, j0, jn, ahead, (int)p->Dv, &t->ldv, aff, true);
    /* rows read in place are one stream the hardware prefetcher follows, but at S = 4096 it
     * meets a tile's first lines late: spread over the products, software prefetches of the next
     * tile's rows gain (Zen 4: docs/PERFORMANCE.md) where one burst of them at the tile's start
     * lost 2 % (avx2 forward, Zen 5) */
    t->next_k = t->next_v = (fc_prefetch_rows){NULL, 0, 0, 0};
    if (ahead && t->v != vb)
        t->next_v = fc_rows_to_prefetch(&p->v, at, j0 + jn, ahead, (int)p->Dv);
    if (!keys) {
        for (int j = 0; j < ahead; j++)
            fc_prefetch_kv_row(&p->k, at, j0 + jn + j, Dqk);
        t->k = t->kr = NULL;
        t->k_width = Dqk;
        return;
    }
    t->k = fc_kv_rows(kb, Dt, &p->k, at, j0, jn, ahead, Dqk, &t->ldk, aff, false);
    if (ahead && t->k != kb)
        t->next_k = fc_rows_to_prefetch(&p->k, at, j0 + jn, ahead, Dqk);
    t->k_width = Dqk;
    t->kr = NULL;
    if (Dr && t->k == kb) { /* converted: append the rope features to the same rows */
        for (int j = 0; j < jn; j++)
            fc_load_row(kb + (ptrdiff_t)j * Dt + Dqk, fc_kv_row(&p->k_rope, at, j0 + j), p->k_rope.dtype,
                        p->k_rope.se, Dr);
        t->k_width = Dt;
    } else if (Dr) {
        t->kr = fc_kv_rows(kb, Dt, &p->k_rope, at, j0, jn, ahead, Dr, &t->ldkr, aff, false);
    }
}

#endif /* FC_KERNELS_PACK_H */
