/*
 * Backward attention (semantics §3.3) in two deterministic passes, each recomputing
 * P = exp(x − m) / l from the given statistics:
 *
 *   dq pass, per query item (as the forward):  for each visible kv tile
 *       dP = dO·Vᵀ,  dS = P ∘ (dP·keep/kp − D),  dQ += dS·K
 *   dk/dv pass, per kv tile of one kv head:     for each query head of the group and query tile
 *       dV += (P·keep/kp)ᵀ·dO,  dK += dSᵀ·Q
 *
 * with D = rowsum(dO ∘ O).  Hidden positions have P = dS = 0, which keeps them out of the products
 * as long as every operand is finite; a tile with a non-finite operand (NaN or ±inf in q, k, v,
 * dO, D or the given statistics, semantics §0.3) and a hidden position takes the products over
 * its visible positions only (fc_gemm_visible), as 0·NaN would let the hidden ones in.
 * Every output row is owned by one item and summed in a fixed order,
 * so results are bit-identical for any thread count; no atomics, no O(S²) state.
 *
 * The products (fc_bwd_kind, chosen once per plan) are a compile-time argument `x` of the item
 * loops below, instantiated once per kind as the entry points at the end: FC_BWD_FP32 (the
 * micro-GEMM), and on the amx set FC_BWD_TILES and FC_BWD_ELEMENTS (amx_bwd.h), whose pairs
 * with a non-finite operand take the fp32 pair.
 * Compiled once per instruction set (see simd.h).
 */
#include <float.h>

#include "dropout.h"
#include "entry.h"
#include "gemm.h"
#include "qk.h"
#include "scores.h"
#include "softmax.h"
#include "walk.h"
#if FC_AMX
#include "amx_bwd.h"
#endif

typedef struct fc_bwd_bufs {
    float *qt, *qrows;    /* [Dt][Rp] and [Rp][ldq]: query (+ rope) rows */
    float *dot, *dorows;  /* [Dv][Rp] and [Rp][Dvp]: output-gradient rows */
    const float *q_rows, *do_rows; /* the rows in use: packed above, or the caller's memory */
    int64_t ld_q, ld_do;
    float *p, *ds, *gcap; /* [cols][Rp]: probabilities, dP then dS, softcap derivative */
    float *vis;           /* [cols][Rp]: visibility of the pair when visible_only */
    float *dst;           /* [Rp][cols]: dS transposed (dQ on amx tiles) */
    float *kb, *vb;       /* converted kv rows */
    float *acc_q;         /* dq pass: [rows][ldq] */
    float *acc_k, *acc_v; /* dk/dv pass: [cols][ldq], [cols][Dvp] */
    float *dq_slots;      /* fused pass: [query items of one kv head][Rp][ldq] */
    float *row;           /* scratch row */
    float *aff;           /* int8 dequantisation scratch */
    float *m, *linv, *dsum; /* per row: max, 1/sum, D */
    bool rows_finite;     /* q, dO, m, 1/l and D of the rows are all finite */
    bool visible_only;    /* the pair just computed needs fc_gemm_visible */
    bool transposed;      /* qt and dot hold the rows (the tile products need them only lazily) */
    bool on_tiles;        /* the pair just computed ran on AMX tiles, and so do its dQ, dK, dV products */
    fc_rows rows;
#if FC_AMX
    fc_amx_bwd amx;
#endif
    struct fc_bwd_row_slot *slots; /* fused pass: the loaded rows of a kv head's query items, or NULL */
    float *slot_mem;
    int64_t slot_floats;
} fc_bwd_bufs;

/* The fused pass keeps every query item's rows as fc_bwd_load_rows leaves them (packed and
 * transposed rows, statistics, D, tile operands) from the item's first pair on, where they fit in
 * FC_BWD_ROW_CACHE bytes; the two passes load them for every pair (the same values). */
#define FC_BWD_ROW_CACHE ((int64_t)16 << 20)
typedef struct fc_bwd_row_slot {
    const float *q_rows, *do_rows;
    int64_t ld_q, ld_do;
    bool loaded, rows_finite, transposed;
} fc_bwd_row_slot;

/* Row stride of query-feature accumulators: the rope part starts at column Dqk and whole vectors
 * are stored past either part's end. */
static int64_t fc_ldq(const fc_problem *p)
{
    return fc_round_up(p->Dqk + fc_round_up(p->Dr, FC_W), FC_W);
}

/* Whether the products of kind x may run on tiles (a compile-time constant in every instantiation). */
#define FC_BWD_ON_TILES(x) (FC_AMX && (x) != FC_BWD_FP32)

