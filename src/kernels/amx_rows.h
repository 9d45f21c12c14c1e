/*
 * The half-precision forward's fused tile pipeline (amx set): bf16/fp16 queries, keys and values
 * at bf16 or fp16 output tolerance, logits scale·s alone (no pse, softcap, ALiBi, mask or dropout).
 * Per kv tile it packs Kᵀ and V once for the item, then, 32 query rows at a time,
 *
 *     S = Q·Kᵀ (tiles, fp32, row-major: a 32 × Jp block that stays in L1/L2)
 *     one pass per row: the maximum (horizontal), then exp(x − m) with the row sum, written
 *         straight to bf16 P rows — the A operand of the next product, no transposition
 *     O += P·V (tiles)
 *
 * against the column-major pipeline of forward.c (S[j][r], softmax.h, P paired and transposed in
 * amx_pack.h), which stores S three times and P twice per tile.  The semantics are the same
 * (softmax.h): NaN scores propagate through the row sum, +inf maxima are rescanned for NaN, and
 * hidden positions (partial tiles) take no part.
 *
 * Precision: as amx_pack.h.  bf16 operands at bf16 tolerance are the products as they are; fp16
 * operands (or an fp16 output) take the bf16 hi/lo parts as one product over a longer K axis:
 * S = [q_hi | q_hi | q_lo | q_lo]·[k_hi; k_lo; k_hi; k_lo] (exact, 4 products), and the row pass
 * writes P's parts, O += [p_hi | p_hi | p_lo]·[v_hi; v_lo; v_hi] (3 products).
 */
#ifndef FC_KERNELS_AMX_ROWS_H
#define FC_KERNELS_AMX_ROWS_H

#include "amx_pack.h"
#include "scores.h"

#define FC_AMX_BLOCK 32 /* query rows per S block */
/* Its items and kv tiles (512 × 512, fp16 parts 1024 × 512) are the tile policy's (src/cpu/tiles.c). */

/* Whether a tile item (fc_amx_applies) takes the fused pipeline. */
static inline bool fc_amx_rows_applies(const fc_problem *p)
{
    return fc_amx_pv_tiles(p) && fc_scores_scale_only(p) && !fc_has_dropout(p) && !p->mask.data;
}

/* Its buffers beside fc_amx_bufs: Kᵀ in pair form and one block of S. */
typedef struct fc_amx_rows_bufs {
    uint16_t *kt; /* Kᵀ in 32-column panels (fc_amx_panels): [Jp/32][qk·Dp/2][64] */
    float *s;     /* FC_AMX_BLOCK × Jp, tile by tile (fc_amx_tiled_c) */
} fc_amx_rows_bufs;

/* A block's S and P rows lie tile by tile (amx_layout.h): row r of S from fc_amx_s_row, its 16
 * columns from j (a multiple of 16) at 16·j; row r of P from fc_amx_p_row, its 32 columns from c
 * (a multiple of 32, the parts one after the other) at 32·c. */
FC_INLINE const float *fc_amx_s_row(const float *S, int Jp, int r) { return S + (size_t)(r / 16) * 16 * Jp + (r % 16) * 16; }
FC_INLINE uint16_t *fc_amx_p_row(uint16_t *P, int r) { return P + (r / 16) * 512 + (r % 16) * 32; }
FC_INLINE fvec fc_amx_s16(const float *srow, int j) { return v_load(srow + 16 * j); }

static inline void fc_amx_rows_carve(fc_amx_rows_bufs *w, fc_carver *cur, const fc_amx_bufs *a)
{
    w->kt = fc_take(cur, (size_t)a->qk * a->Dp * a->Jp * sizeof(uint16_t));
    w->s = fc_take(cur, (size_t)FC_AMX_BLOCK * a->Jp * sizeof(float));
}

/* dst[c·ldd + r] = src[r·lds + c] for a 16 × 16 block of dwords whose rows from n on are taken as
 * zeros (not read): four rounds of in-lane and cross-lane shuffles. */
