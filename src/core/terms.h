/*
 * Index arithmetic of the score terms that every backend applies (semantics §2.4 pse, ALiBi;
 * §2.7 dropout), host+device (hd.h) so that the CPU and CUDA kernels share one definition.
 */
#ifndef FC_CORE_TERMS_H
#define FC_CORE_TERMS_H

#include "hd.h"
#include "philox.h"
#include "problem.h"

/* Element offset of pse element (i, j) of query head n1.  A Toeplitz view (toeplitz_rows R > 0)
 * stores R rows; a row above them (shifted row < 0) reads stored row i mod R at the column that
 * keeps col − row, i.e. the same diagonal. */
static inline FC_HD int64_t fc_pse_offset(const fc_pse_view *ps, const fc_batch *bt, int64_t n1, int64_t i, int64_t j)
{
    int64_t row = i + bt->pse_row_shift, col = j + bt->pse_col_shift;
    if (ps->toeplitz_rows > 0 && row < 0) {
        const int64_t m = i % ps->toeplitz_rows;
        col += m - row;
        row = m;
    }
    return bt->pse_base + n1 * ps->sn + row * ps->si + col * ps->sj;
}

/* ALiBi, −slope·|Δ| with Δ = j + a and a = Δpos(j = 0) = alibi_dpos − i, in a frame that keeps
 * fp32 exact when positions are far apart: the row's logits drop the constant −slope·c, where c
 * is the row's smallest |Δ| when all its Δ share a sign, so the distances left (|j − apos|) are
 * small exact integers; softmax is shift-invariant and the statistics add the constant back
 * (*aoff, in double).  The sqrt form keeps absolute distances. */
static inline FC_HD void fc_alibi_frame(const fc_batch *bt, int64_t i, float slope, bool sqrt_distance, float *apos,
                                        double *aoff)
{
    const double a = bt->alibi_dpos - (double)i, last = (double)(bt->skv > 0 ? bt->skv - 1 : 0);
    double c = 0.0, ap = -a;
    if (!sqrt_distance && a >= 0)
        c = a, ap = 0.0;
    else if (!sqrt_distance && a + last <= 0)
        c = -(a + last), ap = last;
    *apos = (float)ap;
    *aoff = -(double)slope * c;
}

/* The sink (semantics §2.6): one more logit of the row, with no value, folded into the row's
 * softmax state once, at the end.  Folding it at the start would put it in the row's fp32 frame
 * (above), where sink − aoff rounds at the frame's scale: with ALiBi rows far from every key
 * (c·slope in the hundreds) the reported maximum of a sink-dominated row lost 1e-5 and more.  Here
 * only the sink's distance to the row's maximum is rounded, and a sink above every logit is the
 * reported maximum itself.  In: m = the row's largest logit in its frame (−inf: none visible),
 * l = Σ exp(x − m), aoff the frame's offset.  Out: the sum with the sink, w = the accumulator's
 * weight, and sink_max: the sink is the row's maximum (the one to report; else m + aoff).  A NaN
 * or +inf sink makes the row NaN (∞ − ∞, semantics §0.3). */
typedef struct fc_sink_fold {
    float l, w;
    bool sink_max;
} fc_sink_fold;

static inline FC_HD fc_sink_fold fc_fold_sink(float sink, float m, double aoff, float l)
{
    fc_sink_fold f = {l, 1.0f, false};
    if (sink == -INFINITY) /* no sink (or a −inf one: no weight) */
        return f;
    if (!(sink < INFINITY)) { /* NaN or +inf */
        f.l = NAN, f.sink_max = true;
        return f;
    }
    const float d = (float)((double)sink - aoff - (double)m); /* +inf when nothing is visible */
    if (d > 0.0f) {
        f.w = expf(-d), f.sink_max = true;
        f.l = l * f.w + 1.0f;
    } else {
        f.l = l + expf(d); /* NaN with a NaN maximum */
    }
    return f;
}

/* Dropout keep bit of (n1, i, j) (semantics §2.7): bit e of the mask, least significant first. */
static inline FC_HD int64_t fc_keep_bit_index(const fc_batch *bt, int64_t n1, int64_t i, int64_t j)
{
    return bt->drop_bit0 + (n1 * bt->sq + i) * bt->skv + j;
}

static inline FC_HD bool fc_keep_bit(const uint8_t *bits, int64_t e) { return (bits[e >> 3] >> (e & 7)) & 1; }

/* Whether (n1, i, j) is kept: its bit of the caller's mask, or the generated one (philox.h); the
 * CUDA kernels' form (the CPU walks a row's bits as a stream, kernels/dropout.h). */
static inline FC_HD bool fc_dropout_keeps(const fc_problem *p, const fc_batch *bt, int64_t n1, int64_t i, int64_t j)
{
    const int64_t e = fc_keep_bit_index(bt, n1, i, j);
    return p->drop_philox ? fc_philox_keep_at(p->drop_seed, p->drop_offset, p->drop_threshold, (uint64_t)e)
                          : fc_keep_bit(p->drop_bits, e);
}

#endif /* FC_CORE_TERMS_H */