static size_t fc_bwd_carve(char *base, const fc_problem *p, fc_tiles t, fc_bwd_bufs *b, const fc_bwd_kind x)
{
    const int64_t Rp = fc_round_up(t.rows, FC_W), Dt = p->Dqk + p->Dr, Dvp = fc_round_up(p->Dv, FC_W);
    const int64_t ldq = fc_ldq(p), wide = ldq > Dvp ? ldq : Dvp;
    fc_carver cur = {base, 0};
#define TAKE(field, n) b->field = (float *)fc_take(&cur, (size_t)(n) * sizeof(float))
    TAKE(qt, Dt * Rp);
    TAKE(qrows, Rp * ldq);
    TAKE(dot, p->Dv * Rp);
    TAKE(dorows, Rp * Dvp);
    TAKE(p, t.cols * Rp);
    TAKE(ds, t.cols * Rp);
    TAKE(gcap, p->softcap > 0 ? t.cols * Rp : 0);
    TAKE(vis, t.cols * Rp);
    TAKE(dst, FC_BWD_ON_TILES(x) ? Rp * t.cols : 0);
    const int64_t kv_load = p->sparse.data ? t.cols : t.kv_rows; /* dense kv items load their rows whole */
    TAKE(kb, kv_load * Dt);
    TAKE(vb, kv_load * Dvp);
    TAKE(acc_q, Rp * ldq);
    TAKE(acc_k, t.kv_rows * ldq);
    TAKE(acc_v, t.kv_rows * Dvp);
    TAKE(row, wide);
    TAKE(aff, 2 * wide);
    TAKE(m, Rp);
    TAKE(linv, Rp);
    TAKE(dsum, Rp);
    b->dq_slots = NULL; /* fc_bwd_head_item: the dQ rows of a kv head's query items (below) */
    fc_rows_carve(&b->rows, &cur, Rp);
    b->on_tiles = false;
    int64_t tile_words = 0; /* per row slot: Qᵀ and dOᵀ tile operands */
#if FC_AMX
    if (FC_BWD_ON_TILES(x)) {
        fc_amx_bwd_carve(&b->amx, &cur, p, (int)Rp, t.cols);
        tile_words = (int64_t)fc_amx_bwd_place_rows(&b->amx, NULL, (int)Rp);
    }
#else
    (void)x;
#endif
    b->slots = NULL;
    b->slot_mem = NULL;
    b->slot_floats = fc_round_up(Dt * Rp, 16) + fc_round_up(Rp * ldq, 16) + fc_round_up(p->Dv * Rp, 16) +
                     fc_round_up(Rp * Dvp, 16) + 3 * fc_round_up(Rp, 16) + tile_words / 2;
    if (t.fused) {
        const int64_t tiles = (p->max_sq + t.rows - 1) / t.rows, items = p->G * (tiles > 1 ? tiles : 1);
        TAKE(dq_slots, items * Rp * ldq);
        if (items * b->slot_floats * (int64_t)sizeof(float) <= FC_BWD_ROW_CACHE) {
            b->slots = fc_take(&cur, (size_t)items * sizeof(fc_bwd_row_slot));
            TAKE(slot_mem, items * b->slot_floats);
        }
    }
#undef TAKE
    return cur.at + 64;
}

fc_bwd_kind FC_ISA_FN(fc_bwd_products)(const fc_problem *p)
{
#if FC_AMX
    if (fc_amx_bwd_applies(p))
        return fc_amx_bwd_elements_apply(p) ? FC_BWD_ELEMENTS : FC_BWD_TILES;
#endif
    (void)p;
    return FC_BWD_FP32;
}

size_t FC_ISA_FN(fc_bwd_workspace)(const fc_problem *p, fc_tiles t)
{
    fc_bwd_bufs b;
    return fc_bwd_carve(NULL, p, t, &b, FC_ISA_FN(fc_bwd_products)(p));
}

/* Packs the rows' query and output-gradient features and reads their statistics and D. */
FC_INLINE void fc_bwd_load_rows(const fc_problem *p, fc_bwd_bufs *b, const fc_bwd_kind x)
{
    const fc_rows *rw = &b->rows;
    const int Dv = (int)p->Dv, Dvp = (int)fc_round_up(Dv, FC_W);
    b->transposed = !FC_BWD_ON_TILES(x);
    b->q_rows = fc_pack_rows(rw, &p->q, (int)p->Dqk, &p->q_rope, (int)p->Dr, b->qrows, fc_ldq(p),
                             b->transposed ? b->qt : NULL, &b->ld_q);
    b->do_rows = fc_pack_rows(rw, &p->dout, Dv, NULL, 0, b->dorows, Dvp, b->transposed ? b->dot : NULL, &b->ld_do);
    for (int r = 0; r < rw->padded; r++) {
        b->m[r] = 0.0f, b->linv[r] = 0.0f, b->dsum[r] = 0.0f;
        if (r >= rw->count || rw->pos[r] >= rw->bt->sq)
            continue; /* padding rows: P = 0 */
        const int64_t at = fc_stat_offset(p, rw->bt, rw->head[r], rw->pos[r]);
        b->m[r] = (float)(p->stats.max[at] - rw->aoff[r]); /* into the rows' logit frame (rows.h) */
        b->linv[r] = 1.0f / p->stats.sum[at];
        const char *o = fc_q_row(&p->out, rw, rw->head[r], rw->pos[r]);
        const float *orow = (const float *)o;
        if (p->out.dtype != FC_F32 || p->out.se != 1) {
            fc_load_row(b->row, o, p->out.dtype, p->out.se, Dv);
            orow = b->row;
        }
        const float d = fc_dot(b->do_rows + (ptrdiff_t)r * b->ld_do, orow, Dv);
        b->dsum[r] = d;
    }
    const int R = rw->count;
    b->rows_finite = fc_all_finite(b->q_rows, R, b->ld_q, (int)(p->Dqk + p->Dr)) &&
                     fc_all_finite(b->do_rows, R, b->ld_do, Dv) && fc_all_finite(b->m, 1, 0, R) &&
                     fc_all_finite(b->linv, 1, 0, R) && fc_all_finite(b->dsum, 1, 0, R);
#if FC_AMX
    if (FC_BWD_ON_TILES(x) && b->rows_finite)
        fc_amx_bwd_rows(&b->amx, b->q_rows, b->ld_q, (int)(p->Dqk + p->Dr), b->do_rows, b->ld_do, Dv, R, rw->padded);
#endif
}