FC_INLINE void fc_amx_transpose16(const uint32_t *src, ptrdiff_t lds, int n, uint32_t *dst, ptrdiff_t ldd)
{
    __m512i r[16], t[16];
    for (int i = 0; i < 16; i++)
        r[i] = i < n ? _mm512_loadu_si512(src + i * lds) : _mm512_setzero_si512();
    for (int i = 0; i < 16; i += 2) { /* (r_i[c], r_i+1[c]) pairs */
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int g = 0; g < 16; g += 4) { /* r[g + k], lane L: column 4L + k of rows g .. g + 3 */
        r[g] = _mm512_unpacklo_epi64(t[g], t[g + 2]);
        r[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]);
        r[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]);
        r[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
    }
    for (int k = 0; k < 4; k++) { /* a 4 × 4 transpose of 128-bit lanes per k */
        const __m512i x0 = _mm512_shuffle_i32x4(r[k], r[4 + k], 0x44), x1 = _mm512_shuffle_i32x4(r[k], r[4 + k], 0xEE);
        const __m512i y0 = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0x44);
        const __m512i y1 = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0xEE);
        _mm512_storeu_si512(dst + (0 + k) * ldd, _mm512_shuffle_i32x4(x0, y0, 0x88));
        _mm512_storeu_si512(dst + (4 + k) * ldd, _mm512_shuffle_i32x4(x0, y0, 0xDD));
        _mm512_storeu_si512(dst + (8 + k) * ldd, _mm512_shuffle_i32x4(x1, y1, 0x88));
        _mm512_storeu_si512(dst + (12 + k) * ldd, _mm512_shuffle_i32x4(x1, y1, 0xDD));
    }
}

/* Kᵀ in pair form (B operand of S = Q·Kᵀ) in 32-column panels (fc_amx_panels: each panel's B
 * tiles one contiguous stretch, 16 KB at Dp = 128, not 16 lines 2·Jp words apart that share four
 * L1 sets), k_j[d] for the tile's rows j < jn, zeros up to Jp: the dword transpose of the key
 * rows, read in place where they are plain bf16 rows (x: Dt floats of scratch).  With parts
 * (qk 4), [k_hi; k_lo] along d: the rows' two parts transposed 16 rows at a time (in L1); the
 * products against [q_lo | q_lo] read them again (fc_amx_repeat) unless k_hi holds an infinity,
 * which q_lo·k_hi must not meet (0·inf): then [k_hi; k_lo; k_hi; k_lo] per panel, the second k_hi
 * finite (fc_bf16_copy_finite).  Returns the parts stored (1, 2 or 4). */
static inline int fc_amx_pack_kt(uint16_t *kt, fc_amx_bufs *a, const fc_problem *p, fc_kv_at at, int64_t j0, int jn,
                                 int Jp, float *x)
{
    const bool split = a->qk > 1;
    const int Dp = a->Dp, width = split ? 2 * Dp : Dp;
    const fc_view *k = &p->k;
    fc_amx_prefetch(k, p, at, j0 + jn, jn, (int)p->Dqk);
    const bool in_place =
        !split && !p->Dr && k->dtype == FC_BF16 && k->se == 1 && !k->pages.table && Dp == p->Dqk && k->ss % 2 == 0;
    const ptrdiff_t ld = in_place ? (ptrdiff_t)k->ss : width;
    const size_t panel = (size_t)16 * a->qk * Dp; /* dwords: qk·Dp/2 pair rows of 32 */
    for (int j = 0; j < Jp; j += 16) { /* Dp/2 is a multiple of 16; rows past jn come out as zeros */
        const int n = j >= jn ? 0 : jn - j < 16 ? jn - j : 16;
        const uint16_t *rows = in_place && n ? (const uint16_t *)fc_kv_row(k, at, j0) + j * ld : a->k;
        if (!in_place)
            for (int i = 0; i < n; i++)
                fc_amx_key_row(a->k + (size_t)i * width, split ? a->k + (size_t)i * width + Dp : NULL, p, at, j0 + j + i,
                               Dp, x);
        for (int c = 0; c < width / 2; c += 16)
            fc_amx_transpose16((const uint32_t *)rows + c, ld / 2, n,
                               (uint32_t *)kt + (size_t)(j / 32) * panel + (size_t)c * 32 + j % 32, 32);
    }
    if (!split)
        return 1;
    const size_t part = (size_t)32 * Dp; /* one part is Dp/2 pair rows of 64 words per panel */
    bool inf = false;
    for (int j = 0; j < Jp; j += 32)
        inf = inf || fc_bf16_has_inf(kt + (size_t)(j / 32) * 2 * panel, part);
    if (!inf)
        return 2;
    for (int j = 0; j < Jp; j += 32) {
        uint16_t *pn = kt + (size_t)(j / 32) * 2 * panel;
        fc_bf16_copy_finite(pn + 2 * part, pn, part);
        memcpy(pn + 3 * part, pn + part, part * sizeof(uint16_t));
    }
    return 4;
}

