/*
 * Few query rows (decode: the G query heads of one position, at most FC_QK_DOT_ROWS) against
 * fully visible kv tiles, fused so that a tile costs little more than reading it:
 *  - scores are dot products straight from the cache rows, FC_DEC_ACC at a time (keys × rows),
 *    their horizontal sums done as one transposing reduction instead of one reduction per dot;
 *  - the online softmax runs on a dense S[j][r] tile (stride Rs = R rounded up to 1, 2 or 4), so
 *    one vector exp covers FC_W scores, not FC_W rows of which R are real;
 *  - P·V reads the value rows straight from the cache into register accumulators, per tile
 *    from zero, then folds them into the row's accumulator (O = O·alpha + tile).
 * Nothing is converted into workspace.  int8 caches keep their dequantisation out of the inner
 * loops: k·q = x·(s∘q) + Σ o·s·q for the keys, Σ p·(x + o)∘s = s∘(Σ p·x + o·Σ p) for the values.
 * The state (m, l, O per row) is the generic path's, so tiles of either path mix in one item.
 */
#ifndef FC_KERNELS_DECODE_H
#define FC_KERNELS_DECODE_H

#include "qk.h"
#include "scores.h"
#include "softmax.h"

#define FC_DEC_COLS 64 /* the most kv columns per softmax step (fc_dec_cols): what S holds */
/* The key and value bytes one step may take, so that they stay in L1 beside the next step's rows
 * that the loops prefetch: half of Zen 4's 32 KB.  64 columns of fp16 K and V at D = 128 (32 KB)
 * filled it; 32 read +3–10 % at B = 16, Skv = 32K, 1 and 2 threads (avx2 and the AVX-512 sets,
 * same-run pairs; bf16 values +7–10 %, fp32 at 16 columns +8–20 %), B = 1 +6–9 % or within noise
 * by the form of the call, and −3–5 % with the cache in L3 (more steps); int8 keys and values
 * keep 64 (16 KB; 32 lost 2–5 %).  0: always FC_DEC_COLS — the amx set (Sapphire Rapids' 48 KB
 * L1, measured at 64) and NEON, where nothing here measures it.  Per dtype and width, not per
 * machine, so that a set's results are the same bits everywhere. */
#if FC_AMX || FC_W == 4
#define FC_DEC_STEP_BYTES 0
#else
#define FC_DEC_STEP_BYTES 16384
#endif
/* Score accumulators (keys × rows) per block and value vectors per P·V block: what the register
 * file holds beside the operands — 16 and 4 in 32 registers; in AVX2's 16, 12 scores (3 keys of 4
 * rows, the query rows as the FMAs' memory operands: 12 FMA chains hide the converted keys' load
 * latency, +3 % fp16 and int8 at 1 thread on Zen 5 against 2 keys of 4 rows) and 8 to 12
 * accumulator vectors (3 or 4 rows × 3, 2 × 4 or 1 × 8: at least the eight FMA chains two pipes
 * need; 4 × 3 leaves the 3 value vectors and one broadcast P, and beat 4 × 2 by 6 % at 1 thread on
 * Zen 5).  FC_DEC_SUMS: the sums one transposing reduction (fc_dec_hsum) yields. */
#if FC_W == 8
#define FC_DEC_ACC 12
#define FC_DEC_SUMS 8
#define FC_DEC_NV(R) ((R) == 1 ? 8 : (R) == 2 ? 4 : 3)
#elif FC_W == 4 /* NEON: 16 scores; 8 vectors for one or two rows (eight FMA chains at least) */
#define FC_DEC_ACC 16
#define FC_DEC_SUMS 16
#define FC_DEC_NV(R) ((R) <= 2 ? 8 : 4)
#else
#define FC_DEC_ACC 16
#define FC_DEC_SUMS 16
#define FC_DEC_NV(R) 4
#endif

/* Whether the few-rows items of a problem (at most FC_FEW_ROWS rows) can take this path (their
 * FULL tiles; the others take the generic step). */
static inline bool fc_decode_fits(const fc_problem *p)
{
    const fc_dtype kd = p->k.dtype, vd = p->v.dtype;
    const bool kt = kd == FC_F32 || kd == FC_F16 || kd == FC_BF16 || kd == FC_I8;
    const bool vt = vd == FC_F32 || vd == FC_F16 || vd == FC_BF16 || vd == FC_I8;
    return FC_W >= 4 && fc_qk_keys_in_place(p) && p->v.se == 1 && kt && vt && p->Dqk % FC_W == 0 &&
           p->Dv % FC_W == 0 && fc_scores_scale_only(p) && !fc_has_dropout(p) && !p->mask.data;
}

