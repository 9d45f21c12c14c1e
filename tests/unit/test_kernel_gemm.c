/*
 * The micro-GEMM of one kernel set (argv[1]; src/kernels/gemm.h; in the amx set also amx.h's tile GEMM
 * and amx_bwd.h's product from fp32 rows, below)
 * against a plain double loop, for every edge-tile shape: M = 1 .. MR + 1 and 2·MR + 1 rows, N = 1 ..
 * NR + lanes + 1 and 2·NR + 3 columns (every vector count and tail of a register tile, and tiles
 * after a full one), K = 0 .. 4 and 7 (the full tile's two-step loop and its odd remainder), A by rows
 * and by columns, with and without accumulation.
 *   - small integers: every partial sum is exact in fp32, so any summation order gives the exact
 *     product and the comparison is bitwise;
 *   - uniform reals: within 2(K + 1)·2^-24 · Σ|a·b| (+ |c| when accumulating);
 *   - nothing outside C's M rows × round_up(N, lanes) columns is written; A and B are allocated
 *     tight, so a load past them is a sanitizer error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "core/half.h"
#include "kernel_pieces.h"

#define SENTINEL 0x7fc0dead /* a NaN no computation produces */

static float value(tc_rng *r, bool integral)
{
    return integral ? (float)tc_rng_int(r, -3, 3) : (float)tc_rng_uniform(r, -1, 1);
}

static bool is_sentinel(float x) { return fc_f32_bits(x) == SENTINEL; }

/* One product C (+)= A·B of the given shape and A order; true when it matched. */
static bool one_gemm(const unit_pieces *P, tc_rng *r, int M, int N, int K, bool a_by_cols, bool accumulate,
                     bool integral)
{
    const int W = P->lanes, Npad = (N + W - 1) / W * W;
    const ptrdiff_t ldc = Npad + W, ldb = N;
    const ptrdiff_t a_rs = a_by_cols ? 1 : K, a_ks = a_by_cols ? M : 1;
    float *A = malloc(sizeof(float) * (size_t)(M * K > 0 ? M * K : 1));
    float *B = malloc(sizeof(float) * (size_t)(K * N > 0 ? K * N : 1));
    float *C = malloc(sizeof(float) * (size_t)((M + 1) * ldc));
    double *want = calloc((size_t)(M * N), sizeof *want), *bound = calloc((size_t)(M * N), sizeof *bound);
    for (int k = 0; k < M * K; k++)
        A[k] = value(r, integral);
    for (int k = 0; k < K * N; k++)
        B[k] = value(r, integral);
    for (int k = 0; k < (M + 1) * ldc; k++)
        C[k] = fc_bits_f32(SENTINEL);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < Npad; n++)
            C[m * ldc + n] = n < N && accumulate ? value(r, integral) : 0.0f;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double s = accumulate ? C[m * ldc + n] : 0.0, mag = 0.0;
            for (int k = 0; k < K; k++) {
                const double p = (double)A[m * a_rs + k * a_ks] * B[k * ldb + n];
                s += p, mag += fabs(p);
            }
            want[m * N + n] = s;
            bound[m * N + n] = 2.0 * (K + 1) * ldexp(mag + (accumulate ? fabs(C[m * ldc + n]) : 0.0), -24);
        }
    P->gemm(M, N, K, A, a_rs, a_ks, B, ldb, C, ldc, accumulate);
    int64_t wrong = 0, outside = 0;
    double worst = 0;
    for (int m = 0; m <= M; m++)
        for (int n = 0; n < ldc; n++) {
            const float got = C[m * ldc + n];
            if (m == M || n >= Npad) {
                outside += !is_sentinel(got);
                continue;
            }
            if (n >= N)
                continue; /* tail lanes of the last vector: scratch */
            const double err = fabs(got - want[m * N + n]);
            const bool ok = integral ? got == want[m * N + n] : err <= bound[m * N + n];
            wrong += !ok;
            worst = err > worst ? err : worst;
        }
    const bool ok = TC_CHECK(wrong == 0, "%s gemm M=%d N=%d K=%d A by %s accumulate=%d %s: %lld wrong, worst error %g",
                             P->isa, M, N, K, a_by_cols ? "columns" : "rows", accumulate,
                             integral ? "integers" : "reals", (long long)wrong, worst);
    TC_CHECK(outside == 0, "%s gemm M=%d N=%d K=%d: %lld floats outside C's rows and vectors written", P->isa, M, N,
             K, (long long)outside);
    free(A), free(B), free(C), free(want), free(bound);
    return ok;
}

