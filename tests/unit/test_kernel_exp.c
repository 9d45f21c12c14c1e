/*
 * v_exp and v_exp2 of one kernel set (argv[1]; src/kernels/simd.h) against the C library's double exp
 * and exp2.  v_exp over a dense sweep of the fp32 input range (every 251st float of [−88.8, 88.8],
 * every float within 4096 of the edges) and the special values.  The definition it is held to
 * (simd.h, semantics §0.3):
 *   - x in [−87.3365, 88]: relative error below 2 ulp of the result (the largest is printed);
 *   - x in (88, 88.7228]: between exp(88) and exp(x) (sets without vscalefps clamp at 88), or +inf where
 *     exp(x) rounds past FLT_MAX;
 *   - x < −87.3365447 (where exp(x) < FLT_MIN), and −inf: exactly +0;
 *   - x > 88.7228394 (where exp(x) > FLT_MAX), and +inf: +inf;
 *   - NaN: NaN.
 * v_exp2 (the softmax steps' exponential of (x − m)·log2 e) over every 61st float of [−130, 130]
 * and every float within 4096 of its edges:
 *   - y in [−126, 127.5): relative error below 2.5e-7 (its fit's 2e-7 evaluated in fp32);
 *   - y in [127.5, 128): +inf (2¹²⁸·p(f) as a product) or the value (vscalefps scales exactly);
 *   - y < −126, and −inf: exactly +0;  y ≥ 128, and +inf: +inf;  NaN: NaN.
 * v_exp2_nonpositive (the log2-unit softmax step's) over every 61st float of [−130, 0] and every
 * float within 4096 of −126.5, −126, −0.5 and −1: as v_exp2 in [−126, 0]; y < −126.5, and −inf:
 * exactly +0; y in [−126.5, −126): in [0, 2^−126] (a subnormal or 0, as the set rounds); NaN: NaN.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"
#include "core/half.h"
#include "kernel_pieces.h"

#define LO (-87.3365447f) /* below: exactly 0 */
#define HI (88.7228394f)  /* above: +inf */

typedef struct exp_tally {
    double worst_ulp;
    float worst_x;
    int64_t values, bad_accuracy, bad_clamp, bad_zero, bad_inf, bad_nan;
} exp_tally;

/* The ulp of the fp32 number nearest to e > 0 (2^-149 below FLT_MIN). */
static double ulp_of(double e)
{
    int ex;
    frexp(e, &ex); /* e = f·2^ex, f in [0.5, 1) */
    return fmax(ldexp(1.0, ex - 24), 0x1p-149);
}

static void judge(exp_tally *t, float x, float y)
{
    t->values++;
    if (isnan(x)) {
        t->bad_nan += !isnan(y);
    } else if (x < LO) {
        t->bad_zero += !(y == 0.0f && !signbit(y));
    } else if (x > HI) {
        t->bad_inf += !(y == INFINITY);
    } else if (x > 88.0f) {
        const double lo = exp(88.0) * (1 - 0x1p-22), hi = exp((double)x) * (1 + 0x1p-22);
        const bool overflows = exp((double)x) > (double)FLT_MAX * (1 + 0x1p-24); /* rounds to +inf */
        if (!(isfinite(y) ? y >= lo && y <= hi : overflows && y == INFINITY) && t->bad_clamp++ == 0)
            printf("%.9g: got %.9g, want within [%.9g, %.9g]\n", x, y, lo, hi);
    } else {
        const double e = exp((double)x), ulps = fabs((double)y - e) / ulp_of(e);
        if (!(ulps < 2.0))
            t->bad_accuracy++;
        if (!(ulps <= t->worst_ulp)) /* NaN counts as worst */
            t->worst_ulp = ulps, t->worst_x = x;
    }
}

/* Runs v_exp over xs[0..n) (n a multiple of the lanes) and judges every result. */
static void sweep(const unit_pieces *P, exp_tally *t, const float *xs, float *ys, int n)
{
    P->exp(xs, ys, n);
    for (int k = 0; k < n; k++)
        judge(t, xs[k], ys[k]);
}

