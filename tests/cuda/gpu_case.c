/* One forward or backward problem on the CPU and the CUDA backends, compared (gpu_case.h). */
#include "gpu_case.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/check.h"
#include "common/halfconv.h"
#include "common/rng.h"
#include "common/tolerance.h"
#include "gpu_kv.h"

bool gc_have_gpu(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

bool gc_require_gpu(const char *test)
{
    if (gc_have_gpu())
        return true;
    printf("%s: no CUDA device; skipped\n", test);
    return false;
}

int gc_main(const char *test, int argc, char **argv, void (*checks)(void), unsigned seed, bool backward)
{
    if (!gc_require_gpu(test))
        return TC_SKIP;
    const int cases = argc > 1 ? atoi(argv[1]) : 60;
    checks();
    gc_sweep(seed, cases, backward);
    return tc_summary(test);
}

void gc_expect_refusal(fc_status st, fc_plan **plan, const char *needle)
{
    TC_CHECK(st == FC_ERR_BACKEND && strstr(fc_last_error(), needle), "%s refused by name: %s (%s)", needle,
             fc_status_name(st), fc_last_error());
    fc_plan_destroy(*plan);
    *plan = NULL;
}

char *gc_env_swap(const char *name, const char *value)
{
    const char *was = getenv(name);
    char *old = was ? strdup(was) : NULL;
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
    return old;
}

void gc_env_restore(const char *name, char *old)
{
    free(gc_env_swap(name, old));
    free(old);
}

void gc_layouts(gc_case c)
{
    gc_run(&c);
    c.layout = GC_BNSD, c.window = GC_CAUSAL, c.align = FC_ALIGN_BOTTOM_RIGHT;
    gc_run(&c);
    c.layout = GC_GAPS, c.window = GC_BAND, c.stats = true;
    gc_run(&c);
    c.layout = GC_ODD_STRIDES, c.window = GC_PREFIX, c.Nkv = 1; /* MQA, element loads */
    gc_run(&c);
}

bool gc_is_device_memory(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return a.type == cudaMemoryTypeDevice;
}

static tc_dtype gc_tc(fc_dtype dt) { return dt == FC_BF16 ? TC_BF16 : dt == FC_F16 ? TC_F16 : TC_F32; }

/* Runs a plan with a workspace of the size it asks for (host or device memory by backend). */
static fc_status gc_plan_run(fc_plan *plan, bool device)
{
    size_t ws = 0;
    fc_plan_workspace_size(plan, &ws);
    void *w = NULL;
    if (ws && (device ? cudaMalloc(&w, ws) != cudaSuccess : !(w = malloc(ws))))
        return FC_ERR_NO_MEMORY;
    const fc_status st = fc_plan_run(plan, NULL, w, ws);
    if (device)
        cudaDeviceSynchronize(), cudaFree(w);
    else
        free(w);
    return st;
}

/* A host buffer and its device twin. */
typedef struct {
    void *h, *d;
    size_t bytes;
} gc_buf;

static gc_buf gc_alloc(size_t bytes)
{
    gc_buf b = {calloc(1, bytes ? bytes : 1), NULL, bytes};
    if (cudaMalloc(&b.d, bytes ? bytes : 1) != cudaSuccess)
        b.d = NULL;
    return b;
}
static void gc_upload(gc_buf *b) { cudaMemcpy(b->d, b->h, b->bytes, cudaMemcpyHostToDevice); }
static void gc_free(gc_buf *b)
{
    free(b->h);
    cudaFree(b->d);
}

/* A sequence operand [.., n heads, .., e features] in the case's layout; returns its elements. */
static fc_tensor gc_tensor(const gc_case *c, int n, int e, int64_t tokens, int64_t *elems)
{
    fc_tensor t = {NULL, c->dt, 0, 0, 0, 1};
    const int S = (int)(tokens / (c->packed ? 1 : c->B)); /* positions per batch (padded) */
    switch (c->layout) {
    case GC_BNSD: t.stride_seq = e, t.stride_head = (int64_t)S * e, t.stride_batch = (int64_t)n * S * e; break;
    case GC_BSND: t.stride_head = e, t.stride_seq = (int64_t)n * e, t.stride_batch = (int64_t)S * n * e; break;
    case GC_GAPS: t.stride_head = e + 8, t.stride_seq = (int64_t)n * (e + 8) + 16, t.stride_batch = S * t.stride_seq + 8; break;
    case GC_ODD_STRIDES: t.stride_head = e + 3, t.stride_seq = (int64_t)n * (e + 3) + 1, t.stride_batch = S * t.stride_seq + 5; break;
    }
    if (c->packed)
        *elems = tokens * t.stride_seq + (c->layout == GC_BNSD ? (int64_t)n * tokens * e : 0);
    else
        *elems = (int64_t)c->B * t.stride_batch + 16;
    if (c->packed && c->layout == GC_BNSD) /* packed BNSD is head-major over all tokens */
        t.stride_head = tokens * e, t.stride_seq = e, *elems = (int64_t)n * tokens * e;
    return t;
}

/* NaN in the rows [len[b], S) of every batch of a padded operand (t's strides, n heads, e features). */
static void gc_poison_padding(gc_buf *b, const fc_tensor *t, fc_dtype dt, int B, int S, const int64_t *len, int n, int e)
{
    for (int x = 0; x < B; x++)
        for (int64_t s = len[x]; s < S; s++)
            for (int h = 0; h < n; h++)
                for (int f = 0; f < e; f++)
                    tc_store(gc_tc(dt), b->h, x * t->stride_batch + s * t->stride_seq + h * t->stride_head + f, NAN);
}

static void gc_fill(tc_rng *r, gc_buf *b, fc_dtype dt, double lo, double hi)
{
    const int64_t n = (int64_t)(b->bytes / fc_dtype_size(dt));
    for (int64_t i = 0; i < n; i++)
        tc_store(gc_tc(dt), b->h, i, tc_rng_uniform(r, lo, hi));
}

/* M of a gradient (semantics §0.4): max(1, max |r|) over the finite elements (gaps are poison). */
static double gc_grad_scale(tc_dtype t, const void *cpu, int64_t n)
{
    double M = 1.0;
    for (int64_t i = 0; i < n; i++) {
        const double r = fabs(tc_load(t, cpu, i));
        if (isfinite(r) && r > M)
            M = r;
    }
    return M;
}

/* Equal bits, or both finite and within tol (atol scaled by M); returns the number of failures. */
int64_t gc_compare(const char *what, tc_dtype t, const void *gpu, const void *cpu, int64_t n, tc_tol tol, double M)
{
    int64_t bad = 0;
    const size_t es = tc_dtype_size(t);
    for (int64_t i = 0; i < n; i++) {
        if (memcmp((const char *)gpu + i * es, (const char *)cpu + i * es, es) == 0)
            continue;
        const double y = tc_load(t, gpu, i), r = tc_load(t, cpu, i);
        if ((isfinite(y) && isfinite(r) && fabs(y - r) <= 2 * (tol.atol * M + tol.rtol * fabs(r))) || (isnan(y) && isnan(r)))
            continue;
        if (bad++ < 5)
            TC_CHECK(false, "%s[%lld]: gpu %.8g, cpu %.8g", what, (long long)i, y, r);
    }
    TC_CHECK(bad == 0, "%s: %lld of %lld elements differ", what, (long long)bad, (long long)n);
    return bad;
}

/* Plans desc (grads: its backward) with FC_BACKEND_DEFAULT, which must pick CUDA from the
 * device pointers, and runs it to completion. */
static fc_status gc_gpu_run(const fc_attention_desc *desc, const fc_attention_grads *grads)
{
    fc_plan *plan = NULL;
    fc_options def = {.backend = FC_BACKEND_DEFAULT};
    fc_status st = grads ? fc_plan_create_backward(desc, grads, &def, &plan) : fc_plan_create(desc, &def, &plan);
    TC_CHECK(st == FC_OK, "GPU plan: %s (%s)", fc_status_name(st), fc_last_error());
    if (st == FC_OK) {
        st = gc_plan_run(plan, true);
        TC_CHECK(st == FC_OK, "GPU run: %s (%s)", fc_status_name(st), fc_last_error());
        const cudaError_t e = cudaDeviceSynchronize();
        TC_CHECK(e == cudaSuccess, "GPU kernel: %s", cudaGetErrorString(e));
        st = e == cudaSuccess ? st : FC_ERR_BACKEND;
    }
    fc_plan_destroy(plan);
    return st;
}

/* A used block-table entry out of range (in the last batch): the CPU refuses the run; the GPU run
 * leaves that batch's rows unwritten (the CUDA-core kernel writes nothing at all, the tensor-core
 * kernel the other batches) and reports the entry (FC_ERR_INVALID_ARG) once: to
 * fc_plan_check_runs (which waits for it), else to the plan's next run; the one-call form waits
 * and returns it. */
static void gc_bad_entry(fc_attention_desc *d, fc_attention_desc *g, gc_kv_state *kvs, int64_t entry, gc_buf *o)
{
    kvs->table_h[entry] = (int32_t)kvs->blocks + 7;
    gc_kv_upload_table(kvs);
    fc_options cpu = {.backend = FC_BACKEND_CPU};
    fc_plan *plan = NULL;
    fc_status st = fc_plan_create(d, &cpu, &plan);
    if (st == FC_OK)
        st = gc_plan_run(plan, false);
    fc_plan_destroy(plan);
    TC_CHECK(st == FC_ERR_INVALID_ARG, "CPU refuses the bad entry: %s (%s)", fc_status_name(st), fc_last_error());
    plan = NULL;
    fc_options def = {.backend = FC_BACKEND_DEFAULT};
    st = fc_plan_create(g, &def, &plan);
    TC_CHECK(st == FC_OK, "GPU plan: %s (%s)", fc_status_name(st), fc_last_error());
    cudaMemset(o->d, 0xFF, o->bytes);
    if (st == FC_OK) {
        size_t bytes = 0;
        fc_plan_workspace_size(plan, &bytes);
        void *w = NULL;
        if (bytes && cudaMalloc(&w, bytes) != cudaSuccess)
            w = NULL;
        st = fc_plan_run(plan, NULL, w, bytes); /* queued; the GPU finds the entry */
        TC_CHECK(st == FC_OK, "GPU run with a bad entry is queued: %s (%s)", fc_status_name(st), fc_last_error());
        st = fc_plan_check_runs(plan, true);
        TC_CHECK(st == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "fc_plan_check_runs: ") &&
                     strstr(fc_last_error(), "block table entry"),
                 "fc_plan_check_runs waits for the run and reports it: %s (%s)", fc_status_name(st), fc_last_error());
        st = fc_plan_check_runs(plan, false);
        TC_CHECK(st == FC_OK, "reported once: %s (%s)", fc_status_name(st), fc_last_error());
        cudaFree(w);
        st = gc_plan_run(plan, true); /* nothing left to report: queued, and finds the entry again */
        TC_CHECK(st == FC_OK, "GPU run with a bad entry is queued: %s (%s)", fc_status_name(st), fc_last_error());
        st = gc_plan_run(plan, true);
        TC_CHECK(st == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "block table entry"), "the next run reports it: %s (%s)",
                 fc_status_name(st), fc_last_error());
    }
    fc_plan_destroy(plan);
    st = fc_attention(g);
    TC_CHECK(st == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "fc_attention: ") && strstr(fc_last_error(), "block table entry"),
             "the one-call form returns what its run found: %s (%s)", fc_status_name(st), fc_last_error());
    unsigned char *h = malloc(o->bytes);
    cudaMemcpy(h, o->d, o->bytes, cudaMemcpyDeviceToHost);
    size_t touched = 0;
    const size_t from = (size_t)(g->batch - 1) * (size_t)g->out.stride_batch * fc_dtype_size(g->out.dtype);
    for (size_t i = from; i < o->bytes; i++)
        touched += h[i] != 0xFF;
    TC_CHECK(touched == 0, "a run with a bad block-table entry leaves that batch unwritten (%zu bytes written)", touched);
    free(h);
}

