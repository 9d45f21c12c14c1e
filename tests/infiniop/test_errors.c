/*
 * Every status of the FlashAttention calls, in the order of semantics §7.5:
 *   Create: NULL_POINTER; BAD_PARAM (objects not live); DEVICE_TYPE_NOT_SUPPORTED; BAD_TENSOR_DTYPE;
 *           BAD_TENSOR_SHAPE; BAD_TENSOR_STRIDES;
 *   GetWorkspaceSize: NULL_POINTER; BAD_PARAM;
 *   FlashAttention: NULL_POINTER; BAD_PARAM; INSUFFICIENT_WORKSPACE; NULL_POINTER (workspace);
 *                   BAD_PARAM for misaligned operands or operands leaving their allocation (§8.18);
 *   Destroy / Destory: NULL_POINTER; BAD_PARAM (not live, double destroy).
 * Failing calls leave *desc_ptr NULL and write no output byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define F32 INFINI_DTYPE_F32

static infiniopTensorDescriptor_t td(size_t ndim, const size_t *shape, const ptrdiff_t *strides, infiniDtype_t dt)
{
    infiniopTensorDescriptor_t d = NULL;
    if (infiniopCreateTensorDescriptor(&d, ndim, shape, strides, dt) != INFINI_STATUS_SUCCESS)
        abort();
    return d;
}

/* A valid 4-D call: out, q, k, v (2, 4, 8, 16), k/v (2, 2, 12, 16), mask (2, 12). */
typedef struct call4 {
    infiniopTensorDescriptor_t out, q, k, v, mask;
} call4;

static const size_t QS[4] = {2, 4, 8, 16}, KS[4] = {2, 2, 12, 16}, MS[2] = {2, 12};

static call4 valid(void)
{
    call4 c = {td(4, QS, NULL, F32), td(4, QS, NULL, F32), td(4, KS, NULL, F32), td(4, KS, NULL, F32),
               td(2, MS, NULL, INFINI_DTYPE_BOOL)};
    return c;
}

static void drop(call4 *c)
{
    infiniopTensorDescriptor_t *all[5] = {&c->out, &c->q, &c->k, &c->v, &c->mask};
    for (int x = 0; x < 5; x++)
        if (*all[x])
            infiniopDestroyTensorDescriptor(*all[x]);
}

/* Create with one descriptor replaced; checks status and that *desc_ptr came back NULL. */
static void create_expect(const char *what, call4 c, infiniStatus_t want)
{
    tc_context("Create: %s", what);
    infiniopFlashAttentionDescriptor_t fa = (infiniopFlashAttentionDescriptor_t)(uintptr_t)0x1234;
    EXPECT(infiniopCreateFlashAttentionDescriptor(ifa_handle(), &fa, c.out, c.q, c.k, c.v, c.mask), want);
    if (want != INFINI_STATUS_SUCCESS)
        TC_CHECK(fa == NULL, "*desc_ptr not cleared");
    else
        infiniopDestroyFlashAttentionDescriptor(fa);
}

/* Replaces member `field` of a valid call by a descriptor of this shape/strides/dtype. */
static void one_bad(const char *what, int field, size_t ndim, const size_t *shape, const ptrdiff_t *strides,
                    infiniDtype_t dt, infiniStatus_t want)
{
    call4 c = valid();
    infiniopTensorDescriptor_t *all[5] = {&c.out, &c.q, &c.k, &c.v, &c.mask};
    infiniopDestroyTensorDescriptor(*all[field]);
    *all[field] = td(ndim, shape, strides, dt);
    create_expect(what, c, want);
    drop(&c);
}

enum { OUT, Q, K, V, MASK };

