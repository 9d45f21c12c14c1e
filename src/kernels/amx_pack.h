/*
 * The forward's two products on AMX tiles: the operands of S = K·Qᵀ and O += P·V as bf16 tiles
 * (amx.h), packed once per item (the query rows) or once per kv tile (keys, values; shared by
 * all the item's rows, i.e. by the G heads of a group as well as its positions).
 *
 * Precision (semantics §0.4).  A product of two bf16 values is exact in fp32 and tdpbf16ps sums
 * in fp32, so with bf16 operands S is as exact as the fp32 GEMM.  P is rounded to bf16 after
 * the fp32 softmax (l is summed from the unrounded P): a relative error ≤ 2⁻⁸ per weight (bf16's
 * unit roundoff), so the output moves by at most 2⁻⁸·max|v| ≈ 0.004·max|v| (typically far less:
 * the roundings are independent), within the bf16 tolerance (1e-2 + 1e-2·|r|).  That is used only
 * when the output needs bf16 tolerance (a bf16 output, or fc_options.out_tolerance).  Every other
 * case splits each value into bf16 parts x = hi + lo, hi = bf16(x), lo = bf16(x − hi), |lo| ≤ 2⁻⁸|x|:
 * exact for fp16 values (lo holds their last 3 bits), 2⁻¹⁷ relative for P.
 *  - S takes all four products of the parts, so it is exact like the fp32 GEMM.  Without lo·lo
 *    each logit would move by up to 2⁻¹⁶·L (L = scale·Σ_d |q_d·k_d|), the output by up to
 *    2⁻¹⁵·L·max|v| (o = Σ w_j v_j, dw_j = w_j·(δ_j − Σ w δ)), beyond fp16's atol 2e-3 once
 *    L·max|v| > 65, and the fp32 softmax max (1e-5 + 1e-5·|m|) by 2⁻¹⁶·L at m ≈ L: fp16 inputs
 *    reach both (tests/native/test_half_parts.c: L = 730, 5.5× the output tolerance; m = 11.4,
 *    1.4× the max's), so S keeps four products even for fp16 outputs.
 *  - P·V takes p_hi·v_hi + p_hi·v_lo + p_lo·v_hi: the dropped p_lo·v_lo (≤ 2⁻¹⁶·p·|v|) and P's
 *    rest (≤ 2⁻¹⁷·p) move the output by ≤ 2⁻¹⁵·max|v| ≈ 3e-5·max|v|, inside fp16's tolerance
 *    for |v| up to 65 even where the terms cancel; two products (P or V as one bf16 part) move
 *    it by up to 2⁻⁸ relative, twice fp16's rtol (test_half_parts: 1.7×, 1.9×).  fp32 outputs
 *    (1e-4 + 1e-5) take the fp32 P·V instead, see fc_amx_pv_tiles.
 * The parts are one GEMM over a K axis four (three) times as long: A = [k_hi | k_lo | k_hi | k_lo]
 * against B = [q_hi; q_hi; q_lo; q_lo], A = [p_hi | p_hi | p_lo] against B = [v_hi; v_lo; v_hi]
 * (the copy of a hi part that meets a lo part holds ±inf as 0, fc_bf16_copy_finite).
 */
#ifndef FC_KERNELS_AMX_PACK_H
#define FC_KERNELS_AMX_PACK_H

#include "amx.h"
#include "bf16_products.h"
#include "pack.h"

/* bf16(x) and, for the split, bf16(x − bf16(x)) (an infinite x has rest 0: it propagates as itself). */
FC_INLINE __m256i fc_bf16_hi(fvec x) { return (__m256i)_mm512_cvtneps_pbh(x); }
FC_INLINE fvec fc_bf16_widen(__m256i hi) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(hi), 16)); }
FC_INLINE __m256i fc_bf16_lo(fvec x, __m256i hi)
{
    return (__m256i)_mm512_cvtneps_pbh(v_select(v_eq(v_abs(x), v_set1(INFINITY)), v_zero(), v_sub(x, fc_bf16_widen(hi))));
}
/* The same for an x known not to be infinite (finite or NaN: softmax weights). */
FC_INLINE __m256i fc_bf16_lo_finite(fvec x, __m256i hi) { return (__m256i)_mm512_cvtneps_pbh(v_sub(x, fc_bf16_widen(hi))); }