/* Whether an item's tiles can take this path. */
static inline bool fc_decode_applies(const fc_problem *p, const fc_rows *rw)
{
    return rw->count <= FC_QK_DOT_ROWS && fc_decode_fits(p);
}

/* The rows of one kv operand: base + j·step, or through the view where it is paged. */
typedef struct fc_dec_rows {
    const char *base;
    int64_t step;
    const fc_view *v;
    fc_kv_at at;
} fc_dec_rows;

static inline fc_dec_rows fc_dec_rows_of(const fc_view *v, fc_kv_at at)
{
    fc_dec_rows r = {NULL, 0, v, at};
    if (!v->pages.table)
        r.base = fc_kv_row(v, at, 0), r.step = v->ss * fc_dtype_bytes(v->dtype);
    return r;
}

/* An item's fixed operands for this path. */
typedef struct fc_decode {
    int R, Rs;
    float *q;               /* [Rs][Dqk] query rows (int8 keys: times the scale), rows ≥ R zero */
    float qoff[4];          /* int8 keys: Σ offset·scale·q per row, else 0 */
    const float *vs, *vo;   /* int8 values: scale, offset per feature (NULL: other dtypes) */
    fc_dec_rows k, v;
    int64_t end;            /* rows at or past end are not prefetched */
} fc_decode;

/* What a loop asks for ahead of its reads: the first l1bytes of l1's rows into L1, and l2bytes of
 * l2's rows (NULL: none) into L2; row i's when it reads its own row i. */
typedef struct fc_dec_ahead {
    const char *const *l1, *const *l2;
    int l1bytes, l2bytes;
} fc_dec_ahead;

/* Prepares the item's operands: q from the packed fp32 rows (stride ldq); qbuf holds 4·Dqk
 * floats, v_aff 2·Dv (int8 values); k_aff the keys' int8 scale and offset (fc_affine_load). */
static inline void fc_decode_init(fc_decode *d, const fc_problem *p, const fc_rows *rw, const float *q, int64_t ldq,
                                  float *qbuf, const float *k_aff, float *v_aff, int64_t end)
{
    const int Dqk = (int)p->Dqk, R = rw->count;
    d->R = R;
    d->Rs = R == 1 ? 1 : R == 2 ? 2 : 4;
    d->q = qbuf;
    for (int r = 0; r < 4; r++) {
        float off = 0.0f;
        for (int e = 0; e < Dqk; e++) {
            float x = r < R ? q[r * ldq + e] : 0.0f;
            if (r < R && p->k.dtype == FC_I8) {
                x *= k_aff[e];
                off += x * k_aff[Dqk + e];
            }
            qbuf[r * Dqk + e] = x;
        }
        d->qoff[r] = off;
    }
    d->vs = d->vo = NULL;
    if (p->v.dtype == FC_I8) {
        fc_affine_load(&p->v.dequant, rw->n2, (int)p->Dv, v_aff, v_aff + p->Dv);
        d->vs = v_aff, d->vo = v_aff + p->Dv;
    }
    d->k = fc_dec_rows_of(&p->k, fc_kv_at_rows(rw));
    d->v = fc_dec_rows_of(&p->v, fc_kv_at_rows(rw));
    d->end = end;
}

/* FC_W features of a cache row from element e on, as stored (int8: the integers). */
FC_INLINE fvec fc_dec_load(const char *row, const fc_dtype dt, int e)
{
    return dt == FC_I8 ? v_load_i8((const int8_t *)row + e)
         : dt == FC_F16 ? v_load_f16((const uint16_t *)row + e)
         : dt == FC_BF16 ? v_load_bf16((const uint16_t *)row + e) : v_load((const float *)row + e);
}

