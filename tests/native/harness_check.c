/* The element checks of one run: tolerance where the reference has visible positions, exact zeros
 * and statistics for empty and padding rows, replicas, overflow to inf, sentinels in gaps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/tolerance.h"
#include "harness_internal.h"
#include "reference/kvcache.h"

/* One TC check per category; the first offender is printed. */
typedef struct exact_tally {
    int64_t bad;
    char first[200];
} exact_tally;

static void exact_fail(exact_tally *t, const char *fmt, int b, int n, int i, double got)
{
    if (t->bad++ == 0)
        snprintf(t->first, sizeof t->first, "%s; first at b=%d n=%d i=%d: got %.9g", fmt, b, n, i, got);
}

/* Semantics §0.3: an output beyond the dtype's range becomes ±inf.  Returns true when `got` breaks
 * that: the reference overflows even at the low edge of its tolerance but got is not that inf, or
 * got is inf where even the high edge of the tolerance stays finite.  Near the threshold either
 * a finite value (checked by tolerance) or the inf passes. */
static bool overflows(tc_dtype t, double ref, double got)
{
    const tc_tol tol = tc_tol_out(t);
    const double lo = tc_round(t, ref * (1 - tol.rtol)), hi = tc_round(t, ref * (1 + tol.rtol) + (ref < 0 ? -1 : 1) * tol.atol);
    if (isinf(lo))
        return got != lo;
    return isinf(got) && !(isinf(hi) && got == hi);
}

