/*
 * The backward's five products on AMX tiles (amx set only), for bf16/fp16 q, k, v and dO:
 *
 *   S = K·Qᵀ and dPᵀ = V·dOᵀ   both operands inputs: exact (bf16 as it is, fp16 as four products
 *                              of bf16 hi/lo parts, as the forward's S, amx_pack.h)
 *   dQ += dS·K, dV += P·dO, dK += dS·Q   P and dS are fp32: split into bf16 hi + lo (2⁻¹⁷ relative);
 *                              against a bf16 operand 2 products, against fp16 3 (lo·lo ≤ 2⁻¹⁸
 *                              relative dropped), so the gradients keep the fp32 GEMM's precision
 *                              (semantics §0.4), not bf16's; a bf16 gradient against a bf16 operand
 *                              takes P or dS rounded to bf16, 1 product (fc_amx_x_parts).
 *
 * Every operand is packed from the fp32 rows the backward already holds (converted kv rows, packed
 * query and output-gradient rows), once where it stops changing; where every gradient product
 * takes one part, the element pass writes P and dS as their bf16 operands (fc_amx_bwd_elements).
 * Tiles run only for pairs whose operands are all finite: the
 * hi/lo parts would turn 0·inf into NaN where the fp32 product has inf, and zero padding against a
 * non-finite operand would put NaN into accumulator rows; such pairs take the fp32 products
 * (and fc_gemm_visible where positions are hidden), as on every other path.
 */
#ifndef FC_KERNELS_AMX_BWD_H
#define FC_KERNELS_AMX_BWD_H

#include "amx_rows.h"

/* bf16 rows: the A operand from M fp32 rows of n values at stride ldx, np words per part (a
 * multiple of 32); part i holds hi for even i and lo for odd i, i.e. [a_hi | a_lo | a_hi | a_lo]
 * against B = [b_hi; b_hi; b_lo; b_lo] (fc_amx_pack_t, fc_amx_pack_b).  Rows M..Mp are zeros. */
static inline void fc_amx_pack_a(uint16_t *dst, const float *x, int64_t ldx, int M, int Mp, int n, int np, int parts)
{
    const size_t ld = (size_t)parts * np;
    for (int m = 0; m < Mp; m++) {
        uint16_t *row = dst + m * ld;
        if (m >= M) {
            memset(row, 0, ld * sizeof(uint16_t));
            continue;
        }
        fc_bf16_split(row, parts > 1 ? row + np : NULL, x + m * ldx, n, np);
        if (parts > 2) /* part 2 = hi (and part 3 = lo) */
            memcpy(row + 2 * np, row, (size_t)(parts - 2) * np * sizeof(uint16_t));
    }
}

/* Pair form: the B operand from K fp32 rows of n values at stride ldx, the K axis running over
 * the rows: [b_hi; b_hi; b_lo] (parts 3, against A = [a_hi | a_lo | a_hi]), [b_hi; b_hi] (2) or
 * [b_hi] (1); Kp rows per part (even; K..Kp zeros), np columns (a multiple of 16). */
static inline void fc_amx_pack_b(uint16_t *dst, const float *x, int64_t ldx, int K, int Kp, int n, int np, int parts)
{
    const size_t ld = (size_t)2 * np, part = (size_t)(Kp / 2) * ld;
    for (int k = 0; k < Kp; k += 2) {
        uint16_t *hi = dst + (size_t)(k / 2) * ld;
        if (k >= K) {
            memset(hi, 0, ld * sizeof(uint16_t));
            if (parts == 3)
                memset(hi + 2 * part, 0, ld * sizeof(uint16_t));
            continue;
        }
        fc_bf16_pair_rows(hi, parts == 3 ? hi + 2 * part : NULL, x + k * ldx, k + 1 < K ? x + (k + 1) * ldx : NULL, n,
                          np);
    }
    if (parts > 1)
        memcpy(dst + part, dst, part * sizeof(uint16_t));
}

static inline bool fc_half_dtype(fc_dtype d) { return d == FC_BF16 || d == FC_F16; }

/* Whether the problem's backward products may run on tiles (the pairs' finiteness decides each). */
static inline bool fc_amx_bwd_applies(const fc_problem *p)
{
    return fc_half_dtype(p->q.dtype) && fc_half_dtype(p->k.dtype) && fc_half_dtype(p->v.dtype) &&
           fc_half_dtype(p->dout.dtype) &&
           (!p->Dr || (fc_half_dtype(p->q_rope.dtype) && fc_half_dtype(p->k_rope.dtype)));
}