/* out[i] = Σ lanes of a[i], i < FC_DEC_SUMS, each sum associated as v_hsum's. */
FC_INLINE void fc_dec_hsum(const fvec *a, float *out)
{
#if FC_W == 8
    /* the halves added, (a[i], a[i + 4]) side by side; then lanes 0 + 2 and 1 + 3; then the pairs:
     * v_hsum's order, with out[i] landing in lane i */
    __m256 u[4], v[2];
    for (int k = 0; k < 4; k++)
        u[k] = _mm256_add_ps(_mm256_permute2f128_ps(a[k], a[k + 4], 0x20), _mm256_permute2f128_ps(a[k], a[k + 4], 0x31));
    for (int k = 0; k < 2; k++)
        v[k] = _mm256_add_ps(_mm256_shuffle_ps(u[2 * k], u[2 * k + 1], 0x44), _mm256_shuffle_ps(u[2 * k], u[2 * k + 1], 0xEE));
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_shuffle_ps(v[0], v[1], 0x88), _mm256_shuffle_ps(v[0], v[1], 0xDD)));
#elif FC_W == 16 && !defined(FC_SIMD_VEC16)
    /* a transposing tree: halves, quarters, then pairs and single lanes within 128-bit lanes;
     * the inputs are taken in the order that leaves sum a[i] in lane i */
#define FC_T(k) a[4 * ((k) % 4) + (k) / 4]
    __m512 b[8], c[4], d[2];
    for (int k = 0; k < 8; k++) { /* (x.lo + x.hi, y.lo + y.hi) by one shuffle t = (x.hi, y.lo) and two
                                    * adds, x + t below and t + y above: the same operands in the same
                                    * order as two shuffles' (x.lo, y.lo) + (x.hi, y.hi) */
        const __m512 x = FC_T(2 * k), y = FC_T(2 * k + 1), t = _mm512_shuffle_f32x4(x, y, 0x4E);
        b[k] = _mm512_mask_add_ps(_mm512_add_ps(x, t), 0xFF00, t, y);
    }
#undef FC_T
    for (int k = 0; k < 4; k++)
        c[k] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * k], b[2 * k + 1], 0x88),
                             _mm512_shuffle_f32x4(b[2 * k], b[2 * k + 1], 0xDD));
    for (int k = 0; k < 2; k++)
        d[k] = _mm512_add_ps(_mm512_shuffle_ps(c[2 * k], c[2 * k + 1], 0x44), _mm512_shuffle_ps(c[2 * k], c[2 * k + 1], 0xEE));
    _mm512_storeu_ps(out, _mm512_add_ps(_mm512_shuffle_ps(d[0], d[1], 0x88), _mm512_shuffle_ps(d[0], d[1], 0xDD)));
#elif FC_W == 4 /* NEON */
    /* pairwise adds, four sums per vector: v_hsum's (a0 + a1) + (a2 + a3) with out[i] in lane i % 4 */
    for (int k = 0; k < FC_DEC_SUMS; k += 4)
        vst1q_f32(out + k, vpaddq_f32(vpaddq_f32(a[k], a[k + 1]), vpaddq_f32(a[k + 2], a[k + 3])));
#else
    for (int i = 0; i < FC_DEC_SUMS; i++)
        out[i] = v_hsum(a[i]);
#endif
}

#if FC_W == 8
/* fc_dec_hsum for four sums (AVX2's 12 accumulators: the third four), in the same order: (a[0],
 * a[2]) and (a[1], a[3]) side by side for the halves, then lanes 0 + 2 and 1 + 3, then the pairs */
FC_INLINE void fc_dec_hsum4(const fvec *a, float *out)
{
    const __m256 u0 = _mm256_add_ps(_mm256_permute2f128_ps(a[0], a[2], 0x20), _mm256_permute2f128_ps(a[0], a[2], 0x31));
    const __m256 u1 = _mm256_add_ps(_mm256_permute2f128_ps(a[1], a[3], 0x20), _mm256_permute2f128_ps(a[1], a[3], 0x31));
    const __m256 v = _mm256_add_ps(_mm256_shuffle_ps(u0, u1, 0x44), _mm256_shuffle_ps(u0, u1, 0xEE));
    const __m256 w = _mm256_add_ps(_mm256_shuffle_ps(v, v, 0x88), _mm256_shuffle_ps(v, v, 0xDD));
    /* w: sums 0, 1 in lanes 0, 1 and sums 2, 3 in lanes 4, 5 */
    _mm_storeu_ps(out, _mm_shuffle_ps(_mm256_castps256_ps128(w), _mm256_extractf128_ps(w, 1), 0x44));
}
#endif

