/* ifa_run_case: data, the face's calls, the reference, and the checks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "common/tolerance.h"
#include "harness.h"
#include "reference/reference.h"

#define GAP_IN 0xFF  /* NaN in every float dtype */
#define GAP_OUT 0xA5 /* sentinel around outputs */

ifa_case ifa_case_default(void)
{
    ifa_case c;
    memset(&c, 0, sizeof c);
    c.dtype = TC_F32;
    c.rank = 4;
    c.B = 2, c.Nq = 2, c.Sq = 8, c.D = 16;
    c.mask_dtype = INFINI_DTYPE_BOOL;
    c.mask_density = 0.3;
    c.seed = 1;
    return c;
}

infiniopHandle_t ifa_handle(void)
{
    static infiniopHandle_t h;
    if (!h && infiniopCreateHandle(&h) != INFINI_STATUS_SUCCESS) {
        fprintf(stderr, "infiniopCreateHandle failed\n");
        abort();
    }
    return h;
}

/* Everything one run owns. */
typedef struct run {
    const ifa_case *c;
    int B, Nq, Nkv, Sq, Skv, D, Dv;
    tc_rng rng;
    st_tensor t[5];            /* out, q, k, v, mask */
    double *x[4];              /* logical out (result), q, k, v */
    uint8_t *hidden;           /* [B][Skv] logical mask (what the call should apply) */
    bool mask_applies;
} run;

enum { OUT, Q, K, V, MASK };

/* Descriptor shape of a sequence operand: (B, N, S, E), without B for 3-D. */
static void seq_shape(const run *r, int N, int S, int E, size_t *shape)
{
    const size_t full[4] = {(size_t)r->B, (size_t)N, (size_t)S, (size_t)E};
    const int off = r->c->rank == 4 ? 0 : 1;
    for (int k = 0; k < r->c->rank; k++)
        shape[k] = full[k + off];
}

static int64_t seq_offset(const run *r, const st_tensor *t, int b, int n, int s, int e)
{
    const int64_t full[4] = {b, n, s, e};
    return st_offset(t, full + (r->c->rank == 4 ? 0 : 1));
}

/* Random inputs stored through the view; the logical values are read back through it, so
 * broadcast views (stride 0) give the values the library really sees. */
static double *make_seq(run *r, st_tensor *t, int N, int S, int E, ifa_layout lay)
{
    size_t shape[4];
    seq_shape(r, N, S, E, shape);
    st_layout(t, r->c->rank, shape, tc_dtype_size(r->c->dtype), lay, GAP_IN);
    const int64_t n = (int64_t)r->B * N * S * E;
    double *x = malloc((size_t)n * sizeof *x);
    for (int pass = 0; pass < 2; pass++)
        for (int b = 0; b < r->B; b++)
            for (int h = 0; h < N; h++)
                for (int s = 0; s < S; s++)
                    for (int e = 0; e < E; e++) {
                        const int64_t at = seq_offset(r, t, b, h, s, e);
                        if (pass == 0)
                            tc_store(r->c->dtype, t->host, at, tc_rng_uniform(&r->rng, -1, 1));
                        else
                            x[(((int64_t)b * N + h) * S + s) * E + e] = tc_load(r->c->dtype, t->host, at);
                    }
    return x;
}

static void make_mask(run *r)
{
    const ifa_case *c = r->c;
    r->hidden = calloc((size_t)r->B * r->Skv, 1);
    if (!c->mask_rank)
        return;
    const size_t shape[2] = {c->mask_rank == 2 ? (size_t)r->B : (size_t)r->Skv, (size_t)r->Skv};
    const int rows = c->mask_rank == 2 ? r->B : 1;
    st_layout(&r->t[MASK], c->mask_rank, c->mask_rank == 2 ? shape : shape + 1, mask_esize(c->mask_dtype),
              c->mask_layout, 0xFF);
    for (int row = 0; row < rows; row++)
        for (int j = 0; j < r->Skv; j++) {
            const bool hide = (c->hide_batch0 && row == 0) || tc_rng_bool(&r->rng, c->mask_density);
            const int64_t idx[2] = {row, j};
            const int64_t at = st_offset(&r->t[MASK], c->mask_rank == 2 ? idx : idx + 1);
            mask_store(c->mask_dtype, r->t[MASK].host, at, hide ? mask_hidden_value(c->mask_dtype, j) : 0);
        }
    /* the logical mask as stored (a broadcast row stride leaves the last row's values) */
    for (int b = 0; b < r->B; b++)
        for (int j = 0; j < r->Skv; j++) {
            const int64_t idx[2] = {c->mask_rank == 2 ? b : 0, j};
            const int64_t at = st_offset(&r->t[MASK], c->mask_rank == 2 ? idx : idx + 1);
            r->hidden[(int64_t)b * r->Skv + j] = mask_load(c->mask_dtype, r->t[MASK].host, at) != 0;
        }
}