/* int8 outputs: within twice the absolute tolerance of 1 (semantics §0.4). */
static int64_t gc_compare_i8(const int8_t *gpu, const int8_t *cpu, int64_t n)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (abs(gpu[i] - cpu[i]) > 2 && bad++ < 5)
            TC_CHECK(false, "out[%lld]: gpu %d, cpu %d", (long long)i, gpu[i], cpu[i]);
    TC_CHECK(bad == 0, "out (int8): %lld of %lld elements differ", (long long)bad, (long long)n);
    return bad;
}

/* The forward on the GPU (twice, poisoned outputs) against the CPU's results in o, smax, ssum. */
static void gc_forward(const gc_case *c, const fc_attention_desc *g, gc_buf *o, gc_buf *smax, gc_buf *ssum, int64_t no, int64_t ns,
                       void **keep)
{
    void *ho = malloc(o->bytes), *hm = malloc(smax->bytes), *hs = malloc(ssum->bytes), *ho2 = malloc(o->bytes);
    fc_status st = FC_OK;
    for (int rep = 0; rep < 2 && st == FC_OK; rep++) {
        cudaMemset(o->d, 0xFF, o->bytes), cudaMemset(smax->d, 0xFF, smax->bytes), cudaMemset(ssum->d, 0xFF, ssum->bytes);
        st = gc_gpu_run(g, NULL);
        cudaMemcpy(rep ? ho2 : ho, o->d, o->bytes, cudaMemcpyDeviceToHost);
        if (rep == 0) {
            cudaMemcpy(hm, smax->d, smax->bytes, cudaMemcpyDeviceToHost);
            cudaMemcpy(hs, ssum->d, ssum->bytes, cudaMemcpyDeviceToHost);
        }
    }
    if (st == FC_OK) {
        if (g->out.dtype == FC_I8)
            gc_compare_i8(ho, o->h, no);
        else
            gc_compare("out", gc_tc(g->out.dtype), ho, o->h, no, tc_tol_out(gc_tc(g->out.dtype)), 1.0);
        TC_CHECK(memcmp(ho, ho2, o->bytes) == 0, "two GPU runs are bit-identical");
        if (c->stats) {
            gc_compare("stats max", TC_F32, hm, smax->h, ns, tc_tol_max(), 1.0);
            gc_compare("stats sum", TC_F32, hs, ssum->h, ns, tc_tol_sum(), 1.0);
        }
    }
    if (keep && st == FC_OK)
        *keep = ho, ho = NULL;
    free(ho), free(hm), free(hs), free(ho2);
}

