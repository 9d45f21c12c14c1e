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
#define FC_QK_DOT_ROWS FC_FEW_ROWS

/* FC_W features of a key row from element e on, in the row's own dtype (fp32, fp16, bf16, or
 * int8 through its dequantisation map aff = scale[width], offset[width], as fc_load_row_i8). */
FC_INLINE fvec fc_key_vec(const char *row, const fc_dtype dt, int e, const float *aff, int width)
{
    if (dt == FC_I8)
        return v_mul(v_add(v_load_i8((const int8_t *)row + e), v_load(aff + width + e)), v_load(aff + e));
    return dt == FC_F16 ? v_load_f16((const uint16_t *)row + e)
         : dt == FC_BF16 ? v_load_bf16((const uint16_t *)row + e) : v_load((const float *)row + e);
}

/* The last `tail` (< FC_W) features of a key row from element e on, zero-extended. */
FC_INLINE fvec fc_key_tail(const char *row, const fc_dtype dt, int e, int tail, const float *aff, int width)
{
    float buf[FC_W] = {0};
    if (dt == FC_I8)
        fc_load_row_i8(buf, (const int8_t *)row + e, 1, tail, aff + e, aff + width + e);
    else /* element by element: fewer than one vector (fc_load_row's vector loops would be dead code
          * that GCC's bounds warnings still see against buf) */
        for (int i = 0; i < tail; i++)
            buf[i] = fc_load_scalar(row + (e + i) * fc_dtype_bytes(dt), dt);
    return v_load(buf);
}

/* S[j][r] (+)= k_j · q_r for R rows and JR key rows at a time (R, JR and the key dtype are
 * compile-time, see fc_qk_dots); k[j] is the address of key row j. */
FC_INLINE void fc_qk_dot_block(const int R, const int JR, const fc_dtype dt, float *S, int Rp, const char *const *k,
                               const float *aff, const float *q, int64_t ldq, int width, bool accumulate)
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
            kv[j] = fc_key_vec(k[j], dt, e, aff, width);
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
            kv[j] = fc_key_tail(k[j], dt, e, tail, aff, width);
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

/* The key rows of a tile: fp32 rows at a stride (converted, or the caller's fp32 memory), or the
 * caller's rows in their own dtype wherever they live (paged caches included). */
typedef struct fc_key_rows {
    const float *base; /* converted / fp32 rows: base + j·ld; NULL: read through view */
    int64_t ld;
    const fc_view *view;
    fc_kv_at at;
    int64_t j0;
    const float *aff;  /* int8 rows: scale[width], offset[width] */
} fc_key_rows;

static inline const char *fc_key_row(const fc_key_rows *k, int64_t j)
{
    return k->base ? (const char *)(k->base + j * k->ld) : fc_kv_row(k->view, k->at, k->j0 + j);
}

static inline void fc_qk_dots_dt(const fc_dtype dt, float *S, int Rp, int R, int jn, const fc_key_rows *k,
                                 const float *q, int64_t ldq, int width, bool accumulate)
{
    int j = 0;
#define FC_QK_DOTS(r_)                                                                                            \
    for (; j + 2 <= jn; j += 2) {                                                                                 \
        const char *rows[2] = {fc_key_row(k, j), fc_key_row(k, j + 1)};                                          \
        fc_qk_dot_block(r_, 2, dt, S + (ptrdiff_t)j * Rp, Rp, rows, k->aff, q, ldq, width, accumulate);                 \
    }                                                                                                             \
    if (j < jn) {                                                                                                 \
        const char *rows[2] = {fc_key_row(k, j), NULL};                                                          \
        fc_qk_dot_block(r_, 1, dt, S + (ptrdiff_t)j * Rp, Rp, rows, k->aff, q, ldq, width, accumulate);                 \
    }                                                                                                             \
    break;
    switch (R) {
    case 1: FC_QK_DOTS(1)
    case 2: FC_QK_DOTS(2)
    case 3: FC_QK_DOTS(3)
    default: FC_QK_DOTS(4)
    }
#undef FC_QK_DOTS
}

