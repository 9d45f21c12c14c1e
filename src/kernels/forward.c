/*
 * Forward attention for one work item (FlashAttention-2): the item's query rows stream the kv
 * tiles they can see; per tile S = K·Qᵀ, the score pipeline, an online-softmax step, O += P·V;
 * one division at the end.  An item may cover only one slice of the kv axis (flash-decoding
 * when there are too few rows to keep the threads busy): it then leaves its (O, m, l) in a
 * partial slot, and fc_fwd_merge combines the slots in a fixed order.
 * Compiled once per instruction set (see simd.h).
 */
#include <float.h>

#include "decode.h"
#include "dropout.h"
#include "entry.h"
#include "gemm.h"
#include "qk.h"
#include "scores.h"
#include "walk.h"
#include "softmax.h"
#if FC_BF16_PRODUCTS
#include "amx_rows.h"
#endif

/* Per-thread buffers of one item; fc_fwd_carve(NULL, ...) measures them. */
typedef struct fc_fwd_bufs {
    float *qt;    /* [Dt][Rp]   transposed query rows (+ rope features) */
    float *qrows; /* [Rp][Dt]   the same rows before transposition */
    float *s;     /* [cols][Rp] scores, then probabilities */
    float *vis;   /* [cols][Rp] visibility of a tile whose values are not all finite */
    float *o;     /* [rows][Dvp] output accumulator */
    float *kb;    /* [cols][Dt] converted key rows (+ rope) */
    float *vb;    /* [cols][Dvp] converted value rows */
    float *row;   /* [wide] scratch for one row */
    float *aff;   /* [2·wide] int8 (de)quantisation scale and offset */
    float *k_aff; /* [2·Dt] the keys' int8 scale and offset when fc_qk reads them in place */
    float *dq;    /* [4][Dqk] and [2·Dvp]: the query rows and value dequantisation of decode.h */
    float *dv_aff;
    float *m, *l, *alpha;
    fc_rows rows;
#if FC_BF16_PRODUCTS
    fc_amx_bufs amx; /* bf16 tile operands (bf16/fp16 problems) */
    fc_amx_rows_bufs amx_rows; /* the fused pipeline's (amx_rows.h) */
#endif
} fc_fwd_bufs;

static size_t fc_fwd_carve(char *base, const fc_problem *p, fc_tiles t, fc_fwd_bufs *b)
{
    const int64_t Rp = fc_round_up(t.rows, FC_W), Dt = p->Dqk + p->Dr, Dvp = fc_round_up(p->Dv, FC_W);
    const int64_t wide = Dt > Dvp ? Dt : Dvp;
    fc_carver cur = {base, 0};
#define TAKE(field, n) b->field = (float *)fc_take(&cur, (size_t)(n) * sizeof(float))
    TAKE(qt, Dt * Rp);
    TAKE(qrows, Rp * Dt);
    TAKE(s, t.cols * Rp);
    TAKE(vis, t.cols * Rp);
    TAKE(o, Rp * Dvp);
    TAKE(kb, t.cols * Dt);
    TAKE(vb, t.cols * Dvp);
    TAKE(row, wide);
    TAKE(aff, 2 * wide);
    TAKE(k_aff, 2 * Dt);
    TAKE(dq, 4 * p->Dqk);
    TAKE(dv_aff, 2 * Dvp);
    TAKE(m, Rp);
    TAKE(l, Rp);
    TAKE(alpha, Rp);
#undef TAKE
    fc_rows_carve(&b->rows, &cur, Rp);
#if FC_BF16_PRODUCTS
    if (fc_amx_applies(p, t.rows)) {
        fc_amx_carve(&b->amx, &cur, p, (int)Rp, t.cols);
        if (fc_amx_rows_applies(p))
            fc_amx_rows_carve(&b->amx_rows, &cur, &b->amx);
    }
#endif
    return cur.at + 64; /* + alignment slack of the base */
}

/* Tile products (bf16/fp16 operands on AMX) want a long K axis for P·V: 256 kv columns, 512 in
 * the fused pipeline (amx_rows.h; and 128-row items, see schedule.c); every other problem keeps
 * the backend's tiles, whose fp32 working set fits L1/L2. */
