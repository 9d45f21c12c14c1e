/*
 * Every validation rule of the backward operators (semantics §0.5, §0.6, §3.2): the code (161001
 * for a NULL required pointer, 161002 for everything else), the validation order (NULLs first;
 * then the first failing parameter in declaration order, relational checks charged to their last
 * parameter), and a message naming the function and the parameter as the backward declares it.
 * The rules shared with the forward (§2.2) are exhaustively covered by bad_input_forward.c; here
 * each is exercised once through the backward, with the backward's spellings.  Part of
 * cann_fa_bad_input (test_fa_bad_input.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bad_input_fixture.h"

static fag_args dense(fag_fn fn)
{
    fag_args a = {.fn = fn, .q = tq.t, .k = tk.t, .v = tv6.t, .dy = tdy.t, .smax = tmax.t, .ssum = tsum.t,
                  .ain = tin.t, .scale = 0.3, .keep = 1, .pre = 2147483647, .next = 2147483647, .head_num = N1,
                  .pse_type = 1, .layout = bnsd, .dq = tdq.t, .dk = tdk.t, .dv = tdv.t, .ws = &ws, .ex = &ex};
    return a;
}

static fag_args tnd(void)
{
    fag_args a = {.fn = FAG_V5, .q = nq.t, .k = nk.t, .v = nv6.t, .dy = ndy.t, .smax = nmax.t, .ssum = nsum.t,
                  .ain = nin.t, .aq = aq, .akv = akv, .scale = 0.3, .keep = 1, .pre = 2147483647,
                  .next = 2147483647, .head_num = N1, .pse_type = 1, .layout = tnd_s, .dq = ndq.t, .dk = ndk.t,
                  .dv = ndv.t, .ws = &ws, .ex = &ex};
    return a;
}

static fag_args base(fag_fn fn) { return fn == FAG_V5 ? tnd() : dense(fn); }

static void nulls(void)
{
    tc_context("required pointers");
    for (int fn = FAG_V1; fn <= FAG_V5; fn++) {
        const fag_args b = base((fag_fn)fn);
        fag_expect(&b, ACLNN_SUCCESS, NULL, NULL);
        fag_args a = b;
        a.q = NULL, fag_expect(&a, NULLPTR, "query is NULL", NULL);
        a = b, a.k = NULL, fag_expect(&a, NULLPTR, "keyIn is NULL", NULL);
        a = b, a.v = NULL, fag_expect(&a, NULLPTR, "value is NULL", NULL);
        a = b, a.dy = NULL, fag_expect(&a, NULLPTR, "dy is NULL", NULL);
        a = b, a.smax = NULL, fag_expect(&a, NULLPTR, "softmaxMaxOptional is NULL", NULL);
        a = b, a.ssum = NULL, fag_expect(&a, NULLPTR, "softmaxSumOptional is NULL", NULL);
        a = b, a.ain = NULL, fag_expect(&a, NULLPTR, "attentionInOptional is NULL", NULL);
        a = b, a.layout = NULL, fag_expect(&a, NULLPTR, "inputLayout is NULL", NULL);
        a = b, a.dq = NULL, fag_expect(&a, NULLPTR, "dqOut is NULL", NULL);
        a = b, a.dk = NULL, fag_expect(&a, NULLPTR, "dkOut is NULL", NULL);
        a = b, a.dv = NULL, fag_expect(&a, NULLPTR, "dvOut is NULL", NULL);
        a = b, a.ws = NULL, fag_expect(&a, NULLPTR, "workspaceSize is NULL", NULL);
        a = b, a.ex = NULL, fag_expect(&a, NULLPTR, "executor is NULL", NULL);
        /* the first NULL in declaration order wins, and NULLs come before every other check */
        a = b, a.dv = NULL, a.dy = NULL, fag_expect(&a, NULLPTR, "dy is NULL", NULL);
        a = b, a.ain = NULL, a.ssum = NULL, fag_expect(&a, NULLPTR, "softmaxSumOptional is NULL", NULL);
        a = b, a.q = GARBAGE(0x1234), a.keep = 7, a.dk = NULL, fag_expect(&a, NULLPTR, "dkOut is NULL", NULL);
        /* reserved parameters are never examined; innerPrecise takes any value */
        a = b, a.pad = GARBAGE(0x1234), a.sin = GARBAGE(0x5678), a.dpse = GARBAGE(0x9abc);
        fag_expect(&a, ACLNN_SUCCESS, NULL, NULL);
        a = b, a.inner = 99, fag_expect(&a, ACLNN_SUCCESS, NULL, NULL);
        a = b, a.inner = INT64_MIN, fag_expect(&a, ACLNN_SUCCESS, NULL, NULL);
        /* dsinkOut and the rope gradients are ignored (not examined) without their operands */
        a = b, a.dsink = GARBAGE(0x42), a.dqr = GARBAGE(0x43), a.dkr = GARBAGE(0x44);
        fag_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    }
    fag_args a = tnd();
    a.sil = NULL, fag_expect(&a, ACLNN_SUCCESS, NULL, NULL); /* softmaxInLayout NULL = "" */
}

