/*
 * Every validation rule of the forward operators (semantics §0.5, §0.6, §1, §2): the code
 * (161001 for a NULL required pointer, 161002 for everything else), the validation order (NULLs
 * first; then the first failing parameter in declaration order, relational checks charged to their
 * last parameter), and a message naming the function and the parameter as declared.  Part of
 * cann_fa_bad_input (test_fa_bad_input.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bad_input_fixture.h"

static fa_args dense(fa_fn fn)
{
    fa_args a = {.fn = fn, .q = tq.t, .k = tk.t, .v = tv.t, .smax = tmax.t, .ssum = tsum.t, .out = tout.t,
                 .scale = 0.3, .keep = 1, .pre = 2147483647, .next = 2147483647, .head_num = N1, .pse_type = 1,
                 .layout = bnsd, .ws = &ws, .ex = &ex};
    return a;
}

static fa_args tnd(fa_fn fn)
{
    fa_args a = {.fn = fn, .q = nq.t, .k = nk.t, .v = nv.t, .smax = nmax.t, .ssum = nsum.t, .out = nout.t,
                 .aq = aq, .akv = akv, .scale = 0.3, .keep = 1, .pre = 2147483647, .next = 2147483647,
                 .head_num = N1, .pse_type = 1, .layout = tnd_s, .ws = &ws, .ex = &ex};
    return a;
}

static void nulls(void)
{
    tc_context("required pointers");
    for (int fn = FA_V1; fn <= FA_V5; fn++) {
        const fa_args base = fn >= FA_VARLEN ? tnd((fa_fn)fn) : dense((fa_fn)fn);
        fa_expect(&base, ACLNN_SUCCESS, NULL, NULL);
        fa_args a = base;
        a.q = NULL, fa_expect(&a, NULLPTR, "query", NULL);
        a = base, a.k = NULL, fa_expect(&a, NULLPTR, "key", NULL);
        a = base, a.v = NULL, fa_expect(&a, NULLPTR, "value", NULL);
        a = base, a.layout = NULL, fa_expect(&a, NULLPTR, "inputLayout", NULL);
        a = base, a.smax = NULL, fa_expect(&a, NULLPTR, "softmaxMaxOut", NULL);
        a = base, a.ssum = NULL, fa_expect(&a, NULLPTR, "softmaxSumOut", NULL);
        a = base, a.out = NULL, fa_expect(&a, NULLPTR, "attentionOutOut", NULL);
        a = base, a.ws = NULL, fa_expect(&a, NULLPTR, "workspaceSize", NULL);
        a = base, a.ex = NULL, fa_expect(&a, NULLPTR, "executor", NULL);
        /* the first NULL in declaration order wins, and NULLs come before every other check */
        a = base, a.k = NULL, a.out = NULL, fa_expect(&a, NULLPTR, "key", NULL);
        a = base, a.q = (const aclTensor *)(uintptr_t)0x1234, a.smax = NULL, fa_expect(&a, NULLPTR, "softmaxMaxOut", NULL);
        /* reserved parameters are never examined; absent optional ones are fine */
        a = base, a.pad = (const aclTensor *)(uintptr_t)0x1234, a.sout = (const aclTensor *)(uintptr_t)0x5678;
        fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    }
}

