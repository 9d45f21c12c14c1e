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
#if FC_BF16_FUSED
#include "amx_rows.h"
#elif FC_BF16_PRODUCTS
#include "bfdot_pack.h"
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
    float *tmax;  /* [Rp] the score tile's row maxima from its product (fc_gemm_colmax) */
    fc_rows rows;
#if FC_BF16_PRODUCTS
    fc_amx_bufs amx; /* bf16 tile operands (bf16/fp16 problems) */
#endif
#if FC_BF16_FUSED
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
    TAKE(tmax, Rp);
#undef TAKE
    fc_rows_carve(&b->rows, &cur, Rp);
#if FC_BF16_PRODUCTS
    if (fc_amx_applies(p, t.rows)) {
        fc_amx_carve(&b->amx, &cur, p, (int)Rp, t.cols);
#if FC_BF16_FUSED
        if (fc_amx_rows_applies(p))
            fc_amx_rows_carve(&b->amx_rows, &cur, &b->amx);
#endif
    }
#endif
    return cur.at + 64; /* + alignment slack of the base */
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
        /* the row's sum and maximum (true frame), with the sink folded in (fc_fold_sink) */
        const float sink = p->sink && rw->pos[r] < rw->bt->sq ? fc_sink_at(p, rw->head[r]) : -INFINITY;
        const fc_sink_fold f = fc_fold_sink(sink, b->m[r], rw->aoff[r], b->l[r]);
        const float sm = f.l, mx = f.sink_max ? sink : (float)(b->m[r] + rw->aoff[r]);
        const float scale = sm == 0.0f ? 0.0f : f.w * inv_keep / sm; /* w = 1 without a sink: the same bits */
        /* l = 0: no sink and no visible position, or only −inf logits (semantics §0.3, §2.6); a NaN
         * l (NaN or +inf logit, NaN or +inf sink) leaves the whole row NaN */
        const bool empty = sm == 0.0f;
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
            fc_stat_store(&p->stats, at, empty ? -FLT_MAX : mx, empty ? FLT_MAX : sm);
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

/* One item in flight: its buffers, rows, the kv tiles it visits and its query operand (packed at
 * the first visible tile). */
typedef struct fc_fwd_state {
    fc_fwd_bufs b;
    fc_rows *rw;
    fc_kv_walk walk;
    int64_t j0; /* the kv tile at hand: columns [j0, j0 + jn), visible to all rows or some */
    int jn;
    fc_tile_kind kind;
    fc_q_operand q;
    int R, Rp, Dv, Dvp, Dt;
    bool scale_only; /* logits scale·s alone (fc_scores_scale_only) */
    bool raw;        /* m in the units of the scores s (fc_fwd_raw) */
} fc_fwd_state;

/* Whether an item keeps its running maximum m in the units of the scores s (logits scale·s alone,
 * scale·log2 e finite) on the sets that choose it (FC_RAW_MAX): the softmax step then neither
 * scales nor stores S before its exponentials (fc_softmax_step_raw); m is converted at the end. */
static bool fc_fwd_raw(const fc_problem *p)
{
    return FC_RAW_MAX && fc_scores_scale_only(p) && p->scale * FC_LOG2E_D < FLT_MAX;
}

/* Sets up an item: rows, an empty (m, l) (the sink joins in fc_fwd_finish), a zero accumulator, the
 * kv tiles of its slice; raw: see fc_fwd_raw. */
static void fc_fwd_begin(fc_fwd_state *s, const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, bool raw)
{
    fc_fwd_bufs *b = &s->b;
    fc_fwd_carve(fc_align64(ws), p, t, b);
    fc_rows *rw = s->rw = &b->rows;
    fc_rows_init(rw, p, it);
    s->R = rw->count, s->Rp = rw->padded, s->Dv = (int)p->Dv, s->Dvp = (int)fc_round_up(s->Dv, FC_W);
    s->Dt = (int)(p->Dqk + p->Dr);
    s->scale_only = fc_scores_scale_only(p);
    s->raw = raw;
    const int Rp = s->Rp;
    for (int r = 0; r < Rp; r++) /* nothing seen yet */
        b->m[r] = -INFINITY, b->l[r] = 0.0f;
    memset(b->o, 0, (size_t)Rp * s->Dvp * sizeof(float));
    int64_t lo = 0, hi = rw->bt->skv;
    if (it->nsplit > 1)
        fc_split_range(rw->bt, it, t, &lo, &hi);
    fc_walk_init(&s->walk, p, rw, t.cols, lo, hi);
    s->q = (fc_q_operand){NULL, NULL, 0};
}