/* The backward of the forward just run on the CPU (its output and statistics feed both backends):
 * a random output gradient, the CPU's gradients as the oracle, the GPU's twice from poisoned
 * buffers (gaps must stay poison, as on the CPU) and bitwise equal.  n: elements of q, k, v, out,
 * q_rope, k_rope.  keep: the first GPU run's dq, dk, dv, dsink (and dq_rope, dk_rope) bytes back
 * to back (malloc'd), *kept their size. */
static void gc_backward(const gc_case *c, const fc_attention_desc *d, const fc_attention_desc *g, gc_buf *o, gc_buf *smax,
                        gc_buf *ssum, const int64_t n[4], tc_rng *r, void **keep, size_t *kept)
{
    gc_upload(o), gc_upload(smax), gc_upload(ssum);
    const fc_dtype gdt = c->grad_f32 ? FC_F32 : c->dt;
    /* fp32 products (fp32 operands or gradients) are the dq-recompute path's: refused by name with
     * rope features, and under FLASHC_CUDA_BWD=fused */
    const char *path = getenv("FLASHC_CUDA_BWD");
    const bool f32 = gdt == FC_F32;
    const char *refused = !f32 ? NULL : c->Dr ? "rope features (Dr > 0) with fp32 gradients"
                                      : path && strcmp(path, "fused") == 0 ? "no fp32 products" : NULL;
    const size_t es = fc_dtype_size(c->dt), ges = fc_dtype_size(gdt);
    gc_buf dout = gc_alloc(n[3] * es);
    gc_fill(r, &dout, c->dt, -1, 1);
    for (int b = 0; c->nan_query_head && !c->packed && c->Sq > 1 && b < c->B; b++)
        tc_store(gc_tc(c->dt), dout.h, b * d->out.stride_batch + d->out.stride_seq, INFINITY);
    gc_upload(&dout);
    enum { NG = 6 };
    gc_buf gr[NG] = {gc_alloc(n[0] * ges), gc_alloc(n[1] * ges), gc_alloc(n[2] * ges), gc_alloc(c->Nq * sizeof(float)),
                     gc_alloc(n[4] * ges),  gc_alloc(n[5] * ges)};
    const int64_t count[NG] = {n[0], n[1], n[2], c->sink ? c->Nq : 0, n[4], n[5]};
    const char *name[NG] = {"dq", "dk", "dv", "dsink", "dq_rope", "dk_rope"};
    fc_attention_grads hg = {0};
    hg.d_out = d->out, hg.d_out.data = dout.h;
    hg.dq = d->q, hg.dk = d->k, hg.dv = d->v;
    hg.dq.dtype = hg.dk.dtype = hg.dv.dtype = gdt;
    hg.dq.data = gr[0].h, hg.dk.data = gr[1].h, hg.dv.data = gr[2].h;
    hg.dsink = c->sink ? gr[3].h : NULL;
    if (c->Dr) {
        hg.dq_rope = d->q_rope, hg.dk_rope = d->k_rope;
        hg.dq_rope.dtype = hg.dk_rope.dtype = gdt;
        hg.dq_rope.data = gr[4].h, hg.dk_rope.data = gr[5].h;
    }
    fc_attention_grads dg = hg;
    dg.d_out.data = dout.d, dg.dq.data = gr[0].d, dg.dk.data = gr[1].d, dg.dv.data = gr[2].d;
    dg.dsink = c->sink ? gr[3].d : NULL;
    if (c->Dr)
        dg.dq_rope.data = gr[4].d, dg.dk_rope.data = gr[5].d;

    for (int x = 0; x < NG; x++)
        memset(gr[x].h, 0xFF, gr[x].bytes);
    fc_options cpu = {.backend = FC_BACKEND_CPU};
    fc_plan *cplan = NULL;
    fc_status st = fc_plan_create_backward(d, &hg, &cpu, &cplan);
    if (st == FC_OK)
        st = gc_plan_run(cplan, false);
    fc_plan_destroy(cplan);
    TC_CHECK(st == FC_OK, "CPU backward: %s (%s)", fc_status_name(st), fc_last_error());

    if (st == FC_OK && refused) {
        fc_plan *plan = NULL;
        fc_options def = {.backend = FC_BACKEND_DEFAULT};
        gc_expect_refusal(fc_plan_create_backward(g, &dg, &def, &plan), &plan, refused);
        st = FC_ERR_BACKEND; /* nothing to compare */
    }
    void *got[2][NG];
    for (int rep = 0; rep < 2; rep++)
        for (int x = 0; x < NG; x++)
            got[rep][x] = malloc(gr[x].bytes ? gr[x].bytes : 1);
    for (int rep = 0; rep < 2 && st == FC_OK; rep++) {
        for (int x = 0; x < NG; x++)
            cudaMemset(gr[x].d, 0xFF, gr[x].bytes);
        st = gc_gpu_run(g, &dg);
        for (int x = 0; x < NG; x++)
            cudaMemcpy(got[rep][x], gr[x].d, gr[x].bytes, cudaMemcpyDeviceToHost);
    }
    size_t all = 0;
    for (int x = 0; x < NG; x++)
        all += gr[x].bytes;
    if (keep && st == FC_OK && (*keep = malloc(all))) {
        *kept = all, all = 0;
        for (int x = 0; x < NG; x++)
            memcpy((char *)*keep + all, got[0][x], gr[x].bytes), all += gr[x].bytes;
    }
    for (int x = 0; x < NG && st == FC_OK; x++) {
        const tc_dtype t = x == 3 ? TC_F32 : gc_tc(gdt);
        if (x >= 4 && !c->Dr)
            continue;
        gc_compare(name[x], t, got[0][x], gr[x].h, count[x], tc_tol_out(t), gc_grad_scale(t, gr[x].h, count[x]));
        TC_CHECK(memcmp(got[0][x], got[1][x], gr[x].bytes) == 0, "%s: two GPU runs are bit-identical", name[x]);
    }
    for (int x = 0; x < NG; x++)
        free(got[0][x]), free(got[1][x]), gc_free(&gr[x]);
    gc_free(&dout);
}