/* Whether the loops also ask for the next step's rows into L2 (fc_dec_ahead's l2), so that each
 * loop's L1 prefetches of the other loop's rows find them there: the score loop the keys, the P·V
 * loop the values (values of two or more bytes).  AVX2, whose steps take longer than a DRAM round
 * trip for a cache line.  Keys alone (the score loop's DRAM requests, none in P·V): fp16 KV at
 * Skv = 32K, 1 thread on Zen 5, 0.62–0.70 → 0.70–0.74 of a plain read (B = 1); the values as well,
 * spread over the P·V blocks after the first (which brings the next keys into L1), so that both
 * loops keep DRAM busy: 0.38–0.44 → 0.50–0.59 (B = 1) and 0.38–0.43 → 0.55–0.60 (B = 16) on a
 * busier machine (docs/PERFORMANCE.md).  Two steps ahead, or the lines spread over every block,
 * gained nothing more; int8 values, whose loops are bound by the FMAs, lost 5 % with them.  The
 * AVX-512 sets on Zen 4 (quiet VM, three interleaved rounds, 1 thread): fp16 and bf16 11.6–13.2
 * → 16.0–18.6 GB/s from DRAM (Skv = 32K at B = 1 and 16, Skv = 4K at B = 64), the same with the
 * cache in L3 (15–21 both ways, noisy), int8 unchanged (9.4–10.4); an earlier run beside a build
 * had read it as mixed.  Not in the amx set: Sapphire Rapids' decode, measured at 0.87–1.08 of a
 * read without it, has no machine here to measure it on. */
#define FC_DEC_L2_AHEAD (FC_W == 8 || (FC_W == 16 && !FC_AMX))
#define FC_DEC_L2_VALUES(vd) (FC_DEC_L2_AHEAD && (vd) != FC_I8)

/* S[j·Rs + r] = (k_j · q_r + qoff[r])·scale for j < jn (rounded up to FC_DEC_ACC/Rs keys: the extra
 * keys repeat row jn − 1 and are hidden by the caller); each block of keys prefetches kpf's rows of
 * its places into L1, and kl2's (when given) into L2. */
FC_INLINE void fc_dec_scores(const int Rs, const fc_dtype dt, float *S, const char *const *krow, int jn, const fc_decode *d,
                             int Dqk, float scale, const fc_dec_ahead *pf)
{
    const char *const *kpf = pf->l1, *const *kl2 = pf->l2;
    const int kbytes = pf->l1bytes, l2bytes = pf->l2bytes;
    const int JR = FC_DEC_ACC / Rs;
    float add[FC_DEC_ACC];
    for (int i = 0; i < FC_DEC_ACC; i++)
        add[i] = d->qoff[i % Rs];
    for (int j = 0; j < jn; j += JR) {
        fvec a[FC_DEC_ACC];
#pragma GCC unroll 16
        for (int i = 0; i < FC_DEC_ACC; i++)
            a[i] = v_zero();
        for (int jj = 0; jj < JR; jj++)
            for (int o = 0; o < kbytes; o += 64)
                __builtin_prefetch(kpf[j + jj] + o, 0, 3);
        if (kl2)
            for (int jj = 0; jj < JR; jj++)
                for (int o = 0; o < l2bytes; o += 64)
                    __builtin_prefetch(kl2[j + jj] + o, 0, 1);
        for (int e = 0; e < Dqk; e += FC_W) {
            fvec qv[4];
#pragma GCC unroll 4
            for (int r = 0; r < Rs; r++)
                qv[r] = v_load(d->q + r * Dqk + e);
#pragma GCC unroll 16
            for (int jj = 0; jj < JR; jj++) {
                const fvec kv = fc_dec_load(krow[j + jj], dt, e);
#pragma GCC unroll 4
                for (int r = 0; r < Rs; r++)
                    a[jj * Rs + r] = v_fma(kv, qv[r], a[jj * Rs + r]);
            }
        }
        float *s = S + j * Rs;
#pragma GCC unroll 2
        for (int i = 0; i < FC_DEC_ACC; i += FC_DEC_SUMS) {
            if (i + FC_DEC_SUMS <= FC_DEC_ACC) {
                fc_dec_hsum(a + i, s + i);
#if FC_W == 8
            } else if (FC_DEC_ACC - i == 4) {
                fc_dec_hsum4(a + i, s + i);
#endif
            } else { /* a last partial reduction: zeros beside it (each sum reads only its own vector) */
                fvec b[FC_DEC_SUMS];
                float t[FC_DEC_SUMS];
                for (int k = 0; k < FC_DEC_SUMS; k++)
                    b[k] = i + k < FC_DEC_ACC ? a[i + k] : v_zero();
                fc_dec_hsum(b, t);
                for (int k = 0; i + k < FC_DEC_ACC; k++)
                    s[i + k] = t[k];
            }
        }
        int i = 0;
        for (; i + FC_W <= FC_DEC_ACC; i += FC_W)
            v_store(s + i, v_mul(v_add(v_load(s + i), v_load(add + i)), v_set1(scale)));
        for (; i < FC_DEC_ACC; i++)
            s[i] = (s[i] + add[i]) * scale;
    }
}