/* dy, attentionIn and the three gradients: dtype, shape, handle, overlap (§3.2). */
static void operands(void)
{
    tc_context("dy, attentionIn, gradients");
    dev_tensor h_q = bi_tensor(ACL_FLOAT16, 4, B, N1, S1, D), h_o = bi_tensor(ACL_FLOAT16, 4, B, N1, S1, DV);
    dev_tensor h_k = bi_tensor(ACL_FLOAT16, 4, B, N2, S2, D), h_v = bi_tensor(ACL_FLOAT16, 4, B, N2, S2, DV);
    for (int fn = FAG_V1; fn <= FAG_V3; fn++) {
        fag_args a = dense((fag_fn)fn);
        a.dy = h_o.t, fag_expect(&a, INVALID, "dy dtype must equal the query dtype (FLOAT), got FLOAT16", NULL);
        a = dense((fag_fn)fn), a.ain = h_o.t, fag_expect(&a, INVALID, "attentionInOptional dtype", "dy dtype");
        a = dense((fag_fn)fn), a.dq = h_q.t, fag_expect(&a, INVALID, "dqOut dtype", "query");
        a = dense((fag_fn)fn), a.dk = h_k.t, fag_expect(&a, INVALID, "dkOut dtype", "keyIn");
        a = dense((fag_fn)fn), a.dv = h_v.t, fag_expect(&a, INVALID, "dvOut dtype", "value");
    }
    /* an all-FLOAT16 call is fine */
    dev_tensor h_m = bi_tensor(ACL_FLOAT, 4, B, N1, S1, 8);
    fag_args a = dense(FAG_V2);
    a.q = h_q.t, a.k = h_k.t, a.v = h_v.t, a.dy = h_o.t, a.ain = h_o.t, a.dq = h_q.t, a.dk = h_k.t, a.dv = h_v.t;
    a.smax = h_m.t, a.ssum = h_m.t, fag_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    /* shapes: dy and attentionIn are the forward output's [B, N1, S1, Dv]; gradients their operand's */
    dev_tensor w_o = bi_tensor(ACL_FLOAT, 4, B, N1, S1, D), w_q = bi_tensor(ACL_FLOAT, 4, B, N1, S1 + 1, D);
    dev_tensor w_k = bi_tensor(ACL_FLOAT, 4, B, N2, S2, DV), w_v = bi_tensor(ACL_FLOAT, 4, B, N2, S2, D);
    a = dense(FAG_V2), a.dy = w_o.t, fag_expect(&a, INVALID, "dy must have shape [2, 4, 3, 6], got [2, 4, 3, 8]", NULL);
    a = dense(FAG_V2), a.ain = w_o.t, fag_expect(&a, INVALID, "attentionInOptional must have shape [2, 4, 3, 6]", NULL);
    a = dense(FAG_V2), a.dq = w_q.t, fag_expect(&a, INVALID, "dqOut must have shape [2, 4, 3, 8], got [2, 4, 4, 8]", NULL);
    a = dense(FAG_V2), a.dk = w_k.t, fag_expect(&a, INVALID, "dkOut must have shape [2, 2, 5, 8]", NULL);
    a = dense(FAG_V2), a.dv = w_v.t, fag_expect(&a, INVALID, "dvOut must have shape [2, 2, 5, 6]", NULL);
    dev_tensor r3 = bi_tensor(ACL_FLOAT, 3, B, S1, N1 * D, 0);
    a = dense(FAG_V2), a.dq = r3.t, fag_expect(&a, INVALID, "dqOut must have shape", NULL);
    /* dead handles, formats, overlap */
    dev_tensor dead = bi_tensor(ACL_FLOAT, 4, B, N1, S1, DV);
    const aclTensor *dead_t = dead.t;
    aclDestroyTensor(dead.t);
    dead.t = NULL;
    a = dense(FAG_V2), a.dy = dead_t, fag_expect(&a, INVALID, "dy is not a live aclTensor", NULL);
    a = dense(FAG_V2), a.ain = GARBAGE(0x10), fag_expect(&a, INVALID, "attentionInOptional", "not a live");
    a = dense(FAG_V2), a.dv = GARBAGE(0x10), fag_expect(&a, INVALID, "dvOut", "not a live");
    const int64_t qd[] = {B, N1, S1, D}, ovl[] = {N1 * S1 * D, S1 * D, 0, 1};
    aclTensor *nz = aclCreateTensor(qd, 4, ACL_FLOAT, NULL, 0, ACL_FORMAT_FRACTAL_NZ, NULL, 0, tdq.dev);
    a = dense(FAG_V2), a.dq = nz, fag_expect(&a, INVALID, "dqOut format", NULL);
    aclTensor *over = aclCreateTensor(qd, 4, ACL_FLOAT, ovl, 0, ACL_FORMAT_ND, NULL, 0, tdq.dev);
    a = dense(FAG_V2), a.dq = over, fag_expect(&a, INVALID, "dqOut is an output and must not overlap", NULL);
    /* inputs may overlap (a broadcast dy or attentionIn is an ordinary strided view) */
    const int64_t od[] = {B, N1, S1, DV}, bst[] = {N1 * S1 * DV, S1 * DV, 0, 1};
    aclTensor *bdy = aclCreateTensor(od, 4, ACL_FLOAT, bst, 0, ACL_FORMAT_ND, NULL, 0, tdy.dev);
    a = dense(FAG_V2), a.dy = bdy, a.ain = bdy, fag_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    /* a view that leaves its allocation */
    aclTensor *off = aclCreateTensor(qd, 4, ACL_FLOAT, NULL, 1, ACL_FORMAT_ND, NULL, 0, tdq.dev);
    a = dense(FAG_V2), a.dq = off, fag_expect(&a, INVALID, "dqOut", "allocation");
    aclDestroyTensor(nz), aclDestroyTensor(over), aclDestroyTensor(bdy), aclDestroyTensor(off);
    dev_tensor *all[] = {&h_q, &h_o, &h_k, &h_v, &h_m, &w_o, &w_q, &w_k, &w_v, &r3, &dead};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        dt_free(all[k]);
}

