/*
 * The canonical problem: what every face lowers into and every backend consumes.
 *
 * Layout-free: operands are strided views over (batch, head, position, feature) whose per-batch
 * base offsets were resolved by the face; visibility is a per-batch band on d = j − i plus a
 * prefix, already aligned and clamped; all per-batch facts live in fc_batch.  Nothing here knows
 * a layout string, an aclTensor or a tile size.
 */
#ifndef FC_CORE_PROBLEM_H
#define FC_CORE_PROBLEM_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "flashc.h"
#include "hd.h"

/* Paged storage: position s of batch b lives in block table[b·table_stride + s / block_size],
 * slot s mod block_size. */
typedef struct fc_pages {
    const int32_t *table;
    int64_t table_stride, block_size;
    int64_t blocks; /* entries must lie in [0, blocks) (checked before every run) */
} fc_pages;

/* A per-channel affine map applied while loading int8 data: x → (x + offset[n][e])·scale[n][e]
 * (strides 0 broadcast a per-tensor value; offset NULL = 0).  Also used for int8 output
 * quantisation, where y = x·scale + offset. */
typedef struct fc_affine_view {
    const char *scale, *offset;
    fc_dtype dtype;
    int64_t sn, se;
} fc_affine_view;

/* A strided operand.  Element (b, n, s, e) lives at
 *     data + (b·sb + (tok + s)·ss + n·sn + e·se) elements
 * where tok is the batch's token offset on this operand's side (q_tok or kv_tok; 0 for padded
 * batches, whose views have sb set instead).  Storage variants: per-batch base pointers
 * (batch_data[b] replaces data + b·sb), or pages (block blk at data + blk·sb, slots at ss). */
typedef struct fc_view {
    char *data;
    fc_dtype dtype;
    int64_t sb, sn, ss, se;
    char *const *batch_data; /* NULL = one tensor */
    fc_pages pages;          /* table NULL = not paged */
    fc_affine_view dequant;       /* int8 data: scale non-NULL */
} fc_view;

/* Per-batch facts.  Lengths are the real ones; rows in [sq, q_rows) are padding rows that are
 * written as rows seeing nothing. */
typedef struct fc_batch {
    int64_t sq, skv;
    int64_t q_rows, kv_rows;          /* rows written: out/dq and (backward) dk/dv; dense batches count their padding */
    int64_t q_tok, kv_tok;            /* packed batches: tokens before this batch; else 0 */
    int64_t vis_lo, vis_hi;           /* visible iff vis_lo <= j − i <= vis_hi (clamped) */
    int64_t win_lo, win_hi;           /* the same before the diagonal's shift (fc_batch_window), saturated */
    bool win_bottom_right;            /* the window follows skv − sq (bottom-right alignment) */
    int64_t prefix;                   /* columns j < prefix are visible too */
    int64_t col_lo;                   /* columns j < col_lo are hidden from every row */
    int64_t mask_base;                /* element offset of this batch's explicit-mask block */
    int64_t pse_base;                 /* element offset of this batch's pse block */
    int64_t pse_row_shift, pse_col_shift;
    double alibi_dpos;                /* Δpos = j − i + alibi_dpos (exact whenever it matters, see rows.h) */
    bool alibi_bottom_right;          /* alibi_dpos holds −(skv − sq): it follows skv */
    int64_t drop_bit0;                /* dropout bit of (n=0, i=0, j=0) */
    int64_t stat_row0;                /* rows (q_rows) of the batches before this one, for fc_stat_offset */
} fc_batch;

/* vis_lo/vis_hi from the lowered window and the batch's lengths: the bounds shifted by skv − sq
 * when bottom-right aligned, clamped to ±(sq + skv + 1) (fc_lower_window records win_lo/win_hi,
 * ±2^62 standing for unbounded). */