static void handles_and_formats(void)
{
    tc_context("handles, formats, dtypes");
    dev_tensor dead = bi_tensor(ACL_FLOAT, 4, B, N1, S1, D);
    const aclTensor *dead_t = dead.t;
    aclDestroyTensor(dead.t);
    dead.t = NULL;
    fa_args a = dense(FA_V2);
    a.q = dead_t, fa_expect(&a, INVALID, "query", "not a live aclTensor");
    a = dense(FA_V2), a.v = (const aclTensor *)(uintptr_t)0x10, fa_expect(&a, INVALID, "value", "not a live");
    a = dense(FA_V2), a.mask = (const aclTensor *)&ws, fa_expect(&a, INVALID, "attenMaskOptional", "not a live");
    const int64_t qd[] = {B, N1, S1, D};
    aclTensor *nz = aclCreateTensor(qd, 4, ACL_FLOAT, NULL, 0, ACL_FORMAT_FRACTAL_NZ, NULL, 0, tq.dev);
    a = dense(FA_V2), a.q = nz, fa_expect(&a, INVALID, "query", "format");
    aclTensor *undef = aclCreateTensor(qd, 4, ACL_FLOAT, NULL, 0, ACL_FORMAT_UNDEFINED, NULL, 0, tq.dev);
    a = dense(FA_V2), a.q = undef, fa_expect(&a, INVALID, "query", "format");
    aclTensor *nchw = aclCreateTensor(qd, 4, ACL_FLOAT, NULL, 0, ACL_FORMAT_NCHW, NULL, 0, tq.dev);
    a = dense(FA_V2), a.q = nchw, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL); /* plain formats read as ND */
    aclTensor *i32 = aclCreateTensor(qd, 4, ACL_INT32, NULL, 0, ACL_FORMAT_ND, NULL, 0, tq.dev);
    a = dense(FA_V2), a.q = i32, fa_expect(&a, INVALID, "query dtype", "INT32");
    aclTensor *c64 = aclCreateTensor(qd, 4, ACL_COMPLEX64, NULL, 0, ACL_FORMAT_ND, NULL, 0, tq.dev);
    a = dense(FA_V2), a.q = c64, fa_expect(&a, INVALID, "query", "dtype");
    dev_tensor h = bi_tensor(ACL_FLOAT16, 4, B, N2, S2, D);
    a = dense(FA_V2), a.k = h.t, fa_expect(&a, INVALID, "key dtype", "query");
    a = dense(FA_V2), a.v = h.t, fa_expect(&a, INVALID, "value dtype", NULL);
    dev_tensor ho = bi_tensor(ACL_FLOAT16, 4, B, N1, S1, D);
    a = dense(FA_V2), a.out = ho.t, fa_expect(&a, INVALID, "attentionOutOut dtype", NULL);
    a = dense(FA_V2), a.smax = ho.t, fa_expect(&a, INVALID, "softmaxMaxOut dtype", "FLOAT");
    a = dense(FA_V2), a.ssum = ho.t, fa_expect(&a, INVALID, "softmaxSumOut dtype", NULL);
    aclDestroyTensor(nz), aclDestroyTensor(undef), aclDestroyTensor(nchw), aclDestroyTensor(i32), aclDestroyTensor(c64);
    dt_free(&h), dt_free(&ho), dt_free(&dead);
}

static void extents(void)
{
    tc_context("extents");
    const int64_t qd[] = {B, N1, S1, D}, small_storage[] = {B * N1 * S1 * D - 1};
    aclTensor *st = aclCreateTensor(qd, 4, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, small_storage, 1, tq.dev);
    fa_args a = dense(FA_V2);
    a.q = st, fa_expect(&a, INVALID, "query", "storage shape");
    aclTensor *nul = aclCreateTensor(qd, 4, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, NULL);
    a = dense(FA_V2), a.q = nul, fa_expect(&a, INVALID, "query", "NULL");
    aclTensor *mis = aclCreateTensor(qd, 4, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, (char *)tq.dev + 2);
    a = dense(FA_V2), a.q = mis, fa_expect(&a, INVALID, "query", "aligned");
    aclTensor *off = aclCreateTensor(qd, 4, ACL_FLOAT, NULL, 1, ACL_FORMAT_ND, NULL, 0, tq.dev);
    a = dense(FA_V2), a.q = off, fa_expect(&a, INVALID, "query", "allocation");
    const int64_t od[] = {B, N1, S1, D + 1}; /* a view wider than its allocation */
    dev_tensor o8 = bi_tensor(ACL_FLOAT, 4, B, N1, S1, D + 1);
    aclTensor *wide = aclCreateTensor(od, 4, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, tout.dev);
    a = dense(FA_V2), a.out = wide, fa_expect(&a, INVALID, "attentionOutOut", "allocation");
    const int64_t zero[] = {B, N1, 0, D};
    aclTensor *z = aclCreateTensor(zero, 4, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, tq.dev);
    a = dense(FA_V2), a.q = z, fa_expect(&a, INVALID, "query", ">= 1");
    const int64_t ovl[] = {N1 * S1 * D, S1 * D, D, 0}; /* stride 0 on an output dim > 1 */
    aclTensor *over = aclCreateTensor(qd, 4, ACL_FLOAT, ovl, 0, ACL_FORMAT_ND, NULL, 0, tout.dev);
    a = dense(FA_V2), a.out = over, fa_expect(&a, INVALID, "attentionOutOut", "overlap");
    const int64_t sd[] = {B, N1, S1, 8}, sst[] = {N1 * S1 * 16, S1 * 16, 16, 1};
    dev_tensor big = bi_tensor(ACL_FLOAT, 4, B, N1, S1, 16);
    aclTensor *nc = aclCreateTensor(sd, 4, ACL_FLOAT, sst, 0, ACL_FORMAT_ND, NULL, 0, big.dev);
    a = dense(FA_V2), a.smax = nc, fa_expect(&a, INVALID, "softmaxMaxOut", "contiguous");
    a = dense(FA_V2), a.ssum = nc, fa_expect(&a, INVALID, "softmaxSumOut", "contiguous");
    /* untracked host memory cannot be range-checked and is trusted */
    float *host = calloc((size_t)(B * N1 * S1 * D), sizeof *host);
    aclTensor *ht = aclCreateTensor(qd, 4, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, host);
    a = dense(FA_V2), a.q = ht, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    aclDestroyTensor(st), aclDestroyTensor(nul), aclDestroyTensor(mis), aclDestroyTensor(off), aclDestroyTensor(wide);
    aclDestroyTensor(z), aclDestroyTensor(over), aclDestroyTensor(nc), aclDestroyTensor(ht);
    dt_free(&o8), dt_free(&big);
    free(host);
}