/* Values e .. e + 15 of a row of n fp32 (fp16) values, zeros from n on. */
FC_INLINE fvec fc_amx_load16(const float *x, int e, int n)
{
    return n - e >= 16 ? v_load(x + e) : n > e ? v_load_n(x + e, n - e) : v_zero();
}
FC_INLINE fvec fc_amx_load16_f16(const uint16_t *x, int e, int n)
{
    const __mmask16 m = n - e >= 16 ? (__mmask16)0xFFFF : n > e ? (__mmask16)((1u << (n - e)) - 1u) : 0;
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, x + e));
}

/* hi[0..15] = bf16(v) and, when lo is given, lo[0..15] = bf16(v − hi). */
FC_INLINE void fc_bf16_split16(uint16_t *hi, uint16_t *lo, fvec v)
{
    const __m256i h = fc_bf16_hi(v);
    _mm256_storeu_si256((__m256i *)hi, h);
    if (lo)
        _mm256_storeu_si256((__m256i *)lo, fc_bf16_lo(v, h));
}

/* hi[e] = bf16(x[e]) and, when lo is given, lo[e] = bf16(x[e] − hi[e]), for e < n; zeros up to
 * np (a multiple of 16).  An infinite x has lo 0, so that it propagates as itself. */
FC_INLINE void fc_bf16_split(uint16_t *hi, uint16_t *lo, const float *x, int n, int np)
{
    for (int e = 0; e < np; e += 16)
        fc_bf16_split16(hi + e, lo ? lo + e : NULL, fc_amx_load16(x, e, n));
}

/* dst = src (n bf16 words, a multiple of 32) with ±inf as 0: the copy of a hi part that meets the
 * other operand's lo part (a_hi·b_lo, a_lo·b_hi) must not turn an exact b (lo 0) against an infinite
 * a into 0·inf = NaN; a_hi·b_hi carries the infinity. */
FC_INLINE void fc_bf16_copy_finite(uint16_t *dst, const uint16_t *src, size_t n)
{
    const __m512i abs = _mm512_set1_epi16(0x7FFF), inf = _mm512_set1_epi16(0x7F80);
    for (size_t e = 0; e < n; e += 32) {
        const __m512i w = _mm512_loadu_si512(src + e);
        const __mmask32 finite = _mm512_cmpneq_epi16_mask(_mm512_and_si512(w, abs), inf);
        _mm512_storeu_si512(dst + e, _mm512_maskz_mov_epi16(finite, w));
    }
}

/* Whether n bf16 words (a multiple of 32) hold an infinity: a hi part without one is finite, so
 * the product against the other operand's lo part may read it as it is (no copy above). */
FC_INLINE bool fc_bf16_has_inf(const uint16_t *src, size_t n)
{
    const __m512i abs = _mm512_set1_epi16(0x7FFF), inf = _mm512_set1_epi16(0x7F80);
    __mmask32 any = 0;
    for (size_t e = 0; e < n; e += 32)
        any |= _mm512_cmpeq_epi16_mask(_mm512_and_si512(_mm512_loadu_si512(src + e), abs), inf);
    return any != 0;
}

/* Word indices that interleave two rows' words (a, b, a, b, ...): fc_pair_idx within one register
 * holding a in words 0..15 and b in 16..31 (vpermw); the other two across registers a and b (b's
 * words at 32 + i, vpermt2w), for words 0..15 and 16..31. */
static const uint16_t fc_pair_idx[32] = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23,
                                         8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
static const uint16_t fc_pair_lo_idx[32] = {0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
                                            8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
static const uint16_t fc_pair_hi_idx[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53, 22, 54, 23, 55,
                                            24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63};

/* 16 values of two rows as bf16 parts, pair-interleaved: hi[2e + {0, 1}] = (a[e], b[e]), lo the same
 * for the lo parts when given (idx: fc_pair_idx). */
FC_INLINE void fc_bf16_pair16(uint16_t *hi, uint16_t *lo, fvec va, fvec vb, __m512i idx)
{
    const __m256i ha = fc_bf16_hi(va), hb = fc_bf16_hi(vb);
    const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(ha), hb, 1);
    _mm512_storeu_si512(hi, _mm512_permutexvar_epi16(idx, both));
    if (lo) {
        const __m512i l = _mm512_inserti64x4(_mm512_castsi256_si512(fc_bf16_lo(va, ha)), fc_bf16_lo(vb, hb), 1);
        _mm512_storeu_si512(lo, _mm512_permutexvar_epi16(idx, l));
    }
}

