/*
 * Every first-phase rule of IncreFlashAttentionV4 (semantics §0.5, §0.6, §4.2–§4.6, §8.9): the
 * code (161001 for a NULL required pointer, 161002 for everything else), the validation order
 * (NULLs first, then the first failing parameter in declaration order, relational checks charged
 * to their last parameter), and a message naming the function and the parameter as declared.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ifa_calls.h"

#define NULLPTR ACLNN_ERR_PARAM_NULLPTR
#define INVALID ACLNN_ERR_PARAM_INVALID

/* BNSD fp16: B 2, N1 4, N2 2, S 8, D 16. */
enum { B = 2, N1 = 4, N2 = 2, S = 8, D = 16 };

static dev_tensor tq, tk, tv, tout, tk8, tv8;
static aclTensorList *lk, *lv, *lk8, *lv8;
static uint64_t ws;
static aclOpExecutor *ex;
static char bnsd[] = "BNSD", bsh[] = "BSH";

static dev_tensor mk(aclDataType dt, int rank, int64_t a, int64_t b, int64_t c, int64_t d)
{
    const int64_t dims[4] = {a, b, c, d};
    return dt_simple(dt, rank, dims);
}

static aclTensorList *list1(const aclTensor *t) { return aclCreateTensorList(&t, 1); }

static void setup(void)
{
    tq = mk(ACL_FLOAT16, 4, B, N1, 1, D), tout = mk(ACL_FLOAT16, 4, B, N1, 1, D);
    tk = mk(ACL_FLOAT16, 4, B, N2, S, D), tv = mk(ACL_FLOAT16, 4, B, N2, S, D);
    tk8 = mk(ACL_INT8, 4, B, N2, S, D), tv8 = mk(ACL_INT8, 4, B, N2, S, D);
    lk = list1(tk.t), lv = list1(tv.t), lk8 = list1(tk8.t), lv8 = list1(tv8.t);
}

static ifa_args base(void)
{
    ifa_args a = {.q = tq.t, .k = lk, .v = lv, .out = tout.t, .num_heads = N1, .num_kv_heads = N2, .inner = 1,
                  .scale = 0.25, .layout = bnsd, .ws = &ws, .ex = &ex};
    return a;
}

static void nulls(void)
{
    tc_context("required pointers");
    const ifa_args ok = base();
    ifa_expect(&ok, ACLNN_SUCCESS, NULL, NULL);
    ifa_args a = ok;
    a.q = NULL, ifa_expect(&a, NULLPTR, "query", NULL);
    a = ok, a.k = NULL, ifa_expect(&a, NULLPTR, "key", NULL);
    a = ok, a.v = NULL, ifa_expect(&a, NULLPTR, "value", NULL);
    a = ok, a.layout = NULL, ifa_expect(&a, NULLPTR, "inputLayout", NULL);
    a = ok, a.out = NULL, ifa_expect(&a, NULLPTR, "attentionOut", NULL);
    a = ok, a.ws = NULL, ifa_expect(&a, NULLPTR, "workspaceSize", NULL);
    a = ok, a.ex = NULL, ifa_expect(&a, NULLPTR, "executor", NULL);
    /* the first NULL in declaration order, and NULLs before every other check */
    a = ok, a.v = NULL, a.out = NULL, ifa_expect(&a, NULLPTR, "value", NULL);
    a = ok, a.q = (const aclTensor *)(uintptr_t)0x1234, a.layout = NULL, ifa_expect(&a, NULLPTR, "inputLayout", NULL);
    /* the optional operands are simply absent; kvPaddingSize without actualSeqLengths is not examined */
    a = ok, a.pad = (const aclTensor *)(uintptr_t)0x1234, ifa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
}