static void create_null_and_liveness(void)
{
    call4 c = valid();
    infiniopFlashAttentionDescriptor_t fa;
    tc_context("Create: NULL pointers");
    EXPECT(infiniopCreateFlashAttentionDescriptor(NULL, &fa, c.out, c.q, c.k, c.v, c.mask), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopCreateFlashAttentionDescriptor(ifa_handle(), NULL, c.out, c.q, c.k, c.v, c.mask), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopCreateFlashAttentionDescriptor(ifa_handle(), &fa, NULL, c.q, c.k, c.v, c.mask), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopCreateFlashAttentionDescriptor(ifa_handle(), &fa, c.out, NULL, c.k, c.v, c.mask), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopCreateFlashAttentionDescriptor(ifa_handle(), &fa, c.out, c.q, NULL, c.v, c.mask), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopCreateFlashAttentionDescriptor(ifa_handle(), &fa, c.out, c.q, c.k, NULL, c.mask), INFINI_STATUS_NULL_POINTER);
    create_expect("no mask descriptor", (call4){c.out, c.q, c.k, c.v, NULL}, INFINI_STATUS_SUCCESS);

    infiniopHandle_t dead;
    infiniopCreateHandle(&dead);
    infiniopDestroyHandle(dead);
    infiniopTensorDescriptor_t dead_t = td(4, QS, NULL, F32);
    infiniopDestroyTensorDescriptor(dead_t);
    int garbage[8] = {0};
    tc_context("Create: objects not live");
    EXPECT(infiniopCreateFlashAttentionDescriptor(dead, &fa, c.out, c.q, c.k, c.v, c.mask), INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopCreateFlashAttentionDescriptor((infiniopHandle_t)garbage, &fa, c.out, c.q, c.k, c.v, c.mask),
           INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopCreateFlashAttentionDescriptor((infiniopHandle_t)c.q, &fa, c.out, c.q, c.k, c.v, c.mask),
           INFINI_STATUS_BAD_PARAM); /* a live object of another kind */
    EXPECT(infiniopCreateFlashAttentionDescriptor(ifa_handle(), &fa, dead_t, c.q, c.k, c.v, c.mask), INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopCreateFlashAttentionDescriptor(ifa_handle(), &fa, c.out, c.q, (infiniopTensorDescriptor_t)garbage, c.v, c.mask),
           INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopCreateFlashAttentionDescriptor(ifa_handle(), &fa, c.out, c.q, c.k, c.v, dead_t), INFINI_STATUS_BAD_PARAM);
    tc_context("Create: order");
    EXPECT(infiniopCreateFlashAttentionDescriptor(dead, &fa, c.out, NULL, c.k, c.v, c.mask), INFINI_STATUS_NULL_POINTER);
    infiniopTensorDescriptor_t f64 = td(4, QS, NULL, INFINI_DTYPE_F64);
    EXPECT(infiniopCreateFlashAttentionDescriptor(dead, &fa, f64, c.q, c.k, c.v, c.mask), INFINI_STATUS_BAD_PARAM);
    infiniopDestroyTensorDescriptor(f64);
    drop(&c);
}