int FC_ISA_FN(fc_fwd_cols)(const fc_problem *p)
{
#if FC_BF16_PRODUCTS
    return fc_amx_applies(p, 128) ? (fc_amx_rows_applies(p) ? FC_AMX_ROWS_COLS : 256) : 0;
#else
    (void)p;
    return 0;
#endif
}

/* The fused pipeline packs Kᵀ and V per item and kv tile: 512-row items share each packing
 * among more rows (256 against 128: −9 % CPU time at S = 2048; 512 × 512 against 256 × 256:
 * −10 % at S = 4096, docs/PERFORMANCE.md).  The fp32 GEMM pipeline of an AVX-512 set takes
 * 256-row items (schedule.c, where fwd_cols gives no wide tiles): a long sequence's K and V exceed
 * L2, and each kv tile read from L3 then serves four times the rows of the backend's 64 (−13..20 %
 * CPU time at S = 4096, D = 128, docs/PERFORMANCE.md). */
int FC_ISA_FN(fc_fwd_rows)(const fc_problem *p)
{
#if FC_BF16_PRODUCTS
    if (fc_amx_applies(p, 128))
        return fc_amx_rows_applies(p) ? FC_AMX_ROWS_ITEM : 0;
#endif
    (void)p;
#if defined(__AVX512F__)
    return 256;
#else
    return 0;
#endif
}

size_t FC_ISA_FN(fc_fwd_workspace)(const fc_problem *p, fc_tiles t)
{
    fc_fwd_bufs b;
    return fc_fwd_carve(NULL, p, t, &b);
}

size_t FC_ISA_FN(fc_fwd_partial_floats)(const fc_problem *p, fc_tiles t)
{
    const int64_t Rp = fc_round_up(t.rows, FC_W);
    return (size_t)(Rp * (fc_round_up(p->Dv, FC_W) + 2));
}

/* Writes the rows' outputs and statistics from the accumulator and (m, l) (semantics §2.6, §2.8,
 * and §4.6 for int8 outputs). */
static void fc_fwd_finish(const fc_problem *p, fc_fwd_bufs *b)
{
    const fc_rows *rw = &b->rows;
    const int Dv = (int)p->Dv, Dvp = (int)fc_round_up(Dv, FC_W);
    const float inv_keep = fc_has_dropout(p) ? 1.0f / p->keep_prob : 1.0f;
    for (int r = 0; r < rw->count; r++) {
        /* l = 0: no sink and no visible position, or only −inf logits (semantics §0.3, §2.6); a NaN
         * l (NaN or +inf logit, NaN or +inf sink) leaves the whole row NaN */
        const bool empty = b->l[r] == 0.0f;
        const float scale = empty ? 0.0f : inv_keep / b->l[r];
        const float *acc = b->o + (ptrdiff_t)r * Dvp;
        for (int e = 0; e < Dv; e++)
            b->row[e] = empty ? 0.0f : acc[e] * scale;
        char *dst = (char *)fc_q_row(&p->out, rw, rw->head[r], rw->pos[r]);
        if (p->out.dtype == FC_I8) {
            float *qs = b->aff, *qo = b->aff + Dvp;
            fc_affine_load(&p->out_quant, rw->head[r], Dv, qs, qo);
            for (int e = 0; e < Dv; e++)
                dst[e * p->out.se] = empty ? 0 : fc_quantize_i8(b->row[e], qs[e], qo[e]);
        } else {
            fc_store_row(dst, p->out.dtype, p->out.se, b->row, Dv);
        }
        if (p->stats.max) {
            const int64_t at = fc_stat_offset(p, rw->bt, rw->head[r], rw->pos[r]);
            const float mx = empty ? -FLT_MAX : (float)(b->m[r] + rw->aoff[r]), sm = empty ? FLT_MAX : b->l[r];
            fc_stat_store(&p->stats, at, mx, sm);
        }
    }
}

/* The kv columns of split `split` out of `nsplit` equal slices of the batch's kv axis. */
static void fc_split_range(const fc_batch *bt, const fc_item *it, fc_tiles t, int64_t *lo, int64_t *hi)
{
    const int64_t chunk = fc_round_up((bt->skv + it->nsplit - 1) / it->nsplit, t.cols);
    *lo = it->split * chunk;
    *hi = *lo + chunk;
}