/* Two fp32 rows of n values (b may be NULL: zeros) as bf16 parts, pair-interleaved:
 * dst[2e + {0, 1}] = (a[e], b[e]) for e < np (a multiple of 16), hi at dst_hi, lo at dst_lo when given. */
FC_INLINE void fc_bf16_pair_rows(uint16_t *dst_hi, uint16_t *dst_lo, const float *a, const float *b, int n, int np)
{
    const __m512i idx = _mm512_loadu_si512(fc_pair_idx);
    for (int e = 0; e < np; e += 16)
        fc_bf16_pair16(dst_hi + 2 * e, dst_lo ? dst_lo + 2 * e : NULL, fc_amx_load16(a, e, n),
                       b ? fc_amx_load16(b, e, n) : v_zero(), idx);
}

/* Per-thread buffers of the tile products (carved by the forward item). */
typedef struct fc_amx_bufs {
    uint16_t *qrow; /* [Rp][qk·Dp]     query rows as A-form parts, before transposition */
    uint16_t *q;    /* [qk·Dp/2][2·Rp] Qᵀ in pair form (B operand of S = K·Qᵀ) */
    uint16_t *k;    /* [cols][qk·Dp]   key rows (A operand) */
    uint16_t *v;    /* [pv·Jp/2][2·Dvp] value rows in pair form (B operand of O += P·V) */
    uint32_t *ppair; /* [2][Jp/2][Rp]  P's pairs (hi, lo) by kv column pair, before transposition */
    uint16_t *p;    /* [Rp][pv·Jp]     P rows (A operand) */
    int qk, pv, Dp, Jp;
} fc_amx_bufs;

static inline void fc_amx_carve(fc_amx_bufs *a, fc_carver *cur, const fc_problem *p, int Rp, int cols)
{
    a->qk = fc_amx_qk_parts(p);
    a->pv = fc_amx_pv_parts(p);
    a->Dp = (int)fc_round_up(p->Dqk + p->Dr, 32);
    a->Jp = (int)fc_round_up(cols, 32);
    const size_t Dvp = (size_t)fc_round_up(p->Dv, FC_W), two = sizeof(uint16_t);
    a->qrow = fc_take(cur, (size_t)Rp * a->qk * a->Dp * two);
    a->q = fc_take(cur, (size_t)Rp * a->qk * a->Dp * two);
    a->k = fc_take(cur, (size_t)fc_round_up(cols, 16) * a->qk * a->Dp * two);
    a->v = fc_take(cur, (size_t)a->pv * a->Jp * Dvp * two);
    a->ppair = fc_take(cur, (size_t)a->Jp * Rp * sizeof(uint32_t));
    a->p = fc_take(cur, (size_t)Rp * a->pv * a->Jp * two);
}

/* R fp32 rows at stride ld as bf16 rows of parts: per row [x_hi | x_hi | x_lo | x_lo] (parts 4,
 * against A = [a_hi | a_lo | a_hi | a_lo]; the second x_hi finite, fc_bf16_copy_finite) or [x_hi]
 * (parts 1), np columns per part (a multiple of 32), rows R..Rp zeros (Rp·parts·np words: the A
 * operand of the fused pipeline, amx_rows.h). */
static inline void fc_amx_part_rows(uint16_t *scratch, const float *rows, int64_t ld, int R, int Rp, int n, int np,
                                    int parts)
{
    const int ldr = parts * np;
    for (int r = 0; r < Rp; r++) {
        uint16_t *row = scratch + (size_t)r * ldr;
        if (r >= R) {
            memset(row, 0, (size_t)ldr * sizeof(uint16_t));
            continue;
        }
        fc_bf16_split(row, parts == 4 ? row + 2 * np : NULL, rows + r * ld, n, np);
        if (parts == 4) {
            fc_bf16_copy_finite(row + np, row, (size_t)np);
            memcpy(row + 3 * np, row + 2 * np, (size_t)np * sizeof(uint16_t));
        }
    }
}

/* Xᵀ in pair form (the B operand of a product against rows over n features) from R fp32 rows at
 * stride ld: the dword transpose of fc_amx_part_rows' rows (a feature pair is one dword), which
 * scratch holds. */