/* Per-thread tile operands of the backward.  Each operand is packed where it stops changing: the
 * query rows' ones once per row slot (fc_amx_bwd_rows), the kv rows' once per kv tile
 * (fc_amx_bwd_kv); only the A operands of the gradient products are made per pair. */
typedef struct fc_amx_bwd {
    uint16_t *scratch; /* [Rp][4·max(Dq, Dv)] rows before transposition */
    uint16_t *qt, *dot; /* Qᵀ and dOᵀ in pair form over features (B of S and dPᵀ) */
    uint16_t *qb, *dob; /* Q and dO in pair form over rows (B of dK and dV) */
    uint16_t *krows, *vrows; /* key and value rows (A of S and dPᵀ) */
    uint16_t *kb;      /* K in pair form over kv rows (B of dQ) */
    uint16_t *a;       /* the A operand of dQ, dK or dV, packed from fp32 (fc_amx_bwd_product) */
    uint16_t *pa, *dsa, *dst; /* or made by the element pass (fc_amx_bwd_elements): P and dS rows
                               * [Jp][Rk] (dV, dK), dSᵀ rows [Rp][Jp] (dQ) */
    uint16_t *dspair;  /* [Jp/2][2·Rp]: dS in pair form over kv rows, before transposition */
    int s_parts, dp_parts;   /* 1 or 4: S = K·Qᵀ, dPᵀ = V·dOᵀ */
    int dq_parts, dk_parts, dv_parts; /* 1, 2 or 3: by the dtype of K, Q, dO and of the gradient */
    int Dq, Dv;        /* Dqk + Dr and Dv rounded up to 32 */
    int nq, nv;        /* Dqk + Dr and Dv rounded up to 16: the gradient products' widths */
    bool one_part;     /* every gradient product takes one part (fc_amx_bwd_elements may apply) */
} fc_amx_bwd;

/* Parts of P or dS against an operand of dtype d, for a gradient stored as g (and g2, the rope
 * part's): a bf16 gradient (tolerance semantics §0.4: 1e-2) takes P and dS rounded to bf16 (2⁻⁹
 * relative per term, as the forward's P·V at bf16 output), any other their hi + lo parts. */
static inline int fc_amx_x_parts(fc_dtype d, fc_dtype g, fc_dtype g2)
{
    return d != FC_BF16 ? 3 : g == FC_BF16 && g2 == FC_BF16 ? 1 : 2;
}

/* Points the query rows' operands (qt, dot, qb, dob) into `base` for Rp rows; returns their size
 * in words (base NULL: the size only, the pointers left as they are).  A row slot of the fused pass
 * keeps them (backward.c). */
static inline size_t fc_amx_bwd_place_rows(fc_amx_bwd *a, uint16_t *base, int Rp)
{
    const size_t Rk = (size_t)fc_round_up(Rp, 32);
    const size_t n[4] = {(size_t)fc_round_up((size_t)Rp * a->s_parts * a->Dq, 32),
                         (size_t)fc_round_up((size_t)Rp * a->dp_parts * a->Dv, 32),
                         (size_t)fc_round_up(Rk * a->dk_parts * a->nq, 32), (size_t)fc_round_up(Rk * a->dv_parts * a->nv, 32)};
    uint16_t **at[4] = {&a->qt, &a->dot, &a->qb, &a->dob};
    size_t words = 0;
    for (int k = 0; k < 4; k++) {
        if (base)
            *at[k] = base + words;
        words += n[k];
    }
    return words;
}