/* Whether the key (+ rope) and value rows of a tile are all finite. */
static bool fc_kv_finite(const fc_problem *p, const fc_kv_tile *kv, int jn)
{
    return fc_all_finite(kv->k, jn, kv->ldk, kv->k_width) && (!kv->kr || fc_all_finite(kv->kr, jn, kv->ldkr, (int)p->Dr)) &&
           fc_all_finite(kv->v, jn, kv->ldv, (int)p->Dv);
}

/* Configures (on) or releases the tiles, for the items whose products may run on them. */
FC_INLINE void fc_bwd_tiles(const fc_bwd_kind x, bool on)
{
#if FC_AMX
    if (FC_BWD_ON_TILES(x) && on)
        fc_amx_begin();
    else if (FC_BWD_ON_TILES(x))
        fc_amx_end();
#else
    (void)x, (void)on;
#endif
}

/* The kv rows as tile operands, where pairs with these rows may run on tiles (kr is NULL: bf16
 * and fp16 rope features are appended to the converted key rows). */
FC_INLINE void fc_bwd_pack_kv(const fc_problem *p, fc_bwd_bufs *b, const fc_kv_tile *kv, int jn, bool kv_finite,
                              const fc_bwd_kind x)
{
#if FC_AMX
    if (FC_BWD_ON_TILES(x) && kv_finite)
        fc_amx_bwd_kv(&b->amx, kv->k, kv->ldk, kv->k_width, kv->v, kv->ldv, (int)p->Dv, jn);
#else
    (void)p, (void)b, (void)kv, (void)jn, (void)kv_finite, (void)x;
#endif
}

/* The logits of the pair's S (in b->p) and P = exp(x − m) / l from them. */
static void fc_bwd_probs(const fc_problem *p, fc_bwd_bufs *b, int64_t j0, int jn, fc_tile_kind kind)
{
    const fc_rows *rw = &b->rows;
    const int Rp = rw->padded;
    fc_scores(b->p, b->gcap, jn, j0, p, rw, kind);
    for (int j = 0; j < jn; j++) /* P = exp(x − m) / l */
        for (int r = 0; r < Rp; r += FC_W) {
            float *pj = b->p + (ptrdiff_t)j * Rp + r;
            v_store(pj, v_mul(fc_softmax_exp(v_load(pj), v_load(b->m + r)), v_load(b->linv + r)));
        }
}

/* dS = P ∘ (dP − D) from dP in b->ds; with dropout, dP and P of dropped positions vanish and kept
 * ones scale by 1/kp (b->p then holds P·keep/kp, what dV needs). */
static void fc_bwd_dscores(const fc_problem *p, fc_bwd_bufs *b, int64_t j0, int jn)
{
    const fc_rows *rw = &b->rows;
    const int Rp = rw->padded;
    if (fc_has_dropout(p))
        fc_dropout_scaled_tile(b->ds, jn, j0, p, rw);
    for (int j = 0; j < jn; j++) /* dS = P ∘ (dP − D) (∘ softcap derivative) */
        for (int r = 0; r < Rp; r += FC_W) {
            float *dsj = b->ds + (ptrdiff_t)j * Rp + r;
            fvec ds = v_mul(v_load(b->p + (ptrdiff_t)j * Rp + r), v_sub(v_load(dsj), v_load(b->dsum + r)));
            if (p->softcap > 0)
                ds = v_mul(ds, v_load(b->gcap + (ptrdiff_t)j * Rp + r));
            v_store(dsj, ds);
        }
    if (fc_has_dropout(p))
        fc_dropout_scaled_tile(b->p, jn, j0, p, rw);
}

/* A pair on the fp32 products: S = K·Qᵀ and dPᵀ = V·dOᵀ on the micro-GEMM (the rows transposed
 * first where the tile products left them row-major).  Sets b->visible_only (and b->vis) when the
 * products must skip hidden positions. */
static void fc_bwd_pair_fp32(const fc_problem *p, fc_bwd_bufs *b, const fc_kv_tile *kv, int64_t j0, int jn,
                             fc_tile_kind kind, bool kv_finite)
{
    const fc_rows *rw = &b->rows;
    const int Rp = rw->padded;
    b->visible_only = fc_tile_hides(p, kind) && !(kv_finite && b->rows_finite);
    b->on_tiles = false;
    if (b->visible_only)
        fc_visibility_tile(b->vis, jn, j0, p, rw, kind);
    if (!b->transposed) {
        fc_transpose_rows(b->q_rows, b->ld_q, b->qt, Rp, rw->count, (int)(p->Dqk + p->Dr));
        fc_transpose_rows(b->do_rows, b->ld_do, b->dot, Rp, rw->count, (int)p->Dv);
        b->transposed = true;
    }
    const fc_q_operand q = {b->qt, b->q_rows, b->ld_q};
    fc_qk(b->p, kv, &q, p, rw, NULL, j0, jn, NULL); /* the backward converts its keys (dQ needs them) */
    fc_bwd_probs(p, b, j0, jn, kind);
    fc_gemm(jn, Rp, (int)p->Dv, kv->v, kv->ldv, 1, b->dot, Rp, b->ds, Rp, false); /* dPᵀ = V·dOᵀ */
    fc_bwd_dscores(p, b, j0, jn);
}