void nt_check_outputs(const nt_case *c, const nt_data *d, const nt_bufs *L, nt_result *r)
{
    const int Dv = d->Dv, rep = nt_replicas(c);
    const int64_t rows = (int64_t)c->B * c->N1 * d->S1cap;
    double *y = nt_xmalloc(sizeof(double) * (size_t)(rows * Dv + 1)), *x = nt_xmalloc(sizeof(double) * (size_t)(rows * Dv + 1));
    double *ym = nt_xmalloc(sizeof(double) * (size_t)rows + 8), *xm = nt_xmalloc(sizeof(double) * (size_t)rows + 8);
    double *ys = nt_xmalloc(sizeof(double) * (size_t)rows + 8), *xs = nt_xmalloc(sizeof(double) * (size_t)rows + 8);
    int64_t nt = 0, ns = 0;
    exact_tally zero = {0}, stat_pad = {0}, stat_empty = {0}, replica = {0}, unwritten = {0}, overflow = {0};
    const tc_dtype ot = nt_tc(c->out_dt);
    const bool q8 = c->out_dt == FC_I8; /* int8 output: the reference value quantised (§4.6), ±1 */
    char *written = calloc((size_t)L->gout.count, 1);
    char *stat_written = calloc((size_t)L->stat_n + 1, 1);
    for (int b = 0; b < c->B; b++)
        for (int n = 0; n < c->N1; n++)
            for (int i = 0; i < nt_q_rows(c, d, b); i++) {
                const int64_t row = nt_row(c, d->S1cap, b, n, i);
                const int vis = r->nvis[row];
                const bool sink = c->sink != NT_SINK_NONE && !(isinf(d->sink[n]) && d->sink[n] < 0); /* -inf: no sink */
                const bool pad_row = vis < 0, empty = vis == 0 && !sink;
                const bool sink_empty = vis == 0 && sink && isfinite(d->sink[n]); /* NaN, +inf sink: a NaN row (§0.3) */
                for (int e = 0; e < Dv; e++) {
                    const int64_t off = nt_offset(c, d, &L->gout, NT_OUT, b, n, i, e);
                    written[off] = 1;
                    const double got = q8 ? ((const int8_t *)L->out)[off] : tc_load(ot, L->out, off);
                    if (!q8 && nt_is_sentinel(c->out_dt, L->out, off))
                        exact_fail(&unwritten, "output element not written", b, n, i, got);
                    r->out[row * Dv + e] = got;
                    /* a sink row without a visible position is not empty (§2.6): its output is an
                     * exact zero, which an int8 output quantises like any other value (§4.6) */
                    const int64_t qc = c->out_quant.per_channel ? (int64_t)n * Dv + e : 0;
                    const double zero_out = q8 && sink_empty ? ref_quant_i8(0, d->oq[0][qc], d->oq[1] ? d->oq[1][qc] : 0) : 0;
                    if (pad_row || empty || sink_empty) {
                        if (got != zero_out)
                            exact_fail(&zero,
                                       pad_row          ? "padding row not zero"
                                       : zero_out != 0 ? "sink row without a visible position: not the quantised zero"
                                                       : "empty row not zero",
                                       b, n, i, got);
                    } else if (q8) {
                        y[nt] = got;
                        x[nt++] = ref_quant_i8(r->ref_out[row * Dv + e], d->oq[0][qc], d->oq[1] ? d->oq[1][qc] : 0);
                    } else if (overflows(ot, r->ref_out[row * Dv + e], got)) {
                        exact_fail(&overflow, "output overflow does not follow the dtype range (semantics 0.3)", b, n, i, got);
                    } else if (!isinf(got)) {
                        y[nt] = got, x[nt++] = r->ref_out[row * Dv + e];
                    }
                }
                if (!c->stats)
                    continue;
                const int64_t so = nt_stat_offset(c, d, b, n, i);
                for (int k = 0; k < rep; k++) {
                    stat_written[so + k] = 1;
                    if (tc_f32_bits(L->smax[so + k]) != tc_f32_bits(L->smax[so]) ||
                        tc_f32_bits(L->ssum[so + k]) != tc_f32_bits(L->ssum[so]))
                        exact_fail(&replica, "replicas differ", b, n, i, L->smax[so + k]);
                }
                const float m = L->smax[so], l = L->ssum[so];
                r->smax[row] = m, r->ssum[row] = l;
                if (pad_row || empty) {
                    if (tc_f32_bits(m) != TC_NEG_FLT_MAX_BITS || tc_f32_bits(l) != TC_FLT_MAX_BITS)
                        exact_fail(pad_row ? &stat_pad : &stat_empty,
                                   pad_row ? "padding row statistics are not (-FLT_MAX, FLT_MAX)"
                                           : "fully masked row statistics are not (-FLT_MAX, FLT_MAX)",
                                   b, n, i, m);
                } else {
                    ym[ns] = m, xm[ns] = r->ref_max[row], ys[ns] = l, xs[ns++] = r->ref_sum[row];
                }
            }
    /* an fp32 output may have asked for fp16/bf16 tolerance (fc_options.out_tolerance) */
    const bool looser = c->out_dt == FC_F32 || (c->out_dt == FC_F16 && c->out_tolerance == FC_BF16);
    const tc_dtype tol = looser && c->out_tolerance != FC_F32 ? nt_tc(c->out_tolerance) : ot;
    tc_compare(q8 ? "out (int8)" : "out", y, x, nt, q8 ? NT_I8_TOL : tc_tol_out(tol), 1);
    if (c->stats) {
        tc_compare("softmax max", ym, xm, ns, tc_tol_max(), 1);
        tc_compare("softmax sum", ys, xs, ns, tc_tol_sum(), 1);
        int64_t stray = 0;
        for (int64_t k = 0; k < L->stat_n + NT_STAT_GUARD; k++)
            if (!(k < L->stat_n && stat_written[k]) && (!nt_is_sentinel(FC_F32, L->smax, k) || !nt_is_sentinel(FC_F32, L->ssum, k)))
                stray++;
        TC_CHECK(stray == 0, "%lld statistics elements written outside the rows' slots", (long long)stray);
    }
    int64_t gap_writes = 0;
    for (int64_t k = 0; k < L->gout.count; k++)
        gap_writes += !written[k] && !nt_is_sentinel(c->out_dt, L->out, k);
    TC_CHECK(gap_writes == 0, "%lld output elements written outside the logical output (gaps)", (long long)gap_writes);
    TC_CHECK(zero.bad == 0, "%lld: %s", (long long)zero.bad, zero.first);
    TC_CHECK(stat_pad.bad == 0, "%lld: %s", (long long)stat_pad.bad, stat_pad.first);
    TC_CHECK(stat_empty.bad == 0, "%lld: %s", (long long)stat_empty.bad, stat_empty.first);
    TC_CHECK(replica.bad == 0, "%lld: %s", (long long)replica.bad, replica.first);
    TC_CHECK(unwritten.bad == 0, "%lld: %s", (long long)unwritten.bad, unwritten.first);
    TC_CHECK(overflow.bad == 0, "%lld: %s", (long long)overflow.bad, overflow.first);
    free(y), free(x), free(ym), free(xm), free(ys), free(xs), free(written), free(stat_written);
}