/* Steps to the item's next visible kv tile (false past the last). */
static bool fc_fwd_next(fc_fwd_state *s) { return fc_walk_next(&s->walk, &s->j0, &s->jn, &s->kind); }

/* The query features followed by the rope features, row-major and (for the fp32 products)
 * transposed. */
static void fc_fwd_pack_q(fc_fwd_state *s, const fc_problem *p, bool transposed)
{
    fc_fwd_bufs *b = &s->b;
    s->q.rows = fc_pack_rows(s->rw, &p->q, (int)p->Dqk, &p->q_rope, (int)p->Dr, b->qrows, s->Dt, transposed ? b->qt : NULL,
                             &s->q.ld);
    s->q.t = b->qt;
}

/* The logits of S and the online-softmax step on them (rescaling the accumulator), dropout;
 * tmax (or NULL): the tile's row maxima, S already final (fc_fwd_colmax). */
static void fc_fwd_softmax(fc_fwd_state *s, const fc_problem *p, const float *tmax)
{
    fc_fwd_bufs *b = &s->b;
    const int64_t j0 = s->j0;
    const int jn = s->jn;
    const fc_tile_kind kind = s->kind;
    if (!tmax) {
        if (s->scale_only)
            fc_hide(b->s, jn, j0, p, s->rw, kind, -INFINITY);
        else
            fc_scores(b->s, NULL, jn, j0, p, s->rw, kind);
    }
    const float scale = s->scale_only ? p->scale : 1.0f;
    const bool rescale = s->raw ? fc_softmax_step_raw(b->s, tmax, jn, s->Rp, scale, b->m, b->l, b->alpha)
                                : fc_softmax_step(b->s, tmax, jn, s->Rp, scale, b->m, b->l, b->alpha);
    if (rescale)
        for (int r = 0; r < s->R; r++)
            if (b->alpha[r] != 1.0f)
                for (int e = 0; e < s->Dvp; e++)
                    b->o[(ptrdiff_t)r * s->Dvp + e] *= b->alpha[r];
    if (fc_has_dropout(p))
        fc_dropout_tile(b->s, jn, j0, p, s->rw);
}

/* Whether a tile's P·V must skip its hidden positions: it hides some and its values are not all
 * finite (0·NaN would let them in); then the product over the visible ones is done here. */
static bool fc_fwd_pv_visible(fc_fwd_state *s, const fc_problem *p, const fc_kv_tile *kv, bool hides)
{
    fc_fwd_bufs *b = &s->b;
    if (!hides || fc_all_finite(kv->v, s->jn, kv->ldv, s->Dv))
        return false;
    fc_visibility_tile(b->vis, s->jn, s->j0, p, s->rw, s->kind);
    fc_gemm_visible(s->R, s->Dv, s->jn, b->s, 1, s->Rp, b->vis, kv->v, kv->ldv, b->o, s->Dvp);
    return true;
}

/* The score product's epilogue (fc_gemm_colmax) where a tile's logits are its scores times the
 * scale and nothing hides (the softmax step's maximum pass needs nothing else): scaled in place
 * unless m is kept raw (fc_fwd_raw), the rows' maxima into tmax. */
static const fc_gemm_colmax *fc_fwd_colmax(fc_fwd_state *s, const fc_problem *p, bool hides, fc_gemm_colmax *cm)
{
    if (!s->scale_only || hides)
        return NULL;
    for (int r = 0; r < s->Rp; r++)
        s->b.tmax[r] = -INFINITY;
    *cm = (fc_gemm_colmax){s->b.tmax, p->scale, !s->raw && p->scale != 1.0f};
    return cm;
}

/* One kv tile on the fp32 products: S = K·Qᵀ (a GEMM, or dot products for few rows; keys
 * converted unless fc_qk reads them in place), softmax, O += P·V. */