#if FC_AMX
/* A pair on tiles (every operand finite, the tile's kv rows packed): S and dPᵀ as tile products;
 * FC_BWD_ELEMENTS leaves P and dS as the gradient products' bf16 operands (amx_bwd.h). */
FC_INLINE void fc_bwd_pair_tiles(const fc_problem *p, fc_bwd_bufs *b, int64_t j0, int jn, fc_tile_kind kind,
                                 const fc_bwd_kind x)
{
    const fc_rows *rw = &b->rows;
    const int Rp = rw->padded;
    b->visible_only = false;
    b->on_tiles = true;
    fc_amx_bwd_s_dp(&b->amx, b->p, b->ds, jn, Rp);
    if (x == FC_BWD_ELEMENTS) {
        const fc_amx_bwd_rowc c = {b->m, b->linv, b->dsum, rw->lo1, rw->hi1, rw->lo2, rw->hi2, p->scale};
        fc_amx_bwd_elements(&b->amx, b->p, b->ds, jn, Rp, &c, kind == FC_TILE_PARTIAL, j0);
        return;
    }
    fc_bwd_probs(p, b, j0, jn, kind);
    fc_bwd_dscores(p, b, j0, jn);
}
#endif

/* For one (rows, kv tile) pair that the rows see (`kind` FULL or PARTIAL): P into b->p, dS into
 * b->ds; with dropout b->p then holds P·keep/kp (what dV needs).  kv_finite: fc_kv_finite of the
 * tile.  On tiles where the kind has them and every operand is finite (b->on_tiles), else on the
 * fp32 products. */
FC_INLINE void fc_bwd_pair(const fc_problem *p, fc_bwd_bufs *b, const fc_kv_tile *kv, int64_t j0, int jn,
                           fc_tile_kind kind, bool kv_finite, const fc_bwd_kind x)
{
#if FC_AMX
    if (FC_BWD_ON_TILES(x) && kv_finite && b->rows_finite) {
        fc_bwd_pair_tiles(p, b, j0, jn, kind, x);
        return;
    }
#endif
    fc_bwd_pair_fp32(p, b, kv, j0, jn, kind, kv_finite);
}

/* C += A·B for the pair just computed: all terms, or the visible ones only (A's strides address
 * b->vis too). */
static void fc_bwd_gemm(const fc_bwd_bufs *b, int M, int N, int K, const float *A, ptrdiff_t a_rs, ptrdiff_t a_ks,
                        const float *B, ptrdiff_t ldb, float *C, ptrdiff_t ldc)
{
    if (b->visible_only)
        fc_gemm_visible(M, N, K, A, a_rs, a_ks, b->vis, B, ldb, C, ldc);
    else
        fc_gemm(M, N, K, A, a_rs, a_ks, B, ldb, C, ldc, true);
}

/* Stores scale·acc rows as a gradient split into its main and rope parts. */
static void fc_store_grad_rows(float *row, const float *acc, int64_t ld, int n, float scale, const fc_view *main_v,
                               const fc_view *rope_v, int64_t dmain, int64_t drope, char *(*addr)(const fc_view *, int64_t, void *),
                               void *ctx)
{
    for (int r = 0; r < n; r++) {
        for (int64_t e = 0; e < dmain + drope; e++)
            row[e] = acc[r * ld + e] * scale;
        char *dst = addr(main_v, r, ctx);
        if (dst)
            fc_store_row(dst, main_v->dtype, main_v->se, row, (int)dmain);
        if (drope && (dst = addr(rope_v, r, ctx)))
            fc_store_row(dst, rope_v->dtype, rope_v->se, row + dmain, (int)drope);
    }
}

static char *fc_dq_addr(const fc_view *v, int64_t r, void *ctx)
{
    const fc_rows *rw = ctx;
    return (char *)fc_q_row(v, rw, rw->head[r], rw->pos[r]);
}

/* dQ += dS·K for the pair just computed, into the rows' accumulator acc. */
FC_INLINE void fc_bwd_add_dq(const fc_problem *p, fc_bwd_bufs *b, const fc_kv_tile *kv, int jn, fc_tiles t, float *acc,
                             const fc_bwd_kind x)
{
    const fc_rows *rw = &b->rows;
    const int64_t ldq = fc_ldq(p);
#if FC_AMX
    if (x == FC_BWD_ELEMENTS && b->on_tiles) {
        fc_amx_bwd_dq_made(&b->amx, jn, rw->count, acc, ldq);
        return;
    }
    if (x == FC_BWD_TILES && b->on_tiles) {
        fc_transpose(b->ds, rw->padded, b->dst, t.cols, jn, rw->count);
        fc_amx_bwd_product(&b->amx, b->amx.dq_parts, rw->count, jn, b->dst, t.cols, b->amx.kb, b->amx.nq, acc, ldq);
        return;
    }
#else
    (void)t, (void)x;
#endif
    fc_bwd_gemm(b, rw->count, kv->k_width, jn, b->ds, 1, rw->padded, kv->k, kv->ldk, acc, ldq);
    if (kv->kr)
        fc_bwd_gemm(b, rw->count, (int)p->Dr, jn, b->ds, 1, rw->padded, kv->kr, kv->ldkr, acc + p->Dqk, ldq);
}

