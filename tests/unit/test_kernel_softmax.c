/*
 * The online-softmax step of one kernel set (argv[1]; src/kernels/softmax.h) against a direct
 * computation in double.  For a row with running maximum m_old and sum l_old and tile logits
 * x_j = scale·S[j] (fp32 product):
 *   - no NaN, maximum M = max(m_old, x_j) finite: m = M exactly, p_j = exp(x_j − M) (exactly 0 for a
 *     hidden −inf score), alpha = exp(m_old − M), l = l_old·alpha + Σ p_j, each within a few ulp plus
 *     the rounding of the fp32 difference;
 *   - every logit and m_old −inf (a row that has seen only hidden scores): m = −inf, p = 0, alpha = 0,
 *     l = 0, never NaN;
 *   - semantics §0.3: a NaN logit or m_old makes m and l NaN; a +inf maximum without NaN keeps
 *     m = +inf and makes l NaN (∞ − ∞);
 *   - the step returns whether some row's alpha differs from 1 (false for a tile that moves no row's
 *     maximum);
 * and over a row split into tiles of random widths, the running m and l end as max x and
 * Σ exp(x − max x).  fc_softmax_step_raw is held to the same in the units of S (m = M, the maximum
 * of S and m_old; p_j = exp(scale·(S_j − M)), alpha = exp(scale·(m_old − M))), with twice the
 * tolerance per unit of the difference (three roundings where the other takes one or two).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "kernel_pieces.h"

enum { MAXJ = 12, MAXR = 48 };

typedef enum { ROW_FRESH, ROW_GOING, ROW_SOME_HIDDEN, ROW_ALL_HIDDEN, ROW_TILE_HIDDEN, ROW_BELOW_MAX,
               ROW_NAN_SCORE, ROW_NAN_M, ROW_INF_SCORE, ROW_INF_AND_NAN, ROW_INF_M, ROW_KINDS } row_kind;

typedef struct step_want {
    bool nan, inf; /* the row's m and l are NaN / m = +inf and l NaN */
    bool hidden;   /* m = −inf, l = 0, alpha = 0 */
    float m;
    double l, alpha, p[MAXJ], tol_p[MAXJ], tol_l, tol_alpha;
    bool rescales;
} step_want;

/* The direct computation for one row: x[0..jn), running m_old, l_old, the logits k·x (k = 1 but for
 * fc_softmax_step_raw: its scale). */
static step_want direct(const float *x, int jn, float m_old, float l_old, double k)
{
    const double per_unit = k == 1.0 ? 0x1p-23 : 0x1p-22; /* relative error of p per unit of k·(x − M) */
    step_want w = {0};
    w.nan = isnan(m_old);
    float M = m_old;
    for (int j = 0; j < jn; j++) {
        w.nan |= isnan(x[j]);
        M = x[j] > M ? x[j] : M;
    }
    w.rescales = !(isfinite(m_old) && M == m_old); /* M: the maximum of what is not NaN */
    if (w.nan)
        return w;
    if (M == INFINITY) {
        w.inf = true;
        return w;
    }
    if (M == -INFINITY) {
        w.hidden = true;
        return w;
    }
    w.m = M;
    w.alpha = exp(k * ((double)m_old - M));
    w.tol_alpha = m_old == -INFINITY ? 0.0 : (0x1p-21 + fabs(k * ((double)m_old - M)) * per_unit) * w.alpha;
    w.l = (double)l_old * w.alpha;
    double tol = w.tol_alpha * l_old;
    for (int j = 0; j < jn; j++) {
        const double d = (double)x[j] - M;
        if (d == -INFINITY)
            continue; /* a hidden score: p = 0 exactly */
        w.p[j] = exp(k * d);
        w.tol_p[j] = (0x1p-21 + fabs(k * d) * per_unit) * w.p[j];
        w.l += w.p[j], tol += w.tol_p[j];
    }
    w.tol_l = tol + w.l * (jn + 2) * 0x1p-24;
    return w;
}

static float score(tc_rng *r) { return (float)tc_rng_uniform(r, -6, 6); }