static void sizes(void)
{
    tc_context("sizes");
    fa_args a = dense(FA_V2);
    a.head_num = 3, fa_expect(&a, INVALID, "headNum", "N1 = 4");
    dev_tensor r3 = bi_tensor(ACL_FLOAT, 3, B, S1, N1 * D, 0);
    a = dense(FA_V2), a.q = r3.t, fa_expect(&a, INVALID, "query", "4 dims");
    dev_tensor kb = bi_tensor(ACL_FLOAT, 4, B + 1, N2, S2, D);
    a = dense(FA_V2), a.k = kb.t, fa_expect(&a, INVALID, "key batch size", NULL);
    dev_tensor vs = bi_tensor(ACL_FLOAT, 4, B, N2, S2 + 1, D);
    a = dense(FA_V2), a.v = vs.t, fa_expect(&a, INVALID, "value sequence length", NULL);
    dev_tensor k3 = bi_tensor(ACL_FLOAT, 4, B, 3, S2, D), v3 = bi_tensor(ACL_FLOAT, 4, B, 3, S2, D);
    a = dense(FA_V2), a.k = k3.t, a.v = v3.t, fa_expect(&a, INVALID, "key head count", "divide");
    dev_tensor kd = bi_tensor(ACL_FLOAT, 4, B, N2, S2, D + 2);
    a = dense(FA_V2), a.k = kd.t, fa_expect(&a, INVALID, "key head dim", NULL);
    dev_tensor vn = bi_tensor(ACL_FLOAT, 4, B, N2 * 2, S2, D);
    a = dense(FA_V2), a.v = vn.t, fa_expect(&a, INVALID, "value head count", NULL);
    /* BSH: H1 must split into headNum heads, H2 and H3 into heads of D / Dv */
    char bsh[] = "BSH";
    dev_tensor hq = bi_tensor(ACL_FLOAT, 3, B, S1, 30, 0), hk = bi_tensor(ACL_FLOAT, 3, B, S2, 16, 0), hv = bi_tensor(ACL_FLOAT, 3, B, S2, 16, 0);
    dev_tensor hmax = bi_tensor(ACL_FLOAT, 4, B, 4, S1, 8);
    a = dense(FA_V2), a.layout = bsh, a.q = hq.t, a.k = hk.t, a.v = hv.t, a.smax = hmax.t, a.ssum = hmax.t;
    fa_expect(&a, INVALID, "query hidden size", "headNum");
    dev_tensor hq2 = bi_tensor(ACL_FLOAT, 3, B, S1, 32, 0), hk2 = bi_tensor(ACL_FLOAT, 3, B, S2, 12, 0);
    a.q = hq2.t, a.k = hk2.t, fa_expect(&a, INVALID, "key hidden size", NULL);
    dev_tensor hv2 = bi_tensor(ACL_FLOAT, 3, B, S2, 9, 0);
    a.k = hk.t, a.v = hv2.t, fa_expect(&a, INVALID, "value hidden size", NULL);
    a.v = hv.t, a.head_num = 0, fa_expect(&a, INVALID, "headNum", "[1, 256]");
    /* limits: D <= 1024, N <= 256 */
    dev_tensor bq = bi_tensor(ACL_FLOAT, 4, 1, 1, 1, 1025), bk = bi_tensor(ACL_FLOAT, 4, 1, 1, 1, 1025);
    dev_tensor bm = bi_tensor(ACL_FLOAT, 4, 1, 1, 1, 8);
    a = dense(FA_V2), a.q = bq.t, a.k = bk.t, a.v = bk.t, a.smax = bm.t, a.ssum = bm.t, a.out = bq.t, a.head_num = 1;
    fa_expect(&a, INVALID, "head dim D", "1024");
    dev_tensor nq2 = bi_tensor(ACL_FLOAT, 4, 1, 257, 1, 2), nk2 = bi_tensor(ACL_FLOAT, 4, 1, 257, 1, 2);
    a = dense(FA_V2), a.q = nq2.t, a.k = nk2.t, a.v = nk2.t, a.head_num = 257;
    fa_expect(&a, INVALID, "head count", "256");
    /* outputs must have the shape the inputs imply */
    dev_tensor wo = bi_tensor(ACL_FLOAT, 4, B, N1, S1, D + 1);
    a = dense(FA_V2), a.out = wo.t, fa_expect(&a, INVALID, "attentionOutOut must have shape", NULL);
    dev_tensor wm = bi_tensor(ACL_FLOAT, 4, B, N1, S1, 4);
    a = dense(FA_V2), a.smax = wm.t, fa_expect(&a, INVALID, "softmaxMaxOut must have shape", NULL);
    a = dense(FA_V2), a.ssum = wm.t, fa_expect(&a, INVALID, "softmaxSumOut must have shape", NULL);
    dev_tensor *all[] = {&r3, &kb, &vs, &k3, &v3, &kd, &vn, &hq, &hk, &hv, &hmax, &hq2, &hk2, &hv2, &bq, &bk, &bm,
                         &nq2, &nk2, &wo, &wm};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        dt_free(all[k]);
}