/* The dq pass's item: dQ of its rows over the kv tiles they see. */
FC_INLINE void fc_bwd_dq_rows(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, const fc_bwd_kind x)
{
    fc_bwd_bufs b;
    fc_bwd_carve(fc_align64(ws), p, t, &b, x);
    fc_rows *rw = &b.rows;
    fc_rows_init(rw, p, it);
    const int64_t ldq = fc_ldq(p);
    memset(b.acc_q, 0, (size_t)(rw->padded * ldq) * sizeof(float)); /* tile products write padding rows too */
    fc_bwd_tiles(x, true);
    fc_kv_walk walk;
    fc_walk_init(&walk, p, rw, t.cols, 0, rw->bt->skv);
    if (!p->sparse.data) { /* the dk/dv items' kv tiles (aligned, to skv): the pairs of the fused pass */
        walk.next = walk.lo - walk.lo % t.cols;
        walk.hi = rw->bt->skv;
    }
    int64_t j0;
    int jn;
    fc_tile_kind kind;
    bool loaded = false;
    while (fc_walk_next(&walk, &j0, &jn, &kind)) {
        if (!loaded) {
            fc_bwd_load_rows(p, &b, x);
            loaded = true;
        }
        fc_kv_tile kv;
        fc_kv_tile_load(&kv, p, fc_kv_at_rows(rw), j0, jn, !p->sparse.data, true, b.kb, b.vb, b.aff);
        /* (only tiles that hide positions or run on tiles need to know) */
        const bool kv_finite = !(FC_BWD_ON_TILES(x) || fc_tile_hides(p, kind)) || fc_kv_finite(p, &kv, jn);
        fc_bwd_pack_kv(p, &b, &kv, jn, kv_finite, x);
        fc_bwd_pair(p, &b, &kv, j0, jn, kind, kv_finite, x);
        fc_bwd_add_dq(p, &b, &kv, jn, t, b.acc_q, x);
    }
    fc_bwd_tiles(x, false);
    fc_store_grad_rows(b.row, b.acc_q, ldq, rw->count, p->scale, &p->dq, &p->dq_rope, p->Dqk, p->Dr, fc_dq_addr, rw);
}

/* dV += Pdᵀ·dO and dK += dSᵀ·Q for the pair just computed, into accumulator rows from `row0`,
 * straight from the [cols][Rp] tiles: each register tile broadcasts from its rows of P and dS
 * in place (a transposed copy costs a pass and cache room, and saves the product nothing). */
FC_INLINE void fc_bwd_accumulate_kv(const fc_problem *p, fc_bwd_bufs *b, int jn, int64_t row0,
                                    const fc_bwd_kind x)
{
    const int R = b->rows.count, Rp = b->rows.padded;
    const int64_t ldq = fc_ldq(p), Dvp = fc_round_up(p->Dv, FC_W);
#if FC_AMX
    if (x == FC_BWD_ELEMENTS && b->on_tiles) {
        fc_amx_bwd_dkv_made(&b->amx, jn, R, Rp, b->acc_v + row0 * Dvp, Dvp, b->acc_k + row0 * ldq, ldq);
        return;
    }
    if (x == FC_BWD_TILES && b->on_tiles) {
        fc_amx_bwd_product(&b->amx, b->amx.dv_parts, jn, R, b->p, Rp, b->amx.dob, b->amx.nv, b->acc_v + row0 * Dvp, Dvp);
        fc_amx_bwd_product(&b->amx, b->amx.dk_parts, jn, R, b->ds, Rp, b->amx.qb, b->amx.nq, b->acc_k + row0 * ldq, ldq);
        return;
    }
#else
    (void)x;
#endif
    fc_bwd_gemm(b, jn, (int)p->Dv, R, b->p, Rp, 1, b->do_rows, b->ld_do, b->acc_v + row0 * Dvp, Dvp);
    fc_bwd_gemm(b, jn, (int)(p->Dqk + p->Dr), R, b->ds, Rp, 1, b->q_rows, b->ld_q, b->acc_k + row0 * ldq, ldq);
}

/* Rows of the item below the batch's kv length; the rest (dense padding) get zero gradients. */
static int64_t fc_live_kv_rows(const fc_batch *bt, const fc_kv_item *it)
{
    const int64_t n = bt->skv - it->j0;
    return n < 0 ? 0 : n < it->j_count ? n : it->j_count;
}

typedef struct fc_kv_rows_at {
    fc_kv_at at;
    int64_t j0;
} fc_kv_rows_at;

static char *fc_dkv_addr(const fc_view *v, int64_t r, void *ctx)
{
    const fc_kv_rows_at *k = ctx;
    return (char *)fc_kv_row(v, k->at, k->j0 + r);
}