/* The problem's parts per product (no buffers). */
static inline void fc_amx_bwd_parts(fc_amx_bwd *a, const fc_problem *p)
{
    const bool rope_bf = !p->Dr || (p->q_rope.dtype == FC_BF16 && p->k_rope.dtype == FC_BF16);
    a->s_parts = p->q.dtype == FC_BF16 && p->k.dtype == FC_BF16 && rope_bf ? 1 : 4;
    a->dp_parts = p->v.dtype == FC_BF16 && p->dout.dtype == FC_BF16 ? 1 : 4;
    const fc_dtype dq_r = p->Dr ? p->dq_rope.dtype : FC_BF16, dk_r = p->Dr ? p->dk_rope.dtype : FC_BF16;
    a->dq_parts = fc_amx_x_parts(p->k.dtype == FC_BF16 && rope_bf ? FC_BF16 : FC_F16, p->dq.dtype, dq_r);
    a->dk_parts = fc_amx_x_parts(p->q.dtype == FC_BF16 && rope_bf ? FC_BF16 : FC_F16, p->dk.dtype, dk_r);
    a->dv_parts = fc_amx_x_parts(p->dout.dtype, p->dv.dtype, FC_BF16);
    a->Dq = (int)fc_round_up(p->Dqk + p->Dr, 32);
    a->Dv = (int)fc_round_up(p->Dv, 32);
    a->nq = (int)fc_round_up(p->Dqk + p->Dr, 16);
    a->nv = (int)fc_round_up(p->Dv, 16);
    a->one_part = a->dq_parts == 1 && a->dk_parts == 1 && a->dv_parts == 1;
}

/* Whether the pairs on tiles make their products' operands in one element pass
 * (fc_amx_bwd_elements): one part everywhere, logits scale·s alone, no dropout or mask. */
static inline bool fc_amx_bwd_elements_apply(const fc_problem *p)
{
    fc_amx_bwd a;
    fc_amx_bwd_parts(&a, p);
    return a.one_part && fc_scores_scale_only(p) && !fc_has_dropout(p) && !p->mask.data && isfinite(p->scale * FC_LOG2E);
}

static inline void fc_amx_bwd_carve(fc_amx_bwd *a, fc_carver *cur, const fc_problem *p, int Rp, int cols)
{
    fc_amx_bwd_parts(a, p);
    const size_t D = (size_t)(a->Dq > a->Dv ? a->Dq : a->Dv), C = (size_t)fc_round_up(cols, 32),
                 R = (size_t)fc_round_up(Rp, 32), two = sizeof(uint16_t);
    a->scratch = fc_take(cur, (size_t)Rp * 4 * D * two);
    const size_t row_words = fc_amx_bwd_place_rows(a, NULL, Rp);
    fc_amx_bwd_place_rows(a, fc_take(cur, row_words * two), Rp);
    a->krows = fc_take(cur, C * 4 * a->Dq * two);
    a->vrows = fc_take(cur, C * 4 * a->Dv * two);
    a->kb = fc_take(cur, C * 3 * a->nq * two);
    a->a = fc_take(cur, 3 * C * R * two); /* [Rp][3·C] (dQ) or [C][3·R] (dK, dV) */
    a->pa = fc_take(cur, C * R * two);
    a->dsa = fc_take(cur, C * R * two);
    a->dst = fc_take(cur, R * C * two);
    a->dspair = fc_take(cur, C * R * two);
}

/* The query rows' operands: Qᵀ and dOᵀ in pair form over features, Q and dO over rows (R fp32
 * rows each). */
static inline void fc_amx_bwd_rows(fc_amx_bwd *a, const float *q, int64_t ldq, int Dt, const float *dout, int64_t ldo,
                                   int Dv, int R, int Rp)
{
    fc_amx_pack_t(a->qt, a->scratch, q, ldq, R, Rp, Dt, a->Dq, a->s_parts);
    fc_amx_pack_t(a->dot, a->scratch, dout, ldo, R, Rp, Dv, a->Dv, a->dp_parts);
    const int Rk = (int)fc_round_up(R, 32);
    fc_amx_pack_b(a->qb, q, ldq, R, Rk, Dt, a->nq, a->dk_parts);
    fc_amx_pack_b(a->dob, dout, ldo, R, Rk, Dv, a->nv, a->dv_parts);
}

/* The kv tile's operands: key and value rows, K in pair form over rows (jn fp32 rows each). */
static inline void fc_amx_bwd_kv(fc_amx_bwd *a, const float *k, int64_t ldk, int Dt, const float *v, int64_t ldv, int Dv,
                                 int jn)
{
    const int Mp = (int)fc_round_up(jn, 16);
    fc_amx_pack_a(a->krows, k, ldk, jn, Mp, Dt, a->Dq, a->s_parts);
    fc_amx_pack_a(a->vrows, v, ldv, jn, Mp, Dv, a->Dv, a->dp_parts);
    fc_amx_pack_b(a->kb, k, ldk, jn, (int)fc_round_up(jn, 32), Dt, a->nq, a->dq_parts);
}

