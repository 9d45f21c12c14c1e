/*
 * ggml's fused CPU flash attention (ggml_flash_attn_ext, what llama.cpp runs) on the shapes of
 * bench/compare_peers.py's table, for in-run ratios beside flashc-bench and bench/peer_torch.py.
 * Not part of the build or CI (they have no ggml): bench/peer_ggml_build.sh fetches ggml, builds
 * its CPU library and this file outside the repository.
 *
 *   peer_ggml --threads 2 --repeat 3 [--filter SUBSTR[$]] [--json]
 *
 * Conventions are flashc-bench's (bench/problem.c, bench/report.c): inputs uniform in [-1, 1),
 * rate = work / min time of the timed runs after one warm-up; forward work 4·Sq·Skv·D per head over
 * visible positions (causal: the Sq(Sq+1)/2 of each head), decode work the bytes of K and V read.
 * Q is fp32 (ggml's only Q type here); K/V are fp32 in the fp32 rows (ggml supports them) and fp16
 * in the decode row, as in llama.cpp's KV cache.  Causal is ggml's way: a -inf upper-triangular
 * fp16 mask.  Layouts are ggml's: q [D, S, N], k/v [D, Skv, Nkv], output [D, N, S].
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-cpu.h"
#include "filter.h"
#include "ggml.h"
#include "timer.h"

clockid_t bench_clock = CLOCK_MONOTONIC; /* timer.h: the wall clock */

typedef struct peer_case {
    const char *name; /* flashc-bench's name of the same case, plus kv= */
    int64_t q_heads, kv_heads, q_len, kv_len, head_dim;
    enum ggml_type kv_type;
    bool causal, decode;
} peer_case;