static inline void fc_amx_pack_t(uint16_t *dst, uint16_t *scratch, const float *rows, int64_t ld, int R, int Rp, int n,
                                 int np, int parts)
{
    fc_amx_part_rows(scratch, rows, ld, R, Rp, n, np, parts);
    fc_transpose((const float *)scratch, parts * np / 2, (float *)dst, Rp, Rp, parts * np / 2);
}

/* The item's R query rows (fp32 rows at stride ldq, Dt features) as bf16 rows of parts (qrow, the
 * fused pipeline's A operand); fc_amx_pack_qt makes Qᵀ from them when a column-major tile first
 * needs it (a fused item may never). */
static inline void fc_amx_pack_q(fc_amx_bufs *a, const float *rows, int64_t ldq, int R, int Rp, int Dt)
{
    fc_amx_part_rows(a->qrow, rows, ldq, R, Rp, Dt, a->Dp, a->qk);
}

static inline void fc_amx_pack_qt(fc_amx_bufs *a, int Rp)
{
    const int ldr = a->qk * a->Dp;
    fc_transpose((const float *)a->qrow, ldr / 2, (float *)a->q, Rp, Rp, ldr / 2);
}

/* Whether the values of kv rows [j0, j0 + jn) are all finite, read as they are stored: bf16 or
 * fp16 rows at unit stride by their exponent bits, others through fp32 (x: Dv floats of scratch).
 * A partial tile of the fused pipeline asks this rather than converting the tile's values. */
static inline bool fc_amx_values_finite(const fc_problem *p, fc_kv_at at, int64_t j0, int jn, float *x)
{
    const fc_view *v = &p->v;
    const int Dv = (int)p->Dv;
    const bool half = v->se == 1 && (v->dtype == FC_BF16 || v->dtype == FC_F16);
    const __m512i ones = _mm512_set1_epi16(v->dtype == FC_BF16 ? 0x7F80 : 0x7C00); /* the exponent's bits */
    __mmask32 bad = 0;
    for (int j = 0; j < jn; j++) {
        const char *row = fc_kv_row(v, at, j0 + j);
        if (!half) {
            fc_load_row(x, row, v->dtype, v->se, Dv);
            if (!fc_all_finite(x, 1, 0, Dv))
                return false;
            continue;
        }
        for (int e = 0; e < Dv; e += 32) {
            const __mmask32 m = Dv - e >= 32 ? 0xFFFFFFFFu : (1u << (Dv - e)) - 1u;
            const __m512i w = _mm512_maskz_loadu_epi16(m, (const uint16_t *)row + e);
            bad |= _mm512_mask_cmpeq_epi16_mask(m, _mm512_and_si512(w, ones), ones);
        }
    }
    return !bad;
}

/* The bf16 parts of kv row j0 + j of a tile: hi (and lo when given) for the key features followed
 * by the rope features (width Dt), zeros up to np.  bf16 rows at unit stride are copied as they
 * are; others go through fp32 (x: Dt floats of scratch). */
static inline void fc_amx_key_row(uint16_t *hi, uint16_t *lo, const fc_problem *p, fc_kv_at at, int64_t s, int np,
                                  float *x)
{
    const int Dqk = (int)p->Dqk, Dr = (int)p->Dr;
    const char *row = fc_kv_row(&p->k, at, s);
    if (!lo && !Dr && p->k.dtype == FC_BF16 && p->k.se == 1) {
        memcpy(hi, row, (size_t)Dqk * sizeof(uint16_t));
        memset(hi + Dqk, 0, (size_t)(np - Dqk) * sizeof(uint16_t));
        return;
    }
    if (!Dr && p->k.dtype == FC_F16 && p->k.se == 1) { /* converted as they are split */
        for (int e = 0; e < np; e += 16)
            fc_bf16_split16(hi + e, lo ? lo + e : NULL, fc_amx_load16_f16((const uint16_t *)row, e, Dqk));
        return;
    }
    fc_load_row(x, row, p->k.dtype, p->k.se, Dqk);
    if (Dr)
        fc_load_row(x + Dqk, fc_kv_row(&p->k_rope, at, s), p->k_rope.dtype, p->k_rope.se, Dr);
    fc_bf16_split(hi, lo, x, Dqk + Dr, np);
}

/* Asks for the next kv tile's rows [j0, j0 + jn) of v to be brought into L2 while this one is
 * multiplied (the tiles read rows in place, so no conversion pass fetches them early). */