/* Points the row buffers at row slot k and loads the rows there at its first use. */
FC_INLINE void fc_bwd_slot_rows(const fc_problem *p, fc_bwd_bufs *b, int64_t k, const fc_bwd_kind x)
{
    const int64_t Rp = b->rows.padded, ldq = fc_ldq(p), Dvp = fc_round_up(p->Dv, FC_W);
    fc_bwd_row_slot *s = &b->slots[k];
    float *at = b->slot_mem + k * b->slot_floats;
#define NEXT(field, n) b->field = at, at += fc_round_up(n, 16)
    NEXT(qt, (p->Dqk + p->Dr) * Rp);
    NEXT(qrows, Rp * ldq);
    NEXT(dot, p->Dv * Rp);
    NEXT(dorows, Rp * Dvp);
    NEXT(m, Rp);
    NEXT(linv, Rp);
    NEXT(dsum, Rp);
#undef NEXT
#if FC_AMX
    if (FC_BWD_ON_TILES(x))
        fc_amx_bwd_place_rows(&b->amx, (uint16_t *)at, (int)Rp);
#endif
    if (!s->loaded) {
        fc_bwd_load_rows(p, b, x);
        *s = (fc_bwd_row_slot){b->q_rows, b->do_rows, b->ld_q, b->ld_do, true, b->rows_finite, b->transposed};
        return;
    }
    b->q_rows = s->q_rows, b->do_rows = s->do_rows, b->ld_q = s->ld_q, b->ld_do = s->ld_do;
    b->rows_finite = s->rows_finite, b->transposed = s->transposed;
}

/* The query items of kv head n2 of a batch (schedule.c cuts the dq pass's items alike): head
 * block hb < hblocks, position tile < tiles. */
typedef struct fc_q_tiling {
    int64_t ic, nc, hblocks, tiles;
} fc_q_tiling;

static fc_q_tiling fc_q_tiling_of(const fc_problem *p, const fc_batch *bt, fc_tiles t)
{
    fc_q_tiling q;
    fc_item_shape(p, bt, t, &q.ic, &q.nc);
    q.hblocks = (p->G + q.nc - 1) / q.nc;
    q.tiles = bt->q_rows > 0 ? (bt->q_rows + q.ic - 1) / q.ic : 0;
    return q;
}

static fc_item fc_q_item(const fc_problem *p, const fc_q_tiling *q, int64_t b, int64_t n2, int64_t hb, int64_t tile)
{
    const fc_batch *bt = &p->batch[b];
    const int64_t i0 = tile * q->ic, n0 = hb * q->nc;
    return (fc_item){.b = b, .n_first = n2 * p->G + n0, .n_count = p->G - n0 < q->nc ? p->G - n0 : q->nc, .i0 = i0,
                     .i_count = bt->q_rows - i0 < q->ic ? bt->q_rows - i0 : q->ic, .split = 0, .nsplit = 1};
}

/* The kv rows [s, s + n) of a loaded tile, as a tile of their own. */
static fc_kv_tile fc_kv_sub_tile(const fc_kv_tile *kv, int s)
{
    fc_kv_tile sub = *kv;
    sub.k += (ptrdiff_t)s * kv->ldk;
    sub.v += (ptrdiff_t)s * kv->ldv;
    if (kv->kr)
        sub.kr += (ptrdiff_t)s * kv->ldkr;
    return sub;
}

/* dK and dV of kv item `it` (the tiles configured by the caller): the pairs with the query items
 * of its head that see it, in the order (head block, position tile), each query item's rows
 * loaded once for the item's kv tiles of t.cols rows (t.kv_rows a multiple of it: the query rows
 * stay in cache across them).  Every kv tile still sums over the query items in that order, and
 * with dq_slots (the fused pass) each pair also adds dS·K to the dQ rows of its query item in kv
 * tile order as the dq pass does: the same pairs, the same sums.  Products on tiles take the
 * item as one kv tile (their rule sets kv_rows = cols). */
FC_INLINE void fc_bwd_kv_rows(const fc_problem *p, const fc_kv_item *it, fc_tiles t, fc_bwd_bufs *b, float *dq_slots,
                              const fc_bwd_kind x)
{
    const fc_batch *bt = &p->batch[it->b];
    const int64_t ldq = fc_ldq(p), Dvp = fc_round_up(p->Dv, FC_W), slot = fc_round_up(t.rows, FC_W) * ldq;
    const int jn = (int)it->j_count, live = (int)fc_live_kv_rows(bt, it);
    const int width = FC_BWD_ON_TILES(x) || t.cols > live ? live : t.cols, subs = live > 0 ? (live + width - 1) / width : 0;
    const fc_kv_at at = {it->b, bt->kv_tok, it->n2};
    memset(b->acc_k, 0, (size_t)(jn * ldq) * sizeof(float));
    memset(b->acc_v, 0, (size_t)(jn * Dvp) * sizeof(float));

    int64_t i_lo = 0, i_hi = 0;
    if (live > 0)
        fc_col_rows(bt, it->j0, it->j0 + live, &i_lo, &i_hi);
    const fc_q_tiling q = fc_q_tiling_of(p, bt, t);
    if (i_lo < i_hi && q.tiles > 0) {
        fc_kv_tile kv;
        fc_kv_tile_load(&kv, p, at, it->j0, live, false, true, b->kb, b->vb, b->aff);
        uint64_t finite = 0; /* bit s: fc_kv_finite of kv tile s (past 64 tiles: asked per pair) */
        for (int s = 0; s < subs && s < 64; s++) {
            const fc_kv_tile sub = fc_kv_sub_tile(&kv, s * width);
            finite |= (uint64_t)fc_kv_finite(p, &sub, live - s * width < width ? live - s * width : width) << s;
        }
        fc_bwd_pack_kv(p, b, &kv, live, finite & 1, x); /* (one kv tile) once for all the group's query tiles */
        const int64_t first = i_lo / q.ic, last = (i_hi - 1) / q.ic < q.tiles ? (i_hi - 1) / q.ic : q.tiles - 1;
        for (int64_t hb = 0; hb < q.hblocks; hb++)
            for (int64_t tile = first; tile <= last; tile++) {
                const fc_item qi = fc_q_item(p, &q, it->b, it->n2, hb, tile);
                fc_rows_init(&b->rows, p, &qi);
                const int64_t k = hb * q.tiles + tile;
                bool loaded = false;
                for (int s = 0; s < subs; s++) {
                    const int64_t j0 = it->j0 + s * width;
                    const int n = live - s * width < width ? live - s * width : width;
                    const fc_tile_kind kind = fc_rows_classify(&b->rows, j0, j0 + n);
                    if (kind == FC_TILE_SKIP)
                        continue;
                    if (!loaded && dq_slots && b->slots)
                        fc_bwd_slot_rows(p, b, k, x);
                    else if (!loaded)
                        fc_bwd_load_rows(p, b, x);
                    loaded = true;
                    const fc_kv_tile sub = fc_kv_sub_tile(&kv, s * width);
                    const bool kv_finite = s < 64 ? (finite >> s & 1) : fc_kv_finite(p, &sub, n);
                    fc_bwd_pair(p, b, &sub, j0, n, kind, kv_finite, x);
                    if (dq_slots && b->slots) /* (fc_bwd_pair may have transposed the rows) */
                        b->slots[k].transposed = b->transposed;
                    fc_bwd_accumulate_kv(p, b, n, s * width, x);
                    if (dq_slots)
                        fc_bwd_add_dq(p, b, &sub, n, t, dq_slots + k * slot, x);
                }
            }
    }
    fc_kv_rows_at ctx = {at, it->j0};
    fc_store_grad_rows(b->row, b->acc_k, ldq, jn, p->scale, &p->dk, &p->dk_rope, p->Dqk, p->Dr, fc_dkv_addr, &ctx);
    fc_store_grad_rows(b->row, b->acc_v, Dvp, jn, 1.0f, &p->dv, NULL, p->Dv, 0, fc_dkv_addr, &ctx);
}