/* S[j][r] = k_j·q_r and dPᵀ[j][r] = v_j·do_r for the jn kv rows packed and Rp query rows. */
static inline void fc_amx_bwd_s_dp(const fc_amx_bwd *a, float *S, float *dPt, int jn, int Rp)
{
    const int Mp = (int)fc_round_up(jn, 16), kq = a->s_parts * a->Dq, kv = a->dp_parts * a->Dv;
    fc_amx_gemm(Mp, Rp, kq, a->krows, (size_t)kq, a->qt, (size_t)2 * Rp, S, (size_t)Rp, false);
    fc_amx_gemm(Mp, Rp, kv, a->vrows, (size_t)kv, a->dot, (size_t)2 * Rp, dPt, (size_t)Rp, false);
}

/* C[M×np] += X·B: X is M fp32 rows of K values at stride ldx, packed here as `parts` bf16 parts
 * (fc_amx_pack_a); B is the other operand in pair form, K rows of np columns (a multiple of 16)
 * packed with the same K and parts (fc_amx_pack_b); C rows up to M rounded to 16 are written (the
 * padding ones get 0 added). */
static inline void fc_amx_bwd_product(fc_amx_bwd *a, int parts, int M, int K, const float *X, int64_t ldx,
                                      const uint16_t *B, int np, float *C, int64_t ldc)
{
    const int Mp = (int)fc_round_up(M, 16), Kp = (int)fc_round_up(K, 32);
    fc_amx_pack_a(a->a, X, ldx, M, Mp, K, Kp, parts);
    fc_amx_gemm(Mp, np, parts * Kp, a->a, (size_t)parts * Kp, B, (size_t)2 * np, C, (size_t)ldc, true);
}

/* The pair's element pass, for problems whose gradient products all take one part (bf16 gradients
 * against bf16 operands) and whose logits are scale·s alone: from S and dPᵀ ([j][Rp] fp32, the
 * tile products) it computes P = exp(scale·s − m)/l and dS = P∘(dP − D) per element and writes
 * them straight as the gradient products' A operands, rounded to bf16 (fc_amx_x_parts): P and dS
 * rows (dV, dK) and dSᵀ rows (dQ: dS in pair form over j, dword-transposed).  exp is 2^y of
 * degree 4 (fc_amx_exp2_nonpos: 3e-6 relative, under 1/600 of the bf16 rounding that follows),
 * y = s·(scale·log2 e) − m·log2 e in one FMA (an m·log2 e that overflows gives P = 0 or inf, as
 * exp does).  Hidden positions (outside a row's spans in a partial tile) and kv rows from jn on
 * are 0; columns from Rp to the K axis's 32 are zeros. */
typedef struct fc_amx_bwd_rowc {
    const float *m, *linv, *dsum;          /* per row: max (in the rows' frame), 1/sum, D */
    const float *lo1, *hi1, *lo2, *hi2;    /* the rows' visible spans (partial tiles) */
    float scale;
} fc_amx_bwd_rowc;

/* P and dS of kv row j for the 16 rows of one block (0 when j ≥ jn or hidden). */
FC_INLINE void fc_amx_bwd_elem16(const float *S, const float *dPt, int j, int jn, int Rp, int r, fvec cl, fvec ml,
                                 fvec li, fvec d, const fvec *span, bool partial, int64_t j0, fvec *p, fvec *ds)
{
    if (j >= jn) {
        *p = *ds = v_zero();
        return;
    }
    fvec y = v_fma(v_load(S + (ptrdiff_t)j * Rp + r), cl, ml);
    if (partial) {
        const fvec jf = v_set1((float)(j0 + j));
        const __mmask16 in = (_mm512_cmp_ps_mask(span[0], jf, _CMP_LE_OQ) & _mm512_cmp_ps_mask(jf, span[1], _CMP_LT_OQ)) |
                             (_mm512_cmp_ps_mask(span[2], jf, _CMP_LE_OQ) & _mm512_cmp_ps_mask(jf, span[3], _CMP_LT_OQ));
        y = _mm512_mask_blend_ps(in, v_set1(-INFINITY), y);
    }
    *p = v_mul(fc_amx_exp2_nonpos(y), li);
    *ds = v_mul(*p, v_sub(v_load(dPt + (ptrdiff_t)j * Rp + r), d));
}