static void edge_tiles(const unit_pieces *P)
{
    tc_rng r = tc_rng_seed(6101);
    const int MR = P->tile_rows, NR = P->tile_cols, W = P->lanes;
    int ms[16], ns[160], nm = 0, nn = 0;
    for (int m = 1; m <= MR + 1; m++)
        ms[nm++] = m;
    ms[nm++] = 2 * MR + 1;
    for (int n = 1; n <= NR + W + 1; n++)
        ns[nn++] = n;
    ns[nn++] = 2 * NR + 3;
    const int ks[] = {0, 1, 2, 3, 4, 7};
    int64_t cases = 0, failed = 0;
    for (int a = 0; a < nm; a++)
        for (int b = 0; b < nn; b++)
            for (size_t c = 0; c < sizeof ks / sizeof ks[0]; c++, cases++) {
                const bool by_cols = (a + b + (int)c) % 2, acc = (a + (int)c) % 3 == 1;
                failed += !one_gemm(P, &r, ms[a], ns[b], ks[c], by_cols, acc, true);
                failed += !one_gemm(P, &r, ms[a], ns[b], ks[c], !by_cols, !acc, false);
            }
    printf("%s gemm: %lld shapes (tile %d x %d, %d lanes), %lld failed\n", P->isa, (long long)cases, MR, NR, W,
           (long long)failed);
}

/* The product's epilogue (fc_gemm_colmax) on one shape: C the plain product's bits (times the
 * scale, rounded, when scaled), max[n] folded from its start over C's column n as
 * max = x > max ? x : max (a NaN element dropped, a NaN start kept), nothing past
 * round_up(N, lanes) of max written.  A row of A with a NaN or an infinity makes a row of C so. */
static bool one_colmax(const unit_pieces *P, tc_rng *r, int M, int N, int K, bool scaled)
{
    const int W = P->lanes, Npad = (N + W - 1) / W * W;
    const ptrdiff_t ldc = Npad, ldb = N;
    const float scale = scaled ? 0.0883883476f : 1.0f;
    float *A = malloc(sizeof(float) * (size_t)(M * K > 0 ? M * K : 1));
    float *B = malloc(sizeof(float) * (size_t)(K * N > 0 ? K * N : 1));
    float *C1 = calloc((size_t)(M * ldc), sizeof(float)), *C2 = calloc((size_t)(M * ldc), sizeof(float));
    float *max = malloc(sizeof(float) * (size_t)(Npad + W)), *start = malloc(sizeof(float) * (size_t)Npad);
    for (int k = 0; k < M * K; k++)
        A[k] = value(r, false);
    for (int k = 0; k < K * N; k++)
        B[k] = value(r, false);
    if (K > 0 && M > 1) /* a NaN row and an infinite one */
        A[tc_rng_int(r, 0, M - 1) * K] = NAN, A[tc_rng_int(r, 0, M - 1) * K + K - 1] = INFINITY;
    for (int n = 0; n < Npad + W; n++)
        max[n] = n >= Npad ? fc_bits_f32(SENTINEL) : tc_rng_bool(r, 0.7) ? -INFINITY : tc_rng_bool(r, 0.5) ? NAN : 0.5f;
    memcpy(start, max, sizeof(float) * (size_t)Npad);
    P->gemm(M, N, K, A, K, 1, B, ldb, C1, ldc, false);
    P->gemm_colmax(M, N, K, A, K, 1, B, ldb, C2, ldc, false, max, scale, scaled);
    int64_t wrong = 0, outside = 0;
    for (int n = 0; n < N; n++) {
        float want = start[n];
        for (int m = 0; m < M; m++) {
            const float x = scaled ? C1[m * ldc + n] * scale : C1[m * ldc + n];
            wrong += fc_f32_bits(C2[m * ldc + n]) != fc_f32_bits(x);
            want = x > want ? x : want;
        }
        wrong += fc_f32_bits(max[n]) != fc_f32_bits(want);
    }
    for (int n = Npad; n < Npad + W; n++)
        outside += !is_sentinel(max[n]);
    const bool ok = TC_CHECK(wrong == 0 && outside == 0, "%s gemm epilogue M=%d N=%d K=%d scaled=%d: %lld wrong, %lld written past the maxima",
                             P->isa, M, N, K, scaled, (long long)wrong, (long long)outside);
    free(A), free(B), free(C1), free(C2), free(max), free(start);
    return ok;
}