/* The dk/dv pass's item: dK and dV of its kv rows. */
FC_INLINE void fc_bwd_dkv_rows(const fc_problem *p, const fc_kv_item *it, fc_tiles t, void *ws, const fc_bwd_kind x)
{
    fc_bwd_bufs b;
    fc_bwd_carve(fc_align64(ws), p, t, &b, x);
    fc_bwd_tiles(x, true);
    fc_bwd_kv_rows(p, it, t, &b, NULL, x);
    fc_bwd_tiles(x, false);
}

/* The fused pass (t.fused): kv head n2 of batch bi whole — every kv tile in order as a dk/dv
 * item that also accumulates dQ, then the dQ rows of every query item of the head.  One pass
 * computes each pair's P and dS once (the two passes compute them twice) for the same results. */
FC_INLINE void fc_bwd_head(const fc_problem *p, int64_t bi, int64_t n2, fc_tiles t, void *ws, const fc_bwd_kind x)
{
    fc_bwd_bufs b;
    fc_bwd_carve(fc_align64(ws), p, t, &b, x);
    const fc_batch *bt = &p->batch[bi];
    const fc_q_tiling q = fc_q_tiling_of(p, bt, t);
    const int64_t ldq = fc_ldq(p), slot = fc_round_up(t.rows, FC_W) * ldq;
    memset(b.dq_slots, 0, (size_t)(q.hblocks * q.tiles * slot) * sizeof(float));
    if (b.slots)
        memset(b.slots, 0, (size_t)(q.hblocks * q.tiles) * sizeof(fc_bwd_row_slot));
    fc_bwd_tiles(x, true);
    for (int64_t j0 = 0; j0 < bt->kv_rows; j0 += t.kv_rows) {
        const fc_kv_item it = {.b = bi, .n2 = n2, .j0 = j0,
                               .j_count = bt->kv_rows - j0 < t.kv_rows ? bt->kv_rows - j0 : t.kv_rows};
        fc_bwd_kv_rows(p, &it, t, &b, b.dq_slots, x);
    }
    fc_bwd_tiles(x, false);
    for (int64_t hb = 0; hb < q.hblocks; hb++)
        for (int64_t tile = 0; tile < q.tiles; tile++) {
            const fc_item qi = fc_q_item(p, &q, bi, n2, hb, tile);
            fc_rows_init(&b.rows, p, &qi);
            fc_store_grad_rows(b.row, b.dq_slots + (hb * q.tiles + tile) * slot, ldq, b.rows.count, p->scale, &p->dq,
                               &p->dq_rope, p->Dqk, p->Dr, fc_dq_addr, &b.rows);
        }
}

