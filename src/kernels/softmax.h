/*
 * Online softmax (FlashAttention-2) over transposed score tiles S[j][r]: per row r a running
 * maximum m and sum l; each tile's scores become unnormalised probabilities exp(x − m) and the
 * factor alpha = exp(m_old − m_new) by which the row's accumulator must be rescaled.
 * Rows that have seen only hidden (−inf) scores keep m = −inf and contribute zeros, never NaN.
 *
 * Non-finite scores follow IEEE arithmetic (semantics §0.3) at no cost to the hot loops: the
 * vector maximum drops NaN operands, but a NaN score (or a NaN m_old) makes its exp, hence the
 * tile sum, NaN; a NaN sum then sets m to NaN, unless the maximum is +inf (∞ − ∞ is NaN too,
 * and m must stay +inf then unless a NaN came as well: a rare rescan of those rows tells).
 * l, alpha and the accumulator carry the NaN on by themselves.
 *
 * Every set but amx takes p = v_exp2((x − m)·log2 e) (its domain covers x − m ≤ 0, −inf and NaN
 * alike; seven operations fewer than v_exp, four with vscalefps).  The difference is taken of the rounded logits, so
 * that p errs relative to x − m, not to x: a fused s·(c·log2 e) − m·log2 e would err by 2⁻²⁴·|x|,
 * 6e-5 at |x| = 1000 (and so would query rows scaled by c·log2 e before the product: logits that
 * tie exactly in fp32 would no longer tie).  fc_softmax_step_raw keeps m in the units of the scores
 * s instead, p = 2^((s − m)·c·log2 e): the same difference, and no pass that scales S.
 */
#ifndef FC_KERNELS_SOFTMAX_H
#define FC_KERNELS_SOFTMAX_H

#include "simd.h"

/* exp(x − m) of softmax weights (x − m ≤ 0, −inf or NaN; given statistics may make it positive):
 * v_exp2 of (x − m)·log2 e on every set but amx (see the top of this file). */
FC_INLINE fvec fc_softmax_exp(fvec x, fvec m)
{
#if FC_AMX
    return v_exp(v_sub(x, m));
#else
    return v_exp2(v_mul(v_sub(x, m), v_set1(FC_LOG2E)));
#endif
}

/* mx with NaN in its +inf lanes whose tile column r + lane holds a NaN score. */
static inline fvec fc_softmax_nan_lanes(fvec mx, const float *S, int jn, int Rp, int r)
{
    float t[FC_W];
    v_store(t, mx);
    for (int k = 0; k < FC_W; k++)
        for (int j = 0; j < jn && t[k] == INFINITY; j++)
            if (isnan(S[(ptrdiff_t)j * Rp + r + k]))
                t[k] = NAN;
    return v_load(t);
}

/* *s, multiplied by c and stored back when scaled. */
FC_INLINE fvec fc_scaled_load(float *s, bool scaled, fvec c)
{
    fvec x = v_load(s);
    if (scaled) {
        x = v_mul(x, c);
        v_store(s, x);
    }
    return x;
}