/* softmaxMax/SumOptional: FLOAT32, contiguous, the forward's shapes; softmaxInLayout. */
static void statistics(void)
{
    tc_context("statistics and softmaxInLayout");
    dev_tensor h = bi_tensor(ACL_FLOAT16, 4, B, N1, S1, 8), w = bi_tensor(ACL_FLOAT, 4, B, N1, S1, 1);
    dev_tensor big = bi_tensor(ACL_FLOAT, 4, B, N1, S1, 16);
    fag_args a = dense(FAG_V1);
    a.smax = h.t, fag_expect(&a, INVALID, "softmaxMaxOptional dtype must be FLOAT", NULL);
    a = dense(FAG_V1), a.ssum = h.t, fag_expect(&a, INVALID, "softmaxSumOptional dtype", NULL);
    a = dense(FAG_V1), a.smax = w.t, fag_expect(&a, INVALID, "softmaxMaxOptional must have shape [2, 4, 3, 8]", NULL);
    const int64_t sd[] = {B, N1, S1, 8}, sst[] = {N1 * S1 * 16, S1 * 16, 16, 1};
    aclTensor *nc = aclCreateTensor(sd, 4, ACL_FLOAT, sst, 0, ACL_FORMAT_ND, NULL, 0, big.dev);
    a = dense(FAG_V1), a.ssum = nc, fag_expect(&a, INVALID, "softmaxSumOptional must be contiguous", NULL);
    /* TND: [T1, N1, 8] or [N1, T1, 8] in either layout string */
    dev_tensor nt = bi_tensor(ACL_FLOAT, 3, N1, T1, 8, 0), bad = bi_tensor(ACL_FLOAT, 3, T1, N1, 4, 0);
    char same[] = "same_as_input", empty[] = "", other[] = "TND", upper[] = "SAME_AS_INPUT";
    a = tnd(), a.smax = nt.t, a.ssum = nt.t, fag_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.sil = same, fag_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.sil = empty, fag_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.sil = other, fag_expect(&a, INVALID, "softmaxInLayout must be \"\" or \"same_as_input\", got \"TND\"", NULL);
    a.sil = upper, fag_expect(&a, INVALID, "softmaxInLayout", NULL);
    char *unterminated = malloc(64); /* at most 64 bytes are read (ASan checks the 65th is not) */
    memset(unterminated, 's', 64);
    a.sil = unterminated, fag_expect(&a, INVALID, "softmaxInLayout", NULL);
    free(unterminated);
    a = tnd(), a.smax = bad.t, fag_expect(&a, INVALID, "softmaxMaxOptional must have shape [T1, N1, 8]", NULL);
    aclDestroyTensor(nc);
    dt_free(&h), dt_free(&w), dt_free(&big), dt_free(&nt), dt_free(&bad);
}