static void handles(void)
{
    tc_context("handles, formats, dtypes");
    dev_tensor dead = mk(ACL_FLOAT16, 4, B, N1, 1, D);
    const aclTensor *dead_t = dead.t;
    aclDestroyTensor(dead.t), dead.t = NULL;
    ifa_args a = base();
    a.q = dead_t, ifa_expect(&a, INVALID, "query", "not a live aclTensor");
    a = base(), a.k = (const aclTensorList *)(uintptr_t)0x10, ifa_expect(&a, INVALID, "key", "not a live aclTensorList");
    a = base(), a.v = (const aclTensorList *)tq.t, ifa_expect(&a, INVALID, "value", "not a live aclTensorList");
    aclTensorList *gone = list1(tq.t);
    aclDestroyTensorList(gone); /* also destroys tq: make a new one */
    tq.t = aclCreateTensor(tq.dims, 4, ACL_FLOAT16, tq.strides, 0, ACL_FORMAT_ND, NULL, 0, tq.dev);
    a = base(), a.k = gone, ifa_expect(&a, INVALID, "key", "not a live aclTensorList");
    /* an element destroyed after the list was made */
    dev_tensor e = mk(ACL_FLOAT16, 4, B, N2, S, D);
    aclTensorList *stale = list1(e.t);
    aclDestroyTensor(e.t), e.t = NULL;
    a = base(), a.v = stale, ifa_expect(&a, INVALID, "value[0]", "not a live aclTensor");
    const int64_t qd[] = {B, N1, 1, D};
    aclTensor *nz = aclCreateTensor(qd, 4, ACL_FLOAT16, NULL, 0, ACL_FORMAT_FRACTAL_NZ, NULL, 0, tq.dev);
    a = base(), a.q = nz, ifa_expect(&a, INVALID, "query", "format");
    aclTensor *qf = aclCreateTensor(qd, 4, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, tk.dev);
    a = base(), a.q = qf, ifa_expect(&a, INVALID, "query dtype", "FLOAT16 or BFLOAT16");
    dev_tensor kf = mk(ACL_FLOAT, 4, B, N2, S, D), kb = mk(ACL_BF16, 4, B, N2, S, D);
    aclTensorList *lkf = list1(kf.t), *lvb = list1(kb.t);
    a = base(), a.k = lkf, ifa_expect(&a, INVALID, "key[0] dtype", "FLOAT16 or INT8");
    a = base(), a.v = lvb, ifa_expect(&a, INVALID, "value[0] dtype", "FLOAT16 or INT8");
    a = base(), a.k = lk8, ifa_expect(&a, INVALID, "value[0] dtype", "INT8"); /* INT8 for both or neither */
    a = base(), a.v = lv8, ifa_expect(&a, INVALID, "value[0] dtype", NULL);
    aclTensorList *two = aclCreateTensorList((const aclTensor *const[]){tv.t, tv.t}, 2);
    a = base(), a.v = two, ifa_expect(&a, INVALID, "value must hold as many tensors as key", NULL);
    dev_tensor vs = mk(ACL_FLOAT16, 4, B, N2, S + 1, D);
    aclTensorList *lvs = list1(vs.t);
    a = base(), a.v = lvs, ifa_expect(&a, INVALID, "value[0] must have shape", "[2, 2, 8, 16]");
    aclTensorList *empty = aclCreateTensorList(NULL, 0);
    a = base(), a.k = empty, ifa_expect(&a, INVALID, "key", "empty list");
    aclDestroyTensor(nz), aclDestroyTensor(qf);
    aclDestroyTensorList(lkf), aclDestroyTensorList(lvb), aclDestroyTensorList(lvs), aclDestroyTensorList(empty);
    aclDestroyTensorList(stale);
    kf.t = kb.t = vs.t = NULL;
    dt_free(&kf), dt_free(&kb), dt_free(&vs), dt_free(&e), dt_free(&dead);
}