static void colmax_tiles(const unit_pieces *P)
{
    tc_rng r = tc_rng_seed(6103);
    const int MR = P->tile_rows, NR = P->tile_cols, W = P->lanes;
    int64_t cases = 0, failed = 0;
    for (int M = 1; M <= 2 * MR + 1; M++)
        for (int N = 1; N <= 2 * NR + W + 1; N += (N < NR + W + 1 ? 1 : NR))
            for (int K = 0; K <= 5; K += 5, cases++)
                failed += !one_colmax(P, &r, M, N, K, (M + N + K) % 2);
    failed += !one_colmax(P, &r, 128, 192, 128, true) + !one_colmax(P, &r, 128, 192, 128, false), cases += 2;
    printf("%s gemm epilogue: %lld shapes, %lld failed\n", P->isa, (long long)cases, (long long)failed);
}

/* One bf16 GEMM against a double loop: exact on integers, within the fp32 sums' bound on reals; nothing
 * outside C written. */
static void bf16_gemm_one(const unit_pieces *P, tc_rng *r, int M, int N, int K, int integral)
{
    const bool acc = (M + N + K / 2 + K / 32) % 2;
    const size_t lda = (size_t)K + 32, ldb = 2 * (size_t)N + 16, ldc = (size_t)N + 16;
    uint16_t *A = calloc((size_t)M * lda, 2), *B = calloc((size_t)(K / 2) * ldb, 2);
    float *C = malloc(sizeof(float) * (size_t)(M + 1) * ldc), *a = malloc(sizeof(float) * (size_t)(M * K));
    float *b = malloc(sizeof(float) * (size_t)(K * N));
    for (int m = 0; m < M; m++)
        for (int k = 0; k < K; k++) {
            a[m * K + k] = fc_bf16_to_f32_inline(fc_f32_to_bf16_inline(value(r, integral)));
            A[(size_t)m * lda + k] = fc_f32_to_bf16_inline(a[m * K + k]);
        }
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++) {
            b[k * N + n] = fc_bf16_to_f32_inline(fc_f32_to_bf16_inline(value(r, integral)));
            B[(size_t)(k / 2) * ldb + 2 * (size_t)n + (size_t)(k % 2)] = fc_f32_to_bf16_inline(b[k * N + n]);
        }
    for (size_t k = 0; k < (size_t)(M + 1) * ldc; k++)
        C[k] = fc_bits_f32(SENTINEL);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++)
            C[(size_t)m * ldc + n] = acc ? value(r, integral) : 0.0f;
    double *want = calloc((size_t)(M * N), sizeof *want), *bound = calloc((size_t)(M * N), sizeof *bound);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double s = acc ? C[(size_t)m * ldc + n] : 0.0, mag = fabs(s);
            for (int k = 0; k < K; k++)
                s += (double)a[m * K + k] * b[k * N + n], mag += fabs((double)a[m * K + k] * b[k * N + n]);
            want[m * N + n] = s, bound[m * N + n] = 2.0 * (K + 1) * ldexp(mag, -24);
        }
    P->amx_gemm(M, N, K, A, lda, B, ldb, C, ldc, acc);
    int64_t wrong = 0, outside = 0;
    for (int m = 0; m <= M; m++)
        for (size_t n = 0; n < ldc; n++) {
            const float got = C[(size_t)m * ldc + n];
            if (m == M || n >= (size_t)N)
                outside += !is_sentinel(got);
            else
                wrong += integral ? got != want[m * N + n]
                                  : !(fabs(got - want[m * N + n]) <= bound[m * N + n]);
        }
    TC_CHECK(wrong == 0, "bf16 gemm M=%d N=%d K=%d accumulate=%d %s: %lld wrong", M, N, K, acc,
             integral ? "integers" : "reals", (long long)wrong);
    TC_CHECK(outside == 0, "bf16 gemm M=%d N=%d K=%d: %lld floats outside C written", M, N, K,
             (long long)outside);
    free(A), free(B), free(C), free(a), free(b), free(want), free(bound);
}

/* The bf16 GEMM (amx tiles: 16- and 32-wide blocks in both dimensions, K steps of 32; avx512bf16:
 * 64-column panels and each 16-column remainder; neonbf16: also every row edge of its 8-row tile,
 * one- and two-vector column blocks, and K pairs beyond its steps of 4). */
static void amx_tiles(const unit_pieces *P)
{
    tc_rng r = tc_rng_seed(6102);
    for (int M = 16; M <= 48; M += 16)
        for (int N = 16; N <= 144; N += 16)
            for (int K = 32; K <= 96; K += 32)
                for (int integral = 0; integral < 2; integral++)
                    bf16_gemm_one(P, &r, M, N, K, integral);
    if (strcmp(P->isa, "neonbf16") == 0)
        for (int M = 1; M <= 17; M++)
            for (int N = 4; N <= 20; N += 4)
                for (int K = 2; K <= 14; K += 4)
                    for (int integral = 0; integral < 2; integral++)
                        bf16_gemm_one(P, &r, M, N, K, integral);
}