/* A random case over every feature at odd sizes. */
static gc_case gc_random(tc_rng *r)
{
    gc_case c = {.B = 2, .Nq = 4, .Nkv = 2, .Sq = 77, .Skv = 93, .layout = GC_BSND};
    c.D = (int)tc_rng_int(r, 1, 256), c.dt = tc_rng_bool(r, 0.5) ? FC_BF16 : FC_F16;
    c.Dv = tc_rng_bool(r, 0.7) ? c.D : (int)tc_rng_int(r, 1, 256);
    c.B = (int)tc_rng_int(r, 1, 4), c.Nkv = (int)tc_rng_int(r, 1, 3), c.Nq = c.Nkv * (int)tc_rng_int(r, 1, 3);
    c.Sq = (int)tc_rng_int(r, 1, 300), c.Skv = (int)tc_rng_int(r, 1, 300);
    c.layout = (gc_layout)tc_rng_int(r, 0, 3), c.packed = tc_rng_bool(r, 0.3);
    c.varlen = c.packed || tc_rng_bool(r, 0.3);
    c.window = (gc_window)tc_rng_int(r, 0, 3), c.align = (fc_align)tc_rng_int(r, 0, 1);
    c.q_start = (int)tc_rng_int(r, 0, 50), c.kv_start = (int)tc_rng_int(r, 0, 50);
    c.mask = tc_rng_bool(r, 0.2), c.bias = tc_rng_bool(r, 0.2), c.bias_before = tc_rng_bool(r, 0.5);
    c.alibi = tc_rng_bool(r, 0.2), c.sink = tc_rng_bool(r, 0.2), c.dropout = tc_rng_bool(r, 0.2);
    c.stats = tc_rng_bool(r, 0.5), c.softcap = tc_rng_bool(r, 0.2) ? 10.0f : 0.0f;
    c.grad_f32 = tc_rng_bool(r, 0.2);
    c.philox = c.dropout && c.D % 2 == 0; /* about half the dropout cases */
    c.dropout = c.dropout && !c.philox;
    return c;
}