static void attributes(void)
{
    tc_context("attributes");
    fa_args a = dense(FA_V2);
    char bad[] = "BSDN", low[] = "bnsd", tnd_in_dense[] = "TND", bsnd[] = "BSND";
    a.layout = bad, fa_expect(&a, INVALID, "inputLayout", "\"BSDN\"");
    a.layout = low, fa_expect(&a, INVALID, "inputLayout", NULL);
    a.layout = tnd_in_dense, fa_expect(&a, INVALID, "inputLayout", NULL);
    char *longs = malloc(200);
    memset(longs, 'B', 199), longs[199] = 0;
    a.layout = longs, fa_expect(&a, INVALID, "inputLayout", NULL);
    free(longs);
    char *unterminated = malloc(64); /* at most 64 bytes are read: ASan checks the 65th is not */
    memset(unterminated, 'B', 64);
    a.layout = unterminated, fa_expect(&a, INVALID, "inputLayout", NULL);
    a = tnd(FA_V5), a.sml = unterminated, fa_expect(&a, INVALID, "softmaxOutLayout", NULL);
    free(unterminated);
    a = tnd(FA_VARLEN), a.layout = bsnd, fa_expect(&a, INVALID, "inputLayout", "\"TND\"");
    a = dense(FA_V2), a.scale = NAN, fa_expect(&a, INVALID, "scaleValueOptional must be finite", NULL);
    a = dense(FA_V1), a.scale = INFINITY, fa_expect(&a, INVALID, "scaleValue must be finite", NULL);
    a = dense(FA_V1), a.scale = 1e39, fa_expect(&a, INVALID, "scaleValue must be finite and within float's range", "1e+39");
    a = dense(FA_V3), a.scale = -1e300, fa_expect(&a, INVALID, "scaleValue must be finite and within float's range", NULL);
    a = dense(FA_V2), a.keep = 1.5;
    fa_expect(&a, INVALID, "aclnnFlashAttentionScoreV2GetWorkspaceSize: keepProbOptional must be in (0, 1], got 1.5",
              NULL);
    a.keep = 0, fa_expect(&a, INVALID, "keepProbOptional", NULL);
    a.keep = -0.5, fa_expect(&a, INVALID, "keepProbOptional", NULL);
    a = dense(FA_V3), a.keep = NAN, fa_expect(&a, INVALID, "keepProb must be in (0, 1]", NULL);
    a = dense(FA_V2), a.inner = 3, fa_expect(&a, INVALID, "innerPreciseOptional", NULL);
    a = dense(FA_V1), a.inner = -1, fa_expect(&a, INVALID, "innerPrecise", NULL);
    a = dense(FA_V2), a.mode = 7, fa_expect(&a, INVALID, "sparseModeOptional", "[0, 6]");
    a = dense(FA_V2), a.mode = -1, fa_expect(&a, INVALID, "sparseModeOptional", NULL);
    a = tnd(FA_VARLEN), a.mode = 5, fa_expect(&a, INVALID, "sparseMode", "except 5");
    a = tnd(FA_V5), a.mode = 9, fa_expect(&a, INVALID, "sparseMode", NULL);
    a = tnd(FA_V5), a.mode = 8, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL); /* no mask: nothing masked */
    char sml_bad[] = "BSND", sml_same[] = "same_as_input", sml_empty[] = "";
    a = tnd(FA_V5), a.sml = sml_bad, fa_expect(&a, INVALID, "softmaxOutLayout", "same_as_input");
    a.sml = sml_same, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.sml = sml_empty, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    /* pre/next take any value */
    a = dense(FA_V2), a.pre = INT64_MIN, a.next = INT64_MAX, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
}