static bool ref_hidden(void *ctx, int b, int n1, int i, int j)
{
    (void)n1, (void)i;
    const run *r = ctx;
    return r->mask_applies && r->hidden[(int64_t)b * r->Skv + j];
}

/* Creates the descriptor (tensor descriptors destroyed right away: the descriptor copied them). */
static infiniStatus_t create(run *r, infiniopFlashAttentionDescriptor_t *fa)
{
    const infiniDtype_t dt = ifa_dtype(r->c->dtype);
    infiniopTensorDescriptor_t d[5] = {NULL};
    for (int x = OUT; x <= V; x++)
        d[x] = st_desc(&r->t[x], dt);
    if (r->c->mask_rank && !r->c->mask_without_desc)
        d[MASK] = st_desc(&r->t[MASK], r->c->mask_dtype);
    const infiniStatus_t st = infiniopCreateFlashAttentionDescriptor(ifa_handle(), fa, d[OUT], d[Q], d[K], d[V], d[MASK]);
    for (int x = 0; x < 5; x++)
        if (d[x])
            infiniopDestroyTensorDescriptor(d[x]);
    return st;
}

static void *workspace_alloc(const run *r, size_t bytes)
{
    if (bytes == 0)
        return NULL;
    /* contents on entry are arbitrary: 0xCD bytes, copied in where the runtime's memory may be a device's */
    void *w = malloc(bytes);
    if (!w || !r->c->runtime) {
        if (w)
            memset(w, 0xCD, bytes);
        return w;
    }
    void *dev = NULL;
    memset(w, 0xCD, bytes);
    if (infinirtMalloc(&dev, bytes) != INFINI_STATUS_SUCCESS || infinirtMemcpy(dev, w, bytes, INFINIRT_MEMCPY_H2D) != INFINI_STATUS_SUCCESS)
        fprintf(stderr, "workspace_alloc: infinirtMalloc/infinirtMemcpy of %zu bytes failed\n", bytes);
    free(w);
    return dev;
}

static infiniStatus_t call(run *r, infiniopFlashAttentionDescriptor_t fa)
{
    size_t bytes = 0;
    infiniStatus_t st = infiniopGetFlashAttentionWorkspaceSize(fa, &bytes);
    if (st != INFINI_STATUS_SUCCESS)
        return st;
    void *w = workspace_alloc(r, bytes);
    const void *mask = r->c->mask_rank && !r->c->mask_null_at_run ? r->t[MASK].data : NULL;
    st = infiniopFlashAttention(fa, w, bytes, r->t[OUT].data, r->t[Q].data, r->t[K].data, r->t[V].data, mask, NULL);
    if (r->c->runtime)
        infinirtFree(w);
    else
        free(w);
    return st;
}

/* Output values at the logical positions; bytes outside the view must still be the sentinel. */
static void read_out(run *r, const unsigned char *before)
{
    st_tensor *t = &r->t[OUT];
    st_fetch(t);
    unsigned char *covered = calloc(t->bytes, 1);
    for (int b = 0; b < r->B; b++)
        for (int n = 0; n < r->Nq; n++)
            for (int i = 0; i < r->Sq; i++)
                for (int e = 0; e < r->Dv; e++) {
                    const int64_t at = seq_offset(r, t, b, n, i, e);
                    r->x[OUT][(((int64_t)b * r->Nq + n) * r->Sq + i) * r->Dv + e] = tc_load(r->c->dtype, t->host, at);
                    memset(covered + at * (int64_t)t->esize, 1, t->esize);
                }
    size_t touched = 0;
    for (size_t k = 0; k < t->bytes; k++)
        touched += !covered[k] && t->host[k] != before[k];
    TC_CHECK(touched == 0, "%zu bytes outside the output view were written", touched);
    free(covered);
}

/* The reference problem: scale 1/sqrt(D), the key-padding mask as hidden columns. */
static ref_fwd ref_of(run *r)
{
    ref_fwd p = {.B = r->B, .N1 = r->Nq, .N2 = r->Nkv, .D = r->D, .Dv = r->Dv, .S1cap = r->Sq, .S2cap = r->Skv,
                 .q = r->x[Q], .k = r->x[K], .v = r->x[V], .scale = 1.0 / sqrt((double)r->D), .ctx = r,
                 .hidden = ref_hidden};
    return p;
}