/* Rope: queryRope/keyInRope together; dqRopeOut/dkRopeOut required with them (161002). */
static void rope(void)
{
    tc_context("rope gradients");
    fag_args a = tnd();
    a.qr = nqr.t, a.kr = nkr.t, a.dqr = ndqr.t, a.dkr = ndkr.t, fag_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    fag_args b = a;
    b.dqr = NULL, fag_expect(&b, INVALID, "dqRopeOut is NULL, but queryRope is given", NULL);
    b = a, b.dkr = NULL, fag_expect(&b, INVALID, "dkRopeOut is NULL, but keyInRope is given", NULL);
    b = a, b.dqr = NULL, b.dkr = NULL, fag_expect(&b, INVALID, "dqRopeOut", NULL); /* first in order */
    b = a, b.kr = NULL, fag_expect(&b, INVALID, "queryRope and keyInRope must be given together", NULL);
    dev_tensor h = bi_tensor(ACL_FLOAT16, 3, T1, N1, DR, 0), w = bi_tensor(ACL_FLOAT, 3, T1, N1, DR + 1, 0);
    dev_tensor wk = bi_tensor(ACL_FLOAT, 3, T2, N1, DR, 0);
    b = a, b.dqr = h.t, fag_expect(&b, INVALID, "dqRopeOut dtype", "queryRope");
    b = a, b.dqr = w.t, fag_expect(&b, INVALID, "dqRopeOut must have shape [6, 4, 4], got [6, 4, 5]", NULL);
    b = a, b.dkr = wk.t, fag_expect(&b, INVALID, "dkRopeOut must have shape [9, 2, 4]", NULL);
    b = a, b.dkr = GARBAGE(0x99), fag_expect(&b, INVALID, "dkRopeOut is not a live aclTensor", NULL);
    b = a, b.qr = h.t, fag_expect(&b, INVALID, "queryRope dtype", NULL);
    dt_free(&h), dt_free(&w), dt_free(&wk);
}