static void dropout(void)
{
    tc_context("dropout");
    const int64_t bytes = (B * N1 * S1 * S2 + 7) / 8;
    dev_tensor dm = bi_tensor(ACL_UINT8, 1, bytes, 0, 0, 0), small = bi_tensor(ACL_UINT8, 1, bytes - 1, 0, 0, 0);
    dev_tensor f32 = bi_tensor(ACL_FLOAT, 1, bytes, 0, 0, 0), two = bi_tensor(ACL_UINT8, 2, 2, bytes, 0, 0);
    fa_args a = dense(FA_V2);
    a.keep = 0.5, fa_expect(&a, INVALID, "dropMaskOptional is absent", "keepProbOptional");
    a.drop = dm.t, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.drop = small.t, fa_expect(&a, INVALID, "dropMaskOptional", "at least");
    a.drop = f32.t, fa_expect(&a, INVALID, "dropMaskOptional dtype", "UINT8");
    const int64_t sd[] = {bytes}, ss[] = {2};
    aclTensor *strided = aclCreateTensor(sd, 1, ACL_UINT8, ss, 0, ACL_FORMAT_ND, NULL, 0, two.dev);
    a.drop = strided, fa_expect(&a, INVALID, "dropMaskOptional", "contiguous");
    /* keepProb = 1: the mask is ignored, whatever it is */
    a.keep = 1, a.drop = (const aclTensor *)(uintptr_t)0x77, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.drop = small.t, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    aclDestroyTensor(strided);
    dt_free(&dm), dt_free(&small), dt_free(&f32), dt_free(&two);
}