static void check(run *r, const double *want)
{
    const ref_fwd p = ref_of(r);
    const int64_t n = (int64_t)r->B * r->Nq * r->Sq * r->Dv;
    tc_compare("out", r->x[OUT], want, n, tc_tol_out(r->c->dtype), 1.0);
    for (int64_t k = 0; r->c->ref_nonfinite && k < n; k++)
        ++*(isfinite(want[k]) ? r->c->ref_finite : r->c->ref_nonfinite);
    int64_t nonzero = 0;
    for (int b = 0; b < r->B; b++)
        for (int h = 0; h < r->Nq; h++)
            for (int i = 0; i < r->Sq; i++)
                if (ref_visible(&p, b, h, i) == 0)
                    for (int e = 0; e < r->Dv; e++)
                        nonzero += r->x[OUT][(((int64_t)b * r->Nq + h) * r->Sq + i) * r->Dv + e] != 0.0;
    TC_CHECK(nonzero == 0, "%lld elements of rows with every key hidden are not exactly 0", (long long)nonzero);
}

static void release(run *r)
{
    for (int x = 0; x < 5; x++)
        st_free(&r->t[x]);
    for (int x = 0; x < 4; x++)
        free(r->x[x]);
    free(r->hidden);
}

bool ifa_run_case(const char *name, const ifa_case *c)
{
    tc_context("%s", name);
    run r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.B = c->B, r.Nq = c->Nq, r.Sq = c->Sq, r.D = c->D;
    r.Nkv = c->Nkv ? c->Nkv : c->Nq;
    r.Skv = c->Skv ? c->Skv : c->Sq;
    r.Dv = c->Dv ? c->Dv : c->D;
    r.rng = tc_rng_seed(c->seed);
    r.x[Q] = make_seq(&r, &r.t[Q], r.Nq, r.Sq, r.D, c->layout);
    r.x[K] = make_seq(&r, &r.t[K], r.Nkv, r.Skv, r.D, c->layout);
    r.x[V] = make_seq(&r, &r.t[V], r.Nkv, r.Skv, r.Dv, c->layout);
    for (int k = 0; k < c->npoison; k++) { /* q, k, v match the enum above */
        const ifa_poison *p = &c->poison[k];
        const int N = p->at == IFA_AT_Q ? r.Nq : r.Nkv, S = p->at == IFA_AT_Q ? r.Sq : r.Skv;
        const int E = p->at == IFA_AT_V ? r.Dv : r.D;
        tc_store(c->dtype, r.t[p->at].host, seq_offset(&r, &r.t[p->at], p->b, p->n, p->s, p->e), p->value);
        r.x[p->at][(((int64_t)p->b * N + p->n) * S + p->s) * E + p->e] = p->value;
    }
    size_t shape[4];
    seq_shape(&r, r.Nq, r.Sq, r.Dv, shape);
    st_layout(&r.t[OUT], c->rank, shape, tc_dtype_size(c->dtype), c->layout == LAY_BROADCAST ? LAY_GAPS : c->layout, GAP_OUT);
    r.x[OUT] = malloc((size_t)r.B * r.Nq * r.Sq * r.Dv * sizeof(double));
    make_mask(&r);
    r.mask_applies = c->mask_rank && !c->mask_null_at_run && !c->mask_without_desc;
    unsigned char *before = malloc(r.t[OUT].bytes);
    memcpy(before, r.t[OUT].host, r.t[OUT].bytes);
    for (int x = 0; x < 5; x++)
        if (r.t[x].host)
            st_place(&r.t[x], c->runtime);

    infiniopFlashAttentionDescriptor_t fa = NULL;
    infiniStatus_t st = create(&r, &fa);
    bool ok = TC_CHECK(st == INFINI_STATUS_SUCCESS, "Create returned %d: %s", (int)st, fc_last_error());
    if (ok) {
        st = call(&r, fa);
        ok = TC_CHECK(st == INFINI_STATUS_SUCCESS, "FlashAttention returned %d: %s", (int)st, fc_last_error());
    }
    if (ok) {
        read_out(&r, before);
        const int64_t n = (int64_t)r.B * r.Nq * r.Sq * r.Dv;
        double *want = malloc((size_t)n * sizeof *want);
        const ref_fwd p = ref_of(&r);
        ref_forward(&p, want, NULL, NULL);
        check(&r, want);
        if (c->repeat) {
            double *first = malloc((size_t)n * sizeof *first);
            memcpy(first, r.x[OUT], (size_t)n * sizeof *first);
            ok = TC_CHECK(call(&r, fa) == INFINI_STATUS_SUCCESS, "second run failed");
            read_out(&r, before);
            TC_CHECK(!memcmp(first, r.x[OUT], (size_t)n * sizeof *first), "a second run gave other bits");
            free(first);
        }
        free(want);
    }
    if (fa)
        TC_CHECK(infiniopDestroyFlashAttentionDescriptor(fa) == INFINI_STATUS_SUCCESS, "Destroy failed");
    free(before);
    release(&r);
    return ok;
}