static gc_case gc_random_plain(tc_rng *r)
{
    static const int dims[] = {8, 16, 32, 48, 64, 80, 96, 112, 128, 136, 160, 192, 200, 248, 256};
    const int nd = (int)(sizeof dims / sizeof dims[0]);
    gc_case c = {.layout = GC_BSND};
    c.D = dims[tc_rng_int(r, 0, nd - 1)], c.dt = tc_rng_bool(r, 0.5) ? FC_BF16 : FC_F16;
    c.Dv = tc_rng_bool(r, 0.7) ? c.D : dims[tc_rng_int(r, 0, nd - 1)];
    c.B = (int)tc_rng_int(r, 1, 4), c.Nkv = (int)tc_rng_int(r, 1, 3), c.Nq = c.Nkv * (int)tc_rng_int(r, 1, 4);
    c.Sq = (int)tc_rng_int(r, 1, 700), c.Skv = (int)tc_rng_int(r, 1, 700);
    c.layout = (gc_layout)tc_rng_int(r, 0, 2), c.packed = tc_rng_bool(r, 0.3); /* no odd strides */
    c.varlen = c.packed || tc_rng_bool(r, 0.4);
    c.pad_nan = c.varlen && !c.packed && tc_rng_bool(r, 0.5);
    c.window = (gc_window)tc_rng_int(r, 0, 3), c.align = (fc_align)tc_rng_int(r, 0, 1);
    c.q_start = (int)tc_rng_int(r, 0, 50), c.kv_start = (int)tc_rng_int(r, 0, 50);
    c.stats = tc_rng_bool(r, 0.5);
    return c;
}

void gc_sweep_plain(unsigned seed, int cases)
{
    tc_rng r = tc_rng_seed(seed);
    for (int n = 0; n < cases; n++) {
        gc_case c = gc_random_plain(&r);
        c.seed = seed * 1000u + (unsigned)n;
        gc_run(&c);
    }
}

void gc_sm90_class_cases(gc_case base, int sq, int skv)
{
    gc_case c = base;
    c.Sq = sq, c.Skv = skv, c.Nq = 8, c.Nkv = 2;
    gc_run(&c);
    c.window = GC_CAUSAL, c.align = FC_ALIGN_BOTTOM_RIGHT, c.stats = true, c.layout = GC_BNSD;
    gc_run(&c);
    c = base;
    c.packed = c.varlen = true, c.B = 5, c.Sq = 400, c.Skv = 333, c.window = GC_BAND;
    gc_run(&c);
    c.packed = false, c.pad_nan = true, c.window = GC_FULL, c.layout = GC_GAPS;
    gc_run(&c);
}

void gc_sweep_plain_backward(unsigned seed, int cases)
{
    tc_rng r = tc_rng_seed(seed);
    for (int n = 0; n < cases; n++) {
        gc_case c = gc_random_plain(&r);
        c.D = c.D > 128 ? c.D / 16 * 8 : c.D, c.Dv = c.Dv > 128 ? c.Dv / 16 * 8 : c.Dv; /* multiples of 8 (16-byte rows) */
        c.backward = true, c.seed = seed * 1000u + (unsigned)n;
        gc_run(&c);
    }
}