/* Sink: sinkInOptional FLOAT32 [N1]; dsinkOut required with it (161002), FLOAT32 [N1]. */
static void sinks(void)
{
    tc_context("sink and dsink");
    dev_tensor h = bi_tensor(ACL_FLOAT16, 1, N1, 0, 0, 0), w = bi_tensor(ACL_FLOAT, 1, N1 + 1, 0, 0, 0);
    dev_tensor two = bi_tensor(ACL_FLOAT, 1, 2 * N1, 0, 0, 0);
    for (int fn = FAG_V3; fn <= FAG_V5; fn++) {
        fag_args a = base((fag_fn)fn);
        a.sink = sink.t, a.dsink = dsink.t, fag_expect(&a, ACLNN_SUCCESS, NULL, NULL);
        fag_args b = a;
        b.dsink = NULL, fag_expect(&b, INVALID, "dsinkOut is NULL, but sinkInOptional is given", NULL);
        b = a, b.dsink = h.t, fag_expect(&b, INVALID, "dsinkOut dtype must equal the sinkInOptional dtype", NULL);
        b = a, b.dsink = w.t, fag_expect(&b, INVALID, "dsinkOut must have shape [4], got [5]", NULL);
        b = a, b.dsink = GARBAGE(0x31), fag_expect(&b, INVALID, "dsinkOut is not a live", NULL);
        b = a, b.sink = h.t, fag_expect(&b, INVALID, "sinkInOptional dtype must be FLOAT", NULL);
        b = a, b.sink = w.t, fag_expect(&b, INVALID, "sinkInOptional must have shape [4]", NULL);
        const int64_t d1[] = {N1}, s0[] = {0}, s2[] = {2};
        aclTensor *bc = aclCreateTensor(d1, 1, ACL_FLOAT, s0, 0, ACL_FORMAT_ND, NULL, 0, dsink.dev);
        b = a, b.dsink = bc, fag_expect(&b, INVALID, "dsinkOut is an output and must not overlap", NULL);
        aclTensor *st = aclCreateTensor(d1, 1, ACL_FLOAT, s2, 0, ACL_FORMAT_ND, NULL, 0, two.dev);
        b = a, b.dsink = st, fag_expect(&b, INVALID, "dsinkOut must have unit stride", NULL);
        b = a, b.sink = st, fag_expect(&b, ACLNN_SUCCESS, NULL, NULL); /* a strided input sink is fine */
        aclDestroyTensor(bc), aclDestroyTensor(st);
    }
    dt_free(&h), dt_free(&w), dt_free(&two);
}