static inline FC_HD void fc_batch_window(fc_batch *bt)
{
    const int64_t lim = bt->sq + bt->skv + 1, shift = bt->win_bottom_right ? bt->skv - bt->sq : 0;
    const int64_t lo = bt->win_lo + shift, hi = bt->win_hi + shift;
    bt->vis_lo = lo > lim ? lim : lo < -lim ? -lim : lo;
    bt->vis_hi = hi > lim ? lim : hi < -lim ? -lim : hi;
}

/* A padded batch's facts with another kv length (runs that bring their own, fc_attention_io.kv_lens):
 * only skv, the window and a bottom-right ALiBi's position follow it in the problems that may take
 * one (no bias, no dropout). */
static inline FC_HD void fc_batch_relength(fc_batch *bt, int64_t skv)
{
    if (bt->alibi_bottom_right)
        bt->alibi_dpos += (double)(bt->skv - skv);
    bt->skv = skv;
    fc_batch_window(bt);
}

/* An explicit mask (nonzero = hidden), one byte per element. */
typedef struct fc_mask_view {
    const uint8_t *data; /* NULL = none */
    int64_t sn, si, sj;
} fc_mask_view;

/* External pse / bias: element (n1, i, j) of batch b at pse_base_b + n1·sn + row·si + col·sj with
 * row = i + pse_row_shift_b, col = j + pse_col_shift_b (fc_pse_offset). */
typedef struct fc_pse_view {
    const char *data; /* NULL = none */
    fc_dtype dtype;
    bool before_scale;   /* x = (s + pse)·scale instead of s·scale + pse */
    int64_t sn, si, sj;
    int64_t toeplitz_rows; /* > 0: a Toeplitz bias (a function of j − i) stored as this many rows;
                              rows above them read their diagonal from a stored row */
} fc_pse_view;

typedef struct fc_alibi_view {
    const float *slopes; /* NULL = none */
    int64_t sb, sn;
    bool sqrt_distance;
} fc_alibi_view;

/* Softmax statistics: per row a max and a sum (fp32), each value written `copies` times at
 * consecutive elements (bit-identical; a reader uses the first).  Row i of query head
 * n1 = n2·G + g in batch b starts at
 *     stat_row0_b·s_row0 + n2·(sn2 + q_rows_b·sn2_rows) + g·(sg + q_rows_b·sg_rows) + i·si
 * The _rows terms describe per-batch blocks sized by the batch's own rows: a head stride inside
 * such a block grows with q_rows_b.  Plan-time strides, so per-batch facts stay stat_row0 and
 * q_rows (fc_stat_offset is the one reader of this formula). */
typedef struct fc_stats_view {
    float *max, *sum;             /* NULL = not written */
    int64_t copies;               /* >= 1 where max is set */
    int64_t s_row0;               /* elements per statistics row before the batch */
    int64_t sn2, sg, si;          /* kv head, group member, row */
    int64_t sn2_rows, sg_rows;    /* added to sn2, sg per row of the batch */
} fc_stats_view;

/* Top-k block selection: the index row of (b, position i, kv head n2) is at
 * data + (b·sb + (q_tok + i)·si + n2·sn) elements, entries sk apart. */
typedef struct fc_sparse_view {
    const char *data; /* NULL = dense */
    fc_dtype dtype;   /* FC_I32 or FC_I64 */
    int64_t sb, si, sn, sk;
    int64_t count, block_size;
    bool causal;
} fc_sparse_view;