static void fc_fwd_tile_fp32(fc_fwd_state *s, const fc_problem *p, bool convert_keys)
{
    fc_fwd_bufs *b = &s->b;
    const bool hides = fc_tile_hides(p, s->kind);
    fc_kv_tile kv = {0};
    fc_kv_tile_load(&kv, p, fc_kv_at_rows(s->rw), s->j0, s->jn, !p->sparse.data, convert_keys, b->kb, b->vb, b->aff);
    fc_gemm_colmax cm;
    const bool maxed = fc_qk(b->s, &kv, &s->q, p, s->rw, b->k_aff, s->j0, s->jn, fc_fwd_colmax(s, p, hides, &cm));
    fc_fwd_softmax(s, p, maxed ? b->tmax : NULL);
    if (!fc_fwd_pv_visible(s, p, &kv, hides))
        fc_gemm_pf(s->R, s->Dv, s->jn, b->s, 1, s->Rp, kv.v, kv.ldv, b->o, s->Dvp, true, &kv.next_v, NULL);
}

/* Leaves (O, m, l) for the merge when the item is one kv slice of several, else writes the rows. */
static void fc_fwd_end(fc_fwd_state *s, const fc_problem *p, const fc_item *it, float *partial)
{
    fc_fwd_bufs *b = &s->b;
    const int Rp = s->Rp, Dvp = s->Dvp;
    for (int r = 0; s->raw && r < Rp; r++) /* (the statistics and the merge take logits) */
        b->m[r] = (float)((double)b->m[r] * p->scale);
    if (it->nsplit > 1) {
        memcpy(partial, b->o, (size_t)Rp * Dvp * sizeof(float));
        memcpy(partial + Rp * Dvp, b->m, (size_t)Rp * sizeof(float));
        memcpy(partial + Rp * (Dvp + 1), b->l, (size_t)Rp * sizeof(float));
        return;
    }
    fc_fwd_finish(p, b);
}

/* FC_FWD_GEMM: every product on the fp32 micro-GEMM. */
void FC_ISA_FN(fc_fwd_item_gemm)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, float *partial)
{
    fc_fwd_state s;
    fc_fwd_begin(&s, p, it, t, ws, fc_fwd_raw(p));
    while (fc_fwd_next(&s)) {
        if (!s.q.t)
            fc_fwd_pack_q(&s, p, true);
        fc_fwd_tile_fp32(&s, p, true);
    }
    fc_fwd_end(&s, p, it, partial);
}

/* Few rows (fc_qk_reads_keys): the keys' int8 scale and offset where fc_qk reads them in place. */
static bool fc_fwd_keys_in_place(fc_fwd_state *s, const fc_problem *p)
{
    const bool in_place = fc_qk_keys_in_place(p);
    if (in_place && p->k.dtype == FC_I8)
        fc_affine_load(&p->k.dequant, s->rw->n2, (int)p->Dqk, s->b.k_aff, s->b.k_aff + p->Dqk);
    return in_place;
}

/* FC_FWD_DOTS: few rows, S by dot products (keys read in place where they can be). */
void FC_ISA_FN(fc_fwd_item_dots)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, float *partial)
{
    fc_fwd_state s;
    fc_fwd_begin(&s, p, it, t, ws, false);
    const bool in_place = fc_fwd_keys_in_place(&s, p);
    while (fc_fwd_next(&s)) {
        if (!s.q.t)
            fc_fwd_pack_q(&s, p, true);
        fc_fwd_tile_fp32(&s, p, !in_place);
    }
    fc_fwd_end(&s, p, it, partial);
}

/* FC_FWD_DECODE: few rows; fully visible tiles fused (decode.h), the others as FC_FWD_DOTS. */
void FC_ISA_FN(fc_fwd_item_decode)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, float *partial)
{
    fc_fwd_state s;
    fc_fwd_begin(&s, p, it, t, ws, false);
    fc_fwd_keys_in_place(&s, p); /* (the kind implies keys in place) */
    fc_decode dec;
    while (fc_fwd_next(&s)) {
        if (!s.q.t) {
            fc_fwd_pack_q(&s, p, true);
            fc_decode_init(&dec, p, s.rw, s.q.rows, s.q.ld, s.b.dq, s.b.k_aff, s.b.dv_aff, s.walk.hi);
        }
        if (s.kind == FC_TILE_FULL)
            fc_decode_tile(&dec, p, s.j0, s.jn, s.b.s, s.b.o, s.Dvp, s.b.m, s.b.l);
        else
            fc_fwd_tile_fp32(&s, p, false);
    }
    fc_fwd_end(&s, p, it, partial);
}

#if FC_BF16_PRODUCTS
/* The query rows as tile operands, at the first visible tile (tiles configured until fc_amx_end). */
static void fc_fwd_pack_q_tiles(fc_fwd_state *s, const fc_problem *p)
{
    fc_fwd_pack_q(s, p, false);
    fc_amx_begin();
    fc_amx_pack_q(&s->b.amx, s->q.rows, s->q.ld, s->R, s->Rp, s->Dt);
}