FC_INLINE void fc_dec_scores_rs(const fc_dtype dt, float *S, const char *const *krow, int jn, const fc_decode *d,
                                 int Dqk, float scale, const fc_dec_ahead *pf)
{
    switch (d->Rs) {
    case 1: fc_dec_scores(1, dt, S, krow, jn, d, Dqk, scale, pf); break;
    case 2: fc_dec_scores(2, dt, S, krow, jn, d, Dqk, scale, pf); break;
    default: fc_dec_scores(4, dt, S, krow, jn, d, Dqk, scale, pf); break;
    }
}

static inline void fc_dec_scores_dt(fc_dtype dt, float *S, const char *const *krow, int jn, const fc_decode *d, int Dqk,
                                    float scale, const fc_dec_ahead *pf)
{
    switch (dt) {
    case FC_I8: fc_dec_scores_rs(FC_I8, S, krow, jn, d, Dqk, scale, pf); break;
    case FC_F16: fc_dec_scores_rs(FC_F16, S, krow, jn, d, Dqk, scale, pf); break;
    case FC_BF16: fc_dec_scores_rs(FC_BF16, S, krow, jn, d, Dqk, scale, pf); break;
    default: fc_dec_scores_rs(FC_F32, S, krow, jn, d, Dqk, scale, pf); break;
    }
}

/* One online-softmax step over the dense tile S[n] (n a multiple of FC_W; lane i belongs to row
 * i % Rs) with fc_softmax_step's semantics: NaN scores are dropped from the maximum but make the
 * sum NaN, a NaN m_old is kept, rows that saw only −inf keep m = −inf and add zeros.  Leaves
 * exp(x − m_new) in S, alpha and the tile sum psum per row r < R. */
static inline void fc_dec_softmax(float *S, int n, const fc_decode *d, float *m, float *l, float *alpha, float *psum)
{
    const int Rs = d->Rs;
    fvec mx[4] = {v_set1(-INFINITY), v_set1(-INFINITY), v_set1(-INFINITY), v_set1(-INFINITY)};
    int i = 0;
    for (; i + 4 * FC_W <= n; i += 4 * FC_W)
        for (int c = 0; c < 4; c++)
            mx[c] = v_max(v_load(S + i + c * FC_W), mx[c]); /* score first: a NaN score is dropped */
    for (; i < n; i += FC_W)
        mx[0] = v_max(v_load(S + i), mx[0]);
    float t[FC_W], ref[FC_W] = {0}, arg[FC_W] = {0}, mnew[4];
    bool nan_score[4] = {false, false, false, false};
    v_store(t, v_max(v_max(mx[0], mx[1]), v_max(mx[2], mx[3])));
    for (int r = 0; r < Rs; r++) {
        float mr = -INFINITY;
        for (int k = r; k < FC_W; k += Rs)
            mr = t[k] > mr ? t[k] : mr;
        mnew[r] = mr > m[r] || r >= d->R ? mr : m[r]; /* a NaN m_old stays */
        const float mref = mnew[r] == -INFINITY ? 0.0f : mnew[r];
        for (int k = r; k < FC_W; k += Rs)
            ref[k] = mref;
        arg[r] = r < d->R ? m[r] - mref : 0.0f;
        for (int k = r; k < n && mnew[r] == INFINITY; k += Rs) /* +inf: a NaN score makes m NaN */
            nan_score[r] |= isnan(S[k]);
    }
    v_store(t, v_exp(v_load(arg))); /* the rows' alphas in one vector (v_exp is lane by lane) */
    for (int r = 0; r < 4; r++)
        alpha[r] = r < d->R ? t[r] : 1.0f;
    const fvec pat = v_load(ref);
    fvec sum0 = v_zero(), sum1 = v_zero(); /* even and odd vectors: two chains */
    for (i = 0; i + 2 * FC_W <= n; i += 2 * FC_W) {
        const fvec p0 = fc_softmax_exp(v_load(S + i), pat), p1 = fc_softmax_exp(v_load(S + i + FC_W), pat);
        v_store(S + i, p0);
        v_store(S + i + FC_W, p1);
        sum0 = v_add(sum0, p0);
        sum1 = v_add(sum1, p1);
    }
    if (i < n) {
        const fvec p0 = fc_softmax_exp(v_load(S + i), pat);
        v_store(S + i, p0);
        sum0 = v_add(sum0, p0);
    }
    v_store(t, v_add(sum0, sum1));
    for (int r = 0; r < d->R; r++) {
        float s = 0.0f;
        for (int k = r; k < FC_W; k += Rs)
            s += t[k];
        float lr[FC_W];
        v_store(lr, v_fma(v_set1(l[r]), v_set1(alpha[r]), v_set1(s)));
        l[r] = lr[0];
        psum[r] = s;
        /* a NaN sum (NaN score, NaN m_old, or ∞ − ∞) makes m NaN, unless +inf came without a NaN */
        m[r] = s == s ? mnew[r] : mnew[r] == INFINITY && !nan_score[r] ? INFINITY : NAN;
    }
}