enum { CHUNK = 4096 };

/* Every float whose bits lie in [from, to] with the given step, through v_exp in chunks. */
static void sweep_bits(const unit_pieces *P, exp_tally *t, uint32_t from, uint32_t to, uint32_t step)
{
    float xs[CHUNK] = {0}, ys[CHUNK];
    int n = 0;
    for (uint64_t b = from; b <= to; b += step) {
        xs[n++] = fc_bits_f32((uint32_t)b);
        if (n == CHUNK)
            sweep(P, t, xs, ys, n), n = 0;
    }
    while (n % P->lanes)
        xs[n++] = 0.0f;
    sweep(P, t, xs, ys, n);
}

/* Every float within 4096 of x on either side (x > 0: positive bits; x < 0: negative bits). */
static void around(const unit_pieces *P, exp_tally *t, float x)
{
    const uint32_t b = fc_f32_bits(x);
    sweep_bits(P, t, b - 4096, b + 4096, 1);
}

static void sweeps(const unit_pieces *P)
{
    exp_tally t = {0};
    sweep_bits(P, &t, 0x00000000u, fc_f32_bits(88.8f), 251);          /* +0 .. 88.8, subnormals included */
    sweep_bits(P, &t, 0x80000000u, fc_f32_bits(-88.8f), 251);         /* −0 .. −88.8 */
    const float edges[] = {LO, -LO, 88.0f, -88.0f, HI, -HI, 87.0f, -87.0f, 1.0f, -1.0f, 0.5f, -0.5f,
                           0.34657359f /* ln2 / 2: the reduction's boundary */, -0.34657359f};
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++)
        around(P, &t, edges[k]);
    float xs[64] = {NAN, -NAN, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, 0x1p-149f, -0x1p-149f,
                    0.0f, -0.0f, 1e10f, -1e10f, 128.0f, -128.0f, 89.0f, -88.0f, 100.0f, -100.0f, -103.97f, -104.0f,
                    fc_bits_f32(0x7f800001u), fc_bits_f32(0xffc00001u)};
    float ys[64];
    for (int k = 24; k < 64; k++)
        xs[k] = k % 2 ? NAN : -INFINITY; /* lanes mixing special and ordinary values */
    xs[40] = 3.0f, xs[51] = -2.0f;
    sweep(P, &t, xs, ys, 64);
    TC_CHECK(ys[0] != ys[0] && ys[2] == INFINITY && ys[3] == 0.0f && ys[10] == 1.0f && ys[11] == 1.0f,
             "%s exp: NaN, +inf, -inf, +0, -0 give %g %g %g %g %g", P->isa, ys[0], ys[2], ys[3], ys[10], ys[11]);
    printf("%s exp: %lld values, max error %.3f ulp at x = %.9g\n", P->isa, (long long)t.values, t.worst_ulp,
           t.worst_x);
    TC_CHECK(t.bad_accuracy == 0, "%s exp: %lld values in [-87.34, 88] off by 2 ulp or more (worst %.3f ulp at %.9g)",
             P->isa, (long long)t.bad_accuracy, t.worst_ulp, t.worst_x);
    TC_CHECK(t.bad_clamp == 0, "%s exp: %lld values in (88, 88.72] not in [exp(88), exp(x)]", P->isa,
             (long long)t.bad_clamp);
    TC_CHECK(t.bad_zero == 0, "%s exp: %lld values below -87.3365 (or -inf) not +0", P->isa, (long long)t.bad_zero);
    TC_CHECK(t.bad_inf == 0, "%s exp: %lld values above 88.7228 (or +inf) not +inf", P->isa, (long long)t.bad_inf);
    TC_CHECK(t.bad_nan == 0, "%s exp: %lld NaN inputs not NaN", P->isa, (long long)t.bad_nan);
}

