/* S[j][r] = k_j · q_r over the query and rope features, for one kv tile and the item's rows. */
#ifndef FC_KERNELS_QK_H
#define FC_KERNELS_QK_H

#include "gemm.h"
#include "pack.h"

/* The rows' query (+ rope) features in both forms fc_pack_rows gives: transposed t[e][r] (row
 * stride Rp) for the GEMM, and row-major rows[r][e] (stride ld) for the dot products. */
typedef struct fc_q_operand {
    const float *t, *rows;
    int64_t ld;
} fc_q_operand;

/* Up to this many rows, scores are dot products (see fc_qk_dots). */
#define FC_QK_DOT_ROWS 4

/* S[j][r] (+)= k_j · q_r for R rows and JR kv rows at a time (both compile-time, see fc_qk_dots). */
FC_INLINE void fc_qk_dot_block(const int R, const int JR, float *S, int Rp, const float *k, int64_t ldk,
                               const float *q, int64_t ldq, int width, bool accumulate)
{
    fvec a[2][FC_QK_DOT_ROWS];
#pragma GCC unroll 2
    for (int j = 0; j < JR; j++)
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
            a[j][r] = v_zero();
    int e = 0;
    for (; e + FC_W <= width; e += FC_W) {
        fvec kv[2];
#pragma GCC unroll 2
        for (int j = 0; j < JR; j++)
            kv[j] = v_load(k + j * ldk + e);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const fvec qv = v_load(q + r * ldq + e);
#pragma GCC unroll 2
            for (int j = 0; j < JR; j++)
                a[j][r] = v_fma(kv[j], qv, a[j][r]);
        }
    }
    if (e < width) {
        const int tail = width - e;
        fvec kv[2];
#pragma GCC unroll 2
        for (int j = 0; j < JR; j++)
            kv[j] = v_load_n(k + j * ldk + e, tail);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const fvec qv = v_load_n(q + r * ldq + e, tail);
#pragma GCC unroll 2
            for (int j = 0; j < JR; j++)
                a[j][r] = v_fma(kv[j], qv, a[j][r]);
        }
    }
#pragma GCC unroll 2
    for (int j = 0; j < JR; j++)
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
            S[j * Rp + r] = (accumulate ? S[j * Rp + r] : 0.0f) + v_hsum(a[j][r]);
}

/* Few rows (decode: the G query heads of one position): each key row is read once for all rows
 * and dotted with them, where a GEMM would run its vector lanes along mostly padding rows.
 * Padding rows r in [R, Rp) get 0, as the GEMM's zero padding would give them. */
static inline void fc_qk_dots(float *S, int Rp, int R, int jn, const float *k, int64_t ldk, const float *q, int64_t ldq,
                              int width, bool accumulate)
{
    int j = 0;
#define FC_QK_DOTS(r_)                                                                                     \
    for (; j + 2 <= jn; j += 2)                                                                            \
        fc_qk_dot_block(r_, 2, S + (ptrdiff_t)j * Rp, Rp, k + j * ldk, ldk, q, ldq, width, accumulate);  \
    if (j < jn)                                                                                            \
        fc_qk_dot_block(r_, 1, S + (ptrdiff_t)j * Rp, Rp, k + j * ldk, ldk, q, ldq, width, accumulate);  \
    break;
    switch (R) {
    case 1: FC_QK_DOTS(1)
    case 2: FC_QK_DOTS(2)
    case 3: FC_QK_DOTS(3)
    default: FC_QK_DOTS(4)
    }
#undef FC_QK_DOTS
    for (j = 0; !accumulate && R < Rp && j < jn; j++)
        memset(S + (ptrdiff_t)j * Rp + R, 0, (size_t)(Rp - R) * sizeof(float));
}

static inline void fc_qk(float *S, const fc_kv_tile *kv, const fc_q_operand *q, const fc_problem *p, const fc_rows *rw,
                         int jn)
{
    const int Rp = rw->padded, R = rw->count, Dqk = (int)p->Dqk;
    if (R <= FC_QK_DOT_ROWS) {
        fc_qk_dots(S, Rp, R, jn, kv->k, kv->ldk, q->rows, q->ld, kv->k_width, false);
        if (kv->kr)
            fc_qk_dots(S, Rp, R, jn, kv->kr, kv->ldkr, q->rows + Dqk, q->ld, (int)p->Dr, true);
        return;
    }
    fc_gemm(jn, Rp, kv->k_width, kv->k, kv->ldk, 1, q->t, Rp, S, Rp, false);
    if (kv->kr)
        fc_gemm(jn, Rp, (int)p->Dr, kv->kr, kv->ldkr, 1, q->t + (ptrdiff_t)Dqk * Rp, Rp, S, Rp, true);
}

#endif /* FC_KERNELS_QK_H */