static void masks(void)
{
    tc_context("masks and prefix");
    dev_tensor m = bi_tensor(ACL_BOOL, 2, S1, S2, 0, 0), mh = bi_tensor(ACL_FLOAT16, 2, S1, S2, 0, 0);
    dev_tensor mw = bi_tensor(ACL_BOOL, 2, S1 + 1, S2, 0, 0), c2 = bi_tensor(ACL_UINT8, 2, 2048, 2048, 0, 0);
    dev_tensor c3 = bi_tensor(ACL_BOOL, 4, 1, 1, 3072, 2048), mbn = bi_tensor(ACL_BOOL, 4, B, N1, S1, S2);
    dev_tensor m1n = bi_tensor(ACL_BOOL, 4, 1, N1, S1, S2);
    fa_args a = dense(FA_V2);
    a.mask = mh.t, fa_expect(&a, INVALID, "attenMaskOptional dtype", "BOOL or UINT8");
    a.mask = mw.t, fa_expect(&a, INVALID, "attenMaskOptional must have shape", "sparseModeOptional 0");
    a.mask = m1n.t, fa_expect(&a, INVALID, "attenMaskOptional must have shape", NULL);
    a.mask = m.t, a.mode = 2, fa_expect(&a, INVALID, "attenMaskOptional", "[2048, 2048]");
    a.mask = c2.t, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.mode = 6, fa_expect(&a, INVALID, "attenMaskOptional", "[3072, 2048]");
    a.mask = m.t, a.mode = 5, fa_expect(&a, INVALID, "attenMaskOptional", "(B > 1)");
    a.mask = mbn.t, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    /* mode 6: prefix with exactly B entries >= 0, only read with a mask */
    const int64_t p_ok[] = {1, 9}, p_neg[] = {1, -1}, p_short[] = {1};
    aclIntArray *pok = aclCreateIntArray(p_ok, 2), *pneg = aclCreateIntArray(p_neg, 2);
    aclIntArray *pshort = aclCreateIntArray(p_short, 1), *pdead = aclCreateIntArray(p_ok, 2);
    aclDestroyIntArray(pdead);
    a = dense(FA_V2), a.mode = 6, a.mask = c3.t;
    fa_expect(&a, INVALID, "prefixOptional is absent", "sparseModeOptional 6");
    a.prefix = pok, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.prefix = pneg, fa_expect(&a, INVALID, "prefixOptional[1] must be >= 0", NULL);
    a.prefix = pshort, fa_expect(&a, INVALID, "prefixOptional must have exactly B = 2 entries", NULL);
    a.prefix = pdead, fa_expect(&a, INVALID, "prefixOptional", "not a live aclIntArray");
    a.mask = NULL, a.prefix = pneg, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL); /* rule 0: not read */
    /* TND element masks: [maxS1, maxS2] or [T1, T2] only */
    dev_tensor tl = bi_tensor(ACL_BOOL, 2, 4, 5, 0, 0), dg = bi_tensor(ACL_BOOL, 4, 1, 1, T1, T2), bad = bi_tensor(ACL_BOOL, 4, B, 1, 4, 5);
    a = tnd(FA_VARLEN), a.mask = tl.t, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.mask = dg.t, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.mask = bad.t, fa_expect(&a, INVALID, "attenMaskOptional must have shape", "[maxS1, maxS2]");
    /* mode 6 allows at most 2048 batches */
    dev_tensor q2 = bi_tensor(ACL_FLOAT, 4, 2049, 1, 1, 1), m2 = bi_tensor(ACL_FLOAT, 4, 2049, 1, 1, 8);
    a = dense(FA_V2), a.q = q2.t, a.k = q2.t, a.v = q2.t, a.out = q2.t, a.smax = m2.t, a.ssum = m2.t, a.head_num = 1;
    a.mode = 6, fa_expect(&a, INVALID, "sparseModeOptional 6", "2048");
    aclDestroyIntArray(pok), aclDestroyIntArray(pneg), aclDestroyIntArray(pshort);
    dev_tensor *all[] = {&m, &mh, &mw, &c2, &c3, &mbn, &m1n, &tl, &dg, &bad, &q2, &m2};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        dt_free(all[k]);
}