void FC_ISA_FN(fc_fwd_item)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, float *partial)
{
    fc_fwd_bufs b;
    fc_fwd_carve(fc_align64(ws), p, t, &b);
    fc_rows *rw = &b.rows;
    fc_rows_init(rw, p, it);
    const int R = rw->count, Rp = rw->padded, Dv = (int)p->Dv, Dvp = (int)fc_round_up(Dv, FC_W);

    for (int r = 0; r < Rp; r++) { /* a sink starts every real row at (sink, exp(sink − sink)); −inf = no sink */
        const bool counts = p->sink && it->split == 0 && r < R && rw->pos[r] < rw->bt->sq;
        const float sink = counts ? (float)(fc_sink_at(p, rw->head[r]) - rw->aoff[r]) : -INFINITY;
        b.m[r] = sink;
        b.l[r] = sink == -INFINITY ? 0.0f : isfinite(sink) ? 1.0f : NAN; /* ∞ − ∞ and NaN: NaN */
    }
    memset(b.o, 0, (size_t)Rp * Dvp * sizeof(float));

    int64_t lo = 0, hi = rw->bt->skv;
    if (it->nsplit > 1)
        fc_split_range(rw->bt, it, t, &lo, &hi);
    fc_kv_walk walk;
    fc_walk_init(&walk, p, rw, t.cols, lo, hi);
    int64_t j0;
    int jn;
    fc_tile_kind kind;
    fc_q_operand q = {NULL, NULL, 0};
    const bool keys_in_place = fc_qk_reads_keys(p, rw), few = fc_decode_applies(p, rw);
    fc_decode dec;
    if (keys_in_place && p->k.dtype == FC_I8)
        fc_affine_load(&p->k.dequant, rw->n2, (int)p->Dqk, b.k_aff, b.k_aff + p->Dqk);
#if FC_BF16_PRODUCTS
    const bool tiles = fc_amx_applies(p, R), pv_tiles = tiles && fc_amx_pv_tiles(p);
    const bool fused = tiles && fc_amx_rows_applies(p);
    bool qt_packed = false;
#else
    const bool tiles = false, pv_tiles = false;
#endif
    const int Dt = (int)(p->Dqk + p->Dr);
    const bool scale_only = fc_scores_scale_only(p);
    while (fc_walk_next(&walk, &j0, &jn, &kind)) {
        if (!q.t) { /* the query features followed by the rope features, row-major and transposed */
            q.rows = fc_pack_rows(rw, &p->q, (int)p->Dqk, &p->q_rope, (int)p->Dr, b.qrows, Dt, tiles ? NULL : b.qt, &q.ld);
            q.t = b.qt;
#if FC_BF16_PRODUCTS
            if (tiles) {
                fc_amx_begin();
                fc_amx_pack_q(&b.amx, q.rows, q.ld, R, Rp, Dt);
            }
#endif
            if (few)
                fc_decode_init(&dec, p, rw, q.rows, q.ld, b.dq, b.k_aff, b.dv_aff, walk.hi);
        }
        if (few && kind == FC_TILE_FULL) {
            fc_decode_tile(&dec, p, j0, jn, b.s, b.o, Dvp, b.m, b.l);
            continue;
        }
        const bool hides = fc_tile_hides(p, kind);
#if FC_BF16_PRODUCTS
        if (fused && (!hides || fc_amx_values_finite(p, fc_kv_at_rows(rw), j0, jn, b.aff))) { /* else hidden values need the visibility path */
            fc_amx_rows_tile(&b.amx, &b.amx_rows, b.o, b.m, b.l, b.alpha, p, rw, j0, jn, kind == FC_TILE_PARTIAL, b.aff);
            continue;
        }
#endif
        fc_kv_tile kv = {0};
        if (!pv_tiles || hides) /* the tile products read the kv rows themselves, but hidden values are checked */
            fc_kv_tile_load(&kv, p, fc_kv_at_rows(rw), j0, jn, !p->sparse.data, !keys_in_place && !tiles, b.kb, b.vb,
                            b.aff);
#if FC_BF16_PRODUCTS
        if (tiles && !qt_packed) {
            fc_amx_pack_qt(&b.amx, Rp);
            qt_packed = true;
        }
        if (tiles)
            fc_amx_qk(b.s, &b.amx, p, fc_kv_at_rows(rw), j0, jn, Rp, b.aff);
        else
#endif
            fc_qk(b.s, &kv, &q, p, rw, b.k_aff, j0, jn);
        if (scale_only)
            fc_hide(b.s, jn, j0, p, rw, kind, -INFINITY);
        else
            fc_scores(b.s, NULL, jn, j0, p, rw, kind);
        if (fc_softmax_step(b.s, jn, Rp, scale_only ? p->scale : 1.0f, b.m, b.l, b.alpha))
            for (int r = 0; r < R; r++)
                if (b.alpha[r] != 1.0f)
                    for (int e = 0; e < Dvp; e++)
                        b.o[(ptrdiff_t)r * Dvp + e] *= b.alpha[r];
        if (fc_has_dropout(p))
            fc_dropout_tile(b.s, jn, j0, p, rw);
        if (hides && !fc_all_finite(kv.v, jn, kv.ldv, Dv)) { /* hidden values take no part */
            fc_visibility_tile(b.vis, jn, j0, p, rw, kind);
            fc_gemm_visible(R, Dv, jn, b.s, 1, Rp, b.vis, kv.v, kv.ldv, b.o, Dvp);
        }
#if FC_BF16_PRODUCTS
        else if (pv_tiles)
            fc_amx_pv(b.o, &b.amx, b.s, p, fc_kv_at_rows(rw), j0, jn, Rp, b.aff);
#endif
        else
            fc_gemm(R, Dv, jn, b.s, 1, Rp, kv.v, kv.ldv, b.o, Dvp, true);
    }
#if FC_BF16_PRODUCTS
    if (tiles && q.t)
        fc_amx_end();
#endif
    if (it->nsplit > 1) { /* leave (O, m, l) for the merge */
        memcpy(partial, b.o, (size_t)Rp * Dvp * sizeof(float));
        memcpy(partial + Rp * Dvp, b.m, (size_t)Rp * sizeof(float));
        memcpy(partial + Rp * (Dvp + 1), b.l, (size_t)Rp * sizeof(float));
        return;
    }
    fc_fwd_finish(p, &b);
}