static void optional_operands(void)
{
    tc_context("optional operands: dtypes and presence");
    dev_tensor pb = mk(ACL_BF16, 4, B, N1, 1, S), mf = mk(ACL_FLOAT16, 2, B, S, 0, 0);
    dev_tensor f1 = mk(ACL_FLOAT, 1, 1, 0, 0, 0), h1 = mk(ACL_FLOAT16, 1, 1, 0, 0, 0), b1 = mk(ACL_BF16, 1, 1, 0, 0, 0);
    dev_tensor f2 = mk(ACL_FLOAT, 1, 2, 0, 0, 0), i2 = mk(ACL_INT32, 1, 2, 0, 0, 0), h2 = mk(ACL_FLOAT16, 1, 2, 0, 0, 0);
    dev_tensor o8 = mk(ACL_INT8, 4, B, N1, 1, D), bt = mk(ACL_INT32, 2, B, 1, 0, 0), bt64 = mk(ACL_INT64, 2, B, 1, 0, 0);
    dev_tensor bt3 = mk(ACL_INT32, 3, B, 1, 1, 0), p64 = mk(ACL_INT64, 1, 1, 0, 0, 0), p32 = mk(ACL_INT32, 1, 1, 0, 0, 0);
    dev_tensor p2 = mk(ACL_INT64, 1, 2, 0, 0, 0);
    const int64_t lens[] = {S, S};
    aclIntArray *act = aclCreateIntArray(lens, 2), *dead_act = aclCreateIntArray(lens, 2);
    aclDestroyIntArray(dead_act);
    ifa_args a = base();
    a.pse = pb.t, ifa_expect(&a, INVALID, "pseShift dtype", "query");
    a = base(), a.mask = mf.t, ifa_expect(&a, INVALID, "attenMask dtype", "BOOL, INT8 or UINT8");
    a = base(), a.act = dead_act, ifa_expect(&a, INVALID, "actualSeqLengths", "not a live aclIntArray");
    /* the all-INT8 parameters must be NULL: never examined, even when garbage */
    a = base(), a.dq1 = (const aclTensor *)(uintptr_t)0x77, ifa_expect(&a, INVALID, "dequantScale1 must be NULL", NULL);
    a = base(), a.qs1 = f1.t, ifa_expect(&a, INVALID, "quantScale1 must be NULL", NULL);
    a = base(), a.dq2 = f1.t, ifa_expect(&a, INVALID, "dequantScale2 must be NULL", NULL);
    a = base(), a.dq1 = f1.t, a.pse = pb.t, ifa_expect(&a, INVALID, "pseShift", NULL); /* declaration order */
    /* output quantisation */
    a = base(), a.qs2 = h1.t, a.out = o8.t, ifa_expect(&a, INVALID, "quantScale2 dtype", "FLOAT");
    a = base(), a.qs2 = b1.t, a.out = o8.t, ifa_expect(&a, INVALID, "quantScale2 dtype", "BFLOAT16 only with a BFLOAT16");
    a = base(), a.qo2 = f1.t, a.out = o8.t, ifa_expect(&a, INVALID, "quantOffset2 is given without quantScale2", NULL);
    a = base(), a.qs2 = f1.t, a.qo2 = h1.t, a.out = o8.t, ifa_expect(&a, INVALID, "quantOffset2 dtype", "quantScale2");
    a = base(), a.qs2 = f1.t, a.qo2 = f2.t, a.out = o8.t, ifa_expect(&a, INVALID, "quantOffset2 must have shape", NULL);
    a = base(), a.qs2 = f1.t, a.qo2 = f1.t, a.out = o8.t, ifa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    /* antiquant */
    a = base(), a.k = lk8, a.v = lv8, ifa_expect(&a, INVALID, "antiquantScale is absent", "INT8");
    a = base(), a.aqs = f2.t, ifa_expect(&a, INVALID, "antiquantScale must be absent", "FLOAT16");
    a = base(), a.k = lk8, a.v = lv8, a.aqs = i2.t, ifa_expect(&a, INVALID, "antiquantScale dtype", NULL);
    a = base(), a.aqo = f2.t, ifa_expect(&a, INVALID, "antiquantOffset must be absent", NULL);
    a = base(), a.k = lk8, a.v = lv8, a.aqs = f2.t, a.aqo = h2.t, ifa_expect(&a, INVALID, "antiquantOffset dtype", NULL);
    a = base(), a.k = lk8, a.v = lv8, a.aqs = f2.t, a.aqo = f1.t;
    ifa_expect(&a, INVALID, "antiquantOffset must have shape", NULL);
    a = base(), a.k = lk8, a.v = lv8, a.aqs = f2.t, a.aqo = f2.t, ifa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a = base(), a.k = lk8, a.v = lv8, a.aqs = h2.t, ifa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    /* block table and left padding */
    a = base(), a.act = act, a.bt = bt64.t, ifa_expect(&a, INVALID, "blocktable dtype", "INT32");
    a = base(), a.act = act, a.bt = bt3.t, ifa_expect(&a, INVALID, "blocktable must have 2 dims", NULL);
    a = base(), a.bt = bt.t, ifa_expect(&a, INVALID, "actualSeqLengths is absent", "page attention");
    a = base(), a.act = act, a.pad = p32.t, ifa_expect(&a, INVALID, "kvPaddingSize dtype", "INT64");
    a = base(), a.act = act, a.pad = p2.t, ifa_expect(&a, INVALID, "kvPaddingSize must hold exactly one element", NULL);
    a = base(), a.act = act, a.pad = (const aclTensor *)(uintptr_t)0x99, ifa_expect(&a, INVALID, "kvPaddingSize", "not a live");
    a = base(), a.act = act, a.pad = p64.t, ifa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a = base(), a.act = act, a.pad = p64.t, a.bt = bt.t, a.block_size = S;
    ifa_expect(&a, INVALID, "kvPaddingSize", "page attention");
    aclDestroyIntArray(act);
    dev_tensor *all[] = {&pb, &mf, &f1, &h1, &b1, &f2, &i2, &h2, &o8, &bt, &bt64, &bt3, &p64, &p32, &p2};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        dt_free(all[k]);
}