static void pse(void)
{
    tc_context("pse");
    dev_tensor p = bi_tensor(ACL_FLOAT, 4, B, N1, S1, S2), ph = bi_tensor(ACL_FLOAT16, 4, B, N1, S1, S2);
    dev_tensor pw = bi_tensor(ACL_FLOAT, 4, B, N1, S1, S2 + 1), p1 = bi_tensor(ACL_FLOAT, 4, 1, N1, 1, S2);
    dev_tensor sl = bi_tensor(ACL_FLOAT, 2, B, N1, 0, 0), slw = bi_tensor(ACL_FLOAT, 2, N1, B, 0, 0), slh = bi_tensor(ACL_FLOAT16, 1, N1, 0, 0, 0);
    fa_args a = dense(FA_V2);
    a.pse = p.t, a.pse_type = 4, fa_expect(&a, INVALID, "pseTypeOptional", "[0, 3]");
    a.pse = NULL, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL); /* pseType is ignored without a pse */
    a.pse = ph.t, a.pse_type = 0, fa_expect(&a, INVALID, "realShiftOptional dtype", "query");
    a.pse = p.t, a.pse_type = 2, fa_expect(&a, INVALID, "realShiftOptional", "ALiBi");
    a.pse = sl.t, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.pse = slw.t, fa_expect(&a, INVALID, "realShiftOptional", "[B, N1]");
    a.pse = slh.t, a.pse_type = 3, fa_expect(&a, INVALID, "realShiftOptional dtype", "FLOAT");
    a.pse = pw.t, a.pse_type = 1, fa_expect(&a, INVALID, "realShiftOptional must have shape", NULL);
    a.pse = p1.t, fa_expect(&a, INVALID, "realShiftOptional must have shape", NULL); /* [1, N1, 1, S2] is not listed */
    a = dense(FA_V1), a.pse = ph.t, fa_expect(&a, INVALID, "realShiftOptional dtype", NULL);
    /* the compressed form: S1 = S2 > 1024 and modes 0, 2, 3 only */
    dev_tensor cq = bi_tensor(ACL_FLOAT, 4, 1, 1, 1100, 2), ck = bi_tensor(ACL_FLOAT, 4, 1, 1, 1090, 2);
    dev_tensor cm = bi_tensor(ACL_FLOAT, 4, 1, 1, 1100, 8), cp = bi_tensor(ACL_FLOAT, 4, 1, 1, 1024, 1100);
    dev_tensor cp2 = bi_tensor(ACL_FLOAT, 4, 1, 1, 1024, 1090), c2 = bi_tensor(ACL_BOOL, 2, 2048, 2048, 0, 0);
    a = dense(FA_V2), a.q = cq.t, a.k = cq.t, a.v = cq.t, a.out = cq.t, a.smax = cm.t, a.ssum = cm.t, a.head_num = 1;
    a.pse = cp.t, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.mask = c2.t, a.mode = 4, fa_expect(&a, INVALID, "sparseModeOptional 4", "realShiftOptional");
    a.mode = 3, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.mask = NULL, a.mode = 0, a.k = ck.t, a.v = ck.t, a.pse = cp2.t;
    fa_expect(&a, INVALID, "realShiftOptional", "equal query and key lengths");
    const int64_t cd[] = {1, 1, 1024, 1100}, cst[] = {0, 0, 0, 1}; /* broadcast rows decompress like any */
    aclTensor *bc = aclCreateTensor(cd, 4, ACL_FLOAT, cst, 0, ACL_FORMAT_ND, NULL, 0, cp.dev);
    a.k = cq.t, a.v = cq.t, a.pse = bc, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    /* TND: [B or 1, N1, 1024, P2] with P2 >= max S2_b */
    dev_tensor tp = bi_tensor(ACL_FLOAT, 4, B, N1, 1024, 5), tp4 = bi_tensor(ACL_FLOAT, 4, B, N1, 1024, 4);
    dev_tensor tp3 = bi_tensor(ACL_FLOAT, 3, N1, 1024, 5, 0);
    a = tnd(FA_VARLEN), a.pse = tp.t, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.pse = tp4.t, fa_expect(&a, INVALID, "realShiftOptional must have shape", "P2 >= 5");
    a.pse = tp3.t, fa_expect(&a, INVALID, "realShiftOptional", NULL);
    aclDestroyTensor(bc);
    dev_tensor *all[] = {&p, &ph, &pw, &p1, &sl, &slw, &slh, &cq, &ck, &cm, &cp, &cp2, &c2, &tp, &tp4, &tp3};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        dt_free(all[k]);
}