/* O[r] = O[r]·alpha[r] + Σ_j P[j·Rs + r]·V_j over NV vectors of features from c on; with row j it asks
 * for vpf[j]'s first vbytes into L1 (vpf non-NULL) and bytes [l2o0, l2o1) of l2pf[j] into L2. */
FC_INLINE void fc_dec_pv_block(const int R, const int NV, const fc_dtype dt, float *o, int ldo, int c, const float *P,
                               int Rs, const char *const *vrow, int jn, const float *alpha, const float *psum,
                               const fc_decode *d, const char *const *vpf, int vbytes, const char *const *l2pf,
                               int l2o0, int l2o1)
{
    fvec acc[4][8];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++)
            acc[r][v] = v_zero();
    for (int j = 0; j < jn; j++) {
        if (vpf)
            for (int o = 0; o < vbytes; o += 64)
                __builtin_prefetch(vpf[j] + o, 0, 3);
        for (int o = l2o0; o < l2o1; o += 64)
            __builtin_prefetch(l2pf[j] + o, 0, 1);
        fvec x[8];
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++)
            x[v] = fc_dec_load(vrow[j], dt, c + v * FC_W);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const fvec pb = v_bcast(P + j * Rs + r);
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++)
                acc[r][v] = v_fma(pb, x[v], acc[r][v]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) {
            const int e = c + v * FC_W;
            fvec t = acc[r][v];
            if (dt == FC_I8)
                t = v_mul(v_fma(v_set1(psum[r]), v_load(d->vo + e), t), v_load(d->vs + e));
            float *out = o + (ptrdiff_t)r * ldo + e;
            v_store(out, v_fma(v_load(out), v_set1(alpha[r]), t));
        }
}

/* The width (in vectors) of fc_dec_pv's block from feature c on: blocks of nv, then of 2 where nv
 * is 3, then of 1.  Blocks of 3 leave the last 4 vectors to two blocks of 2 where they would leave
 * one alone: a one-vector block has only R FMA chains, fewer than two pipes need (Dv = 128 on AVX2). */
static inline int fc_dec_pv_width_at(const int nv, int Dv, int c)
{
    return c + nv * FC_W <= Dv && (nv != 3 || Dv - c != 4 * FC_W) ? nv : nv == 3 && c + 2 * FC_W <= Dv ? 2 : 1;
}

/* One block of NV vectors (1, 2 or nv) from feature c on: its own instance per width. */
FC_INLINE void fc_dec_pv_width(const int R, const int nv, const int NV, const fc_dtype dt, float *o, int ldo, int c,
                               const float *P, int Rs, const char *const *vrow, int jn, const float *alpha,
                               const float *psum, const fc_decode *d, const char *const *vpf, int vbytes,
                               const char *const *l2pf, int l2o0, int l2o1)
{
#define FC_DEC_PV_BLOCK(W) fc_dec_pv_block(R, W, dt, o, ldo, c, P, Rs, vrow, jn, alpha, psum, d, vpf, vbytes, l2pf, l2o0, l2o1)
    switch (NV) {
    case 1: FC_DEC_PV_BLOCK(1); break;
    case 2: FC_DEC_PV_BLOCK(nv >= 2 ? 2 : 1); break;
    default: FC_DEC_PV_BLOCK(nv); break;
    }
#undef FC_DEC_PV_BLOCK
}