/* The amx set's backward product from fp32 rows (fc_amx_pack_b, fc_amx_bwd_product): every M, K and n remainder of
 * the 16-row, 32-deep, 16-column tiles.  Y holds bf16 values (parts 2) or fp16 values (parts 3),
 * so the only errors are X's two-part split (2^-16 relative), the dropped lo·lo term (2^-18) and
 * the fp32 sums; the padding of C (rows M..16k, columns n..16k) gets exactly 0 added, and nothing
 * past it is written. */
static void amx_products(const unit_pieces *P)
{
    tc_rng r = tc_rng_seed(6103);
    const int ms[] = {1, 2, 15, 16, 17, 31, 33}, ks[] = {1, 2, 31, 32, 33, 65}, ns[] = {1, 15, 16, 17, 33};
    int64_t shapes = 0;
    for (int parts = 2; parts <= 3; parts++)
        for (size_t a = 0; a < sizeof ms / sizeof ms[0]; a++)
            for (size_t b = 0; b < sizeof ks / sizeof ks[0]; b++)
                for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++, shapes++) {
                    const int M = ms[a], K = ks[b], n = ns[c], Mp = (M + 15) / 16 * 16, np = (n + 15) / 16 * 16;
                    const int64_t ldx = K + 3, ldy = n + 5, ldc = np + 16;
                    float *X = malloc(sizeof(float) * (size_t)(M * ldx)), *Y = malloc(sizeof(float) * (size_t)(K * ldy));
                    float *C = malloc(sizeof(float) * (size_t)((Mp + 1) * ldc)), *C0 = malloc(sizeof(float) * (size_t)((Mp + 1) * ldc));
                    for (int64_t k = 0; k < M * ldx; k++)
                        X[k] = (float)tc_rng_uniform(&r, -2, 2);
                    for (int64_t k = 0; k < K * ldy; k++) {
                        const float y = (float)tc_rng_uniform(&r, -2, 2);
                        Y[k] = parts == 2 ? fc_bf16_to_f32_inline(fc_f32_to_bf16_inline(y)) : fc_f16_to_f32_inline(fc_f32_to_f16_inline(y));
                    }
                    for (int64_t k = 0; k < (Mp + 1) * ldc; k++) {
                        const int64_t m = k / ldc, j = k % ldc;
                        C0[k] = C[k] = m < Mp && j < np ? (float)tc_rng_uniform(&r, -1, 1) : fc_bits_f32(SENTINEL);
                    }
                    P->amx_product(parts, M, K, n, X, ldx, Y, ldy, C, ldc);
                    int64_t wrong = 0, pad = 0, outside = 0;
                    for (int m = 0; m <= Mp; m++)
                        for (int j = 0; j < ldc; j++) {
                            const int64_t at = (int64_t)m * ldc + j;
                            if (m == Mp || j >= np) {
                                outside += !is_sentinel(C[at]);
                            } else if (m >= M || j >= n) {
                                pad += C[at] != C0[at];
                            } else {
                                double want = C0[at], mag = 0;
                                for (int k = 0; k < K; k++)
                                    want += (double)X[m * ldx + k] * Y[k * ldy + j], mag += fabs((double)X[m * ldx + k] * Y[k * ldy + j]);
                                const double bound = (0x1p-15 + parts * (K + 2) * 0x1p-23) * mag + fabs(C0[at]) * 0x1p-22;
                                wrong += !(fabs(C[at] - want) <= bound);
                            }
                        }
                    TC_CHECK(wrong == 0 && pad == 0 && outside == 0,
                             "amx backward product parts=%d M=%d K=%d n=%d: %lld wrong, %lld padding values changed, %lld "
                             "floats past the padding written", parts, M, K, n, (long long)wrong, (long long)pad,
                             (long long)outside);
                    free(X), free(Y), free(C), free(C0);
                }
    printf("amx backward product: %lld shapes\n", (long long)shapes);
}

static void all_gemms(const unit_pieces *P)
{
    edge_tiles(P);
    colmax_tiles(P);
    if (P->amx_gemm)
        amx_tiles(P);
    if (P->amx_product)
        amx_products(P);
}

int main(int argc, char **argv) { return unit_main(argc, argv, "gemm", all_gemms); }