static void attributes(void)
{
    tc_context("attributes");
    ifa_args a = base();
    a.num_heads = 0, ifa_expect(&a, INVALID, "numHeads must be in [1, 256]", NULL);
    a.num_heads = 257, ifa_expect(&a, INVALID, "numHeads", "got 257");
    a = base(), a.scale = NAN, ifa_expect(&a, INVALID, "scaleValue must be finite", NULL);
    a = base(), a.scale = INFINITY, ifa_expect(&a, INVALID, "scaleValue", NULL);
    a = base(), a.scale = 1e39, ifa_expect(&a, INVALID, "scaleValue must be finite and within float's range", NULL);
    char sbh[] = "SBH", tnd[] = "TND", lower[] = "bnsd", none[] = "", longs[100];
    memset(longs, 'B', sizeof longs - 1), longs[sizeof longs - 1] = 0;
    char *bad[] = {sbh, tnd, lower, none, longs};
    for (int k = 0; k < 5; k++)
        a = base(), a.layout = bad[k], ifa_expect(&a, INVALID, "inputLayout must be \"BSH\", \"BSND\" or \"BNSD\"", NULL);
    a = base(), a.num_kv_heads = -1, ifa_expect(&a, INVALID, "numKeyValueHeads must be 0", NULL);
    a.num_kv_heads = 257, ifa_expect(&a, INVALID, "numKeyValueHeads", "got 257");
    a = base(), a.inner = 2, ifa_expect(&a, INVALID, "innerPrecise must be 0 or 1", NULL);
    a.inner = -1, ifa_expect(&a, INVALID, "innerPrecise", NULL);
    a = base(), a.inner = 0, ifa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a = base(), a.block_size = -5, ifa_expect(&a, ACLNN_SUCCESS, NULL, NULL); /* unused without a block table */
    /* order: numHeads (15) before scaleValue (16) before inputLayout (17) before innerPrecise (20) */
    a = base(), a.num_heads = 0, a.scale = NAN, ifa_expect(&a, INVALID, "numHeads", NULL);
    a = base(), a.scale = NAN, a.layout = sbh, ifa_expect(&a, INVALID, "scaleValue", NULL);
    a = base(), a.layout = sbh, a.inner = 3, ifa_expect(&a, INVALID, "inputLayout", NULL);
}

