/*
 * The score pipeline on one transposed tile S[j][r] (j < jn kv columns from j0, r < Rp rows):
 *
 *     x = softcap(scale·(s + pse_before)) + pse_after − slope·|Δpos|   (or ·sqrt|Δpos|)
 *     hidden (outside the row's spans, or set in the explicit mask) → −inf
 *
 * Forward and backward both call fc_scores(); nothing else knows pse, ALiBi or mask rules
 * (fc_visibility_tile gives the same hidden set as numbers, for the non-finite paths).
 */
#ifndef FC_KERNELS_SCORES_H
#define FC_KERNELS_SCORES_H

#include "../core/terms.h"
#include "pack.h"

/* Element (i, j) of the external pse for row head n1 (semantics §2.4; fc_pse_offset). */
static inline float fc_pse_at(const fc_problem *p, const fc_batch *bt, int64_t n1, int64_t i, int64_t j)
{
    const fc_pse_view *ps = &p->pse;
    return fc_load_scalar(ps->data + fc_pse_offset(ps, bt, n1, i, j) * fc_dtype_bytes(ps->dtype), ps->dtype);
}

/* Adds the pse to every element of the tile. */
static inline void fc_scores_add_pse(float *S, int jn, int64_t j0, const fc_problem *p, const fc_rows *rw)
{
    const int Rp = rw->padded;
    for (int r = 0; r < rw->count; r++) {
        const int64_t n1 = rw->head[r], i = rw->pos[r];
        if (i >= rw->bt->sq)
            continue;
        for (int j = 0; j < jn; j++) {
            if (rw->hi1[r] <= rw->lo1[r] && rw->hi2[r] <= rw->lo2[r])
                break; /* the row sees nothing: its pse may lie outside the tensor */
            const float jf = (float)(j0 + j);
            if ((jf >= rw->lo1[r] && jf < rw->hi1[r]) || (jf >= rw->lo2[r] && jf < rw->hi2[r]))
                S[(ptrdiff_t)j * Rp + r] += fc_pse_at(p, rw->bt, n1, i, j0 + j);
        }
    }
}

FC_INLINE fvec v_tanh(fvec t)
{
    const fvec a = v_abs(t);
    const fvec e = v_exp(v_add(a, a));
    const fvec th = v_sub(v_set1(1.0f), v_div(v_set1(2.0f), v_add(e, v_set1(1.0f))));
    return v_select(v_lt(t, v_zero()), v_sub(v_zero(), th), th);
}

/* Whether a tile of this kind may hold hidden positions (a partial tile, or an explicit mask). */
static inline bool fc_tile_hides(const fc_problem *p, fc_tile_kind kind)
{
    return kind == FC_TILE_PARTIAL || p->mask.data != NULL;
}

/* Sets the tile elements of hidden positions (outside the row's spans, or set in the explicit
 * mask) to `value`: −inf for scores, 0 for a visibility tile. */
static inline void fc_hide(float *S, int jn, int64_t j0, const fc_problem *p, const fc_rows *rw, fc_tile_kind kind,
                           float value)
{
    const int Rp = rw->padded;
    if (kind == FC_TILE_PARTIAL) {
        const fvec hidden = v_set1(value);
        for (int j = 0; j < jn; j++) {
            float *row = S + (ptrdiff_t)j * Rp;
            const fvec jf = v_set1((float)(j0 + j));
            for (int r = 0; r < Rp; r += FC_W) {
                const fmask in1 = m_and(v_le(v_load(rw->lo1 + r), jf), v_lt(jf, v_load(rw->hi1 + r)));
                const fmask in2 = m_and(v_le(v_load(rw->lo2 + r), jf), v_lt(jf, v_load(rw->hi2 + r)));
                v_store(row + r, v_select(m_or(in1, in2), v_load(row + r), hidden));
            }
        }
    }

    if (p->mask.data) {
        const fc_mask_view *mk = &p->mask;
        for (int r = 0; r < rw->count; r++) {
            if (rw->pos[r] >= rw->bt->sq)
                continue;
            const uint8_t *mrow = mk->data + rw->bt->mask_base + rw->head[r] * mk->sn + rw->pos[r] * mk->si;
            for (int j = 0; j < jn; j++)
                if (mrow[(j0 + j) * mk->sj])
                    S[(ptrdiff_t)j * Rp + r] = value;
        }
    }
}