/* Bits [a, b) of the 16 columns from j, as a lane mask. */
FC_INLINE __mmask16 fc_amx_span_bits(int a, int b, int j)
{
    const int lo = a - j < 0 ? 0 : a - j > 16 ? 16 : a - j, hi = b - j < 0 ? 0 : b - j > 16 ? 16 : b - j;
    const uint32_t upto_hi = (1u << hi) - 1u, upto_lo = (1u << lo) - 1u;
    return (__mmask16)(upto_hi & ~upto_lo);
}

/* The columns a row sees in a tile, tile-local: [a1, b1) ∪ [a2, b2) within [0, jn); the row's
 * passes run over its block's columns [lo, hi) (fc_amx_block_span). */
typedef struct fc_amx_span {
    int a1, b1, a2, b2;
    int lo, hi;
    bool whole;       /* all of [lo, hi): no masks */
    int open_lo, open_hi; /* [lo, hi)'s 32-column chunks that need no mask (a causal or band edge
                           * masks only the chunks it crosses, not the whole row) */
} fc_amx_span;

static inline fc_amx_span fc_amx_row_span(const fc_rows *rw, int r, bool partial, int64_t j0, int jn)
{
    fc_amx_span s = {0, jn, 0, 0, 0, 0, false, 0, 0};
    if (!partial)
        return s;
    const float lim[4] = {rw->lo1[r], rw->hi1[r], rw->lo2[r], rw->hi2[r]};
    int v[4];
    for (int k = 0; k < 4; k++) {
        const double t = (double)lim[k] - (double)j0;
        v[k] = t < 0 ? 0 : t > jn ? jn : (int)t;
    }
    s.a1 = v[0], s.b1 = v[1] > v[0] ? v[1] : v[0], s.a2 = v[2], s.b2 = v[3] > v[2] ? v[3] : v[2];
    return s;
}

/* The block's columns [lo, hi), multiples of 32, outside which none of its nr rows sees anything
 * (a causal or band edge leaves part of a tile to part of the rows: the products skip the rest;
 * the hidden values there are finite, so their zero weights add nothing); lo = hi when the block
 * sees nothing.  Sets each row's range and whether it sees all of it. */
static inline void fc_amx_block_span(fc_amx_span *span, int nr, int jn, int *lo, int *hi)
{
    int a = jn, b = 0;
    for (int r = 0; r < nr; r++) {
        const fc_amx_span *s = &span[r];
        if (s->b1 > s->a1)
            a = s->a1 < a ? s->a1 : a, b = s->b1 > b ? s->b1 : b;
        if (s->b2 > s->a2)
            a = s->a2 < a ? s->a2 : a, b = s->b2 > b ? s->b2 : b;
    }
    *lo = b > a ? a / 32 * 32 : 0;
    *hi = b > a ? (int)fc_round_up(b, 32) : 0;
    for (int r = 0; r < nr; r++) {
        fc_amx_span *s = &span[r];
        s->lo = *lo, s->hi = *hi;
        s->whole = *hi <= jn && ((s->a1 <= *lo && *hi <= s->b1) || (s->a2 <= *lo && *hi <= s->b2));
        const bool one = s->b2 <= s->a2 || s->b1 <= s->a1; /* one interval: [a, b) */
        const int a = s->b1 > s->a1 ? s->a1 : s->a2, b = s->b1 > s->a1 ? s->b1 : s->b2;
        s->open_lo = s->open_hi = *lo;
        if (s->whole)
            s->open_hi = *hi;
        else if (one && (int)fc_round_up(a, 32) < b / 32 * 32) {
            s->open_lo = (int)fc_round_up(a, 32) > *lo ? (int)fc_round_up(a, 32) : *lo;
            s->open_hi = b / 32 * 32 < *hi ? b / 32 * 32 : *hi;
        }
    }
}