static void sink_rope_lengths(void)
{
    tc_context("sink, rope, TND lengths");
    dev_tensor s = bi_tensor(ACL_FLOAT, 1, N1, 0, 0, 0), sh = bi_tensor(ACL_FLOAT16, 1, N1, 0, 0, 0), sw = bi_tensor(ACL_FLOAT, 1, N1 + 1, 0, 0, 0);
    fa_args a = dense(FA_V3);
    a.sink = s.t, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.sink = sh.t, fa_expect(&a, INVALID, "sinkOptional dtype", "FLOAT");
    a.sink = sw.t, fa_expect(&a, INVALID, "sinkOptional must have shape [4]", NULL);
    a = tnd(FA_V5), a.qr = nqr.t, a.kr = nkr.t, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    a.kr = NULL, fa_expect(&a, INVALID, "keyRope", "together");
    a.qr = NULL, a.kr = nkr.t, fa_expect(&a, INVALID, "queryRope and keyRope must be given together", NULL);
    dev_tensor qrh = bi_tensor(ACL_FLOAT16, 3, T1, N1, 4, 0), qrt = bi_tensor(ACL_FLOAT, 3, T1 + 1, N1, 4, 0);
    dev_tensor krd = bi_tensor(ACL_FLOAT, 3, T2, N2, 5, 0), qrb = bi_tensor(ACL_FLOAT, 3, T1, N1, 1025, 0);
    a.qr = qrh.t, fa_expect(&a, INVALID, "queryRope dtype", NULL);
    a.qr = qrt.t, fa_expect(&a, INVALID, "queryRope must have shape", NULL);
    a.qr = nqr.t, a.kr = krd.t, fa_expect(&a, INVALID, "keyRope must have shape", NULL);
    a.qr = qrb.t, fa_expect(&a, INVALID, "queryRope head dim Dr", "1024");
    /* TND lengths: both present, same length >= 1, cumulative, last = T */
    const int64_t dec[] = {4, 2}, short_t[] = {2, 5}, three[] = {2, 4, 6};
    aclIntArray *adec = aclCreateIntArray(dec, 2), *ashort = aclCreateIntArray(short_t, 2);
    aclIntArray *a3 = aclCreateIntArray(three, 3), *a0 = aclCreateIntArray(NULL, 0);
    a = tnd(FA_VARLEN), a.aq = NULL, fa_expect(&a, INVALID, "actualSeqQLenOptional is absent", NULL);
    a = tnd(FA_VARLEN), a.akv = NULL, fa_expect(&a, INVALID, "actualSeqKvLenOptional is absent", NULL);
    a = tnd(FA_VARLEN), a.aq = adec, fa_expect(&a, INVALID, "actualSeqQLenOptional must be cumulative", NULL);
    a = tnd(FA_VARLEN), a.aq = ashort, fa_expect(&a, INVALID, "actualSeqQLenOptional last entry", "T1 (6)");
    a = tnd(FA_VARLEN), a.akv = a3, fa_expect(&a, INVALID, "actualSeqKvLenOptional must have as many entries", NULL);
    a = tnd(FA_VARLEN), a.aq = a0, fa_expect(&a, INVALID, "actualSeqQLenOptional length", NULL);
    dev_tensor tm = bi_tensor(ACL_FLOAT, 3, T1, N1, 4, 0);
    a = tnd(FA_VARLEN), a.smax = tm.t, fa_expect(&a, INVALID, "softmaxMaxOut must have shape", "[T1, N1, 8]");
    dev_tensor tnt = bi_tensor(ACL_FLOAT, 3, N1, T1, 8, 0);
    a.smax = tnt.t, fa_expect(&a, ACLNN_SUCCESS, NULL, NULL);
    aclDestroyIntArray(adec), aclDestroyIntArray(ashort), aclDestroyIntArray(a3), aclDestroyIntArray(a0);
    dev_tensor *all[] = {&s, &sh, &sw, &qrh, &qrt, &krd, &qrb, &tm, &tnt};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        dt_free(all[k]);
}

/* The first failing argument in declaration order wins; relational checks count at their last
 * argument (here: shapes relate to inputLayout, masks to sparseMode). */
static void order(void)
{
    tc_context("validation order");
    dev_tensor i32 = bi_tensor(ACL_INT32, 4, B, N1, S1, D), kb = bi_tensor(ACL_FLOAT, 4, B + 1, N2, S2, D);
    dev_tensor mw = bi_tensor(ACL_BOOL, 2, S1 + 1, S2, 0, 0);
    fa_args a = dense(FA_V2);
    a.q = i32.t, a.keep = 2, fa_expect(&a, INVALID, "query dtype", NULL);
    a = dense(FA_V2), a.k = kb.t, a.scale = INFINITY, fa_expect(&a, INVALID, "scaleValueOptional", NULL);
    a = dense(FA_V2), a.head_num = 3, a.keep = 2, fa_expect(&a, INVALID, "keepProbOptional", NULL);
    a = dense(FA_V2), a.mask = mw.t, a.inner = 9, fa_expect(&a, INVALID, "innerPreciseOptional", NULL);
    a = dense(FA_V2), a.mask = mw.t, a.pse_type = 9, a.pse = tq.t, fa_expect(&a, INVALID, "attenMaskOptional", NULL);
    char bad[] = "XYZ";
    a = dense(FA_V2), a.layout = bad, a.mode = 7, fa_expect(&a, INVALID, "inputLayout", NULL);
    a = dense(FA_V2), a.k = kb.t, a.mode = 7, fa_expect(&a, INVALID, "key batch size", NULL);
    dt_free(&i32), dt_free(&kb), dt_free(&mw);
}

void fa_bad_input_forward(void)
{
    nulls();
    handles_and_formats();
    extents();
    sizes();
    attributes();
    dropout();
    masks();
    pse();
    sink_rope_lengths();
    order();
}