void gc_sweep_rope(unsigned seed, int cases, bool backward)
{
    tc_rng r = tc_rng_seed(seed);
    for (int n = 0; n < cases; n++) {
        gc_case c = gc_random(&r);
        c.dropout = c.dropout || c.philox; /* the rope kernels do not generate dropout (refused by name): */
        c.philox = false;                  /* the caller's bits instead */
        c.D = (int)tc_rng_int(&r, 1, 224), c.Dr = (int)tc_rng_int(&r, 1, 256 - c.D);
        if (tc_rng_bool(&r, 0.5)) /* the MLA forms' multiples of 8 (cp.async loads) */
            c.D = c.D < 8 ? 8 : c.D / 8 * 8, c.Dr = c.D + (c.Dr + 7) / 8 * 8 > 256 ? 256 - c.D : (c.Dr + 7) / 8 * 8;
        c.Dv = tc_rng_bool(&r, 0.5) ? c.D : (int)tc_rng_int(&r, 1, 256);
        c.backward = backward, c.seed = seed * 1000u + (unsigned)n;
        gc_run(&c);
    }
}

void gc_sweep_f32(unsigned seed, int cases, bool backward)
{
    tc_rng r = tc_rng_seed(seed);
    for (int n = 0; n < cases; n++) {
        gc_case c = gc_random(&r);
        c.dt = FC_F32;
        c.backward = backward, c.seed = seed * 1000u + (unsigned)n;
        gc_run(&c);
    }
}

void gc_sweep(unsigned seed, int cases, bool backward)
{
    tc_rng r = tc_rng_seed(seed);
    for (int n = 0; n < cases; n++) {
        gc_case c = gc_random(&r);
        c.backward = backward, c.seed = seed * 1000u + (unsigned)n;
        gc_run(&c);
    }
}

bool gc_run(const gc_case *c) { return gc_run_out(c, NULL, NULL); }