/* The entry points: the item loops above, instantiated once per products kind. */
#define FC_BWD_ENTRIES(suffix, x)                                                                                      \
    void FC_ISA_FN(fc_bwd_dq_item_##suffix)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws)              \
    {                                                                                                                  \
        fc_bwd_dq_rows(p, it, t, ws, x);                                                                               \
    }                                                                                                                  \
    void FC_ISA_FN(fc_bwd_dkv_item_##suffix)(const fc_problem *p, const fc_kv_item *it, fc_tiles t, void *ws)          \
    {                                                                                                                  \
        fc_bwd_dkv_rows(p, it, t, ws, x);                                                                              \
    }                                                                                                                  \
    void FC_ISA_FN(fc_bwd_head_item_##suffix)(const fc_problem *p, int64_t b, int64_t n2, fc_tiles t, void *ws)        \
    {                                                                                                                  \
        fc_bwd_head(p, b, n2, t, ws, x);                                                                               \
    }
FC_BWD_ENTRIES(fp32, FC_BWD_FP32)
#if FC_AMX
FC_BWD_ENTRIES(tiles, FC_BWD_TILES)
FC_BWD_ENTRIES(elements, FC_BWD_ELEMENTS)
#endif

/* Sparse dk/dv: the item owns kv rows [j0, j0 + j_count) of one kv head and scans every query
 * position of the batch in order, adding the contributions of the selected blocks that fall in
 * its rows (a block listed twice contributes twice).  The fixed scan order keeps it
 * deterministic; the statistics given make each block's P computable on its own. */
void FC_ISA_FN(fc_bwd_sparse_dkv_item)(const fc_problem *p, const fc_kv_item *it, fc_tiles t, void *ws)
{
    fc_bwd_bufs b; /* its kv ranges are not whole tiles of the accumulators: the fp32 products */
    fc_bwd_carve(fc_align64(ws), p, t, &b, FC_BWD_FP32);
    const fc_batch *bt = &p->batch[it->b];
    const int64_t ldq = fc_ldq(p), Dvp = fc_round_up(p->Dv, FC_W), lo = it->j0, hi = it->j0 + fc_live_kv_rows(bt, it);
    const fc_kv_at at = {it->b, bt->kv_tok, it->n2};
    memset(b.acc_k, 0, (size_t)(it->j_count * ldq) * sizeof(float));
    memset(b.acc_v, 0, (size_t)(it->j_count * Dvp) * sizeof(float));

    for (int64_t i = 0; i < bt->sq; i++) {
        const char *ind = fc_sparse_row(&p->sparse, bt, it->b, i, it->n2);
        const int64_t thr = fc_sparse_threshold(&p->sparse, bt, i);
        for (int64_t h0 = 0; h0 < p->G; h0 += t.rows) { /* the group's heads, at most t.rows at a time */
            const fc_item q = {.b = it->b, .n_first = it->n2 * p->G + h0, .n_count = p->G - h0 < t.rows ? p->G - h0 : t.rows,
                               .i0 = i, .i_count = 1};
            bool loaded = false;
            int64_t a, z;
            int got;
            for (int64_t k = 0; thr > 0 && (got = fc_sparse_span(&p->sparse, ind, k, thr, &a, &z)) >= 0; k++) {
                a = a > lo ? a : lo;
                z = z < hi ? z : hi;
                if (!got || a >= z)
                    continue;
                if (!loaded) {
                    fc_rows_init(&b.rows, p, &q);
                    fc_bwd_load_rows(p, &b, FC_BWD_FP32);
                    loaded = true;
                }
                for (int64_t j0 = a; j0 < z; j0 += t.cols) {
                    const int jn = (int)(z - j0 < t.cols ? z - j0 : t.cols);
                    fc_kv_tile kv;
                    fc_kv_tile_load(&kv, p, at, j0, jn, false, true, b.kb, b.vb, b.aff);
                    fc_bwd_pair(p, &b, &kv, j0, jn, FC_TILE_FULL, true, FC_BWD_FP32); /* selected blocks hide nothing */
                    fc_bwd_accumulate_kv(p, &b, jn, j0 - lo, FC_BWD_FP32);
                }
            }
        }
    }
    fc_kv_rows_at ctx = {at, it->j0};
    fc_store_grad_rows(b.row, b.acc_k, ldq, (int)it->j_count, p->scale, &p->dk, &p->dk_rope, p->Dqk, p->Dr, fc_dkv_addr,
                       &ctx);
    fc_store_grad_rows(b.row, b.acc_v, Dvp, (int)it->j_count, 1.0f, &p->dv, NULL, p->Dv, 0, fc_dkv_addr, &ctx);
}

/* dsink[n1] = −Σ_b Σ_i exp(sink − m_i) / l_i · D_i, summed in a fixed order (double). */
void FC_ISA_FN(fc_bwd_dsink_head)(const fc_problem *p, int64_t n1, void *ws)
{
    float *dout = (float *)fc_align64(ws), *out = dout + fc_round_up(p->Dv, 16);
    double total = 0.0;
    const float sink = fc_sink_at(p, n1);
    for (int64_t b = 0; b < p->B; b++) {
        const fc_batch *bt = &p->batch[b];
        for (int64_t i = 0; i < bt->sq; i++) {
            const int64_t at = fc_stat_offset(p, bt, n1, i);
            const double ps = exp((double)sink - p->stats.max[at]) / p->stats.sum[at];
            if (ps == 0.0)
                continue;
            const int64_t esz_o = fc_dtype_bytes(p->out.dtype), esz_d = fc_dtype_bytes(p->dout.dtype);
            fc_load_row(out, fc_view_row(&p->out, esz_o, b, bt->q_tok, n1, i), p->out.dtype, p->out.se, (int)p->Dv);
            fc_load_row(dout, fc_view_row(&p->dout, esz_d, b, bt->q_tok, n1, i), p->dout.dtype, p->dout.se, (int)p->Dv);
            double d = 0.0;
            for (int64_t e = 0; e < p->Dv; e++)
                d += (double)dout[e] * out[e];
            total -= ps * d;
        }
    }
    p->dsink[n1] = (float)total;
}