/* Whether the logits are scale·s alone (no pse, softcap or ALiBi; scale > 0), so that the forward
 * may leave the scaling to its softmax step (fc_softmax_step) and only hide positions here
 * (fc_hide with −inf), one pass over the tile fewer. */
static inline bool fc_scores_scale_only(const fc_problem *p)
{
    return !p->pse.data && !(p->softcap > 0) && !p->alibi.slopes && p->scale > 0;
}

/* Turns raw dot products into final logits in place.  `kind` says whether the tile is fully
 * visible to every row (no per-element visibility test needed).  With softcap on and capgrad
 * non-NULL, capgrad[j][r] receives d softcap(y) / dy = 1 − tanh²(y / cap) for the backward. */
static inline void fc_scores(float *S, float *capgrad, int jn, int64_t j0, const fc_problem *p, const fc_rows *rw,
                             fc_tile_kind kind)
{
    const int Rp = rw->padded;
    const bool pse = p->pse.data != NULL;
    if (pse && p->pse.before_scale)
        fc_scores_add_pse(S, jn, j0, p, rw);

    const fvec scale = v_set1(p->scale);
    const float cap = p->softcap;
    const fvec capv = v_set1(cap), inv_cap = v_set1(cap > 0 ? 1.0f / cap : 0.0f);
    for (int j = 0; j < jn; j++) {
        float *row = S + (ptrdiff_t)j * Rp;
        if (cap > 0) {
            for (int r = 0; r < Rp; r += FC_W) {
                const fvec th = v_tanh(v_mul(v_mul(v_load(row + r), scale), inv_cap));
                v_store(row + r, v_mul(capv, th));
                if (capgrad)
                    v_store(capgrad + (ptrdiff_t)j * Rp + r, v_sub(v_set1(1.0f), v_mul(th, th)));
            }
        } else {
            for (int r = 0; r < Rp; r += FC_W)
                v_store(row + r, v_mul(v_load(row + r), scale));
        }
    }

    if (pse && !p->pse.before_scale)
        fc_scores_add_pse(S, jn, j0, p, rw);

    if (p->alibi.slopes) {
        for (int j = 0; j < jn; j++) {
            float *row = S + (ptrdiff_t)j * Rp;
            const fvec jf = v_set1((float)(j0 + j));
            for (int r = 0; r < Rp; r += FC_W) {
                fvec dist = v_abs(v_sub(jf, v_load(rw->apos + r)));
                if (p->alibi.sqrt_distance)
                    dist = v_sqrt(dist);
                v_store(row + r, v_sub(v_load(row + r), v_mul(v_load(rw->slope + r), dist)));
            }
        }
    }

    fc_hide(S, jn, j0, p, rw, kind, -INFINITY);
    if (capgrad && p->softcap > 0 && fc_tile_hides(p, kind)) /* hidden positions take no part in the gradient either */
        for (int j = 0; j < jn; j++)
            for (int r = 0; r < Rp; r += FC_W) {
                float *g = capgrad + (ptrdiff_t)j * Rp + r;
                v_store(g, v_select(v_eq(v_load(S + (ptrdiff_t)j * Rp + r), v_set1(-INFINITY)), v_zero(), v_load(g)));
            }
}

/* The visibility of a tile as numbers: vis[j][r] = 1 where row r sees column j0 + j, else 0. */
static inline void fc_visibility_tile(float *vis, int jn, int64_t j0, const fc_problem *p, const fc_rows *rw,
                                      fc_tile_kind kind)
{
    for (int j = 0; j < jn; j++)
        for (int r = 0; r < rw->padded; r += FC_W)
            v_store(vis + (ptrdiff_t)j * rw->padded + r, v_set1(1.0f));
    fc_hide(vis, jn, j0, p, rw, kind, 0.0f);
}

#endif /* FC_KERNELS_SCORES_H */