static void query_and_kv_sizes(void)
{
    tc_context("query and key/value sizes");
    dev_tensor q3 = mk(ACL_FLOAT16, 3, B, 1, N1 * D, 0), qs2 = mk(ACL_FLOAT16, 4, B, N1, 2, D);
    dev_tensor qwide = mk(ACL_FLOAT16, 4, B, N1, 1, 1025), q128 = mk(ACL_FLOAT16, 4, B, 128, 1, D);
    dev_tensor k3 = mk(ACL_FLOAT16, 4, B, 3, S, D), kd = mk(ACL_FLOAT16, 4, B, N2, S, D + 1);
    dev_tensor kb = mk(ACL_FLOAT16, 4, 3, N2, S, D), k1 = mk(ACL_FLOAT16, 4, 1, N2, S, D);
    dev_tensor k1b = mk(ACL_FLOAT16, 4, 1, N2, S + 2, D), kbig = mk(ACL_FLOAT16, 4, 2, N2, S, D);
    ifa_args a = base();
    a.q = q3.t, ifa_expect(&a, INVALID, "query must have 4 dims", NULL);
    a.layout = bsh, a.num_kv_heads = N2, ifa_expect(&a, INVALID, "key[0] must have 3 dims", NULL);
    a = base(), a.q = qs2.t, ifa_expect(&a, INVALID, "query sequence axis S must be 1", NULL);
    a = base(), a.q = qwide.t, ifa_expect(&a, INVALID, "query head dim D must be in [1, 1024]", NULL);
    a = base(), a.num_heads = 3, ifa_expect(&a, INVALID, "numHeads must equal the head count of query", NULL);
    const int64_t big[] = {65537, N1, 1, D}, zero[] = {0, 0, 0, 0};
    aclTensor *qB = aclCreateTensor(big, 4, ACL_FLOAT16, zero, 0, ACL_FORMAT_ND, NULL, 0, tq.dev);
    a = base(), a.q = qB, ifa_expect(&a, INVALID, "query batch size B must be in [1, 65536]", NULL);
    /* BSH: H1 must split into numHeads heads */
    dev_tensor qh = mk(ACL_FLOAT16, 3, B, 1, 30, 0), kh = mk(ACL_FLOAT16, 3, B, S, 2 * D, 0);
    aclTensorList *lkh = list1(kh.t), *lvh = list1(kh.t);
    a = base(), a.layout = bsh, a.q = qh.t, a.k = lkh, a.v = lvh, a.out = qh.t;
    ifa_expect(&a, INVALID, "query hidden size H = 30 must be a multiple of numHeads", NULL);
    /* heads */
    a = base(), a.num_kv_heads = 3, ifa_expect(&a, INVALID, "numKeyValueHeads (N2 = 3) must divide numHeads", NULL);
    a = base(), a.num_kv_heads = 0, ifa_expect(&a, INVALID, "key[0] head count must equal N2 = 4", "numKeyValueHeads is 0");
    aclTensorList *lk3 = list1(k3.t), *lkd = list1(kd.t), *lkb = list1(kb.t);
    a = base(), a.k = lk3, a.v = lk3, a.num_kv_heads = 3, ifa_expect(&a, INVALID, "numKeyValueHeads (N2 = 3)", NULL);
    a = base(), a.k = lkd, a.v = lkd, ifa_expect(&a, INVALID, "key[0] head dim must equal the query head dim", NULL);
    a = base(), a.k = lkb, a.v = lkb, ifa_expect(&a, INVALID, "key[0] batch size must be 2", "[3, 2, 8, 16]");
    dev_tensor o128 = mk(ACL_FLOAT16, 4, B, 128, 1, D), k2 = mk(ACL_FLOAT16, 4, B, 1, S, D);
    aclTensorList *lk2 = list1(k2.t);
    a = base(), a.q = q128.t, a.out = o128.t, a.num_heads = 128, a.num_kv_heads = 1, a.k = lk2, a.v = lk2;
    ifa_expect(&a, INVALID, "numHeads / numKeyValueHeads must be at most 64", NULL);
    /* lists of per-batch tensors */
    aclTensorList *three = aclCreateTensorList((const aclTensor *const[]){k1.t, k1.t, k1.t}, 3);
    a = base(), a.k = three, a.v = three, ifa_expect(&a, INVALID, "key must hold 1 tensor or B = 2 tensors", "got 3");
    aclTensorList *mixed = aclCreateTensorList((const aclTensor *const[]){k1.t, kbig.t}, 2);
    a = base(), a.k = mixed, a.v = mixed, ifa_expect(&a, INVALID, "key[1] batch size must be 1", NULL);
    aclTensorList *ragged = aclCreateTensorList((const aclTensor *const[]){k1.t, k1b.t}, 2);
    a = base(), a.k = ragged, a.v = ragged;
    ifa_expect(&a, INVALID, "key[1] stride of dim 1", "differing strides are not supported");
    const aclTensor *many[257];
    for (int k = 0; k < 257; k++)
        many[k] = k1.t;
    aclTensorList *l257 = aclCreateTensorList(many, 257);
    a = base(), a.k = l257, ifa_expect(&a, INVALID, "key must hold 1 tensor or one per batch", "257");
    const int64_t longd[] = {B, N2, 1048577, D}, longst[] = {0, 0, 0, 1};
    aclTensor *klong = aclCreateTensor(longd, 4, ACL_FLOAT16, longst, 0, ACL_FORMAT_ND, NULL, 0, tk.dev);
    aclTensorList *lklong = list1(klong);
    a = base(), a.k = lklong, a.v = lklong, ifa_expect(&a, INVALID, "key[0] sequence length must be in [1, 1048576]", NULL);
    aclDestroyTensor(qB);
    /* lists own their tensors: destroy the lists, then only the host images and allocations remain */
    aclTensorList *lists[] = {lkh, lvh, lk3, lkd, lkb, lk2, three, mixed, ragged, l257, lklong};
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
        aclDestroyTensorList(lists[k]);
    dev_tensor *all[] = {&q3, &qs2, &qwide, &q128, &k3, &kd, &kb, &k1, &k1b, &kbig, &qh, &kh, &o128, &k2};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        if (all[k] == &k3 || all[k] == &kd || all[k] == &kb || all[k] == &k1 || all[k] == &k1b || all[k] == &kbig ||
            all[k] == &kh || all[k] == &k2)
            all[k]->t = NULL;
        dt_free(all[k]);
    }
}