static void create_dtypes(void)
{
    one_bad("out F64", OUT, 4, QS, NULL, INFINI_DTYPE_F64, INFINI_STATUS_BAD_TENSOR_DTYPE);
    one_bad("out I32", OUT, 4, QS, NULL, INFINI_DTYPE_I32, INFINI_STATUS_BAD_TENSOR_DTYPE);
    one_bad("out INVALID", OUT, 4, QS, NULL, INFINI_DTYPE_INVALID, INFINI_STATUS_BAD_TENSOR_DTYPE);
    one_bad("q F16 with F32 out", Q, 4, QS, NULL, INFINI_DTYPE_F16, INFINI_STATUS_BAD_TENSOR_DTYPE);
    one_bad("k BF16 with F32 out", K, 4, KS, NULL, INFINI_DTYPE_BF16, INFINI_STATUS_BAD_TENSOR_DTYPE);
    one_bad("v F8", V, 4, KS, NULL, INFINI_DTYPE_F8, INFINI_STATUS_BAD_TENSOR_DTYPE);
    one_bad("mask F32", MASK, 2, MS, NULL, INFINI_DTYPE_F32, INFINI_STATUS_BAD_TENSOR_DTYPE);
    one_bad("mask F16", MASK, 2, MS, NULL, INFINI_DTYPE_F16, INFINI_STATUS_BAD_TENSOR_DTYPE);
    one_bad("mask F8", MASK, 2, MS, NULL, INFINI_DTYPE_F8, INFINI_STATUS_BAD_TENSOR_DTYPE);
    one_bad("mask INVALID", MASK, 2, MS, NULL, INFINI_DTYPE_INVALID, INFINI_STATUS_BAD_TENSOR_DTYPE);
    const size_t bad_shape[4] = {2, 4, 8, 17};
    one_bad("dtype before shape", Q, 4, bad_shape, NULL, INFINI_DTYPE_F16, INFINI_STATUS_BAD_TENSOR_DTYPE);
    /* every accepted dtype combination */
    const infiniDtype_t fl[3] = {INFINI_DTYPE_F16, INFINI_DTYPE_F32, INFINI_DTYPE_BF16};
    for (int d = 0; d < 3; d++) {
        call4 c = {td(4, QS, NULL, fl[d]), td(4, QS, NULL, fl[d]), td(4, KS, NULL, fl[d]), td(4, KS, NULL, fl[d]), NULL};
        for (int m = INFINI_DTYPE_BYTE; m <= INFINI_DTYPE_U64; m++) {
            c.mask = td(2, MS, NULL, (infiniDtype_t)m);
            char what[64];
            snprintf(what, sizeof what, "data dtype %d, mask dtype %d accepted", (int)fl[d], m);
            create_expect(what, c, INFINI_STATUS_SUCCESS);
            infiniopDestroyTensorDescriptor(c.mask);
        }
        c.mask = NULL;
        drop(&c);
    }
}