FC_INLINE __mmask16 fc_amx_span_mask(const fc_amx_span *s, int j)
{
    return s->whole ? (__mmask16)0xFFFF : (__mmask16)(fc_amx_span_bits(s->a1, s->b1, j) | fc_amx_span_bits(s->a2, s->b2, j));
}

/* x with −inf where hidden, for the 16 columns from j (masked: outside [open_lo, open_hi)). */
FC_INLINE fvec fc_amx_hide(fvec x, int j, bool masked, const fc_amx_span *s)
{
    return masked ? _mm512_mask_blend_ps(fc_amx_span_mask(s, j), v_set1(-INFINITY), x) : x;
}

/* The logits x = c·s of 16 columns from j, −inf where hidden. */
FC_INLINE fvec fc_amx_logits(const float *srow, int j, fvec c, bool masked, const fc_amx_span *s)
{
    return fc_amx_hide(v_mul(fc_amx_s16(srow, j), c), j, masked, s);
}

/* Two chains; the score first, so that a NaN one is dropped. */
FC_INLINE void fc_amx_max_chunk(const float *srow, int j, fvec c, bool masked, const fc_amx_span *s, fvec *m0, fvec *m1)
{
    *m0 = v_max(fc_amx_logits(srow, j, c, masked, s), *m0);
    *m1 = v_max(fc_amx_logits(srow, j + 16, c, masked, s), *m1);
}

/* The row's maximum logit over its visible columns (NaN scores dropped; −inf when none), in
 * column order: masked chunks, open ones, masked ones. */
static inline float fc_amx_row_max(const float *srow, fvec c, const fc_amx_span *s)
{
    fvec m0 = v_set1(-INFINITY), m1 = m0;
    int j = s->lo;
    for (; j < s->open_lo; j += 32)
        fc_amx_max_chunk(srow, j, c, true, s, &m0, &m1);
    for (; j < s->open_hi; j += 32)
        fc_amx_max_chunk(srow, j, c, false, s, &m0, &m1);
    for (; j < s->hi; j += 32)
        fc_amx_max_chunk(srow, j, c, true, s, &m0, &m1);
    return v_hmax(v_max(m0, m1));
}

/* Whether a visible score of the row is NaN (asked only of rows whose maximum is +inf). */
static inline bool fc_amx_row_has_nan(const float *srow, const fc_amx_span *s)
{
    for (int j = s->lo; j < s->hi; j += 16) {
        const fvec x = fc_amx_s16(srow, j);
        if (_mm512_mask_cmp_ps_mask(fc_amx_span_mask(s, j), x, x, _CMP_UNORD_Q))
            return true;
    }
    return false;
}

/* 2^y for the softmax's y = (x − m)·log2 e ≲ 0 (or NaN): 2ⁿ·p(f), n = round(y), f = y − n, p a
 * degree-4 fit of 2^f on [−½, ½] with p(0) = 1 (relative error 3e-6 evaluated in fp32, under
 * 1/600 of P's bf16 rounding, 2⁻⁹; v_exp's Cody–Waite reduction and degree 6 serve the whole fp32
 * range); 0 below 2⁻¹²⁶ (−inf included), NaN for NaN. */