static void paged_sizes(void)
{
    tc_context("page attention sizes");
    dev_tensor c3 = mk(ACL_FLOAT16, 3, 5, 4, N2 * D, 0), c4 = mk(ACL_FLOAT16, 4, 5, N2, 4, D);
    dev_tensor c4n = mk(ACL_FLOAT16, 4, 5, 3, 4, D), c3h = mk(ACL_FLOAT16, 3, 5, 4, N2 * D + 1, 0);
    dev_tensor bt = mk(ACL_INT32, 2, B, 3, 0, 0), bt3 = mk(ACL_INT32, 2, 3, 3, 0, 0);
    dev_tensor q3 = mk(ACL_FLOAT16, 3, B, 1, N1 * D, 0);
    aclTensorList *l3 = list1(c3.t), *l4 = list1(c4.t), *l4n = list1(c4n.t), *l3h = list1(c3h.t);
    aclTensorList *l33 = aclCreateTensorList((const aclTensor *const[]){c4.t, c4.t}, 2);
    const int64_t lens[] = {12, 5}, over[] = {13, 5}, one[] = {12};
    aclIntArray *act = aclCreateIntArray(lens, 2), *act_over = aclCreateIntArray(over, 2);
    aclIntArray *act_one = aclCreateIntArray(one, 1);
    ifa_args p = base();
    p.k = l4, p.v = l4, p.bt = bt.t, p.act = act, p.block_size = 4;
    ifa_expect(&p, ACLNN_SUCCESS, NULL, NULL);
    ifa_args a = p;
    a.k = a.v = l3, ifa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.layout = bsh, a.q = a.out = q3.t, ifa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a = p, a.act = act_one, ifa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a = p, a.layout = bsh, a.q = a.out = q3.t, ifa_expect(&a, INVALID, "key[0]", "needs inputLayout \"BNSD\"");
    a = p, a.k = a.v = l33, ifa_expect(&a, INVALID, "key must hold exactly 1 tensor (the cache)", NULL);
    a = p, a.k = a.v = l4n, ifa_expect(&a, INVALID, "key[0] must have shape (blockNum, N2 = 2, blockSize, D = 16)", NULL);
    a = p, a.k = a.v = l3h, ifa_expect(&a, INVALID, "key[0] must have shape (blockNum, blockSize, N2·D = 32)", NULL);
    a = p, a.block_size = 0, ifa_expect(&a, INVALID, "blockSize must be in [1, 512]", NULL);
    a = p, a.block_size = 513, ifa_expect(&a, INVALID, "blockSize", NULL);
    a = p, a.block_size = 2, ifa_expect(&a, INVALID, "blockSize must equal the block dimension of key[0] (4", NULL);
    a = p, a.bt = bt3.t, ifa_expect(&a, INVALID, "blocktable must have shape (B = 2, maxBlockNumPerSeq)", NULL);
    const int64_t btd[] = {B, 3}, btst[] = {1, 2};
    aclTensor *bts = aclCreateTensor(btd, 2, ACL_INT32, btst, 0, ACL_FORMAT_ND, NULL, 0, bt.dev);
    a = p, a.bt = bts, ifa_expect(&a, INVALID, "blocktable entries of one batch must be adjacent", NULL);
    a = p, a.act = act_over, ifa_expect(&a, INVALID, "actualSeqLengths[0] must be in [0, 12]", "blockSize");
    aclDestroyTensor(bts);
    aclTensorList *lists[] = {l3, l4, l4n, l3h, l33};
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
        aclDestroyTensorList(lists[k]);
    c3.t = c4.t = c4n.t = c3h.t = NULL;
    aclDestroyIntArray(act), aclDestroyIntArray(act_over), aclDestroyIntArray(act_one);
    dev_tensor *all[] = {&c3, &c4, &c4n, &c3h, &bt, &bt3, &q3};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        dt_free(all[k]);
}