static void create_shapes(void)
{
    const infiniStatus_t S = INFINI_STATUS_BAD_TENSOR_SHAPE;
    const size_t r2[2] = {8, 16}, r5[5] = {1, 2, 4, 8, 16}, r3[3] = {4, 8, 16};
    one_bad("out 2-D", OUT, 2, r2, NULL, F32, S);
    one_bad("out 5-D", OUT, 5, r5, NULL, F32, S);
    one_bad("q 3-D with 4-D out", Q, 3, r3, NULL, F32, S);
    const struct { const char *what; int field; size_t shape[4]; } bad[] = {
        {"q batch 0", Q, {0, 4, 8, 16}},         {"q heads 0", Q, {2, 0, 8, 16}},
        {"q seq 0", Q, {2, 4, 0, 16}},           {"q head_dim 0", Q, {2, 4, 8, 0}},
        {"q head_dim 1025", Q, {2, 4, 8, 1025}}, {"q heads 257", Q, {2, 257, 8, 16}},
        {"q seq 2^20 + 1", Q, {2, 4, 1048577, 16}}, {"q batch 2^21 + 1", Q, {2097153, 4, 8, 16}},
        {"k batch differs", K, {3, 2, 12, 16}},  {"k heads 3 do not divide 4", K, {2, 3, 12, 16}},
        {"k heads 8 > q heads", K, {2, 8, 12, 16}}, {"k head_dim differs", K, {2, 2, 12, 8}},
        {"k seq 0", K, {2, 2, 0, 16}},           {"v batch differs", V, {1, 2, 12, 16}},
        {"v heads differ from k", V, {2, 1, 12, 16}}, {"v seq differs from k", V, {2, 2, 11, 16}},
        {"v head_dim 1025", V, {2, 2, 12, 1025}}, {"out batch", OUT, {1, 4, 8, 16}},
        {"out heads", OUT, {2, 2, 8, 16}},       {"out seq", OUT, {2, 4, 12, 16}},
        {"out head_dim is not v's", OUT, {2, 4, 8, 8}},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        one_bad(bad[k].what, bad[k].field, 4, bad[k].shape, NULL, F32, S);
    const size_t m3[3] = {2, 1, 12}, m_len[2] = {2, 11}, m_batch[2] = {3, 12}, m1[1] = {12}, m1_bad[1] = {13};
    one_bad("mask 3-D", MASK, 3, m3, NULL, INFINI_DTYPE_BOOL, S);
    one_bad("mask length", MASK, 2, m_len, NULL, INFINI_DTYPE_BOOL, S);
    one_bad("mask batch", MASK, 2, m_batch, NULL, INFINI_DTYPE_BOOL, S);
    one_bad("mask (Skv) with 4-D q", MASK, 1, m1, NULL, INFINI_DTYPE_BOOL, INFINI_STATUS_SUCCESS);
    one_bad("mask (Skv + 1)", MASK, 1, m1_bad, NULL, INFINI_DTYPE_BOOL, S);
    const ptrdiff_t bad_st[4] = {512, 128, 16, 2};
    const size_t bad_sh[4] = {2, 4, 8, 17};
    one_bad("shape before strides", Q, 4, bad_sh, bad_st, F32, S);
    /* 3-D: a (B, Skv) mask is not allowed */
    const size_t q3[3] = {4, 8, 16}, k3[3] = {2, 12, 16}, mb[2] = {1, 12};
    call4 c = {td(3, q3, NULL, F32), td(3, q3, NULL, F32), td(3, k3, NULL, F32), td(3, k3, NULL, F32), td(2, mb, NULL, INFINI_DTYPE_U8)};
    create_expect("3-D q with a 2-D mask", c, S);
    infiniopDestroyTensorDescriptor(c.mask);
    c.mask = td(1, m1, NULL, INFINI_DTYPE_U8);
    create_expect("3-D q with a (Skv) mask", c, INFINI_STATUS_SUCCESS);
    drop(&c);
}

static void create_strides(void)
{
    const infiniStatus_t T = INFINI_STATUS_BAD_TENSOR_STRIDES, OK = INFINI_STATUS_SUCCESS;
    const ptrdiff_t inner2[4] = {1024, 256, 32, 2}, inner0[4] = {512, 128, 16, 0}, inner_neg[4] = {512, 128, 16, -1};
    one_bad("q last stride 2", Q, 4, QS, inner2, F32, T);
    one_bad("k last stride 2", K, 4, KS, (const ptrdiff_t[]){1536, 768, 64, 2}, F32, T);
    one_bad("v last stride -1", V, 4, KS, (const ptrdiff_t[]){384, 192, 16, -1}, F32, T);
    one_bad("out last stride 0", OUT, 4, QS, inner0, F32, T);
    one_bad("out last stride -1", OUT, 4, QS, inner_neg, F32, T);
    one_bad("mask last stride 2", MASK, 2, MS, (const ptrdiff_t[]){24, 2}, INFINI_DTYPE_BOOL, T);
    one_bad("mask (Skv) stride 3", MASK, 1, MS + 1, (const ptrdiff_t[]){3}, INFINI_DTYPE_BOOL, T);
    one_bad("out heads stride 0 (overlap)", OUT, 4, QS, (const ptrdiff_t[]){128, 0, 16, 1}, F32, T);
    one_bad("out rows overlap", OUT, 4, QS, (const ptrdiff_t[]){512, 128, 8, 1}, F32, T);
    one_bad("out heads overlap batches", OUT, 4, QS, (const ptrdiff_t[]){256, 128, 16, 1}, F32, T);
    one_bad("q span beyond int64", Q, 4, QS, (const ptrdiff_t[]){PTRDIFF_MAX / 2, 128, 16, 1}, F32, T);
    one_bad("out negative strides (no overlap)", OUT, 4, QS, (const ptrdiff_t[]){-512, -128, 16, 1}, F32, OK);
    one_bad("out permuted strides", OUT, 4, QS, (const ptrdiff_t[]){512, 16, 64, 1}, F32, OK);
    one_bad("q stride 0 heads (broadcast input)", Q, 4, QS, (const ptrdiff_t[]){128, 0, 16, 1}, F32, OK);
    one_bad("k negative strides", K, 4, KS, (const ptrdiff_t[]){-384, 192, -16, 1}, F32, OK);
    one_bad("mask row stride 0", MASK, 2, MS, (const ptrdiff_t[]){0, 1}, INFINI_DTYPE_BOOL, OK);
    one_bad("mask row stride -12", MASK, 2, MS, (const ptrdiff_t[]){-12, 1}, INFINI_DTYPE_BOOL, OK);
    const size_t one[4] = {2, 4, 8, 1};
    call4 c = {td(4, one, (const ptrdiff_t[]){32, 8, 1, 2}, F32), td(4, one, NULL, F32), td(4, (const size_t[]){2, 2, 12, 1}, NULL, F32),
               td(4, (const size_t[]){2, 2, 12, 1}, NULL, F32), NULL};
    create_expect("out head_dim 1 with last stride 2", c, T);
    drop(&c);
}

/* A ready descriptor and buffers for the run-time checks. */
typedef struct ready {
    infiniopFlashAttentionDescriptor_t fa;
    size_t ws;
    float *out, *q, *k, *v;
    uint8_t *mask;
} ready;

static ready make_ready(infiniDtype_t mask_dt)
{
    ready r;
    call4 c = valid();
    infiniopDestroyTensorDescriptor(c.mask);
    c.mask = td(2, MS, NULL, mask_dt);
    if (infiniopCreateFlashAttentionDescriptor(ifa_handle(), &r.fa, c.out, c.q, c.k, c.v, c.mask) != INFINI_STATUS_SUCCESS)
        abort();
    drop(&c);
    infiniopGetFlashAttentionWorkspaceSize(r.fa, &r.ws);
    r.out = calloc(2 * 4 * 8 * 16, sizeof(float));
    r.q = calloc(2 * 4 * 8 * 16, sizeof(float));
    r.k = calloc(2 * 2 * 12 * 16, sizeof(float));
    r.v = calloc(2 * 2 * 12 * 16, sizeof(float));
    r.mask = calloc(2 * 12, 8);
    return r;
}

static void free_ready(ready *r)
{
    infiniopDestroyFlashAttentionDescriptor(r->fa);
    free(r->out), free(r->q), free(r->k), free(r->v), free(r->mask);
}

static void workspace_size(void)
{
    ready r = make_ready(INFINI_DTYPE_BOOL);
    size_t n;
    tc_context("GetWorkspaceSize");
    EXPECT(infiniopGetFlashAttentionWorkspaceSize(NULL, &n), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopGetFlashAttentionWorkspaceSize(r.fa, NULL), INFINI_STATUS_NULL_POINTER);
    int garbage[8] = {0};
    EXPECT(infiniopGetFlashAttentionWorkspaceSize((infiniopFlashAttentionDescriptor_t)garbage, &n), INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopGetFlashAttentionWorkspaceSize((infiniopFlashAttentionDescriptor_t)garbage, NULL),
           INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopGetFlashAttentionWorkspaceSize(r.fa, &n), INFINI_STATUS_SUCCESS);
    TC_CHECK(n == r.ws && n > 0, "size %zu", n);
    free_ready(&r);
    EXPECT(infiniopGetFlashAttentionWorkspaceSize(r.fa, &n), INFINI_STATUS_BAD_PARAM); /* destroyed */
}

static void run_statuses(void)
{
    ready r = make_ready(INFINI_DTYPE_I32);
    tc_context("FlashAttention: statuses in order");
    void *w = NULL;
    infinirtMalloc(&w, r.ws);
    int garbage[8] = {0};
    infiniopFlashAttentionDescriptor_t g = (infiniopFlashAttentionDescriptor_t)garbage;
    EXPECT(infiniopFlashAttention(NULL, w, r.ws, r.out, r.q, r.k, r.v, r.mask, NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopFlashAttention(r.fa, w, r.ws, NULL, r.q, r.k, r.v, r.mask, NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopFlashAttention(r.fa, w, r.ws, r.out, NULL, r.k, r.v, r.mask, NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopFlashAttention(r.fa, w, r.ws, r.out, r.q, NULL, r.v, r.mask, NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopFlashAttention(r.fa, w, r.ws, r.out, r.q, r.k, NULL, r.mask, NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopFlashAttention(g, w, r.ws, r.out, NULL, r.k, r.v, r.mask, NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopFlashAttention(g, w, r.ws, r.out, r.q, r.k, r.v, r.mask, NULL), INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopFlashAttention(g, NULL, 0, r.out, r.q, r.k, r.v, r.mask, NULL), INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopFlashAttention(r.fa, w, r.ws - 1, r.out, r.q, r.k, r.v, r.mask, NULL), INFINI_STATUS_INSUFFICIENT_WORKSPACE);
    EXPECT(infiniopFlashAttention(r.fa, NULL, 0, r.out, r.q, r.k, r.v, r.mask, NULL), INFINI_STATUS_INSUFFICIENT_WORKSPACE);
    EXPECT(infiniopFlashAttention(r.fa, NULL, r.ws, r.out, r.q, r.k, r.v, r.mask, NULL), INFINI_STATUS_NULL_POINTER);
    /* the size argument claims enough, the tracked allocation holds one byte less */
    EXPECT(infiniopFlashAttention(r.fa, (char *)w + 1, r.ws, r.out, r.q, r.k, r.v, r.mask, NULL),
           INFINI_STATUS_INSUFFICIENT_WORKSPACE);
    EXPECT(infiniopFlashAttention(r.fa, w, r.ws, r.out, r.q, r.k, r.v, r.mask, NULL), INFINI_STATUS_SUCCESS);
    EXPECT(infiniopFlashAttention(r.fa, w, r.ws + 100, r.out, r.q, r.k, r.v, r.mask, NULL), INFINI_STATUS_SUCCESS);
    /* any stream is accepted: the CPU completes the work before returning */
    infinirtStream_t s;
    infinirtStreamCreate(&s);
    EXPECT(infiniopFlashAttention(r.fa, w, r.ws, r.out, r.q, r.k, r.v, r.mask, s), INFINI_STATUS_SUCCESS);
    infinirtStreamDestroy(s);
    infinirtFree(w);

    tc_context("FlashAttention: operands (semantics §8.18)");
    char *wh = malloc(r.ws);
    EXPECT(infiniopFlashAttention(r.fa, wh, r.ws, r.out, (const char *)r.q + 2, r.k, r.v, r.mask, NULL), INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopFlashAttention(r.fa, wh, r.ws, (char *)r.out + 1, r.q, r.k, r.v, r.mask, NULL), INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopFlashAttention(r.fa, wh, r.ws, r.out, r.q, r.k, r.v, (const char *)r.mask + 2, NULL), INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopFlashAttention(r.fa, wh, r.ws, r.out, r.q, r.k, r.v, NULL, NULL), INFINI_STATUS_SUCCESS);
    /* operands in infinirt allocations one element too small; nothing is written */
    void *small = NULL, *dout = NULL;
    infinirtMalloc(&small, 2 * 2 * 12 * 16 * sizeof(float) - 4);
    infinirtMalloc(&dout, 2 * 4 * 8 * 16 * sizeof(float) - 4);
    void *kk = NULL;
    infinirtMalloc(&kk, 2 * 2 * 12 * 16 * sizeof(float));
    infinirtMemcpy(kk, r.k, 2 * 2 * 12 * 16 * sizeof(float), INFINIRT_MEMCPY_H2D);
    EXPECT(infiniopFlashAttention(r.fa, wh, r.ws, r.out, r.q, small, r.v, r.mask, NULL), INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopFlashAttention(r.fa, wh, r.ws, r.out, r.q, (char *)kk + 4, r.v, r.mask, NULL), INFINI_STATUS_BAD_PARAM);
    memset(r.out, 0x5A, 2 * 4 * 8 * 16 * sizeof(float));
    EXPECT(infiniopFlashAttention(r.fa, wh, r.ws, r.out, r.q, r.k, r.v, r.mask, (void *)small), INFINI_STATUS_SUCCESS);
    EXPECT(infiniopFlashAttention(r.fa, wh, r.ws, dout, r.q, r.k, r.v, r.mask, NULL), INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopFlashAttention(r.fa, wh, r.ws, r.out, r.q, kk, r.v, r.mask, NULL), INFINI_STATUS_SUCCESS);
    infinirtFree(small), infinirtFree(dout), infinirtFree(kk);
    free(wh);

    /* a failing call writes no output byte */
    tc_context("FlashAttention: failures write nothing");
    memset(r.out, 0x5A, 2 * 4 * 8 * 16 * sizeof(float));
    infiniopFlashAttention(r.fa, NULL, r.ws, r.out, r.q, r.k, r.v, r.mask, NULL);
    infiniopFlashAttention(r.fa, NULL, 0, r.out, r.q, r.k, r.v, r.mask, NULL);
    size_t changed = 0;
    for (size_t b = 0; b < 2 * 4 * 8 * 16 * sizeof(float); b++)
        changed += ((unsigned char *)r.out)[b] != 0x5A;
    TC_CHECK(changed == 0, "%zu output bytes written by failing calls", changed);
    free_ready(&r);
    tc_context("FlashAttention: destroyed descriptor");
    EXPECT(infiniopFlashAttention(r.fa, NULL, 0, garbage, garbage, garbage, garbage, NULL, NULL), INFINI_STATUS_BAD_PARAM);
}

static void destroy(void)
{
    tc_context("Destroy / Destory");
    EXPECT(infiniopDestroyFlashAttentionDescriptor(NULL), INFINI_STATUS_NULL_POINTER);
    EXPECT(infiniopDestoryFlashAttentionDescriptor(NULL), INFINI_STATUS_NULL_POINTER);
    int garbage[8] = {0};
    EXPECT(infiniopDestroyFlashAttentionDescriptor((infiniopFlashAttentionDescriptor_t)garbage), INFINI_STATUS_BAD_PARAM);
    ready r = make_ready(INFINI_DTYPE_BOOL);
    EXPECT(infiniopDestoryFlashAttentionDescriptor(r.fa), INFINI_STATUS_SUCCESS);
    EXPECT(infiniopDestoryFlashAttentionDescriptor(r.fa), INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopDestroyFlashAttentionDescriptor(r.fa), INFINI_STATUS_BAD_PARAM);
    free(r.out), free(r.q), free(r.k), free(r.v), free(r.mask);
    r = make_ready(INFINI_DTYPE_BOOL);
    EXPECT(infiniopDestroyFlashAttentionDescriptor(r.fa), INFINI_STATUS_SUCCESS);
    EXPECT(infiniopDestoryFlashAttentionDescriptor(r.fa), INFINI_STATUS_BAD_PARAM);
    free(r.out), free(r.q), free(r.k), free(r.v), free(r.mask);
    /* a tensor descriptor is not an operator descriptor */
    infiniopTensorDescriptor_t t = td(4, QS, NULL, F32);
    EXPECT(infiniopDestroyFlashAttentionDescriptor((infiniopFlashAttentionDescriptor_t)t), INFINI_STATUS_BAD_PARAM);
    EXPECT(infiniopDestroyTensorDescriptor(t), INFINI_STATUS_SUCCESS);
}

int main(void)
{
    create_null_and_liveness();
    create_dtypes();
    create_shapes();
    create_strides();
    workspace_size();
    run_statuses();
    destroy();
    return tc_summary("infiniop_errors");
}