FC_INLINE fvec fc_amx_exp2_nonpos(fvec y)
{
    const __mmask16 keep = _mm512_cmp_ps_mask(y, v_set1(-126.0f), _CMP_NLT_UQ); /* NaN kept */
    const fvec n = v_round(y), f = v_sub(y, n);
    fvec p = v_fma(v_set1(9.582852945e-3f), f, v_set1(5.590642616e-2f));
    p = v_fma(p, f, v_set1(2.402409911e-1f));
    p = v_fma(p, f, v_set1(6.931241751e-1f));
    p = v_fma(p, f, v_set1(1.0f));
    return _mm512_maskz_scalef_ps(keep, p, n);
}

/* y = (c·s − m)·log2 e of 16 columns from j, −inf where hidden.  A finite m (`fused`) takes one
 * FMA, s·(c·log2 e) − m·log2 e: two operations fewer on the hot loop; its roundings err by
 * ~2⁻²³·|y| in the exponent, 1e-7 relative for the row's largest terms.  An infinite or NaN m
 * keeps x − m, so that ∞ − ∞ is NaN as in softmax.h (with a finite maximum no visible c·s
 * overflowed, so the FMA sees the same cases). */
FC_INLINE fvec fc_amx_exp2_arg(const float *srow, int j, fvec c, fvec m, fvec cl, fvec ml, bool fused, bool masked,
                               const fc_amx_span *s)
{
    if (!fused)
        return v_mul(v_sub(fc_amx_logits(srow, j, c, masked, s), m), v_set1(FC_LOG2E));
    return fc_amx_hide(v_fma(fc_amx_s16(srow, j), cl, ml), j, masked, s);
}

/* The row constants of fc_amx_exp2_arg. */
typedef struct fc_amx_exp_row {
    fvec c, m, cl, ml;
    bool fused;
} fc_amx_exp_row;

/* 32 columns of P from j (see fc_amx_row_exp; at 32·j of the row, fc_amx_p_row), their sums
 * added to sum0 and sum1. */
FC_INLINE void fc_amx_exp_chunk(uint16_t *prow, size_t part, bool split, const float *srow, int j,
                                const fc_amx_exp_row *k, bool masked, const fc_amx_span *s, fvec *sum0, fvec *sum1)
{
    const fvec p0 = fc_amx_exp2_nonpos(fc_amx_exp2_arg(srow, j, k->c, k->m, k->cl, k->ml, k->fused, masked, s));
    const fvec p1 = fc_amx_exp2_nonpos(fc_amx_exp2_arg(srow, j + 16, k->c, k->m, k->cl, k->ml, k->fused, masked, s));
    *sum0 = v_add(*sum0, p0);
    *sum1 = v_add(*sum1, p1);
    const __m512i hi = (__m512i)_mm512_cvtne2ps_pbh(p1, p0);
    _mm512_storeu_si512(prow + 32 * j, hi);
    if (split) {
        const __m256i lo0 = fc_bf16_lo_finite(p0, _mm512_castsi512_si256(hi));
        const __m256i lo1 = fc_bf16_lo_finite(p1, _mm512_extracti64x4_epi64(hi, 1));
        _mm512_storeu_si512(prow + part + 32 * j, hi);
        _mm512_storeu_si512(prow + 2 * part + 32 * j, _mm512_inserti64x4(_mm512_castsi256_si512(lo0), lo1, 1));
    }
}

/* P = bf16(exp(x − m_ref)) for the row's columns [lo, hi) (0 where hidden); returns their fp32 sum.
 * Split: P's parts [p_hi | p_hi | p_lo], `part` words apart (p is finite or NaN: no copy to
 * make finite).  srow and prow: fc_amx_s_row, fc_amx_p_row. */