static void shapes(void)
{
    tc_context("lengths, pse, mask, quantisation shapes");
    const int64_t l3[] = {1, 2, 3}, lneg[] = {3, -1}, lbig[] = {S + 1};
    aclIntArray *a3 = aclCreateIntArray(l3, 3), *aneg = aclCreateIntArray(lneg, 2), *abig = aclCreateIntArray(lbig, 1);
    ifa_args a = base();
    a.act = a3, ifa_expect(&a, INVALID, "actualSeqLengths must hold 1 length (for every batch) or B = 2", NULL);
    a.act = aneg, ifa_expect(&a, INVALID, "actualSeqLengths[1] must be in [0, 8]", "got -1");
    a.act = abig, ifa_expect(&a, INVALID, "actualSeqLengths[0] must be in [0, 8]", "got 9");
    struct { int rank; int64_t d[4]; bool ok; } pse[] = {
        {4, {B, N1, 1, S}, true}, {4, {1, N1, 1, S + 3}, true}, {3, {B, N1, S}, false}, {4, {3, N1, 1, S}, false},
        {4, {B, N1 + 1, 1, S}, false}, {4, {B, N1, 2, S}, false}, {4, {B, N1, 1, S - 1}, false}};
    for (size_t k = 0; k < sizeof pse / sizeof pse[0]; k++) {
        dev_tensor t = mk(ACL_FLOAT16, pse[k].rank, pse[k].d[0], pse[k].d[1], pse[k].d[2], pse[k].d[3]);
        a = base(), a.pse = t.t;
        ifa_expect(&a, pse[k].ok ? ACLNN_SUCCESS : INVALID, pse[k].ok ? NULL : "pseShift must have shape", NULL);
        dt_free(&t);
    }
    struct { int rank; int64_t d[4]; bool ok; } mask[] = {
        {2, {B, S}, true}, {3, {B, 1, S + 1}, true}, {4, {B, 1, 1, S}, true}, {1, {S}, false}, {2, {1, S}, false},
        {3, {B, 2, S}, false}, {4, {B, 1, 2, S}, false}, {2, {B, S - 1}, false}};
    for (size_t k = 0; k < sizeof mask / sizeof mask[0]; k++) {
        dev_tensor t = mk(ACL_UINT8, mask[k].rank, mask[k].d[0], mask[k].d[1], mask[k].d[2], mask[k].d[3]);
        a = base(), a.mask = t.t;
        ifa_expect(&a, mask[k].ok ? ACLNN_SUCCESS : INVALID, mask[k].ok ? NULL : "attenMask must have shape", NULL);
        dt_free(&t);
    }
    struct { int rank; int64_t d[4]; bool ok; } aq[] = {
        {1, {2}, true}, {2, {2, N2 * D}, true}, {3, {2, N2, D}, true}, {4, {2, N2, 1, D}, true}, {1, {3}, false},
        {2, {2, N2 * D + 1}, false}, {3, {2, N2, D + 1}, false}, {4, {2, N2, 2, D}, false}, {3, {1, N2, D}, false}};
    for (size_t k = 0; k < sizeof aq / sizeof aq[0]; k++) {
        dev_tensor t = mk(ACL_FLOAT, aq[k].rank, aq[k].d[0], aq[k].d[1], aq[k].d[2], aq[k].d[3]);
        a = base(), a.k = lk8, a.v = lv8, a.aqs = t.t;
        ifa_expect(&a, aq[k].ok ? ACLNN_SUCCESS : INVALID, aq[k].ok ? NULL : "antiquantScale must have shape", NULL);
        dt_free(&t);
    }
    dev_tensor o8 = mk(ACL_INT8, 4, B, N1, 1, D);
    struct { int rank; int64_t d[4]; bool ok; } qs[] = {
        {1, {1}, true}, {1, {N1 * D}, true}, {2, {N1, D}, true}, {4, {1, N1, 1, D}, true}, {3, {1, 1, N1 * D}, true},
        {4, {1, 1, 1, 1}, true}, {1, {N1 * D + 1}, false}, {2, {N2, D}, false}};
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        dev_tensor t = mk(ACL_FLOAT, qs[k].rank, qs[k].d[0], qs[k].d[1], qs[k].d[2], qs[k].d[3]);
        a = base(), a.qs2 = t.t, a.out = o8.t;
        ifa_expect(&a, qs[k].ok ? ACLNN_SUCCESS : INVALID, qs[k].ok ? NULL : "quantScale2 must hold 1 element", NULL);
        dt_free(&t);
    }
    /* per-channel values are read as (head, feature) strides: a transposed [D, N1] view is not */
    dev_tensor qsd = mk(ACL_FLOAT, 1, N1 * D, 0, 0, 0);
    const int64_t td[] = {D, N1}, tst[] = {1, D};
    aclTensor *tr = aclCreateTensor(td, 2, ACL_FLOAT, tst, 0, ACL_FORMAT_ND, NULL, 0, qsd.dev);
    a = base(), a.qs2 = tr, a.out = o8.t, ifa_expect(&a, INVALID, "quantScale2 strides must address", NULL);
    const int64_t nd[] = {N1, D}, rst[] = {1, N1};
    aclTensor *rev = aclCreateTensor(nd, 2, ACL_FLOAT, rst, 0, ACL_FORMAT_ND, NULL, 0, qsd.dev);
    a = base(), a.qs2 = rev, a.out = o8.t, ifa_expect(&a, ACLNN_SUCCESS, NULL, NULL); /* column-major is fine */
    dev_tensor qo = mk(ACL_FLOAT, 2, N1, D, 0, 0);
    a = base(), a.qs2 = rev, a.qo2 = qo.t, a.out = o8.t;
    ifa_expect(&a, INVALID, "quantOffset2 must be laid out like quantScale2", NULL);
    aclDestroyTensor(tr), aclDestroyTensor(rev);
    aclDestroyIntArray(a3), aclDestroyIntArray(aneg), aclDestroyIntArray(abig);
    dt_free(&o8), dt_free(&qsd), dt_free(&qo);
}

