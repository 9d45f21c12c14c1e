/*
 * The column-major forward's two bf16 products on BFDOT (the neonbf16 set): amx_pack.h's functions
 * for forward.c, for the one-part products bf16_products.h lets this set take (bf16 queries and
 * keys; P·V in bf16 at bf16 tolerance with bf16 values, else on the fp32 micro-GEMM), in
 * gemm_bfdot.h's pair form:
 *
 *     S[j][r] = Σ_p K(j, p)·Qᵀ(p, r)   K: the tile's key (+ rope) rows, copied as bf16 rows
 *                                      Qᵀ: the query rows' pairs, transposed once per item
 *     O[r][e] += Σ_p P(r, p)·V(p, e)   P: S's probabilities rounded to bf16 and paired along j where
 *                                      they lie (A by columns, no transposition)
 *                                      V: the tile's value rows paired along j
 *
 * Precision: as amx_pack.h's one-part products (P rounded to bf16, to nearest even, after the fp32
 * softmax, whose l sums the unrounded P) with gemm_bfdot.h's sums.
 */
#ifndef FC_KERNELS_BFDOT_PACK_H
#define FC_KERNELS_BFDOT_PACK_H

#include "bf16_products.h"
#include "gemm_bfdot.h"
#include "pack.h"

/* Per-thread buffers of the products (carved by the forward item); words are feature pairs. */
typedef struct fc_amx_bufs {
    uint16_t *qrow; /* [Rp][Dp]    query rows in bf16, before transposition */
    uint32_t *q;    /* [Dp/2][Rp]  their pairs transposed (B of S = K·Qᵀ) */
    uint16_t *k;    /* [cols][Dp]  key rows (A of S) */
    uint32_t *v;    /* [Jp/2][Dvp] value pairs (B of P·V) */
    uint32_t *p;    /* [Jp/2][Rp]  P's pairs (A of P·V, by columns) */
    int Dp, Jp;
} fc_amx_bufs;

static inline void fc_amx_carve(fc_amx_bufs *a, fc_carver *cur, const fc_problem *p, int Rp, int cols)
{
    a->Dp = (int)fc_round_up(p->Dqk + p->Dr, 8); /* whole vectors of 4 pairs */
    a->Jp = (int)fc_round_up(cols, 2);
    const size_t Dvp = (size_t)fc_round_up(p->Dv, FC_W);
    a->qrow = fc_take(cur, (size_t)Rp * a->Dp * sizeof(uint16_t));
    a->q = fc_take(cur, (size_t)Rp * a->Dp / 2 * sizeof(uint32_t));
    a->k = fc_take(cur, (size_t)cols * a->Dp * sizeof(uint16_t));
    a->v = fc_take(cur, (size_t)(a->Jp / 2) * Dvp * sizeof(uint32_t));
    a->p = fc_take(cur, (size_t)(a->Jp / 2) * Rp * sizeof(uint32_t));
}

/* dst[0..n) = bf16(x[e]) (exact for the bf16 values the queries are), zeros up to np. */
static inline void fc_bfdot_row(uint16_t *dst, const float *x, int n, int np)
{
    int e = 0;
    for (; e + FC_W <= n; e += FC_W)
        v_store_bf16(dst + e, v_load(x + e));
    for (; e < n; e++)
        dst[e] = fc_f32_to_bf16_inline(x[e]);
    memset(dst + n, 0, (size_t)(np - n) * sizeof(uint16_t));
}

/* The item's R query rows (fp32 rows at stride ldq, Dt features) as bf16 rows, rows R..Rp zeros. */
static inline void fc_amx_pack_q(fc_amx_bufs *a, const float *rows, int64_t ldq, int R, int Rp, int Dt)
{
    for (int r = 0; r < Rp; r++)
        fc_bfdot_row(a->qrow + (size_t)r * a->Dp, r < R ? rows + r * ldq : rows, r < R ? Dt : 0, a->Dp);
}

/* Qᵀ in pair form: the word (pair) transpose of the bf16 rows. */
static inline void fc_amx_pack_qt(fc_amx_bufs *a, int Rp)
{
    fc_transpose((const float *)(const void *)a->qrow, a->Dp / 2, (float *)(void *)a->q, Rp, Rp, a->Dp / 2);
}

/* n bf16 values of a row at element stride se. */
static inline void fc_bfdot_copy(uint16_t *dst, const char *row, int64_t se, int n)
{
    if (se == 1) {
        memcpy(dst, row, (size_t)n * sizeof(uint16_t));
        return;
    }
    const int64_t es = fc_feature_step(FC_BF16, se, n);
    for (int e = 0; e < n; e++)
        memcpy(dst + e, row + e * es, sizeof(uint16_t));
}