/* P·V over all Dv features; the first block prefetches vpf's rows into L1 (its own instance: no
 * test for it in the others' loops), the others share l2pf's rows' lines, into L2 (the first
 * takes them where it is alone). */
FC_INLINE void fc_dec_pv(const int R, const fc_dtype dt, float *o, int ldo, int Dv, const float *P, int Rs,
                         const char *const *vrow, int jn, const float *alpha, const float *psum, const fc_decode *d,
                         const fc_dec_ahead *pf)
{
    const char *const *vpf = pf->l1, *const *l2pf = pf->l2;
    const int vbytes = pf->l1bytes, l2bytes = pf->l2bytes, nv = FC_DEC_NV(R);
    int nb = 0;
    for (int c = 0; c < Dv; c += fc_dec_pv_width_at(nv, Dv, c) * FC_W)
        nb++;
    const int lines = l2pf ? (l2bytes + 63) / 64 : 0;
    int c = 0, w = fc_dec_pv_width_at(nv, Dv, 0);
    fc_dec_pv_width(R, nv, w, dt, o, ldo, 0, P, Rs, vrow, jn, alpha, psum, d, vpf, vbytes, l2pf, 0,
                    nb == 1 ? 64 * lines : 0);
    for (int b = 1; b < nb; b++) { /* block b asks for lines [(b − 1)/(nb − 1), b/(nb − 1)) of lines */
        c += w * FC_W, w = fc_dec_pv_width_at(nv, Dv, c);
        fc_dec_pv_width(R, nv, w, dt, o, ldo, c, P, Rs, vrow, jn, alpha, psum, d, NULL, vbytes, l2pf,
                        64 * ((b - 1) * lines / (nb - 1)), 64 * (b * lines / (nb - 1)));
    }
}

FC_INLINE void fc_dec_pv_r(const fc_dtype dt, float *o, int ldo, int Dv, const float *P, const char *const *vrow, int jn,
                           const float *alpha, const float *psum, const fc_decode *d, const fc_dec_ahead *pf)
{
    switch (d->R) {
    case 1: fc_dec_pv(1, dt, o, ldo, Dv, P, d->Rs, vrow, jn, alpha, psum, d, pf); break;
    case 2: fc_dec_pv(2, dt, o, ldo, Dv, P, d->Rs, vrow, jn, alpha, psum, d, pf); break;
    case 3: fc_dec_pv(3, dt, o, ldo, Dv, P, d->Rs, vrow, jn, alpha, psum, d, pf); break;
    default: fc_dec_pv(4, dt, o, ldo, Dv, P, d->Rs, vrow, jn, alpha, psum, d, pf); break;
    }
}

/* The value dtype a constant in each instance (GCC had kept one copy that tested it for every
 * value row, and spilled its row offsets to vector registers). */
static inline void fc_dec_pv_dt(const fc_dtype dt, float *o, int ldo, int Dv, const float *P, const char *const *vrow,
                                int jn, const float *alpha, const float *psum, const fc_decode *d, const fc_dec_ahead *pf)
{
    switch (dt) {
    case FC_I8: fc_dec_pv_r(FC_I8, o, ldo, Dv, P, vrow, jn, alpha, psum, d, pf); break;
    case FC_F16: fc_dec_pv_r(FC_F16, o, ldo, Dv, P, vrow, jn, alpha, psum, d, pf); break;
    case FC_BF16: fc_dec_pv_r(FC_BF16, o, ldo, Dv, P, vrow, jn, alpha, psum, d, pf); break;
    default: fc_dec_pv_r(FC_F32, o, ldo, Dv, P, vrow, jn, alpha, psum, d, pf); break;
    }
}

/* out[i] = the address of row j + i for i < n (n ≥ 1), then row j + n − 1 repeated up to
 * padded: contiguous rows one step apart without a call per row (a row's address through
 * fc_kv_row took ≈ 8 % of the AVX-512 step), paged rows through the block table. */
