/*
 * Forward attention for one work item (FlashAttention-2): the item's query rows stream the kv
 * tiles they can see; per tile S = K·Qᵀ, the score pipeline, an online-softmax step, O += P·V;
 * one division at the end.  Compiled once per instruction set (see simd.h).
 */
#include <float.h>

#include "dropout.h"
#include "entry.h"
#include "gemm.h"
#include "qk.h"
#include "scores.h"
#include "softmax.h"

/* Per-thread buffers of one item; fc_fwd_carve(NULL, ...) measures them. */
typedef struct fc_fwd_bufs {
    float *qt;    /* [Dt][Rp]   transposed query rows (+ rope features) */
    float *qrows; /* [Rp][Dt]   the same rows before transposition */
    float *s;     /* [cols][Rp] scores, then probabilities */
    float *o;     /* [rows][Dvp] output accumulator */
    float *kb;    /* [cols][Dt] converted key rows (+ rope) */
    float *vb;    /* [cols][Dvp] converted value rows */
    float *row;   /* [max(Dt, Dvp)] scratch for one row */
    float *m, *l, *alpha;
    fc_rows rows;
} fc_fwd_bufs;

static size_t fc_fwd_carve(char *base, const fc_problem *p, fc_tiles t, fc_fwd_bufs *b)
{
    const int64_t Rp = fc_round_up(t.rows, FC_W), Dt = p->Dqk + p->Dr, Dvp = fc_round_up(p->Dv, FC_W);
    const int64_t wide = Dt > Dvp ? Dt : Dvp;
    char *cur = base;
#define TAKE(field, type, n) b->field = (type *)fc_take(&cur, (size_t)(n) * sizeof(type))
    TAKE(qt, float, Dt * Rp);
    TAKE(qrows, float, Rp * Dt);
    TAKE(s, float, t.cols * Rp);
    TAKE(o, float, t.rows * Dvp);
    TAKE(kb, float, t.cols * Dt);
    TAKE(vb, float, t.cols * Dvp);
    TAKE(row, float, wide);
    TAKE(m, float, Rp);
    TAKE(l, float, Rp);
    TAKE(alpha, float, Rp);
#undef TAKE
    fc_rows_carve(&b->rows, &cur, Rp);
    return (size_t)(cur - base) + 64; /* + alignment slack of the base */
}

size_t FC_ISA_FN(fc_fwd_workspace)(const fc_problem *p, fc_tiles t)
{
    fc_fwd_bufs b;
    return fc_fwd_carve(NULL, p, t, &b);
}

/* Writes the item's output rows and statistics (semantics §2.6, §2.8). */
static void fc_fwd_finish(const fc_problem *p, fc_fwd_bufs *b)
{
    const fc_rows *rw = &b->rows;
    const int Dv = (int)p->Dv, Dvp = (int)fc_round_up(Dv, FC_W);
    const float inv_keep = p->drop_bits ? 1.0f / p->keep_prob : 1.0f;
    for (int r = 0; r < rw->count; r++) {
        const bool empty = !(b->l[r] > 0.0f);
        const float scale = empty ? 0.0f : inv_keep / b->l[r];
        const float *acc = b->o + (ptrdiff_t)r * Dvp;
        for (int e = 0; e < Dv; e++)
            b->row[e] = acc[e] * scale;
        if (empty)
            memset(b->row, 0, (size_t)Dv * 4);
        char *dst = (char *)fc_q_row(&p->out, rw, rw->head[r], rw->pos[r]);
        fc_store_row(dst, p->out.dtype, p->out.se, b->row, Dv);
        if (p->stats.max) {
            const int64_t at = fc_stat_offset(p, rw->bt, rw->head[r], rw->pos[r]);
            const float mx = empty ? -FLT_MAX : b->m[r], sm = empty ? FLT_MAX : b->l[r];
            for (int64_t k = 0; k < p->stats.replicas; k++) {
                p->stats.max[at + k] = mx;
                p->stats.sum[at + k] = sm;
            }
        }
    }
}

void FC_ISA_FN(fc_fwd_item)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws)
{
    fc_fwd_bufs b;
    fc_fwd_carve(fc_align64(ws), p, t, &b);
    fc_rows *rw = &b.rows;
    fc_rows_init(rw, p, it);
    const int R = rw->count, Rp = rw->padded, Dv = (int)p->Dv, Dvp = (int)fc_round_up(Dv, FC_W);

    for (int r = 0; r < Rp; r++) { /* a sink starts every real row at (sink, 1); −inf = no sink */
        const float sink = p->sink && r < R && rw->pos[r] < rw->bt->sq ? p->sink[rw->head[r]] : -INFINITY;
        b.m[r] = sink;
        b.l[r] = sink > -INFINITY ? 1.0f : 0.0f;
    }
    memset(b.o, 0, (size_t)R * Dvp * sizeof(float));

    if (rw->kv_begin < rw->kv_end)
        fc_pack_q_transposed(b.qt, b.qrows, p, rw);
    for (int64_t j0 = rw->kv_begin; j0 < rw->kv_end; j0 += t.cols) {
        const int jn = (int)(rw->kv_end - j0 < t.cols ? rw->kv_end - j0 : t.cols);
        const fc_tile_kind kind = fc_rows_classify(rw, j0, j0 + jn);
        if (kind == FC_TILE_SKIP)
            continue;
        fc_kv_tile kv;
        fc_kv_tile_load(&kv, p, fc_kv_at_rows(rw), j0, jn, b.kb, b.vb);
        fc_qk(b.s, &kv, b.qt, p, rw, jn);
        fc_scores(b.s, NULL, jn, j0, p, rw, kind);
        if (fc_softmax_step(b.s, jn, Rp, b.m, b.l, b.alpha))
            for (int r = 0; r < R; r++)
                if (b.alpha[r] != 1.0f)
                    for (int e = 0; e < Dvp; e++)
                        b.o[(ptrdiff_t)r * Dvp + e] *= b.alpha[r];
        if (p->drop_bits)
            fc_dropout_tile(b.s, jn, j0, p, rw);
        fc_gemm(R, Dv, jn, b.s, 1, Rp, kv.v, kv.ldv, b.o, Dvp, true);
    }
    fc_fwd_finish(p, &b);
}