/* The forward's rules, reached through the backward with the backward's spellings. */
static void shared(void)
{
    tc_context("the forward call the backward describes");
    char tnd_in_dense[] = "TND", bad[] = "BSDN";
    fag_args a = dense(FAG_V1);
    a.layout = tnd_in_dense, fag_expect(&a, INVALID, "inputLayout must be \"BSH\", \"SBH\", \"BSND\" or \"BNSD\"", NULL);
    a = tnd(), a.layout = bnsd, fag_expect(&a, INVALID, "inputLayout must be \"TND\"", NULL);
    a = dense(FAG_V2), a.layout = bad, fag_expect(&a, INVALID, "inputLayout", "\"BSDN\"");
    a = dense(FAG_V2), a.head_num = 3, fag_expect(&a, INVALID, "headNum", "N1 = 4");
    dev_tensor kb = bi_tensor(ACL_FLOAT, 4, B + 1, N2, S2, D), kh = bi_tensor(ACL_FLOAT16, 4, B, N2, S2, D);
    a = dense(FAG_V2), a.k = kb.t, fag_expect(&a, INVALID, "keyIn batch size", NULL);
    a = dense(FAG_V2), a.k = kh.t, fag_expect(&a, INVALID, "keyIn dtype must equal the query dtype", NULL);
    dev_tensor qi = bi_tensor(ACL_INT32, 4, B, N1, S1, D);
    a = dense(FAG_V2), a.q = qi.t, fag_expect(&a, INVALID, "query dtype must be FLOAT16, BFLOAT16 or FLOAT", NULL);
    a = dense(FAG_V1), a.scale = NAN, fag_expect(&a, INVALID, "scaleValue must be finite", NULL);
    a = dense(FAG_V2), a.scale = 1e300, fag_expect(&a, INVALID, "scaleValue must be finite and within float's range", "1e+300");
    a = dense(FAG_V2), a.keep = 1.5, fag_expect(&a, INVALID, "aclnnFlashAttentionScoreGradV2GetWorkspaceSize: "
                                                          "keepProb must be in (0, 1], got 1.5", NULL);
    a = dense(FAG_V3), a.keep = 0, fag_expect(&a, INVALID, "keepProb", NULL);
    a = dense(FAG_V2), a.keep = 0.5, fag_expect(&a, INVALID, "dropMaskOptional is absent", "keepProb");
    const int64_t bytes = (B * N1 * S1 * S2 + 7) / 8;
    dev_tensor dm = bi_tensor(ACL_UINT8, 1, bytes, 0, 0, 0), small = bi_tensor(ACL_UINT8, 1, bytes - 1, 0, 0, 0);
    a.drop = dm.t, fag_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.drop = small.t, fag_expect(&a, INVALID, "dropMaskOptional must hold at least", NULL);
    a.keep = 1, a.drop = GARBAGE(0x77), fag_expect(&a, ACLNN_SUCCESS, NULL, NULL); /* ignored at keepProb 1 */
    a = dense(FAG_V2), a.mode = 7, fag_expect(&a, INVALID, "sparseMode must be in [0, 6]", NULL);
    a = tnd(), a.mode = 5, fag_expect(&a, INVALID, "sparseMode", "except 5");
    a = tnd(), a.mode = 8, fag_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    /* masks, prefix */
    dev_tensor m = bi_tensor(ACL_BOOL, 2, S1, S2, 0, 0), mh = bi_tensor(ACL_FLOAT16, 2, S1, S2, 0, 0);
    dev_tensor c3 = bi_tensor(ACL_UINT8, 2, 3072, 2048, 0, 0);
    a = dense(FAG_V2), a.mask = mh.t, fag_expect(&a, INVALID, "attenMaskOptional dtype", "BOOL or UINT8");
    a = dense(FAG_V2), a.mask = m.t, a.mode = 2, fag_expect(&a, INVALID, "attenMaskOptional", "[2048, 2048]");
    a = dense(FAG_V2), a.mask = c3.t, a.mode = 6, fag_expect(&a, INVALID, "prefixOptional is absent", "sparseMode 6");
    const int64_t pv[] = {1, -1};
    aclIntArray *pneg = aclCreateIntArray(pv, 2);
    a.prefix = pneg, fag_expect(&a, INVALID, "prefixOptional[1] must be >= 0", NULL);
    /* pse: types, dtypes, shapes; V1 has pseType 1 */
    dev_tensor p = bi_tensor(ACL_FLOAT, 4, B, N1, S1, S2), ph = bi_tensor(ACL_FLOAT16, 4, B, N1, S1, S2);
    dev_tensor sl = bi_tensor(ACL_FLOAT, 2, B, N1, 0, 0);
    a = dense(FAG_V2), a.pse = p.t, a.pse_type = 4, fag_expect(&a, INVALID, "pseType must be in [0, 3], got 4", NULL);
    a = dense(FAG_V1), a.pse = ph.t, fag_expect(&a, INVALID, "pseShiftOptional dtype must equal the query dtype", NULL);
    a = dense(FAG_V2), a.pse = p.t, a.pse_type = 2, fag_expect(&a, INVALID, "pseShiftOptional", "ALiBi");
    a.pse = sl.t, fag_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a = dense(FAG_V1), a.pse = sl.t, fag_expect(&a, INVALID, "pseShiftOptional must have shape", "pseType 1");
    /* TND lengths */
    const int64_t dec[] = {4, 2};
    aclIntArray *adec = aclCreateIntArray(dec, 2);
    a = tnd(), a.aq = NULL, fag_expect(&a, INVALID, "actualSeqQLenOptional is absent", NULL);
    a = tnd(), a.akv = adec, fag_expect(&a, INVALID, "actualSeqKvLenOptional must be cumulative", NULL);
    aclDestroyIntArray(pneg), aclDestroyIntArray(adec);
    dev_tensor *all[] = {&kb, &kh, &qi, &dm, &small, &m, &mh, &c3, &p, &ph, &sl};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        dt_free(all[k]);
}

/* The first failing argument in declaration order wins; relational checks count at their last
 * argument (shapes relate to inputLayout and, in TND, to the actual lengths). */