/* One kv tile on the tile products, S column-major: S = K·Qᵀ on tiles (Qᵀ packed at the first),
 * softmax, O += P·V on tiles (pv_tiles) or the fp32 GEMM.  The tile products read the kv rows
 * themselves; the fp32 rows are loaded for the fp32 P·V and for tiles that hide positions (whose
 * values are checked). */
FC_INLINE void fc_fwd_tile_tiles(fc_fwd_state *s, const fc_problem *p, const bool pv_tiles, bool *qt_packed)
{
    fc_fwd_bufs *b = &s->b;
    const int64_t j0 = s->j0;
    const int jn = s->jn;
    const bool hides = fc_tile_hides(p, s->kind);
    fc_kv_tile kv = {0};
    if (!pv_tiles || hides)
        fc_kv_tile_load(&kv, p, fc_kv_at_rows(s->rw), j0, jn, !p->sparse.data, false, b->kb, b->vb, b->aff);
    if (!*qt_packed) {
        fc_amx_pack_qt(&b->amx, s->Rp);
        *qt_packed = true;
    }
    fc_amx_qk(b->s, &b->amx, p, fc_kv_at_rows(s->rw), j0, jn, s->Rp, b->aff);
    fc_fwd_softmax(s, p, NULL);
    if (fc_fwd_pv_visible(s, p, &kv, hides))
        return;
    if (pv_tiles)
        fc_amx_pv(b->o, &b->amx, b->s, p, fc_kv_at_rows(s->rw), j0, jn, s->Rp, b->aff);
    else
        fc_gemm(s->R, s->Dv, jn, b->s, 1, s->Rp, kv.v, kv.ldv, b->o, s->Dvp, true);
}

FC_INLINE void fc_fwd_item_on_tiles(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, float *partial,
                                    const bool pv_tiles)
{
    fc_fwd_state s;
    fc_fwd_begin(&s, p, it, t, ws, false);
    bool qt_packed = false;
    while (fc_fwd_next(&s)) {
        if (!s.q.t)
            fc_fwd_pack_q_tiles(&s, p);
        fc_fwd_tile_tiles(&s, p, pv_tiles, &qt_packed);
    }
    if (s.q.t)
        fc_amx_end();
    fc_fwd_end(&s, p, it, partial);
}

/* FC_FWD_TILES: S and P·V on tiles (outputs at bf16 or fp16 tolerance). */
void FC_ISA_FN(fc_fwd_item_tiles)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, float *partial)
{
    fc_fwd_item_on_tiles(p, it, t, ws, partial, true);
}

/* FC_FWD_TILES_QK: S on tiles, P·V on the fp32 GEMM (fp32 tolerance, fc_amx_pv_tiles). */
void FC_ISA_FN(fc_fwd_item_tiles_qk)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, float *partial)
{
    fc_fwd_item_on_tiles(p, it, t, ws, partial, false);
}

#if FC_BF16_FUSED
/* FC_FWD_FUSED: the fused row pipeline (amx_rows.h); a tile that hides positions and whose values
 * are not all finite takes the column-major step of FC_FWD_TILES (hidden values then need the
 * visibility path). */
void FC_ISA_FN(fc_fwd_item_fused)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, float *partial)
{
    fc_fwd_state s;
    fc_fwd_begin(&s, p, it, t, ws, false);
    fc_fwd_bufs *b = &s.b;
    bool qt_packed = false;
    while (fc_fwd_next(&s)) {
        if (!s.q.t)
            fc_fwd_pack_q_tiles(&s, p);
        if (!fc_tile_hides(p, s.kind) || fc_amx_values_finite(p, fc_kv_at_rows(s.rw), s.j0, s.jn, b->aff))
            fc_amx_rows_tile(&b->amx, &b->amx_rows, b->o, b->m, b->l, b->alpha, p, s.rw, s.j0, s.jn,
                             s.kind == FC_TILE_PARTIAL, b->aff);
        else
            fc_fwd_tile_tiles(&s, p, true, &qt_packed);
    }
    if (s.q.t)
        fc_amx_end();
    fc_fwd_end(&s, p, it, partial);
}
#endif /* FC_BF16_FUSED */
#endif /* FC_BF16_PRODUCTS */

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