static const peer_case cases[] = {
    {"fwd f32 B=1 N=8 S=4096 D=128 kv=f32", 8, 8, 4096, 4096, 128, GGML_TYPE_F32, false, false},
    {"fwd f32 B=1 N=8 S=4096 D=128 kv=f32 causal", 8, 8, 4096, 4096, 128, GGML_TYPE_F32, true, false},
    {"fwd f32 B=1 N=8 S=4096 D=128 kv=f16", 8, 8, 4096, 4096, 128, GGML_TYPE_F16, false, false},
    {"fwd f32 B=1 N=8 S=4096 D=128 kv=f16 causal", 8, 8, 4096, 4096, 128, GGML_TYPE_F16, true, false},
    {"decode f32 B=1 N=32/8 Sq=1 Skv=32768 D=128 kv=f16", 32, 8, 1, 32768, 128, GGML_TYPE_F16, false, true},
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static float uniform(void) /* [-1, 1) */
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (float)(rng_state >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

static void fill(struct ggml_tensor *t)
{
    const int64_t n = ggml_nelements(t);
    float *row = malloc((size_t)t->ne[0] * sizeof(float));
    for (int64_t i = 0; i < n; i += t->ne[0]) {
        for (int64_t j = 0; j < t->ne[0]; j++)
            row[j] = uniform();
        if (t->type == GGML_TYPE_F16)
            ggml_fp32_to_fp16_row(row, (ggml_fp16_t *)t->data + i, t->ne[0]);
        else
            memcpy((float *)t->data + i, row, (size_t)t->ne[0] * sizeof(float));
    }
    free(row);
}

/* llama.cpp's causal mask: 0 where key j <= query i, -inf above the diagonal. */
static void fill_causal_mask(struct ggml_tensor *m)
{
    ggml_fp16_t *p = m->data;
    const ggml_fp16_t zero = ggml_fp32_to_fp16(0.0f), minus_inf = ggml_fp32_to_fp16(-INFINITY);
    for (int64_t i = 0; i < m->ne[1]; i++)
        for (int64_t j = 0; j < m->ne[0]; j++)
            p[i * m->ne[0] + j] = j <= i ? zero : minus_inf;
}

typedef struct run_ctx {
    struct ggml_cgraph *graph;
    struct ggml_cplan plan;
} run_ctx;

static bool compute(void *ctx)
{
    run_ctx *r = ctx;
    return ggml_graph_compute(r->graph, &r->plan) == GGML_STATUS_SUCCESS;
}

static double work_of(const peer_case *c)
{
    if (c->decode)
        return 2.0 * (double)(c->kv_heads * c->kv_len * c->head_dim) * (double)ggml_type_size(c->kv_type);
    const double visible = c->causal ? 0.5 * (double)c->q_len * (double)(c->q_len + 1) : (double)c->q_len * (double)c->kv_len;
    return 4.0 * (double)c->q_heads * visible * (double)c->head_dim;
}

static float element(const struct ggml_tensor *t, int64_t i)
{
    return t->type == GGML_TYPE_F16 ? ggml_fp16_to_fp32(((const ggml_fp16_t *)t->data)[i]) : ((const float *)t->data)[i];
}

/* A check that the peer computes attention: the last query row of the last head against a plain
 * double-precision softmax(q·kᵀ·scale)·v; returns the largest absolute difference. */
static double last_row_error(const peer_case *c, const struct ggml_tensor *q, const struct ggml_tensor *k,
                             const struct ggml_tensor *v, const struct ggml_tensor *out)
{
    const int64_t D = c->head_dim, i = c->q_len - 1, h = c->q_heads - 1, hk = h / (c->q_heads / c->kv_heads);
    const int64_t visible = c->causal ? i + 1 : c->kv_len;
    const double scale = 1.0 / sqrt((double)D);
    double *p = malloc((size_t)visible * sizeof(double)), mx = -INFINITY, sum = 0, err = 0;
    for (int64_t j = 0; j < visible; j++) {
        double s = 0;
        for (int64_t d = 0; d < D; d++)
            s += (double)element(q, (h * c->q_len + i) * D + d) * element(k, (hk * c->kv_len + j) * D + d);
        p[j] = s * scale;
        mx = p[j] > mx ? p[j] : mx;
    }
    for (int64_t j = 0; j < visible; j++)
        sum += p[j] = exp(p[j] - mx);
    for (int64_t d = 0; d < D; d++) {
        double o = 0;
        for (int64_t j = 0; j < visible; j++)
            o += p[j] * element(v, (hk * c->kv_len + j) * D + d);
        const double diff = fabs(o / sum - element(out, (i * c->q_heads + h) * D + d));
        err = diff > err || diff != diff ? diff : err;
    }
    free(p);
    return err;
}

/* Builds the one-node graph, times it; returns false (with a message) when it cannot run. */
static bool measure(const peer_case *c, int threads, int repeat, double *min_s, double *median_s, double *err)
{
    const int64_t D = c->head_dim, kv_elems = D * c->kv_len * c->kv_heads;
    const size_t bytes = (size_t)(D * c->q_len * c->q_heads) * sizeof(float) * 2 /* q, out */
                         + 2 * (size_t)kv_elems * ggml_type_size(c->kv_type)
                         + (c->causal ? (size_t)(c->kv_len * c->q_len) * sizeof(ggml_fp16_t) : 0)
                         + 16 * ggml_tensor_overhead() + ggml_graph_overhead() + (1 << 20);
    struct ggml_context *ctx = ggml_init((struct ggml_init_params){.mem_size = bytes, .mem_buffer = NULL, .no_alloc = false});
    if (!ctx) {
        fprintf(stderr, "peer_ggml: %s: out of memory\n", c->name);
        return false;
    }
    struct ggml_tensor *q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, D, c->q_len, c->q_heads);
    struct ggml_tensor *k = ggml_new_tensor_3d(ctx, c->kv_type, D, c->kv_len, c->kv_heads);
    struct ggml_tensor *v = ggml_new_tensor_3d(ctx, c->kv_type, D, c->kv_len, c->kv_heads);
    struct ggml_tensor *mask = c->causal ? ggml_new_tensor_2d(ctx, GGML_TYPE_F16, c->kv_len, c->q_len) : NULL;
    fill(q), fill(k), fill(v);
    if (mask)
        fill_causal_mask(mask);
    struct ggml_tensor *out = ggml_flash_attn_ext(ctx, q, k, v, mask, 1.0f / sqrtf((float)D), 0.0f, 0.0f);
    run_ctx r = {.graph = ggml_new_graph(ctx)};
    ggml_build_forward_expand(r.graph, out);
    r.plan = ggml_graph_plan(r.graph, threads, NULL);
    void *work = r.plan.work_size ? malloc(r.plan.work_size) : NULL;
    r.plan.work_data = work;
    const bench_fn fn = compute;
    void *const arg = &r;
    const bool ok = (!r.plan.work_size || work) && bench_time_interleaved(1, &fn, &arg, 1, repeat, min_s, median_s) < 0;
    if (!ok)
        fprintf(stderr, "peer_ggml: %s: ggml_graph_compute failed\n", c->name);
    else
        *err = last_row_error(c, q, k, v, out);
    free(work);
    ggml_free(ctx);
    return ok;
}

int main(int argc, char **argv)
{
    int threads = 2, repeat = 3;
    const char *filter = "";
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc)
            filter = argv[++i];
        else if (strcmp(argv[i], "--json") == 0)
            json = true;
        else {
            fprintf(stderr, "usage: peer_ggml [--threads N] [--repeat N] [--filter SUBSTR[$]] [--json]\n");
            return 2;
        }
    }
    if (threads < 1 || repeat < 1 || repeat > BENCH_MAX_REPEAT) {
        fprintf(stderr, "peer_ggml: --threads and --repeat want positive counts\n");
        return 2;
    }
    ggml_cpu_init();
    if (!json)
        printf("ggml %s ggml_flash_attn_ext (CPU), %d threads, rate from the min of %d after 1 warm-up\n",
               ggml_version(), threads, repeat);
    int failed = 0, ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const peer_case *c = &cases[i];
        if (!bench_filter_matches(c->name, filter))
            continue;
        double mn, md, err;
        ran++;
        if (!measure(c, threads, repeat, &mn, &md, &err)) {
            failed++;
            continue;
        }
        const double work = work_of(c);
        const char *unit = c->decode ? "GB/s" : "GFLOP/s";
        if (json)
            printf("{\"case\": \"%s\", \"work\": %.17g, \"unit\": \"%s\", \"min_s\": %.6g, \"median_s\": %.6g, "
                   "\"rate\": %.6g, \"threads\": %d, \"ggml\": \"%s\", \"max_abs_err\": %.3g}\n",
                   c->name, work, unit, mn, md, work / mn * 1e-9, threads, ggml_version(), err);
        else
            printf("%-52s %8.1f %s (min %.1f ms, median %.1f ms; last row max|err| %.1e)\n", c->name,
                   work / mn * 1e-9, unit, mn * 1e3, md * 1e3, err);
        fflush(stdout);
    }
    if (!ran)
        fprintf(stderr, "peer_ggml: no case matches '%s'\n", filter);
    return failed || !ran ? 1 : 0;
}