/* v_exp2 (or with nonpositive v_exp2_nonpositive) of every float whose bits lie in [from, to] with the
 * given step, judged as above. */
static void exp2_bits_of(const unit_pieces *P, bool nonpositive, exp_tally *t, uint32_t from, uint32_t to,
                         uint32_t step)
{
    float xs[CHUNK] = {0}, ys[CHUNK];
    int n = 0;
    for (uint64_t b = from; b <= to || n; b += step) {
        if (b <= to)
            xs[n++] = fc_bits_f32((uint32_t)b);
        if (n < CHUNK && b <= to)
            continue;
        while (n % P->lanes)
            xs[n++] = 0.0f;
        (nonpositive ? P->exp2_nonpositive : P->exp2)(xs, ys, n);
        for (int k = 0; k < n; k++) {
            const float y = xs[k], e = ys[k];
            t->values++;
            if (isnan(y)) {
                t->bad_nan += !isnan(e);
            } else if (nonpositive && y < -126.0f && y >= -126.5f) {
                t->bad_zero += !(e >= 0.0f && e <= 0x1p-126f && !signbit(e));
            } else if (y < -126.0f) {
                t->bad_zero += !(e == 0.0f && !signbit(e));
            } else if (y >= 128.0f) {
                t->bad_inf += !(e == INFINITY);
            } else if (y >= 127.5f) { /* 2ⁿ·p(f) with n = 128: +inf, or the value where the set scales exactly */
                t->bad_clamp += !(e == INFINITY || fabs((double)e - exp2((double)y)) < 2.5e-7 * exp2((double)y));
            } else {
                const double want = exp2((double)y), rel = fabs((double)e - want) / want;
                t->bad_accuracy += !(rel < 2.5e-7);
                if (!(rel <= t->worst_ulp)) /* (relative error here) */
                    t->worst_ulp = rel, t->worst_x = y;
            }
        }
        n = 0;
        if (b > to)
            break;
    }
}

static void exp2_bits(const unit_pieces *P, exp_tally *t, uint32_t from, uint32_t to, uint32_t step)
{
    exp2_bits_of(P, false, t, from, to, step);
}

static void sweeps2(const unit_pieces *P)
{
    exp_tally t = {0};
    exp2_bits(P, &t, 0x00000000u, fc_f32_bits(130.0f), 61);  /* +0 .. 130 */
    exp2_bits(P, &t, 0x80000000u, fc_f32_bits(-130.0f), 61); /* −0 .. −130 */
    const float edges[] = {-126.0f, 127.5f, 0.5f, -0.5f, 1.0f, -1.0f, 128.0f};
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++) {
        const uint32_t b = fc_f32_bits(edges[k]);
        exp2_bits(P, &t, b - 4096, b + 4096, 1);
    }
    float xs[64] = {NAN, -NAN, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, 0.0f, -0.0f, -1e10f, 1e10f, -126.0f, -126.5f};
    float ys[64];
    for (int k = 12; k < 64; k++)
        xs[k] = k % 2 ? NAN : -INFINITY; /* lanes mixing special and ordinary values */
    xs[40] = 3.0f, xs[51] = -2.0f;
    P->exp2(xs, ys, 64);
    TC_CHECK(ys[0] != ys[0] && ys[2] == INFINITY && ys[3] == 0.0f && ys[4] == INFINITY && ys[5] == 0.0f &&
                 ys[6] == 1.0f && ys[7] == 1.0f && ys[10] == 0x1p-126f && ys[11] == 0.0f && ys[40] == 8.0f &&
                 ys[51] == 0.25f && ys[41] != ys[41] && ys[42] == 0.0f,
             "%s exp2: NaN, +inf, -inf, FLT_MAX, -FLT_MAX, +0, -0, -126, -126.5, 3, -2 give %g %g %g %g %g %g %g %g %g %g %g",
             P->isa, ys[0], ys[2], ys[3], ys[4], ys[5], ys[6], ys[7], ys[10], ys[11], ys[40], ys[51]);
    printf("%s exp2: %lld values, max relative error %.3g at y = %.9g\n", P->isa, (long long)t.values, t.worst_ulp,
           t.worst_x);
    TC_CHECK(t.bad_accuracy == 0, "%s exp2: %lld values in [-126, 127.5) off by 2.5e-7 or more (worst %.3g at %.9g)",
             P->isa, (long long)t.bad_accuracy, t.worst_ulp, t.worst_x);
    TC_CHECK(t.bad_zero == 0, "%s exp2: %lld values below -126 (or -inf) not +0", P->isa, (long long)t.bad_zero);
    TC_CHECK(t.bad_clamp == 0, "%s exp2: %lld values in [127.5, 128) neither +inf nor 2^y", P->isa, (long long)t.bad_clamp);
    TC_CHECK(t.bad_inf == 0, "%s exp2: %lld values from 128 on (or +inf) not +inf", P->isa, (long long)t.bad_inf);
    TC_CHECK(t.bad_nan == 0, "%s exp2: %lld NaN inputs not NaN", P->isa, (long long)t.bad_nan);
}