static void order(void)
{
    tc_context("validation order");
    dev_tensor h_o = bi_tensor(ACL_FLOAT16, 4, B, N1, S1, DV), w_o = bi_tensor(ACL_FLOAT, 4, B, N1, S1, D);
    dev_tensor h_q = bi_tensor(ACL_FLOAT16, 4, B, N1, S1, D), i8 = bi_tensor(ACL_INT8, 1, N1, 0, 0, 0);
    fag_args a = dense(FAG_V2);
    /* dy (4th) before attentionIn (12th) before keepProb (17th) before the gradients */
    a.ain = h_o.t, a.keep = 2, a.dq = h_q.t, fag_expect(&a, INVALID, "attentionInOptional dtype", NULL);
    a.dy = h_o.t, fag_expect(&a, INVALID, "dy dtype", NULL);
    /* dy's shape relates to inputLayout (21st): keepProb (17th) is reported first */
    a = dense(FAG_V2), a.dy = w_o.t, a.keep = 2, fag_expect(&a, INVALID, "keepProb", NULL);
    a.keep = 1, a.dq = h_q.t, fag_expect(&a, INVALID, "dy must have shape", NULL);
    /* the gradients come in declaration order, after every input and attribute */
    a = dense(FAG_V2), a.dq = h_q.t, a.mode = 9, fag_expect(&a, INVALID, "sparseMode", NULL);
    a = dense(FAG_V2), a.dv = w_o.t, a.dq = h_q.t, fag_expect(&a, INVALID, "dqOut dtype", NULL);
    /* V5: dsinkOut (last) after dqOut; the rope gradient check after the sizes */
    a = tnd(), a.sink = sink.t, a.dq = h_q.t, fag_expect(&a, INVALID, "dqOut", NULL);
    a = tnd(), a.qr = nqr.t, a.kr = nkr.t, a.dkr = ndkr.t, a.sil = (char *)"bad";
    fag_expect(&a, INVALID, "softmaxInLayout", NULL);
    a.sil = NULL, fag_expect(&a, INVALID, "dqRopeOut", NULL);
    /* V3: sinkInOptional (13th) before prefixOptional (14th) */
    dev_tensor m = bi_tensor(ACL_BOOL, 2, S1, S2, 0, 0);
    a = dense(FAG_V3), a.sink = i8.t, a.dsink = dsink.t, a.prefix = (const aclIntArray *)(uintptr_t)0x5;
    a.mask = m.t; /* with a mask the prefix is examined */
    fag_expect(&a, INVALID, "sinkInOptional dtype", NULL);
    a.sink = sink.t, fag_expect(&a, INVALID, "prefixOptional is not a live aclIntArray", NULL);
    dt_free(&h_o), dt_free(&w_o), dt_free(&h_q), dt_free(&i8), dt_free(&m);
}

/* The executor belongs to the function that created it; the second phase's checks (§6.6). */
static void second_phase(void)
{
    tc_context("second phase");
    aclrtStream stream;
    aclrtCreateStream(&stream);
    for (int fn = FAG_V1; fn <= FAG_V5; fn++) {
        fag_args a = base((fag_fn)fn);
        uint64_t bytes = 0;
        aclOpExecutor *e = NULL;
        a.ws = &bytes, a.ex = &e;
        if (!TC_CHECK(fag_call(&a) == ACLNN_SUCCESS, "first phase: %s", aclGetRecentErrMsg()))
            continue;
        const fag_fn other = fn == FAG_V1 ? FAG_V2 : FAG_V1;
        TC_CHECK(fag_call_run(other, NULL, 0, e, stream) == INVALID, "another function's executor must be refused");
        const char *msg = aclGetRecentErrMsg();
        TC_CHECK(msg && strstr(msg, "was created for") && strstr(msg, fag_run_name((fag_fn)fn)),
                 "message names the creating function: %s", msg ? msg : "(none)");
        TC_CHECK(aclnnFlashAttentionScoreV2(NULL, 0, e, stream) == INVALID, "a forward function refuses it");
        aclGetRecentErrMsg();
        void *w = NULL;
        if (bytes > 0) {
            TC_CHECK(fag_call_run((fag_fn)fn, NULL, bytes, e, stream) == NULLPTR, "workspace NULL");
            TC_CHECK(aclrtMalloc(&w, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "workspace allocation");
        }
        /* the failed NULL-workspace run consumed a single-use executor: make a new one */
        if (bytes > 0 && !TC_CHECK(fag_call(&a) == ACLNN_SUCCESS, "first phase again"))
            continue;
        TC_CHECK(fag_call_run((fag_fn)fn, w, bytes, e, stream) == ACLNN_SUCCESS, "run: %s", aclGetRecentErrMsg());
        TC_CHECK(fag_call_run((fag_fn)fn, w, bytes, e, stream) == INVALID, "a single-use executor runs once");
        aclGetRecentErrMsg();
        if (w)
            aclrtFree(w);
    }
    TC_CHECK(aclnnFlashAttentionScoreGrad(NULL, 0, NULL, stream) == NULLPTR, "NULL executor");
    aclGetRecentErrMsg();
    aclrtDestroyStream(stream);
}

void fa_bad_input_backward(void)
{
    nulls();
    operands();
    statistics();
    rope();
    sinks();
    shared();
    order();
    second_phase();
}