static inline void fc_amx_bwd_elements(fc_amx_bwd *a, const float *S, const float *dPt, int jn, int Rp,
                                       const fc_amx_bwd_rowc *c, bool partial, int64_t j0)
{
    const int Jp = (int)fc_round_up(jn, 32), Rk = (int)fc_round_up(Rp, 32);
    uint16_t *pa = a->pa, *dsa = a->dsa;
    uint32_t *pair = (uint32_t *)a->dspair; /* [Jp/2][Rp]: (dS[j][r], dS[j + 1][r]) */
    const fvec cl = v_set1(c->scale * FC_LOG2E);
    const __m512i idx = _mm512_loadu_si512(fc_pair_idx);
    for (int r = 0; r < Rk; r += 16) {
        if (r >= Rp) { /* the K axis's padding */
            for (int j = 0; j < Jp; j++) {
                _mm256_storeu_si256((__m256i *)(pa + (size_t)j * Rk + r), _mm256_setzero_si256());
                _mm256_storeu_si256((__m256i *)(dsa + (size_t)j * Rk + r), _mm256_setzero_si256());
            }
            continue;
        }
        const fvec ml = v_mul(v_load(c->m + r), v_set1(-FC_LOG2E)), li = v_load(c->linv + r), d = v_load(c->dsum + r);
        fvec span[4] = {v_zero(), v_zero(), v_zero(), v_zero()};
        if (partial)
            span[0] = v_load(c->lo1 + r), span[1] = v_load(c->hi1 + r), span[2] = v_load(c->lo2 + r),
            span[3] = v_load(c->hi2 + r);
        for (int j = 0; j < Jp; j += 2) {
            fvec p0, p1, ds0, ds1;
            fc_amx_bwd_elem16(S, dPt, j, jn, Rp, r, cl, ml, li, d, span, partial, j0, &p0, &ds0);
            fc_amx_bwd_elem16(S, dPt, j + 1, jn, Rp, r, cl, ml, li, d, span, partial, j0, &p1, &ds1);
            const __m512i ph = (__m512i)_mm512_cvtne2ps_pbh(p1, p0), dh = (__m512i)_mm512_cvtne2ps_pbh(ds1, ds0);
            _mm256_storeu_si256((__m256i *)(pa + (size_t)j * Rk + r), _mm512_castsi512_si256(ph));
            _mm256_storeu_si256((__m256i *)(pa + (size_t)(j + 1) * Rk + r), _mm512_extracti64x4_epi64(ph, 1));
            _mm256_storeu_si256((__m256i *)(dsa + (size_t)j * Rk + r), _mm512_castsi512_si256(dh));
            _mm256_storeu_si256((__m256i *)(dsa + (size_t)(j + 1) * Rk + r), _mm512_extracti64x4_epi64(dh, 1));
            _mm512_storeu_si512(pair + (size_t)(j / 2) * Rp + r, _mm512_permutexvar_epi16(idx, dh));
        }
    }
    for (int j = 0; j < Jp / 2; j += 16) /* dSᵀ: [Rp][Jp/2] pairs */
        for (int r = 0; r < Rp; r += 16)
            fc_amx_transpose16(pair + (size_t)j * Rp + r, Rp, 16, (uint32_t *)a->dst + (size_t)r * (Jp / 2) + j, Jp / 2);
}

/* dV += P·dO and dK += dS·Q from the element pass's operands (jn kv rows, R of Rp query rows). */
static inline void fc_amx_bwd_dkv_made(const fc_amx_bwd *a, int jn, int R, int Rp, float *dv, int64_t ldv, float *dk,
                                       int64_t ldk)
{
    const int Mp = (int)fc_round_up(jn, 16), Kp = (int)fc_round_up(R, 32), Rk = (int)fc_round_up(Rp, 32);
    fc_amx_gemm(Mp, a->nv, Kp, a->pa, (size_t)Rk, a->dob, (size_t)2 * a->nv, dv, (size_t)ldv, true);
    fc_amx_gemm(Mp, a->nq, Kp, a->dsa, (size_t)Rk, a->qb, (size_t)2 * a->nq, dk, (size_t)ldk, true);
}

/* dQ += dS·K from the element pass's dSᵀ rows. */
static inline void fc_amx_bwd_dq_made(const fc_amx_bwd *a, int jn, int R, float *dq, int64_t ldq)
{
    const int Jp = (int)fc_round_up(jn, 32);
    fc_amx_gemm((int)fc_round_up(R, 16), a->nq, Jp, a->dst, (size_t)Jp, a->kb, (size_t)2 * a->nq, dq, (size_t)ldq, true);
}

#endif /* FC_KERNELS_AMX_BWD_H */