static void sweeps2_nonpositive(const unit_pieces *P)
{
    exp_tally t = {0};
    exp2_bits_of(P, true, &t, 0x80000000u, fc_f32_bits(-130.0f), 61); /* −0 .. −130 */
    const float edges[] = {-126.5f, -126.0f, -0.5f, -1.0f};
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++) {
        const uint32_t b = fc_f32_bits(edges[k]);
        exp2_bits_of(P, true, &t, b - 4096, b + 4096, 1);
    }
    float xs[64] = {NAN, -NAN, -INFINITY, -FLT_MAX, 0.0f, -0.0f, -1e10f, -126.0f, -127.0f, -2.0f, -0.5f};
    float ys[64];
    for (int k = 12; k < 64; k++)
        xs[k] = k % 2 ? NAN : -INFINITY; /* lanes mixing special and ordinary values */
    xs[40] = -3.0f;
    P->exp2_nonpositive(xs, ys, 64);
    TC_CHECK(ys[0] != ys[0] && ys[1] != ys[1] && ys[2] == 0.0f && ys[3] == 0.0f && ys[4] == 1.0f && ys[5] == 1.0f &&
                 ys[6] == 0.0f && ys[7] == 0x1p-126f && ys[8] == 0.0f && ys[9] == 0.25f && ys[40] == 0.125f &&
                 ys[41] != ys[41] && ys[42] == 0.0f,
             "%s exp2 (y <= 0): NaN, -inf, -FLT_MAX, +0, -0, -126, -127, -2, -3 give %g %g %g %g %g %g %g %g %g", P->isa,
             ys[0], ys[2], ys[3], ys[4], ys[5], ys[7], ys[8], ys[9], ys[40]);
    printf("%s exp2 (y <= 0): %lld values, max relative error %.3g at y = %.9g\n", P->isa, (long long)t.values,
           t.worst_ulp, t.worst_x);
    TC_CHECK(t.bad_accuracy == 0, "%s exp2 (y <= 0): %lld values in [-126, 0] off by 2.5e-7 or more (worst %.3g at %.9g)",
             P->isa, (long long)t.bad_accuracy, t.worst_ulp, t.worst_x);
    TC_CHECK(t.bad_zero == 0, "%s exp2 (y <= 0): %lld values below -126.5 (or -inf) not +0, or in [-126.5, -126) not "
             "in [0, 2^-126]", P->isa, (long long)t.bad_zero);
    TC_CHECK(t.bad_nan == 0, "%s exp2 (y <= 0): %lld NaN inputs not NaN", P->isa, (long long)t.bad_nan);
}

static void both(const unit_pieces *P)
{
    sweeps(P);
    sweeps2(P);
    sweeps2_nonpositive(P);
}

int main(int argc, char **argv) { return unit_main(argc, argv, "exp", both); }