static void output(void)
{
    tc_context("attentionOut");
    dev_tensor of = mk(ACL_FLOAT, 4, B, N1, 1, D), o8 = mk(ACL_INT8, 4, B, N1, 1, D), qs = mk(ACL_FLOAT, 1, 1, 0, 0, 0);
    dev_tensor os = mk(ACL_FLOAT16, 4, B, N1, 1, D + 1);
    ifa_args a = base();
    a.out = of.t, ifa_expect(&a, INVALID, "attentionOut dtype", "FLOAT16 or INT8");
    a.out = o8.t, ifa_expect(&a, INVALID, "attentionOut is INT8", "quantScale2 is absent");
    a = base(), a.qs2 = qs.t, ifa_expect(&a, INVALID, "quantScale2 is given, but attentionOut is FLOAT16", NULL);
    a = base(), a.out = os.t, ifa_expect(&a, INVALID, "attentionOut must have shape", "[2, 4, 1, 16]");
    const int64_t od[] = {B, N1, 1, D}, ost[] = {0, D, D, 1};
    aclTensor *over = aclCreateTensor(od, 4, ACL_FLOAT16, ost, 0, ACL_FORMAT_ND, NULL, 0, tout.dev);
    a = base(), a.out = over, ifa_expect(&a, INVALID, "attentionOut", "must not overlap");
    aclTensor *nul = aclCreateTensor(od, 4, ACL_FLOAT16, NULL, 0, ACL_FORMAT_ND, NULL, 0, NULL);
    a = base(), a.out = nul, ifa_expect(&a, INVALID, "attentionOut", "data address is NULL");
    const int64_t small[] = {B * N1 * D - 1};
    aclTensor *st = aclCreateTensor(od, 4, ACL_FLOAT16, NULL, 0, ACL_FORMAT_ND, small, 1, tout.dev);
    a = base(), a.out = st, ifa_expect(&a, INVALID, "attentionOut", "storage shape");
    aclTensor *far = aclCreateTensor(od, 4, ACL_FLOAT16, NULL, 1, ACL_FORMAT_ND, NULL, 0, tout.dev);
    a = base(), a.out = far, ifa_expect(&a, INVALID, "attentionOut", NULL); /* one element past the allocation */
    /* order: innerPrecise (20) before attentionOut (21); geometry (blockSize, 19) before both */
    a = base(), a.inner = 5, a.out = of.t, ifa_expect(&a, INVALID, "innerPrecise", NULL);
    dev_tensor m1 = mk(ACL_BOOL, 2, B, S - 1, 0, 0);
    a = base(), a.mask = m1.t, a.inner = 5, ifa_expect(&a, INVALID, "attenMask must have shape", NULL);
    a = base(), a.mask = m1.t, a.num_kv_heads = 3, ifa_expect(&a, INVALID, "numKeyValueHeads", NULL);
    aclDestroyTensor(over), aclDestroyTensor(nul), aclDestroyTensor(st), aclDestroyTensor(far);
    dt_free(&of), dt_free(&o8), dt_free(&qs), dt_free(&os), dt_free(&m1);
}

int main(void)
{
    setup();
    nulls();
    handles();
    optional_operands();
    attributes();
    query_and_kv_sizes();
    paged_sizes();
    shapes();
    output();
    return tc_summary("cann_ifa_bad_input");
}