/* Combines the nsplit partial slots of an item (split 0 .. nsplit−1, in that order) like the
 * online softmax combines tiles, then writes the rows. */
void FC_ISA_FN(fc_fwd_merge)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, const float *partial)
{
    fc_fwd_bufs b;
    fc_fwd_carve(fc_align64(ws), p, t, &b);
    fc_rows *rw = &b.rows;
    fc_rows_init(rw, p, it);
    const int Rp = rw->padded, Dvp = (int)fc_round_up(p->Dv, FC_W);
    const size_t slot = FC_ISA_FN(fc_fwd_partial_floats)(p, t);
    for (int r = 0; r < rw->count; r++) {
        float m = -INFINITY, l = 0.0f;
        bool nan = false; /* a NaN part makes the maximum NaN (fmaxf would drop it, semantics §0.3) */
        for (int64_t s = 0; s < it->nsplit; s++) {
            const float ms = partial[s * slot + Rp * Dvp + r];
            nan |= isnan(ms);
            m = ms > m ? ms : m;
        }
        m = nan ? NAN : m;
        const float m_ref = m == -INFINITY ? 0.0f : m;
        float *o = b.o + (ptrdiff_t)r * Dvp;
        memset(o, 0, (size_t)Dvp * sizeof(float));
        for (int64_t s = 0; s < it->nsplit; s++) {
            const float *ps = partial + s * slot;
            const float w = fc_exp1(ps[Rp * Dvp + r] - m_ref);
            l += ps[Rp * (Dvp + 1) + r] * w;
            for (int e = 0; e < Dvp; e++)
                o[e] += ps[(ptrdiff_t)r * Dvp + e] * w;
        }
        b.m[r] = m;
        b.l[r] = l;
    }
    fc_fwd_finish(p, &b);
}
