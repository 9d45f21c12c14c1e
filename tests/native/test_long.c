/* A 128K-token causal run (Sq = Skv = 131072, one head, D = 8): the workspace must be O(tile)
 * (fc_plan_workspace_size < 16 MiB) and the peak RSS must grow by far less than the Sq·Skv bytes
 * a materialised score matrix would need; a few rows are spot-checked against the reference.
 * The portable kernels (scalar, vec16) and sanitizer builds use 16K tokens to stay affordable. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/check.h"
#include "common/rng.h"
#include "common/tolerance.h"
#include "harness.h"
#include "reference/reference.h"

#if defined(FLASHC_SANITIZED) /* set by the build for gcc's and clang's sanitizer builds alike */
#define NT_SANITIZED 1
#else
#define NT_SANITIZED 0
#endif

enum { D = 8 };

static long peak_rss_kib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss; /* KiB on Linux */
}

typedef struct row_ctx {
    int row;
} row_ctx;

/* The reference sees one query row (i = 0) standing for global row `row`: causal hides j > row. */
static bool causal_from_row(void *ctx, int b, int n1, int i, int j) { return j > ((row_ctx *)ctx)->row; }

static void long_causal(void)
{
    /* the portable paths (scalar, vec16) are an order of magnitude slower than AVX2/AVX-512 */
    const bool hw_vector = strcmp(fc_cpu_isa(), "avx2") == 0 || strcmp(fc_cpu_isa(), "avx512") == 0 ||
                           strcmp(fc_cpu_isa(), "avx512bf16") == 0 || strcmp(fc_cpu_isa(), "amx") == 0;
    const bool small = NT_SANITIZED || !hw_vector;
    const int S = small ? 16384 : 131072;
    tc_context("causal Sq = Skv = %d, D = %d", S, D);
    float *q = malloc(sizeof(float) * S * D), *k = malloc(sizeof(float) * S * D);
    float *v = malloc(sizeof(float) * S * D), *out = malloc(sizeof(float) * S * D);
    float *smax = malloc(sizeof(float) * S), *ssum = malloc(sizeof(float) * S);
    tc_rng r = tc_rng_seed(7);
    for (int64_t t = 0; t < (int64_t)S * D; t++) {
        q[t] = (float)tc_rng_uniform(&r, -1, 1);
        k[t] = (float)tc_rng_uniform(&r, -1, 1);
        v[t] = (float)tc_rng_uniform(&r, -1, 1);
        out[t] = NAN;
    }
    memset(smax, 0, sizeof(float) * S), memset(ssum, 0, sizeof(float) * S);

    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = d.kv_heads = 1, d.head_dim = D, d.q_len = d.kv_len = S;
    d.q = fc_tensor_bnsd(q, FC_F32, 1, S, D), d.k = fc_tensor_bnsd(k, FC_F32, 1, S, D);
    d.v = fc_tensor_bnsd(v, FC_F32, 1, S, D), d.out = fc_tensor_bnsd(out, FC_F32, 1, S, D);
    d.vis.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    d.stats = (fc_stats){.max = smax, .sum = ssum};
    fc_plan *plan = NULL;
    if (!TC_CHECK(fc_plan_create(&d, NULL, &plan) == FC_OK, "plan: %s", fc_last_error()))
        return;
    size_t ws_bytes = 0;
    fc_plan_workspace_size(plan, &ws_bytes);
    TC_CHECK(ws_bytes < ((size_t)16 << 20), "workspace %zu bytes is not O(tile) (< 16 MiB)", ws_bytes);
    char *ws = malloc(ws_bytes ? ws_bytes : 1);
    memset(ws, 0, ws_bytes); /* resident before the measurement */

    const long before = peak_rss_kib();
    TC_CHECK(fc_plan_run(plan, NULL, ws, ws_bytes) == FC_OK, "run: %s", fc_last_error());
    const long grown_kib = peak_rss_kib() - before;
    const double quadratic = (double)S * S;
    printf("  S=%d workspace %zu bytes, peak RSS grew %ld KiB (Sq·Skv = %.0f MiB)\n", S, ws_bytes, grown_kib,
           quadratic / 1048576);
    TC_CHECK(grown_kib * 1024.0 < 64.0 * 1048576 && grown_kib * 1024.0 < quadratic / 64,
             "peak RSS grew by %ld KiB during the run", grown_kib);
    fc_plan_destroy(plan);
    free(ws);

    /* spot-check a few rows */
    double *kd = malloc(sizeof(double) * S * D), *vd = malloc(sizeof(double) * S * D);
    for (int64_t t = 0; t < (int64_t)S * D; t++)
        kd[t] = k[t], vd[t] = v[t];
    const int rows[] = {0, 1, 63, 64, 1000, S / 2 + 17, S - 65, S - 1};
    for (unsigned n = 0; n < sizeof rows / sizeof rows[0]; n++) {
        const int i = rows[n];
        double qd[D], o[D], m, l, y[D];
        for (int e = 0; e < D; e++)
            qd[e] = q[(int64_t)i * D + e], y[e] = out[(int64_t)i * D + e];
        row_ctx ctx = {i};
        ref_fwd f = {.B = 1, .N1 = 1, .N2 = 1, .D = D, .Dv = D, .S1cap = 1, .S2cap = S, .q = qd, .k = kd, .v = vd,
                     .scale = 1.0 / sqrt((double)D), .ctx = &ctx, .hidden = causal_from_row};
        ref_forward(&f, o, &m, &l);
        char what[64];
        snprintf(what, sizeof what, "row %d out", i);
        tc_compare(what, y, o, D, tc_tol_out(TC_F32), 1);
        TC_CHECK(tc_close(smax[i], m, tc_tol_max(), 1) && tc_close(ssum[i], l, tc_tol_sum(), 1),
                 "row %d stats (%.9g, %.9g), want (%.9g, %.9g)", i, smax[i], ssum[i], m, l);
    }
    int64_t unwritten = 0;
    for (int64_t t = 0; t < (int64_t)S * D; t++)
        unwritten += isnan(out[t]);
    TC_CHECK(unwritten == 0, "%lld output elements not written", (long long)unwritten);
    free(kd), free(vd), free(q), free(k), free(v), free(out), free(smax), free(ssum);
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_long", long_causal); }