bool gc_run_out(const gc_case *c, void **gpu_out, size_t *gpu_bytes)
{
    tc_context("B=%d Nq=%d Nkv=%d Sq=%d Skv=%d D=%d+%d Dv=%d %s layout=%d packed=%d varlen=%d win=%d align=%d start=%d/%d "
               "mask=%d bias=%d/%d alibi=%d sink=%d drop=%d%s stats=%d cap=%g kv(page=%d/%d list=%d pad=%d i8=%d/%d/%d out_i8=%d out_f32=%d) "
               "pad_nan=%d nan_tail=%d/%d/%d near_max=%d seed=%u%s",
               c->B, c->Nq, c->Nkv, c->Sq, c->Skv, c->D, c->Dr, c->Dv, c->dt == FC_BF16 ? "bf16" : c->dt == FC_F16 ? "fp16" : "fp32", c->layout, c->packed,
               c->varlen, c->window, c->align, c->q_start, c->kv_start, c->mask, c->bias, c->bias_before, c->alibi, c->sink,
               c->dropout || c->philox, c->philox ? "(philox)" : "", c->stats, c->softcap, c->kv.page, c->kv.heads_major, c->kv.list, c->kv.left_pad, c->kv.i8,
               c->kv.i8_per_tensor, c->kv.i8_offset, c->kv.out_i8, c->kv.out_f32, c->pad_nan, c->nan_tail, c->nan_key_tail, c->nan_query_head, c->near_max, c->seed,
               c->backward ? (c->grad_f32 ? " backward fp32-grads" : " backward") : "");
    if (gpu_out)
        *gpu_out = NULL, *gpu_bytes = 0;
    const int fails0 = tc_failures();
    tc_rng r = tc_rng_seed(c->seed);
    int64_t qlen[64], kvlen[64], prefix[64], tq = 0, tk = 0, keep_bits = 0;
    for (int b = 0; b < c->B; b++) {
        qlen[b] = c->varlen ? tc_rng_int(&r, 0, c->Sq) : c->Sq;
        kvlen[b] = c->varlen ? tc_rng_int(&r, 1, c->Skv) : c->Skv;
        prefix[b] = tc_rng_int(&r, 0, kvlen[b]);
        tq += qlen[b], tk += kvlen[b];
        keep_bits += (int64_t)c->Nq * qlen[b] * kvlen[b];
    }
    const int64_t tokq = c->packed ? tq : (int64_t)c->B * c->Sq, tokk = c->packed ? tk : (int64_t)c->B * c->Skv;
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = c->B, d.q_heads = c->Nq, d.kv_heads = c->Nkv, d.head_dim = c->D, d.v_head_dim = c->Dv;
    d.q_len = c->Sq, d.kv_len = c->Skv, d.packed = c->packed;
    if (c->varlen || c->packed)
        d.q_lens = qlen, d.kv_lens = kvlen;
    int64_t nq, nk, nv, no;
    d.q = gc_tensor(c, c->Nq, c->D, tokq, &nq);
    d.k = gc_tensor(c, c->Nkv, c->D, tokk, &nk);
    d.v = gc_tensor(c, c->Nkv, c->Dv, tokk, &nv);
    d.out = gc_tensor(c, c->Nq, c->Dv, tokq, &no);
    const size_t es = fc_dtype_size(c->dt);
    const fc_dtype odt = c->kv.out_i8 ? FC_I8 : c->kv.out_f32 ? FC_F32 : c->dt;
    d.out.dtype = odt;
    gc_buf q = gc_alloc(nq * es), k = gc_alloc(nk * es), v = gc_alloc(nv * es), o = gc_alloc(no * fc_dtype_size(odt));
    int64_t nqr = 0, nkr = 0;
    if (c->Dr) {
        d.rope_dim = c->Dr;
        d.q_rope = gc_tensor(c, c->Nq, c->Dr, tokq, &nqr);
        d.k_rope = gc_tensor(c, c->Nkv, c->Dr, tokk, &nkr);
    }
    gc_buf qr = gc_alloc(nqr * es), kr = gc_alloc(nkr * es);
    gc_buf qs = gc_alloc((size_t)c->Nq * c->Dv * 4), qo = gc_alloc((size_t)c->Nq * c->Dv * 4);
    for (int64_t i = 0; c->kv.out_i8 && i < (int64_t)c->Nq * c->Dv; i++) /* int8 output: |out|·scale spans the int8 range */
        ((float *)qs.h)[i] = (float)tc_rng_uniform(&r, 40, 120), ((float *)qo.h)[i] = (float)tc_rng_int(&r, -4, 4);
    d.q.data = q.h, d.k.data = k.h, d.v.data = v.h, d.out.data = o.h; /* the CPU run's; the GPU's below */
    gc_fill(&r, &q, c->dt, -2, 2), gc_fill(&r, &k, c->dt, -2, 2), gc_fill(&r, &v, c->dt, -1, 1);
    if (c->Dr) {
        gc_fill(&r, &qr, c->dt, -2, 2), gc_fill(&r, &kr, c->dt, -2, 2);
        d.q_rope.data = qr.h, d.k_rope.data = kr.h;
    }
    for (int b = 0; c->nan_tail && !c->packed && b < c->B; b++)
        for (int n = 0; n < c->Nkv; n++)
            tc_store(gc_tc(c->dt), v.h, b * d.v.stride_batch + (kvlen[b] - 1) * d.v.stride_seq + n * d.v.stride_head, NAN);
    for (int b = 0; c->nan_key_tail && !c->packed && b < c->B; b++)
        for (int n = 0; n < c->Nkv; n++)
            tc_store(gc_tc(c->dt), k.h, b * d.k.stride_batch + (kvlen[b] - 1) * d.k.stride_seq + n * d.k.stride_head, NAN);
    for (int b = 0; c->nan_query_head && !c->packed && b < c->B; b++)
        tc_store(gc_tc(c->dt), q.h, b * d.q.stride_batch, NAN);
    for (int b = 0; c->near_max && !c->packed && b < c->B; b++) {
        for (int i = 0; i < 3 && i < qlen[b]; i++)
            tc_store(gc_tc(c->dt), q.h, b * d.q.stride_batch + i * d.q.stride_seq, i % 2 ? FLT_MAX : -FLT_MAX);
        for (int n = 0; n < c->Nkv; n++) {
            for (int j = 0; j < kvlen[b]; j++)
                tc_store(gc_tc(c->dt), k.h, b * d.k.stride_batch + j * d.k.stride_seq + n * d.k.stride_head,
                         ldexp(j % 3 ? 1.0 + j / 64.0 : -1.0 - j / 64.0, -125));
            if (kvlen[b] > 5)
                tc_store(gc_tc(c->dt), v.h, b * d.v.stride_batch + 5 * d.v.stride_seq + n * d.v.stride_head, -FLT_MAX);
        }
    }
    if (c->pad_nan && !c->packed) {
        gc_poison_padding(&q, &d.q, c->dt, c->B, c->Sq, qlen, c->Nq, c->D);
        gc_poison_padding(&k, &d.k, c->dt, c->B, c->Skv, kvlen, c->Nkv, c->D);
        gc_poison_padding(&v, &d.v, c->dt, c->B, c->Skv, kvlen, c->Nkv, c->Dv);
        if (c->Dr) {
            gc_poison_padding(&qr, &d.q_rope, c->dt, c->B, c->Sq, qlen, c->Nq, c->Dr);
            gc_poison_padding(&kr, &d.k_rope, c->dt, c->B, c->Skv, kvlen, c->Nkv, c->Dr);
        }
    }
    const int64_t mn = (int64_t)c->B * c->Nq * c->Sq * c->Skv;
    gc_buf mask = gc_alloc(c->mask ? mn : 0), bias = gc_alloc(c->bias ? mn * es : 0);
    gc_buf slopes = gc_alloc(c->Nq * sizeof(float)), sink = gc_alloc(c->Nq * sizeof(float));
    gc_buf bits = gc_alloc((size_t)(keep_bits + 7) / 8 + 1);
    const int64_t ns = (int64_t)c->B * c->Nq * c->Sq * 8;
    gc_buf smax = gc_alloc(ns * 4), ssum = gc_alloc(ns * 4);
    for (int64_t i = 0; c->mask && i < mn; i++)
        ((uint8_t *)mask.h)[i] = tc_rng_bool(&r, 0.2);
    if (c->bias)
        gc_fill(&r, &bias, c->dt, -1, 1);
    for (int n = 0; n < c->Nq; n++) {
        ((float *)slopes.h)[n] = (float)pow(2.0, -(n + 1) * 8.0 / c->Nq);
        ((float *)sink.h)[n] = (float)tc_rng_uniform(&r, -1, 2);
    }
    for (size_t i = 0; i < bits.bytes; i++)
        ((uint8_t *)bits.h)[i] = (uint8_t)tc_rng_u64(&r);
    gc_buf *in[] = {&q, &k, &v, &mask, &bias, &slopes, &sink, &bits, &qs, &qo, &qr, &kr};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        gc_upload(in[i]);

    if (c->window == GC_CAUSAL)
        d.vis.window = fc_window_causal(c->align);
    else if (c->window == GC_BAND)
        d.vis.window = fc_window_band(c->Skv / 3, c->Skv / 5, c->align);
    else if (c->window == GC_PREFIX)
        d.vis.window = fc_window_causal(c->align), d.vis.prefix = prefix;
    d.vis.q_start = c->q_start, d.vis.kv_start = c->kv_start;
    if (c->mask)
        d.vis.mask = (fc_mask){mask.h, FC_U8, (int64_t)c->Nq * c->Sq * c->Skv, (int64_t)c->Sq * c->Skv, c->Skv, 1, false};
    if (c->bias)
        d.bias = (fc_bias){bias.h, c->dt, c->bias_before ? FC_BIAS_BEFORE_SCALE : FC_BIAS_AFTER_SCALE, c->Sq, c->Skv,
                           (int64_t)c->Nq * c->Sq * c->Skv, (int64_t)c->Sq * c->Skv, c->Skv, 1, false, false};
    if (c->alibi)
        d.alibi = (fc_alibi){slopes.h, 0, 1, false, c->align == FC_ALIGN_BOTTOM_RIGHT}; /* ALiBi aligned as the window */
    d.softcap = c->softcap;
    if (c->sink)
        d.sink = sink.h;
    if (c->dropout)
        d.dropout = (fc_dropout){.keep_bits = bits.h, .keep_bits_bytes = bits.bytes, .keep_prob = 0.8};
    if (c->philox) /* a seed with both halves set, an offset that makes the counter's high word move */
        d.dropout = (fc_dropout){.generate = true, .seed = 0x9E3779B97F4A7C15ull ^ c->seed, .offset = 0xFFFFFFFFull - 40 + c->seed % 97,
                                 .keep_prob = 0.8};
    if (c->stats || c->backward) /* the backward reads the CPU forward's */
        d.stats = (fc_stats){smax.h, ssum.h, FC_STATS_HEAD_MAJOR, 8};

    /* GPU: the same description on the device twins; DEFAULT must pick CUDA from the pointers. */
    fc_attention_desc g = d;
    g.q.data = q.d, g.k.data = k.d, g.v.data = v.d, g.out.data = o.d;
    if (c->Dr) g.q_rope.data = qr.d, g.k_rope.data = kr.d;
    if (c->mask) g.vis.mask.data = mask.d;
    if (c->bias) g.bias.data = bias.d;
    if (c->alibi) g.alibi.slopes = slopes.d;
    if (c->sink) g.sink = sink.d;
    if (c->dropout) g.dropout.keep_bits = bits.d;
    if (c->stats || c->backward) g.stats.max = smax.d, g.stats.sum = ssum.d;
    if (c->kv.out_i8) {
        d.out_quant = (fc_affine){qs.h, qo.h, FC_F32, c->Dv, 1};
        g.out_quant = (fc_affine){qs.d, qo.d, FC_F32, c->Dv, 1};
    }
    gc_kv_state kvs;
    bool kv_ok = gc_kv_apply(c, &r, kvlen, &d, &g, &kvs);
    TC_CHECK(kv_ok, "decode storage of the case");
    if (kv_ok && c->kv.bad_entry && kvs.table_h) {
        const int64_t w = kvs.table_entries / c->B; /* the last entry the last batch uses */
        gc_bad_entry(&d, &g, &kvs, (c->B - 1) * w + (kvlen[c->B - 1] - 1) / c->kv.page, &o);
        kv_ok = false; /* nothing more to compare */
    }

    /* CPU, the oracle: host pointers, poisoned outputs. */
    memset(o.h, 0xFF, o.bytes), memset(smax.h, 0xFF, smax.bytes), memset(ssum.h, 0xFF, ssum.bytes);
    fc_options cpu = {.backend = FC_BACKEND_CPU};
    fc_plan *cplan = NULL;
    fc_status st = kv_ok ? fc_plan_create(&d, &cpu, &cplan) : FC_ERR_NO_MEMORY;
    if (st == FC_OK)
        st = gc_plan_run(cplan, false);
    fc_plan_destroy(cplan);
    TC_CHECK(st == FC_OK || !kv_ok, "CPU run: %s (%s)", fc_status_name(st), fc_last_error());

    if (st == FC_OK && c->backward)
        gc_backward(c, &d, &g, &o, &smax, &ssum, (const int64_t[]){nq, nk, nv, no, nqr, nkr}, &r, gpu_out, gpu_bytes);
    else if (st == FC_OK)
        gc_forward(c, &g, &o, &smax, &ssum, no, ns, gpu_out);
    if (gpu_out && !c->backward)
        *gpu_bytes = o.bytes;
    gc_kv_free(&kvs);
    gc_buf *all[] = {&q, &k, &v, &o, &mask, &bias, &slopes, &sink, &bits, &smax, &ssum, &qs, &qo, &qr, &kr};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gc_free(all[i]);
    return tc_failures() == fails0;
}