/* The tile's scores S[j·Rp + row] and the row's m_old, l_old for a row of this kind. */
static void make_row(tc_rng *r, row_kind kind, float *S, int jn, int Rp, int row, float *m_old, float *l_old)
{
    for (int j = 0; j < jn; j++)
        S[j * Rp + row] = score(r);
    const int at = (int)tc_rng_int(r, 0, jn - 1);
    *m_old = (float)tc_rng_uniform(r, -4, 4), *l_old = (float)tc_rng_uniform(r, 0.5, 5);
    switch (kind) {
    case ROW_FRESH: *m_old = -INFINITY, *l_old = 0; break;
    case ROW_GOING: break;
    case ROW_SOME_HIDDEN:
        for (int j = 0; j < jn; j++)
            if (j != at && tc_rng_bool(r, 0.5))
                S[j * Rp + row] = -INFINITY;
        break;
    case ROW_ALL_HIDDEN: *m_old = -INFINITY, *l_old = 0; /* fall through */
    case ROW_TILE_HIDDEN:
        for (int j = 0; j < jn; j++)
            S[j * Rp + row] = -INFINITY;
        break;
    case ROW_BELOW_MAX: *m_old = 40; break; /* above every scaled score: alpha 1 */
    case ROW_NAN_SCORE: S[at * Rp + row] = NAN; break;
    case ROW_NAN_M: *m_old = NAN; break;
    case ROW_INF_SCORE: S[at * Rp + row] = INFINITY; break;
    case ROW_INF_AND_NAN: S[at * Rp + row] = INFINITY, S[(at + 1) % jn * Rp + row] = jn > 1 ? NAN : INFINITY; break;
    case ROW_INF_M: *m_old = INFINITY; break;
    default: break;
    }
}

/* One step over a tile of rows of the given kinds (raw: fc_softmax_step_raw, m in the units of S);
 * checks every row and the return value. */
static bool one_step(const unit_pieces *P, tc_rng *r, int jn, int Rp, float scale, bool raw, const row_kind *kinds)
{
    float S[MAXJ * MAXR], x[MAXR][MAXJ], m[MAXR], l[MAXR], alpha[MAXR], m_old[MAXR], l_old[MAXR];
    bool want_rescale = false;
    step_want w[MAXR];
    for (int row = 0; row < Rp; row++) {
        make_row(r, kinds[row], S, jn, Rp, row, &m_old[row], &l_old[row]);
        for (int j = 0; j < jn; j++)
            x[row][j] = scale == 1.0f || raw ? S[j * Rp + row] : S[j * Rp + row] * scale;
        m[row] = m_old[row], l[row] = l_old[row];
        w[row] = direct(x[row], jn, m_old[row], l_old[row], raw ? scale : 1.0);
        want_rescale |= w[row].rescales;
    }
    /* the same tile again with its rows' maxima given (S then holds the logits, scaled unless raw):
     * the same bits — the maximum of the non-NaN scores, −inf when none */
    float S2[MAXJ * MAXR], tmax[MAXR], m2[MAXR], l2[MAXR], alpha2[MAXR];
    for (int row = 0; row < Rp; row++) {
        tmax[row] = -INFINITY, m2[row] = m[row], l2[row] = l[row];
        for (int j = 0; j < jn; j++) {
            const float v = raw || scale == 1.0f ? S[j * Rp + row] : S[j * Rp + row] * scale;
            S2[j * Rp + row] = v;
            tmax[row] = v > tmax[row] ? v : tmax[row];
        }
    }
    const bool rescale2 = raw ? P->softmax_step_raw(S2, tmax, jn, Rp, scale, m2, l2, alpha2)
                              : P->softmax_step(S2, tmax, jn, Rp, scale, m2, l2, alpha2);
    const bool rescale = raw ? P->softmax_step_raw(S, NULL, jn, Rp, scale, m, l, alpha)
                             : P->softmax_step(S, NULL, jn, Rp, scale, m, l, alpha);
    TC_CHECK(rescale2 == rescale && !memcmp(S2, S, (size_t)jn * Rp * sizeof(float)) && !memcmp(m2, m, Rp * sizeof(float)) &&
                 !memcmp(l2, l, Rp * sizeof(float)) && !memcmp(alpha2, alpha, Rp * sizeof(float)),
             "%s softmax step%s jn=%d Rp=%d scale=%g: the same bits with the rows' maxima given", P->isa, raw ? " (raw)" : "",
             jn, Rp, scale);
    int64_t bad = 0;
    for (int row = 0; row < Rp; row++) {
        const step_want *e = &w[row];
        bool ok;
        if (e->nan)
            ok = isnan(m[row]) && isnan(l[row]);
        else if (e->inf)
            ok = m[row] == INFINITY && isnan(l[row]);
        else if (e->hidden) {
            ok = m[row] == -INFINITY && l[row] == 0.0f && alpha[row] == 0.0f;
            for (int j = 0; j < jn; j++)
                ok = ok && S[j * Rp + row] == 0.0f;
        } else {
            ok = m[row] == e->m && fabs(l[row] - e->l) <= e->tol_l && fabs(alpha[row] - e->alpha) <= e->tol_alpha;
            for (int j = 0; j < jn; j++) {
                const double p = S[j * Rp + row];
                ok = ok && (x[row][j] == -INFINITY ? p == 0.0 : fabs(p - e->p[j]) <= e->tol_p[j]);
            }
        }
        if (!ok && bad++ == 0)
            TC_CHECK(false, "%s softmax step%s jn=%d Rp=%d scale=%g row %d (kind %d): m %g l %g alpha %g, want m %g l %g alpha %g%s%s%s",
                     P->isa, raw ? " (raw)" : "", jn, Rp, scale, row, (int)kinds[row], m[row], l[row], alpha[row], e->m, e->l, e->alpha,
                     e->nan ? " (NaN row)" : "", e->inf ? " (+inf row)" : "", e->hidden ? " (all hidden)" : "");
    }
    if (bad == 0)
        TC_CHECK(true, "softmax step");
    TC_CHECK(rescale == want_rescale, "%s softmax step jn=%d Rp=%d: returned %d, want %d", P->isa, jn, Rp, rescale,
             want_rescale);
    return bad == 0;
}