typedef struct fc_problem {
    int64_t B, Nq, Nkv, G;     /* G = Nq / Nkv */
    int64_t Dqk, Dv, Dr;
    int64_t max_sq, max_skv;   /* over batches (rows incl. padding for max_sq) */
    fc_batch *batch;           /* B entries, owned by the plan */

    fc_view q, k, v, q_rope, k_rope, out;

    float scale;               /* faces check fc_scale_fits first */
    float softcap;             /* 0 = off */
    fc_pse_view pse;
    fc_alibi_view alibi;
    const float *sink;         /* per query head, NULL = none; element n1 at sink[n1·sink_stride] */
    int64_t sink_stride;
    fc_mask_view mask;
    fc_sparse_view sparse;     /* selected kv blocks per row (then every selected column is visible) */
    const uint8_t *drop_bits;  /* caller's keep bits; NULL = none */
    bool drop_philox;          /* keep bits generated by Philox (core/philox.h) */
    uint64_t drop_seed, drop_offset, drop_threshold; /* keep iff word < threshold = keep_prob·2^32 */
    float keep_prob;
    fc_stats_view stats;       /* forward: written; backward: the forward's, read */
    fc_affine_view out_quant;       /* int8 output: y = sat(round(x·scale + offset)) per (n1, e) */
    fc_dtype out_tolerance;    /* fc_options.out_tolerance (FC_F32 = out's own), see fc_out_tolerance */

    /* backward only: the output gradient (out holds the forward output) and the gradients */
    fc_view dout, dq, dk, dv, dq_rope, dk_rope;
    float *dsink;              /* per query head, when sink */
} fc_problem;

/* Whether a face's double scale is one the problem can hold: finite and within float's range (a
 * larger one would become inf in fc_problem.scale and every output NaN). */
static inline bool fc_scale_fits(double scale) { return isfinite(scale) && fabs(scale) <= FLT_MAX; }
#define FC_SCALE_RULE "finite and within float's range (|scale| <= 3.4028235e+38)"

static inline FC_HD bool fc_has_dropout(const fc_problem *p) { return p->drop_bits || p->drop_philox; }

/* The dtype whose tolerance (semantics §0.4) the forward output needs: the looser of out's own
 * and the one the caller allowed (fp32 < fp16 < bf16; int8 outputs keep theirs). */
static inline fc_dtype fc_out_tolerance(const fc_problem *p)
{
    const fc_dtype own = p->out.dtype, asked = p->out_tolerance;
    if (own == FC_F32 || (own == FC_F16 && asked == FC_BF16))
        return asked == FC_F16 || asked == FC_BF16 ? asked : own;
    return own;
}

/* Element (b, n, s) of a view: the first feature of that row. */
static inline FC_HD char *fc_view_row(const fc_view *v, int64_t esize, int64_t b, int64_t tok, int64_t n, int64_t s)
{
    if (v->pages.table) {
        const int64_t blk = v->pages.table[b * v->pages.table_stride + s / v->pages.block_size];
        return v->data + (blk * v->sb + (s % v->pages.block_size) * v->ss + n * v->sn) * esize;
    }
    if (v->batch_data)
        return v->batch_data[b] + ((tok + s) * v->ss + n * v->sn) * esize;
    return v->data + (b * v->sb + (tok + s) * v->ss + n * v->sn) * esize;
}

/* The sink logit of query head n1 (−inf when there is none). */
static inline FC_HD float fc_sink_at(const fc_problem *p, int64_t n1)
{
    return p->sink ? p->sink[n1 * p->sink_stride] : -INFINITY;
}

/* The offset of (b, n1, i) in the statistics (its first copy). */
static inline FC_HD int64_t fc_stat_offset(const fc_problem *p, const fc_batch *bt, int64_t n1, int64_t i)
{
    const fc_stats_view *s = &p->stats;
    const int64_t n2 = n1 / p->G, g = n1 % p->G;
    return bt->stat_row0 * s->s_row0 + n2 * (s->sn2 + bt->q_rows * s->sn2_rows) + g * (s->sg + bt->q_rows * s->sg_rows) +
           i * s->si;
}

/* Writes one row's statistics at `at` (from fc_stat_offset), every copy. */
static inline FC_HD void fc_stat_store(const fc_stats_view *s, int64_t at, float max, float sum)
{
    for (int64_t k = 0; k < s->copies; k++)
        s->max[at + k] = max, s->sum[at + k] = sum;
}

#endif /* FC_CORE_PROBLEM_H */