static inline void fc_amx_prefetch(const fc_view *v, const fc_problem *p, fc_kv_at at, int64_t j0, int jn, int width)
{
    const int64_t left = p->batch[at.b].skv - j0, n = left < jn ? left : jn;
    for (int64_t j = 0; j < n; j++)
        fc_prefetch_kv_row(v, at, j0 + j, width);
}

/* S[j][r] = k_j · q_r for kv rows [j0, j0 + jn) (x: Dt floats of scratch).  bf16 keys at unit
 * stride, not paged, with whole tiles of rows and features are read by the tiles in place. */
static inline void fc_amx_qk(float *S, fc_amx_bufs *a, const fc_problem *p, fc_kv_at at, int64_t j0, int jn, int Rp,
                             float *x)
{
    const int Dp = a->Dp, ld = a->qk * Dp, Mp = (int)fc_round_up(jn, 16);
    fc_amx_prefetch(&p->k, p, at, j0 + jn, jn, (int)p->Dqk);
    const fc_view *k = &p->k;
    if (a->qk == 1 && !p->Dr && k->dtype == FC_BF16 && k->se == 1 && !k->pages.table && Mp == jn && Dp == p->Dqk) {
        fc_amx_gemm(jn, Rp, Dp, (const uint16_t *)fc_kv_row(k, at, j0), (size_t)k->ss, a->q, (size_t)2 * Rp, S,
                    (size_t)Rp, false);
        return;
    }
    for (int j = 0; j < Mp; j++) {
        uint16_t *dst = a->k + (size_t)j * ld;
        if (j >= jn) {
            memset(dst, 0, (size_t)ld * sizeof(uint16_t));
            continue;
        }
        fc_amx_key_row(dst, a->qk == 4 ? dst + Dp : NULL, p, at, j0 + j, Dp, x);
        if (a->qk == 4) { /* [k_hi | k_lo | k_hi | k_lo] against [q_hi; q_hi; q_lo; q_lo] */
            fc_bf16_copy_finite(dst + 2 * Dp, dst, (size_t)Dp);
            memcpy(dst + 3 * Dp, dst + Dp, (size_t)Dp * sizeof(uint16_t));
        }
    }
    fc_amx_gemm(Mp, Rp, ld, a->k, (size_t)ld, a->q, (size_t)2 * Rp, S, (size_t)Rp, false);
}

/* Value rows s and s + 1 (have_b false: zeros) in pair form: hi at dst, lo at dst_lo when given
 * (x: 2·Dv floats of scratch). */
static inline void fc_amx_value_pair(uint16_t *dst, uint16_t *dst_lo, const fc_problem *p, fc_kv_at at, int64_t s,
                                     bool have_b, int Dvp, float *x)
{
    const fc_view *v = &p->v;
    const int Dv = (int)p->Dv;
    const char *ra = fc_kv_row(v, at, s), *rb = have_b ? fc_kv_row(v, at, s + 1) : NULL;
    if (!dst_lo && v->dtype == FC_BF16 && v->se == 1) { /* 32 words of each row at a time */
        const __m512i lo_idx = _mm512_loadu_si512(fc_pair_lo_idx), hi_idx = _mm512_loadu_si512(fc_pair_hi_idx);
        for (int e = 0; e < Dvp; e += 32) {
            const __mmask32 m = Dv - e >= 32 ? 0xFFFFFFFFu : (1u << (Dv - e)) - 1u;
            const __m512i wa = _mm512_maskz_loadu_epi16(m, (const uint16_t *)ra + e);
            const __m512i wb = rb ? _mm512_maskz_loadu_epi16(m, (const uint16_t *)rb + e) : _mm512_setzero_si512();
            _mm512_storeu_si512(dst + 2 * e, _mm512_permutex2var_epi16(wa, lo_idx, wb));
            if (e + 16 < Dvp)
                _mm512_storeu_si512(dst + 2 * e + 32, _mm512_permutex2var_epi16(wa, hi_idx, wb));
        }
        return;
    }
    if (v->dtype == FC_F16 && v->se == 1) { /* converted as they are split */
        const __m512i idx = _mm512_loadu_si512(fc_pair_idx);
        const uint16_t *a = (const uint16_t *)ra, *b = (const uint16_t *)rb;
        for (int e = 0; e < Dvp; e += 16)
            fc_bf16_pair16(dst + 2 * e, dst_lo ? dst_lo + 2 * e : NULL, fc_amx_load16_f16(a, e, Dv),
                           b ? fc_amx_load16_f16(b, e, Dv) : v_zero(), idx);
        return;
    }
    fc_load_row(x, ra, v->dtype, v->se, Dv);
    if (rb)
        fc_load_row(x + Dv, rb, v->dtype, v->se, Dv);
    fc_bf16_pair_rows(dst, dst_lo, x, rb ? x + Dv : NULL, Dv, Dvp);
}