FC_INLINE float fc_amx_row_exp(uint16_t *prow, size_t part, bool split, const float *srow, fvec c, float m_ref,
                               const fc_amx_span *s)
{
    const float cl = _mm512_cvtss_f32(c) * FC_LOG2E, ml = -m_ref * FC_LOG2E;
    const fc_amx_exp_row k = {c, v_set1(m_ref), v_set1(cl), v_set1(ml),
                              isfinite(cl) && isfinite(ml)}; /* m·log2 e may overflow where m does not */
    fvec sum0 = v_zero(), sum1 = v_zero();
    int j = s->lo;
    for (; j < s->open_lo; j += 32)
        fc_amx_exp_chunk(prow, part, split, srow, j, &k, true, s, &sum0, &sum1);
    for (; j < s->open_hi; j += 32)
        fc_amx_exp_chunk(prow, part, split, srow, j, &k, false, s, &sum0, &sum1);
    for (; j < s->hi; j += 32)
        fc_amx_exp_chunk(prow, part, split, srow, j, &k, true, s, &sum0, &sum1);
    return v_hsum(v_add(sum0, sum1));
}

/* The online-softmax step of nr rows (a multiple of FC_W) from row r0 of the item, the block's S
 * (Jp columns, fc_amx_s_row) each row over its span: P to `P` (pv parts of Jp columns,
 * fc_amx_p_row), (m, l) updated, alpha = exp(m_old − m_new).  Returns true when some alpha
 * differs from 1. */
static inline bool fc_amx_rows_softmax(uint16_t *P, int pv, const float *S, int Jp, int r0, int nr,
                                       const fc_amx_span *span, float scale, float *m, float *l, float *alpha)
{
    const fvec c = v_set1(scale), ninf = v_set1(-INFINITY), pinf = v_set1(INFINITY);
    float mx[FC_AMX_BLOCK], ref[FC_AMX_BLOCK], sum[FC_AMX_BLOCK], inf_nan[FC_AMX_BLOCK];
    for (int r = 0; r < nr; r++)
        mx[r] = fc_amx_row_max(fc_amx_s_row(S, Jp, r), c, &span[r]);
    bool rescale = false;
    for (int g = 0; g < nr; g += FC_W) {
        const fvec m_old = v_load(m + r0 + g);
        const fvec x = v_max(v_load(mx + g), m_old); /* a NaN m_old kept */
        v_store(mx + g, x);
        v_store(ref + g, v_select(v_eq(x, ninf), v_zero(), x)); /* a finite reference */
        const fvec a = v_exp(v_sub(m_old, v_load(ref + g)));
        v_store(alpha + r0 + g, a);
        rescale |= m_any(_mm512_cmp_ps_mask(a, v_set1(1.0f), _CMP_NEQ_UQ)); /* NaN too */
        for (int k = 0; k < FC_W; k++) /* an +inf maximum turns NaN when a NaN score came with it */
            inf_nan[g + k] = mx[g + k] == INFINITY && fc_amx_row_has_nan(fc_amx_s_row(S, Jp, g + k), &span[g + k])
                                 ? NAN
                                 : mx[g + k];
    }
    for (int r = 0; r < nr; r++) /* the split decided outside the row loop */
        sum[r] = pv > 1 ? fc_amx_row_exp(fc_amx_p_row(P, r), (size_t)32 * Jp, true, fc_amx_s_row(S, Jp, r), c, ref[r], &span[r])
                        : fc_amx_row_exp(fc_amx_p_row(P, r), 0, false, fc_amx_s_row(S, Jp, r), c, ref[r], &span[r]);
    for (int g = 0; g < nr; g += FC_W) { /* a NaN sum makes m NaN, unless it is +inf without a NaN */
        const fvec s = v_load(sum + g), nan = v_set1(NAN);
        v_store(l + r0 + g, v_fma(v_load(l + r0 + g), v_load(alpha + r0 + g), s));
        v_store(m + r0 + g, v_select(v_eq(s, s), v_load(mx + g), v_select(v_eq(v_load(inf_nan + g), pinf), pinf, nan)));
    }
    return rescale;
}

/* O += P·V for nr rows of P (pv parts of Jp columns, tile by tile) over the tile's columns
 * [lo, hi), V holding vparts of them (fc_amx_pack_v; P's part k meets V's part k % vparts): one
 * product over all the parts when the span is the whole tile, else one per part. */
