/*
 * Online softmax (FlashAttention-2) over transposed score tiles S[j][r]: per row r a running
 * maximum m and sum l; each tile's scores become unnormalised probabilities exp(x − m) and the
 * factor alpha = exp(m_old − m_new) by which the row's accumulator must be rescaled.
 * Rows that have seen only hidden (−inf) scores keep m = −inf and contribute zeros, never NaN.
 */
#ifndef FC_KERNELS_SOFTMAX_H
#define FC_KERNELS_SOFTMAX_H

#include "simd.h"

/* One tile of jn columns for Rp rows.  Returns true when some row's alpha differs from 1. */
static inline bool fc_softmax_step(float *S, int jn, int Rp, float *m, float *l, float *alpha)
{
    const fvec ninf = v_set1(-INFINITY);
    bool rescale = false;
    for (int r = 0; r < Rp; r += FC_W) {
        const fvec m_old = v_load(m + r);
        fvec mx = m_old;
        for (int j = 0; j < jn; j++)
            mx = v_max(mx, v_load(S + (ptrdiff_t)j * Rp + r));
        const fvec m_ref = v_select(v_eq(mx, ninf), v_zero(), mx); /* a finite reference */
        const fvec a = v_exp(v_sub(m_old, m_ref));
        fvec sum = v_zero();
        for (int j = 0; j < jn; j++) {
            float *s = S + (ptrdiff_t)j * Rp + r;
            const fvec pj = v_exp(v_sub(v_load(s), m_ref));
            v_store(s, pj);
            sum = v_add(sum, pj);
        }
        v_store(l + r, v_fma(v_load(l + r), a, sum));
        v_store(m + r, mx);
        v_store(alpha + r, a);
        float tmp[FC_W];
        v_store(tmp, a);
        for (int k = 0; k < FC_W; k++)
            rescale |= tmp[k] != 1.0f;
    }
    return rescale;
}

#endif /* FC_KERNELS_SOFTMAX_H */