/* The tile's value rows in pair form (the B operand of O += P·V), Jp/2 row pairs with zeros past
 * row jn: [v_hi; v_lo; v_hi] along K (pv 3, against [p_hi | p_hi | p_lo]) or [v_hi] (pv 1);
 * x: 2·Dv floats of scratch.  Returns the parts stored: with `share`, a finite v_hi is not copied
 * (2: the caller's p_lo·v_hi reads the first part again). */
static inline int fc_amx_pack_v(fc_amx_bufs *a, const fc_problem *p, fc_kv_at at, int64_t j0, int jn, int Jp, bool share,
                                float *x)
{
    const int Dvp = (int)fc_round_up(p->Dv, FC_W), pv = a->pv;
    const size_t ldv2 = (size_t)2 * Dvp, lo_part = (size_t)(Jp / 2) * ldv2;
    fc_amx_prefetch(&p->v, p, at, j0 + jn, jn, (int)p->Dv);
    for (int j = 0; j < Jp; j += 2) {
        uint16_t *vh = a->v + (size_t)(j / 2) * ldv2;
        if (j >= jn) {
            for (int part = 0; part < pv; part++)
                memset(vh + part * lo_part, 0, ldv2 * sizeof(uint16_t));
            continue;
        }
        fc_amx_value_pair(vh, pv == 3 ? vh + lo_part : NULL, p, at, j0 + j, j + 1 < jn, Dvp, x);
    }
    if (pv == 3 && share && !fc_bf16_has_inf(a->v, lo_part))
        return 2;
    if (pv == 3)
        fc_bf16_copy_finite(a->v + 2 * lo_part, a->v, lo_part);
    return pv;
}

/* O[r][e] += Σ_j P[j][r]·v_j[e] for kv rows [j0, j0 + jn) and the probabilities S[j][r] (the softmax
 * step's output); x: 2·Dv floats of scratch. */
static inline void fc_amx_pv(float *O, fc_amx_bufs *a, const float *S, const fc_problem *p, fc_kv_at at, int64_t j0,
                             int jn, int Rp, float *x)
{
    const int Dvp = (int)fc_round_up(p->Dv, FC_W), Jp = (int)fc_round_up(jn, 32), pv = a->pv;
    uint32_t *hi_pairs = a->ppair, *lo_pairs = a->ppair + (size_t)(Jp / 2) * Rp;
    fc_amx_pack_v(a, p, at, j0, jn, Jp, false, x);
    for (int j = 0; j < Jp; j += 2) { /* P's column pairs, against the value pairs */
        if (j >= jn) {
            memset(hi_pairs + (size_t)(j / 2) * Rp, 0, (size_t)Rp * sizeof(uint32_t));
            if (pv == 3)
                memset(lo_pairs + (size_t)(j / 2) * Rp, 0, (size_t)Rp * sizeof(uint32_t));
            continue;
        }
        fc_bf16_pair_rows((uint16_t *)(hi_pairs + (size_t)(j / 2) * Rp),
                          pv == 3 ? (uint16_t *)(lo_pairs + (size_t)(j / 2) * Rp) : NULL, S + (size_t)j * Rp,
                          j + 1 < jn ? S + (size_t)(j + 1) * Rp : NULL, Rp, Rp);
    }
    /* P rows in A form: the dword transpose of the pairs, one block per part */
    const int ld = pv * Jp;
    for (int part = 0; part < pv; part++)
        fc_transpose((const float *)(part == 2 ? lo_pairs : hi_pairs), Rp, (float *)(a->p + part * Jp), ld / 2, Jp / 2, Rp);
    fc_amx_gemm(Rp, Dvp, ld, a->p, (size_t)ld, a->v, (size_t)2 * Dvp, O, (size_t)Dvp, true);
}

#endif /* FC_KERNELS_AMX_PACK_H */
