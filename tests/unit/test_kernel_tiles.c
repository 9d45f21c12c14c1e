/*
 * The small tile pieces of one kernel set (argv[1]; src/kernels/gemm.h, simd.h) against plain loops,
 * at every remainder of the set's vector width and of the 8×8 register transposes:
 *   - fc_gemm_visible: C += the products of visible positions only; a hidden position takes no part
 *     even where its B row holds NaN or ±inf (semantics §0.2, §0.3), a visible one propagates them;
 *   - fc_transpose: every element moved, nothing outside the destination's rows × cols written;
 *   - fc_dot: exact on small integers, NaN / ±inf propagate;
 *   - fc_all_finite: false exactly when some value of the rows is NaN or ±inf (padding ignored).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"
#include "common/rng.h"
#include "core/half.h"
#include "kernel_pieces.h"

#define SENTINEL 0x7fc0beef

static float special(tc_rng *r)
{
    const float v[] = {NAN, INFINITY, -INFINITY};
    return v[tc_rng_int(r, 0, 2)];
}

static void gemm_visible(const unit_pieces *P)
{
    tc_rng r = tc_rng_seed(6301);
    const int W = P->lanes;
    int64_t bad_cases = 0, cases = 0;
    for (int M = 1; M <= 5; M++)
        for (int N = 1; N <= 2 * W + 1; N++)
            for (int K = 1; K <= 6; K++, cases++) {
                const int Npad = (N + W - 1) / W * W;
                const ptrdiff_t ldc = Npad + W;
                float A[5 * 6], vis[5 * 6], *B = malloc(sizeof(float) * (size_t)(K * N)), *C = malloc(sizeof(float) * (size_t)(M * ldc));
                for (int k = 0; k < M * K; k++)
                    A[k] = (float)tc_rng_int(&r, -3, 3), vis[k] = tc_rng_bool(&r, 0.6) ? 1.0f : 0.0f;
                for (int k = 0; k < K * N; k++)
                    B[k] = tc_rng_bool(&r, 0.1) ? special(&r) : (float)tc_rng_int(&r, -3, 3);
                for (int k = 0; k < M * ldc; k++)
                    C[k] = k % ldc < Npad ? (float)tc_rng_int(&r, -3, 3) : fc_bits_f32(SENTINEL);
                double *want = malloc(sizeof(double) * (size_t)(M * N));
                for (int m = 0; m < M; m++)
                    for (int n = 0; n < N; n++) {
                        double s = C[m * ldc + n];
                        for (int k = 0; k < K; k++)
                            if (vis[m * K + k] != 0)
                                s += (double)A[m * K + k] * B[k * N + n];
                        want[m * N + n] = s;
                    }
                P->gemm_visible(M, N, K, A, K, 1, vis, B, N, C, ldc);
                int64_t bad = 0;
                for (int m = 0; m < M; m++)
                    for (int n = 0; n < ldc; n++) {
                        const float got = C[m * ldc + n];
                        if (n >= Npad)
                            bad += fc_f32_bits(got) != SENTINEL;
                        else if (n < N)
                            bad += !(got == want[m * N + n] || (isnan(got) && isnan(want[m * N + n])));
                    }
                bad_cases += bad != 0;
                TC_CHECK(bad == 0, "%s gemm_visible M=%d N=%d K=%d: %lld values wrong or written outside", P->isa, M,
                         N, K, (long long)bad);
                free(B), free(C), free(want);
            }
    printf("%s gemm_visible: %lld shapes, %lld failed\n", P->isa, (long long)cases, (long long)bad_cases);
}

static void transpose(const unit_pieces *P)
{
    for (int rows = 1; rows <= 19; rows++)
        for (int cols = 1; cols <= 19; cols++) {
            const ptrdiff_t lds = cols + 3, ldd = rows + 2;
            float *src = malloc(sizeof(float) * (size_t)(rows * lds)), *dst = malloc(sizeof(float) * (size_t)(cols + 1) * ldd);
            for (int k = 0; k < rows * lds; k++)
                src[k] = (float)k;
            for (int k = 0; k < (cols + 1) * ldd; k++)
                dst[k] = fc_bits_f32(SENTINEL);
            P->transpose(src, lds, dst, ldd, rows, cols);
            int64_t bad = 0;
            for (int c = 0; c <= cols; c++)
                for (int rr = 0; rr < ldd; rr++) {
                    const float got = dst[c * ldd + rr];
                    bad += c < cols && rr < rows ? got != src[rr * lds + c] : fc_f32_bits(got) != SENTINEL;
                }
            TC_CHECK(bad == 0, "%s transpose %d x %d: %lld elements wrong or written outside", P->isa, rows, cols,
                     (long long)bad);
            free(src), free(dst);
        }
}

static void dot_and_finite(const unit_pieces *P)
{
    tc_rng r = tc_rng_seed(6302);
    for (int n = 0; n <= 3 * P->lanes + 2; n++) {
        float a[64], b[64];
        double want = 0;
        for (int e = 0; e < n; e++)
            a[e] = (float)tc_rng_int(&r, -9, 9), b[e] = (float)tc_rng_int(&r, -9, 9), want += (double)a[e] * b[e];
        TC_CHECK(P->dot(a, b, n) == want, "%s dot n=%d: %g, want %g", P->isa, n, P->dot(a, b, n), want);
        if (n > 0) {
            const int at = (int)tc_rng_int(&r, 0, n - 1);
            a[at] = NAN;
            TC_CHECK(isnan(P->dot(a, b, n)), "%s dot n=%d with a NaN at %d: not NaN", P->isa, n, at);
            a[at] = INFINITY, b[at] = 1;
            for (int e = 0; e < n; e++)
                if (e != at)
                    a[e] = 1, b[e] = 1;
            TC_CHECK(P->dot(a, b, n) == INFINITY, "%s dot n=%d with +inf at %d: not +inf", P->isa, n, at);
        }
    }
    for (int width = 1; width <= 2 * P->lanes + 3; width++)
        for (int rows = 1; rows <= 3; rows++) {
            const ptrdiff_t ld = width + 2;
            float x[3 * 64];
            for (int k = 0; k < rows * ld; k++)
                x[k] = k % ld < width ? (float)tc_rng_uniform(&r, -1e30, 1e30) : special(&r); /* padding: ignored */
            TC_CHECK(P->all_finite(x, rows, ld, width), "%s all_finite %d rows of %d: finite rows reported not finite",
                     P->isa, rows, width);
            const int at = (int)tc_rng_int(&r, 0, rows - 1) * (int)ld + (int)tc_rng_int(&r, 0, width - 1);
            x[at] = special(&r);
            TC_CHECK(!P->all_finite(x, rows, ld, width), "%s all_finite %d rows of %d: %g at %d not seen", P->isa,
                     rows, width, x[at], at);
        }
}

static void all_tiles(const unit_pieces *P)
{
    gemm_visible(P);
    transpose(P);
    dot_and_finite(P);
}

int main(int argc, char **argv) { return unit_main(argc, argv, "tiles", all_tiles); }