static void random_tiles(const unit_pieces *P, bool raw)
{
    tc_rng r = tc_rng_seed(raw ? 6203 : 6201);
    const int W = P->lanes;
    row_kind kinds[MAXR];
    int64_t tiles = 0, failed = 0;
    for (int t = 0; t < 3000; t++) {
        const int Rp = W * (int)tc_rng_int(&r, 1, (W == 1 ? 5 : 2)), jn = (int)tc_rng_int(&r, 1, MAXJ);
        const float scale = tc_rng_bool(&r, 0.5) ? 1.0f : raw && tc_rng_bool(&r, 0.5) ? 0.0883883476f : 0.3671875f;
        for (int row = 0; row < Rp; row++)
            kinds[row] = tc_rng_bool(&r, 0.6) ? (row_kind)tc_rng_int(&r, 0, ROW_BELOW_MAX)
                                               : (row_kind)tc_rng_int(&r, 0, ROW_KINDS - 1);
        failed += !one_step(P, &r, jn, Rp, scale, raw, kinds), tiles++;
    }
    /* a tile that moves no row's maximum: alpha 1 everywhere, false returned */
    for (int row = 0; row < W; row++)
        kinds[row] = ROW_BELOW_MAX;
    for (int jn = 1; jn <= 5; jn++)
        failed += !one_step(P, &r, jn, W, raw ? 0.3671875f : 1.0f, raw, kinds), tiles++;
    printf("%s softmax step%s: %lld tiles, %lld failed\n", P->isa, raw ? " (raw)" : "", (long long)tiles,
           (long long)failed);
}

/* One row (in lane 0 of the tiles; the other lanes hidden) split into tiles of random widths. */
static void running_rows(const unit_pieces *P, bool raw)
{
    tc_rng r = tc_rng_seed(raw ? 6204 : 6202);
    const float scale = raw ? 0.25f : 1.0f; /* raw: logits scale·x */
    const int W = P->lanes;
    for (int t = 0; t < 200; t++) {
        const int n = (int)tc_rng_int(&r, 1, 80);
        float x[80];
        double M = -INFINITY;
        for (int k = 0; k < n; k++) {
            x[k] = tc_rng_bool(&r, 0.15) ? -INFINITY : (float)tc_rng_uniform(&r, -10, 10) + (float)(k / 4);
            M = x[k] > M ? x[k] : M;
        }
        float m[MAXR], l[MAXR], alpha[MAXR], S[MAXJ * MAXR];
        for (int row = 0; row < W; row++)
            m[row] = -INFINITY, l[row] = 0;
        for (int k0 = 0; k0 < n;) {
            const int jn = (int)tc_rng_int(&r, 1, n - k0 < MAXJ ? n - k0 : MAXJ);
            for (int j = 0; j < jn; j++)
                for (int row = 0; row < W; row++)
                    S[j * W + row] = row == 0 ? x[k0 + j] : -INFINITY;
            if (raw)
                P->softmax_step_raw(S, NULL, jn, W, scale, m, l, alpha);
            else
                P->softmax_step(S, NULL, jn, W, 1.0f, m, l, alpha);
            k0 += jn;
        }
        double L = 0;
        for (int k = 0; k < n; k++)
            L += M == -INFINITY ? 0.0 : exp(scale * (x[k] - M));
        TC_CHECK(m[0] == M && fabs(l[0] - L) <= 1e-4 * L && m[1 % W] == (W > 1 ? -INFINITY : M),
                 "%s running softmax over %d scores: m %g l %.9g, want %g %.9g", P->isa, n, m[0], l[0], M, L);
    }
}

static void all_steps(const unit_pieces *P)
{
    random_tiles(P, false);
    random_tiles(P, true);
    running_rows(P, false);
    running_rows(P, true);
}

int main(int argc, char **argv) { return unit_main(argc, argv, "softmax", all_steps); }