static inline void fc_dec_fill(const fc_dec_rows *r, int64_t j, int n, int padded, const char **out)
{
    if (r->base) {
        const char *row = r->base + j * r->step;
        for (int i = 0; i < n; i++, row += r->step)
            out[i] = row;
    } else {
        for (int i = 0; i < n; i++)
            out[i] = fc_kv_row(r->v, r->at, j + i);
    }
    for (int i = n; i < padded; i++)
        out[i] = out[n - 1];
}

/* fc_dec_fill of the rows from j on, clamped to the item's end (rows past it repeat its last). */
static inline void fc_dec_fill_ahead(const fc_dec_rows *r, int64_t j, int64_t end, int padded, const char **out)
{
    const int64_t ahead = end - j;
    if (ahead > 0)
        fc_dec_fill(r, j, ahead < padded ? (int)ahead : padded, padded, out);
    else
        fc_dec_fill(r, end - 1, 1, padded, out);
}

/* Columns per step for kv rows of row_bytes (keys and values together): FC_DEC_STEP_BYTES' worth
 * in multiples of 16, from 16 to FC_DEC_COLS. */
static inline int fc_dec_cols(int row_bytes)
{
    if (!FC_DEC_STEP_BYTES || row_bytes <= 0)
        return FC_DEC_COLS;
    const int cols = FC_DEC_STEP_BYTES / row_bytes / 16 * 16;
    return cols < 16 ? 16 : cols > FC_DEC_COLS ? FC_DEC_COLS : cols;
}

/* The fully visible kv columns [j0, j0 + jn) for the item's rows: steps of fc_dec_cols columns
 * updating m, l and the accumulator o (row stride ldo).  S holds (FC_DEC_COLS + FC_DEC_ACC)·4 floats. */
static inline void fc_decode_tile(const fc_decode *d, const fc_problem *p, int64_t j0, int jn, float *S, float *o,
                                  int ldo, float *m, float *l)
{
    const int Dqk = (int)p->Dqk, Dv = (int)p->Dv, Rs = d->Rs, JR = FC_DEC_ACC / Rs;
    const int kbytes = Dqk * (int)fc_dtype_bytes(p->k.dtype), vbytes = Dv * (int)fc_dtype_bytes(p->v.dtype);
    const char *krow[FC_DEC_COLS + 16], *vrow[FC_DEC_COLS + 16], *kpf[FC_DEC_COLS + 16];
    const char *vl2[FC_DEC_COLS + 16];
    const bool l2v = FC_DEC_L2_VALUES(p->v.dtype);
    const int cols = fc_dec_cols(kbytes + vbytes);
    float alpha[4], psum[4];
    for (int c0 = 0; c0 < jn; c0 += cols) {
        const int n = jn - c0 < cols ? jn - c0 : cols, padded = (n + JR - 1) / JR * JR;
        const int64_t at = j0 + c0;
        fc_dec_fill(&d->k, at, n, padded, krow);
        fc_dec_fill(&d->v, at, n, padded, vrow);
        /* the step's key and value rows (padded: the last repeated), and the next step's rows,
         * clamped to the item's end: prefetches spread over the loops (one burst per step stalls on
         * the fill buffers): the score loop fetches this step's value rows, the P·V loop the next
         * step's key rows — one loop ahead, so that L1 holds one step's keys and values and the
         * next step's keys (24 KB of fp16 at D = 128), not two steps'; each loop also asks for the
         * next step's rows it reads, into L2 (FC_DEC_L2_AHEAD) */
        fc_dec_fill_ahead(&d->k, at + cols, d->end, padded, kpf);
        if (l2v)
            fc_dec_fill_ahead(&d->v, at + cols, d->end, padded, vl2);
        const fc_dec_ahead spf = {vrow, FC_DEC_L2_AHEAD ? kpf : NULL, vbytes, kbytes};
        const fc_dec_ahead ppf = {kpf, l2v ? vl2 : NULL, kbytes, vbytes};
        fc_dec_scores_dt(p->k.dtype, S, krow, padded, d, Dqk, p->scale, &spf);
        const int ns = (padded * Rs + FC_W - 1) / FC_W * FC_W;
        for (int i = n * Rs; i < ns; i++) /* the repeated keys and the vector's rest take no part */
            S[i] = -INFINITY;
        fc_dec_softmax(S, ns, d, m, l, alpha, psum);
        fc_dec_pv_dt(p->v.dtype, o, ldo, Dv, S, vrow, n, alpha, psum, d, &ppf);
    }
}

#endif /* FC_KERNELS_DECODE_H */