/* fc_softmax_step, or with raw fc_softmax_step_raw. */
FC_INLINE bool fc_softmax_step_in(float *S, const float *tmax, int jn, int Rp, float scale, const bool raw, float *m,
                                  float *l, float *alpha)
{
    const fvec c = v_set1(scale), c2 = v_set1((float)(scale * FC_LOG2E_D)); /* (raw: 2^((s − m)·c2)) */
    const bool scaled = !raw && scale != 1.0f && !tmax;
    const fvec ninf = v_set1(-INFINITY), pinf = v_set1(INFINITY);
    bool rescale = false;
    for (int r = 0; r < Rp; r += FC_W) {
        const fvec m_old = v_load(m + r);
        /* score first: a NaN score is dropped, a NaN m_old kept; four chains, as one is bound by
         * the latency of max (the maximum is exact, so the order does not matter) */
        fvec mx = m_old, mx1 = v_set1(-INFINITY), mx2 = mx1, mx3 = mx1;
        int jm = tmax ? jn : 0;
        if (tmax)
            mx = v_max(v_load(tmax + r), mx);
        for (; jm + 4 <= jn; jm += 4) {
            float *s = S + (ptrdiff_t)jm * Rp + r;
            mx = v_max(fc_scaled_load(s, scaled, c), mx);
            mx1 = v_max(fc_scaled_load(s + Rp, scaled, c), mx1);
            mx2 = v_max(fc_scaled_load(s + 2 * Rp, scaled, c), mx2);
            mx3 = v_max(fc_scaled_load(s + 3 * Rp, scaled, c), mx3);
        }
        for (; jm < jn; jm++)
            mx = v_max(fc_scaled_load(S + (ptrdiff_t)jm * Rp + r, scaled, c), mx);
        mx = v_max(v_max(mx1, mx2), v_max(mx3, mx)); /* mx last: it holds a NaN m_old */
        const fmask inf_max = v_eq(mx, pinf);
        const fvec m_nan = m_any(inf_max) ? fc_softmax_nan_lanes(mx, S, jn, Rp, r) : mx;
        const fvec m_ref = v_select(v_eq(mx, ninf), v_zero(), mx); /* a finite reference */
        const fvec a = raw ? v_exp2_nonpositive(v_mul(v_sub(m_old, m_ref), c2)) : v_exp(v_sub(m_old, m_ref));
        fvec sum = v_zero();
#if !FC_AMX
        fvec sum1 = v_zero(); /* two chains: the exponentials outrun one chain of adds */
        for (int j = 0; j < jn; j += 2) {
            float *s = S + (ptrdiff_t)j * Rp + r;
            const fvec p0 = raw ? v_exp2_nonpositive(v_mul(v_sub(v_load(s), m_ref), c2)) : fc_softmax_exp(v_load(s), m_ref);
            v_store(s, p0);
            sum = v_add(sum, p0);
            if (j + 1 < jn) {
                const fvec x1 = v_load(s + Rp);
                const fvec p1 = raw ? v_exp2_nonpositive(v_mul(v_sub(x1, m_ref), c2)) : fc_softmax_exp(x1, m_ref);
                v_store(s + Rp, p1);
                sum1 = v_add(sum1, p1);
            }
        }
        sum = v_add(sum, sum1);
#else
        for (int j = 0; j < jn; j++) {
            float *s = S + (ptrdiff_t)j * Rp + r;
            const fvec pj = raw ? v_exp2_nonpositive(v_mul(v_sub(v_load(s), m_ref), c2)) : fc_softmax_exp(v_load(s), m_ref);
            v_store(s, pj);
            sum = v_add(sum, pj);
        }
#endif
        const fvec nan = v_set1(NAN);
        v_store(l + r, v_fma(v_load(l + r), a, sum));
        v_store(m + r, v_select(v_eq(sum, sum), mx, v_select(v_eq(m_nan, pinf), pinf, nan)));
        v_store(alpha + r, a);
        float tmp[FC_W];
        v_store(tmp, a);
        for (int k = 0; k < FC_W; k++)
            rescale |= tmp[k] != 1.0f;
    }
    return rescale;
}

/* One tile of jn columns for Rp rows whose logits are scale·S (scale 1 when S holds the logits
 * already; else the maximum pass scales S in place, rounded, so that the maximum's logit − m is
 * exactly 0 — a compiler may fuse a product into the subtraction of an exponent's argument).
 * tmax (or NULL): the tile's row maxima, found where S was made (fc_gemm_colmax: S then holds the
 * logits, scaled there, and the step has no maximum pass).  Returns true when some row's alpha
 * differs from 1. */
static inline bool fc_softmax_step(float *S, const float *tmax, int jn, int Rp, float scale, float *m, float *l,
                                   float *alpha)
{
    return fc_softmax_step_in(S, tmax, jn, Rp, scale, false, m, l, alpha);
}

/* fc_softmax_step (logits scale·S, scale > 0 and scale·log2 e finite) with m kept in the units of S
 * (the caller converts: scale·m is the logits' maximum): the maximum pass neither scales nor stores
 * S, and p = 2^((S − m)·c), alpha = 2^((m_old − m)·c), c = scale·log2 e rounded.  As in
 * fc_softmax_step p errs relative to the difference, and the maximum's is exactly 1; the product's
 * sign is the difference's, so v_exp2_nonpositive applies. */
static inline bool fc_softmax_step_raw(float *S, const float *tmax, int jn, int Rp, float scale, float *m, float *l,
                                       float *alpha)
{
    return fc_softmax_step_in(S, tmax, jn, Rp, scale, true, m, l, alpha);
}

#endif /* FC_KERNELS_SOFTMAX_H */