/* S[j][r] = k_j · q_r for kv rows [j0, j0 + jn); the keys (and rope keys) are bf16 here
 * (fc_bf16_products_pay). */
static inline void fc_amx_qk(float *S, fc_amx_bufs *a, const fc_problem *p, fc_kv_at at, int64_t j0, int jn, int Rp,
                             float *x)
{
    (void)x;
    const int Dqk = (int)p->Dqk, Dr = (int)p->Dr, Dp = a->Dp;
    for (int j = 0; j < jn; j++) {
        uint16_t *dst = a->k + (size_t)j * Dp;
        fc_bfdot_copy(dst, fc_kv_row(&p->k, at, j0 + j), p->k.se, Dqk);
        if (Dr)
            fc_bfdot_copy(dst + Dqk, fc_kv_row(&p->k_rope, at, j0 + j), p->k_rope.se, Dr);
        memset(dst + Dqk + Dr, 0, (size_t)(Dp - Dqk - Dr) * sizeof(uint16_t));
    }
    fc_bfdot_gemm(jn, Rp, Dp / 2, (const uint32_t *)(const void *)a->k, Dp / 2, 1, a->q, Rp, S, Rp, false);
}

/* dst[e] = the pair (a[e], b[e]) of two bf16 rows at element stride se (b NULL: zeros), e < n;
 * zeros up to np. */
static inline void fc_bfdot_value_pairs(uint32_t *dst, const uint16_t *a, const uint16_t *b, int64_t se, int n, int np)
{
    int e = 0;
    if (se == 1)
        for (; e + 8 <= n; e += 8) {
            const uint16x8_t va = vld1q_u16(a + e), vb = b ? vld1q_u16(b + e) : vdupq_n_u16(0);
            vst1q_u32(dst + e, vreinterpretq_u32_u16(vzip1q_u16(va, vb)));
            vst1q_u32(dst + e + 4, vreinterpretq_u32_u16(vzip2q_u16(va, vb)));
        }
    for (; e < n; e++)
        dst[e] = a[e * se] | (uint32_t)(b ? b[e * se] : 0) << 16;
    for (; e < np; e++)
        dst[e] = 0;
}

/* O[r][e] += Σ_j P[j][r]·v_j[e] for kv rows [j0, j0 + jn) and the probabilities S[j][r] (the softmax
 * step's output); the values are bf16 here (fc_amx_pv_parts 1). */
static inline void fc_amx_pv(float *O, fc_amx_bufs *a, const float *S, const fc_problem *p, fc_kv_at at, int64_t j0,
                             int jn, int Rp, float *x)
{
    (void)x;
    const fc_view *v = &p->v;
    const int Dv = (int)p->Dv, Dvp = (int)fc_round_up(Dv, FC_W), pairs = (jn + 1) / 2;
    const int64_t se = Dv > 1 ? v->se : 1; /* one feature: its stride is never stepped along */
    for (int i = 0; i < pairs; i++) {
        const uint16_t *ra = (const uint16_t *)(const void *)fc_kv_row(v, at, j0 + 2 * i);
        const uint16_t *rb = 2 * i + 1 < jn ? (const uint16_t *)(const void *)fc_kv_row(v, at, j0 + 2 * i + 1) : NULL;
        fc_bfdot_value_pairs(a->v + (size_t)i * Dvp, ra, rb, se, Dv, Dvp);
    }
    for (int i = 0; i < pairs; i++) { /* P's column pairs: BFCVTN rounds to nearest even */
        const float *sa = S + (size_t)(2 * i) * Rp, *sb = 2 * i + 1 < jn ? sa + Rp : NULL;
        uint32_t *dst = a->p + (size_t)i * Rp;
        for (int r = 0; r < Rp; r += 4) {
            const uint16x4_t ha = vreinterpret_u16_bf16(vcvt_bf16_f32(vld1q_f32(sa + r)));
            const uint16x4_t hb = sb ? vreinterpret_u16_bf16(vcvt_bf16_f32(vld1q_f32(sb + r))) : vdup_n_u16(0);
            vst2_u16((uint16_t *)(void *)(dst + r), (uint16x4x2_t){{ha, hb}});
        }
    }
    fc_bfdot_gemm(Rp, Dvp, pairs, a->p, 1, Rp, a->v, Dvp, O, Dvp, true);
}

#endif /* FC_KERNELS_BFDOT_PACK_H */