static inline void fc_amx_rows_pv(float *O, const fc_amx_bufs *a, int vparts, int nr, int Dvp, int Jp, int lo, int hi)
{
    const size_t vpart = (size_t)Jp * Dvp; /* Jp/2 pair rows of 2·Dvp words */
    const fc_amx_layout lp = fc_amx_tiled_a(), lv = fc_amx_pairs((size_t)2 * Dvp), lo_rows = fc_amx_rows((size_t)Dvp);
    if (lo == 0 && hi == Jp) {
        const fc_amx_layout lvr = vparts < a->pv ? fc_amx_repeat(lv, (size_t)vparts * Jp / 32) : lv;
        fc_amx_gemm_at(nr, Dvp, a->pv * Jp, a->p, lp, a->v, lvr, O, lo_rows, true);
        return;
    }
    for (int part = 0; part < a->pv; part++)
        fc_amx_gemm_at(nr, Dvp, hi - lo, a->p + (size_t)32 * (part * Jp + lo), lp,
                       a->v + (part % vparts) * vpart + (size_t)lo * Dvp, lv, O, lo_rows, true);
}

/* One kv tile [j0, j0 + jn) of the item's R rows (Rp padded; O row-major at stride Dvp); x:
 * scratch of max(Dt, 2·Dv) floats. */
static inline void fc_amx_rows_tile(fc_amx_bufs *a, fc_amx_rows_bufs *w, float *O, float *m, float *l, float *alpha,
                                    const fc_problem *p, const fc_rows *rw, int64_t j0, int jn, bool partial, float *x)
{
    const int Rp = rw->padded, R = rw->count, Jp = (int)fc_round_up(jn, 32), ldq = a->qk * a->Dp;
    const int Dvp = (int)fc_round_up(p->Dv, FC_W);
    const fc_kv_at at = fc_kv_at_rows(rw);
    const int kparts = fc_amx_pack_kt(w->kt, a, p, at, j0, jn, Jp, x);
    const int vparts = fc_amx_pack_v(a, p, at, j0, jn, Jp, true, x);
    const fc_amx_layout lk = fc_amx_panels((size_t)ldq);
    const fc_amx_layout lkr = kparts < a->qk ? fc_amx_repeat(lk, (size_t)kparts * a->Dp / 32) : lk;
    fc_amx_span span[FC_AMX_BLOCK];
    for (int r0 = 0; r0 < Rp; r0 += FC_AMX_BLOCK) {
        const int nr = Rp - r0 < FC_AMX_BLOCK ? Rp - r0 : FC_AMX_BLOCK;
        int lo, hi;
        for (int r = 0; r < nr; r++)
            span[r] = fc_amx_row_span(rw, r0 + r, partial, j0, jn);
        fc_amx_block_span(span, nr, jn, &lo, &hi);
        if (lo == hi) /* no row of the block sees the tile: (m, l, O) stay as they are */
            continue;
        fc_amx_gemm_at(nr, hi - lo, ldq, a->qrow + (size_t)r0 * ldq, fc_amx_rows((size_t)ldq), w->kt + (size_t)lo * ldq,
                       lkr, w->s + 16 * lo, fc_amx_tiled_c((size_t)Jp), false);
        bool rescale = false;
        for (int g = 0; g < nr; g += 16) /* a half's S (32 KB at Jp = 512) stays in L1 from its maximum to its exp pass */
            rescale |= fc_amx_rows_softmax(fc_amx_p_row(a->p, g), a->pv, fc_amx_s_row(w->s, Jp, g), Jp, r0 + g,
                                           nr - g < 16 ? nr - g : 16, span + g, p->scale, m, l, alpha);
        if (rescale)
            for (int r = r0; r < r0 + nr && r < R; r++)
                if (alpha[r] != 1.0f)
                    for (int e = 0; e < Dvp; e++)
                        O[(ptrdiff_t)r * Dvp + e] *= alpha[r];
        fc_amx_rows_pv(O + (size_t)r0 * Dvp, a, vparts, nr, Dvp, Jp, lo, hi);
    }
}

#endif /* FC_KERNELS_AMX_ROWS_H */