/* Few rows (decode: the G query heads of one position): each key row is read once for all rows
 * and dotted with them, where a GEMM would run its vector lanes along mostly padding rows.
 * Padding rows r in [R, Rp) get 0, as the GEMM's zero padding would give them. */
static inline void fc_qk_dots(float *S, int Rp, int R, int jn, const fc_key_rows *k, fc_dtype dt, const float *q,
                              int64_t ldq, int width, bool accumulate)
{
    switch (dt) {
    case FC_I8: fc_qk_dots_dt(FC_I8, S, Rp, R, jn, k, q, ldq, width, accumulate); break;
    case FC_F16: fc_qk_dots_dt(FC_F16, S, Rp, R, jn, k, q, ldq, width, accumulate); break;
    case FC_BF16: fc_qk_dots_dt(FC_BF16, S, Rp, R, jn, k, q, ldq, width, accumulate); break;
    default: fc_qk_dots_dt(FC_F32, S, Rp, R, jn, k, q, ldq, width, accumulate); break;
    }
    for (int j = 0; !accumulate && R < Rp && j < jn; j++)
        memset(S + (ptrdiff_t)j * Rp + R, 0, (size_t)(Rp - R) * sizeof(float));
}

/* Whether fc_qk reads the keys from the caller's memory itself (few rows, no rope, keys with
 * unit element stride): the tile's keys then need no conversion (fc_kv_tile_load with keys
 * false).  fc_qk_keys_in_place: the problem's part of that. */
static inline bool fc_qk_keys_in_place(const fc_problem *p) { return p->Dr == 0 && p->k.se == 1; }

static inline bool fc_qk_reads_keys(const fc_problem *p, const fc_rows *rw)
{
    return rw->count <= FC_QK_DOT_ROWS && fc_qk_keys_in_place(p);
}

/* kv->k NULL: the keys are read from the caller's memory (fc_qk_reads_keys), rows j0 + j; int8
 * keys through k_aff (their scale and offset, 2·Dqk floats, fc_affine_load).  cm (or NULL): the
 * epilogue of the GEMM's tiles (fc_gemm_colmax); returns whether it ran (the GEMM form only). */
static inline bool fc_qk(float *S, const fc_kv_tile *kv, const fc_q_operand *q, const fc_problem *p, const fc_rows *rw,
                         const float *k_aff, int64_t j0, int jn, const fc_gemm_colmax *cm)
{
    const int Rp = rw->padded, R = rw->count, Dqk = (int)p->Dqk;
    if (!kv->k) {
        const fc_key_rows k = {NULL, 0, &p->k, fc_kv_at_rows(rw), j0, k_aff};
        fc_qk_dots(S, Rp, R, jn, &k, p->k.dtype, q->rows, q->ld, Dqk, false);
        return false;
    }
    if (R <= FC_QK_DOT_ROWS) {
        const fc_key_rows k = {kv->k, kv->ldk, NULL, {0, 0, 0}, 0, NULL};
        fc_qk_dots(S, Rp, R, jn, &k, FC_F32, q->rows, q->ld, kv->k_width, false);
        if (kv->kr) {
            const fc_key_rows kr = {kv->kr, kv->ldkr, NULL, {0, 0, 0}, 0, NULL};
            fc_qk_dots(S, Rp, R, jn, &kr, FC_F32, q->rows + Dqk, q->ld, (int)p->Dr, true);
        }
        return false;
    }
    fc_gemm_pf(jn, Rp, kv->k_width, kv->k, kv->ldk, 1, q->t, Rp, S, Rp, false, &kv->next_k, kv->kr ? NULL : cm);
    if (kv->kr)
        fc_gemm_pf(jn, Rp, (int)p->Dr, kv->kr, kv->ldkr, 1, q->t + (ptrdiff_t)Dqk * Rp, Rp, S, Rp, true, NULL, cm);
    return cm != NULL;
}

#endif /* FC_KERNELS_QK_H */
