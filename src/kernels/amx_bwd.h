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
 * query and output-gradient rows).  Tiles run only for pairs whose operands are all finite: the
 * hi/lo parts would turn 0·inf into NaN where the fp32 product has inf, and zero padding against a
 * non-finite operand would put NaN into accumulator rows; such pairs take the fp32 products
 * (and fc_gemm_visible where positions are hidden), as on every other path.
 */
#ifndef FC_KERNELS_AMX_BWD_H
#define FC_KERNELS_AMX_BWD_H

#include "amx_pack.h"

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
    uint16_t *a;       /* the A operand of dQ, dK or dV */
    int s_parts, dp_parts;   /* 1 or 4: S = K·Qᵀ, dPᵀ = V·dOᵀ */
    int dq_parts, dk_parts, dv_parts; /* 1, 2 or 3: by the dtype of K, Q, dO and of the gradient */
    int Dq, Dv;        /* Dqk + Dr and Dv rounded up to 32 */
    int nq, nv;        /* Dqk + Dr and Dv rounded up to 16: the gradient products' widths */
} fc_amx_bwd;

/* Parts of P or dS against an operand of dtype d, for a gradient stored as g (and g2, the rope
 * part's): a bf16 gradient (tolerance semantics §0.4: 1e-2) takes P and dS rounded to bf16 (2⁻⁹
 * relative per term, as the forward's P·V at bf16 output), any other their hi + lo parts. */
static inline int fc_amx_x_parts(fc_dtype d, fc_dtype g, fc_dtype g2)
{
    return d != FC_BF16 ? 3 : g == FC_BF16 && g2 == FC_BF16 ? 1 : 2;
}

/* Points the query rows' operands (qt, dot, qb, dob) into `base` for Rp rows; returns their size
 * in words (base NULL: the size only).  A row slot of the fused pass keeps them (backward.c). */
static inline size_t fc_amx_bwd_place_rows(fc_amx_bwd *a, uint16_t *base, int Rp)
{
    const size_t Rk = (size_t)fc_round_up(Rp, 32);
    const size_t n[4] = {(size_t)fc_round_up((size_t)Rp * a->s_parts * a->Dq, 32),
                         (size_t)fc_round_up((size_t)Rp * a->dp_parts * a->Dv, 32),
                         (size_t)fc_round_up(Rk * a->dk_parts * a->nq, 32), (size_t)fc_round_up(Rk * a->dv_parts * a->nv, 32)};
    uint16_t **at[4] = {&a->qt, &a->dot, &a->qb, &a->dob};
    size_t words = 0;
    for (int k = 0; k < 4; k++) {
        *at[k] = base ? base + words : NULL;
        words += n[k];
    }
    return words;
}

static inline void fc_amx_bwd_carve(fc_amx_bwd *a, fc_carver *cur, const fc_problem *p, int Rp, int cols)
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
    const size_t D = (size_t)(a->Dq > a->Dv ? a->Dq : a->Dv), C = (size_t)fc_round_up(cols, 32),
                 R = (size_t)fc_round_up(Rp, 32), two = sizeof(uint16_t);
    a->scratch = fc_take(cur, (size_t)Rp * 4 * D * two);
    const size_t row_words = fc_amx_bwd_place_rows(a, NULL, Rp);
    fc_amx_bwd_place_rows(a, fc_take(cur, row_words * two), Rp);
    a->krows = fc_take(cur, C * 4 * a->Dq * two);
    a->vrows = fc_take(cur, C * 4 * a->Dv * two);
    a->kb = fc_take(cur, C * 3 * a->nq * two);
    a->a = fc_take(cur, 3 * C * R * two); /* [Rp][3·C] (dQ) or [C][3·R] (dK, dV) */
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

#endif /* FC_KERNELS_AMX_BWD_H */
