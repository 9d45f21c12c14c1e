/*
 * aclnnSparseFlashAttentionGrad against tests/reference (semantics §5.5), on the forward's own
 * out and statistics: BSND (with padding positions on both sides: their gradients are 0) and TND
 * (zero-length batches), sparseMode 0 and 3, INT32 / INT64 lengths and indices, rope gradients,
 * Dv ≠ D, GQA with dKey / dValue summed over the group and over duplicate selections, FLOAT16 and
 * BFLOAT16, strided gradients; the identities of §9 f for the grad (every block once = dense
 * backward, mode 3 = causal backward); a zero-element query (success, workspace 0, nothing
 * written); a seeded sweep.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_sparse_flash_attention_grad.h"
#include "common/rng.h"
#include "sfa_harness.h"

static void run(const char *name, sfa_case c)
{
    c.backward = true;
    sfa_run_case(name, &c);
}

static void cases(void)
{
    sfa_case c = sfa_case_default();
    run("BSND", c);
    c.lens_q = c.lens_kv = true, c.S1 = 7, c.S2 = 25, c.len64 = true;
    run("BSND with padding positions on both sides (INT64 lengths)", c);
    c.mode = 3, c.idx64 = true, c.bs = 3;
    run("BSND padded, sparseMode 3, INT64 indices, block size 3", c);
    c = sfa_case_default();
    c.lq = c.lkv = "TND", c.B = 3;
    c.s1[0] = 3, c.s1[1] = 0, c.s1[2] = 4, c.s2[0] = 10, c.s2[1] = 5, c.s2[2] = 0;
    run("TND with zero-length batches", c);
    c.mode = 3;
    run("TND, sparseMode 3", c);
    c = sfa_case_default();
    c.D = 32, c.Dv = 24, c.Dr = 8;
    run("rope Dr 8, Dv 24 != D 32", c);
    c = sfa_case_default();
    c.N1 = 16, c.N2 = 1, c.Dr = 4, c.K = 12, c.bs = 2;
    run("MQA N2 = 1, G = 16, rope; duplicates summed", c);
    c = sfa_case_default();
    c.N1 = 6, c.N2 = 3, c.K = 16, c.bs = 1, c.s1[0] = 8;
    run("N2 = 3, many duplicates of single positions", c);
    c = sfa_case_default();
    c.dtype = TC_BF16, c.Dr = 4, c.lq = c.lkv = "TND";
    run("BFLOAT16, TND, rope", c);
    for (int st = ST_GAPS; st <= ST_REVERSED; st++) {
        c = sfa_case_default();
        c.strides = (fa_strides)st, c.Dr = 4, c.lens_q = c.lens_kv = true, c.S1 = 6, c.S2 = 21;
        run(st == ST_GAPS ? "strided views with gaps" : "reversed dims", c);
        c.lq = c.lkv = "TND";
        run(st == ST_GAPS ? "TND strided views with gaps" : "TND reversed dims", c);
    }
    c = sfa_case_default();
    c.lq = c.lkv = "TND", c.B = 1, c.s1[0] = 2, c.s2[0] = 512, c.N1 = 16, c.N2 = 1, c.D = 512, c.Dr = 64;
    c.K = 512, c.bs = 1, c.fill = SFA_FILL_ALL;
    run("the seed's head shape: D 512 + rope 64, 16 heads, K 512 of block size 1", c);
}

static void identities(void)
{
    for (int tnd = 0; tnd <= 1; tnd++)
        for (int mode = 0; mode <= 3; mode += 3)
            for (int fill = SFA_FILL_ALL; fill <= SFA_FILL_REVERSED; fill++) {
                sfa_case c = sfa_case_default();
                c.lq = c.lkv = tnd ? "TND" : "BSND", c.mode = mode, c.fill = (sfa_fill)fill, c.dense = true;
                c.bs = 3, c.K = 7, c.Dr = 4, c.lens_q = c.lens_kv = true, c.seed = 700 + tnd;
                char name[128];
                snprintf(name, sizeof name, "grad: every block %s, mode %d (%s) == dense%s backward",
                         fill == SFA_FILL_ALL ? "once" : "once, reversed", mode, c.lq, mode ? " causal" : "");
                run(name, c);
            }
}

static void sweep(void)
{
    tc_rng g = tc_rng_seed(77);
    for (int n = 0; n < 30; n++) {
        sfa_case c = sfa_case_default();
        c.lq = c.lkv = tc_rng_bool(&g, 0.5) ? "TND" : "BSND";
        sfa_draw_case(&c, &g);
        c.strides = (fa_strides)tc_rng_int(&g, 0, 2);
        c.seed = 8000 + n;
        char name[64];
        snprintf(name, sizeof name, "grad sweep case %d (seed %llu)", n, (unsigned long long)c.seed);
        run(name, c);
    }
}

/* A tensor with a zero-size dim over a small allocation. */
static aclTensor *empty_tensor(aclDataType dt, const int64_t *dims, void **dev)
{
    const int64_t strides[3] = {dims[1] * dims[2], dims[2], 1};
    aclrtMalloc(dev, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    return aclCreateTensor(dims, 3, dt, strides, 0, ACL_FORMAT_ND, NULL, 0, *dev);
}

/* A query with a zero-size dim: success, workspace 0, the run does nothing (semantics §5.2). */
static void empty_query(void)
{
    tc_context("zero-element query");
    const int64_t qd[3] = {0, 4, 16}, kd[3] = {8, 2, 16}, sd[3] = {2, 0, 2}, id[3] = {0, 2, 3};
    void *mem[7];
    aclTensor *q = empty_tensor(ACL_FLOAT16, qd, &mem[0]), *idx = empty_tensor(ACL_INT32, id, &mem[1]);
    aclTensor *dout = empty_tensor(ACL_FLOAT16, qd, &mem[2]), *out = empty_tensor(ACL_FLOAT16, qd, &mem[3]);
    aclTensor *smax = empty_tensor(ACL_FLOAT, sd, &mem[4]), *ssum = empty_tensor(ACL_FLOAT, sd, &mem[5]);
    aclTensor *dq = empty_tensor(ACL_FLOAT16, qd, &mem[6]);
    dev_tensor k = dt_simple(ACL_FLOAT16, 3, kd), v = dt_simple(ACL_FLOAT16, 3, kd), dk, dv;
    dt_layout(&dk, ACL_FLOAT16, 3, kd, ST_CONTIGUOUS, 0x5A), dt_upload(&dk);
    dt_layout(&dv, ACL_FLOAT16, 3, kd, ST_CONTIGUOUS, 0x5A), dt_upload(&dv);
    char tnd[] = "TND";
    uint64_t ws = 99;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnSparseFlashAttentionGradGetWorkspaceSize(
        q, k.t, v.t, idx, dout, out, smax, ssum, NULL, NULL, NULL, NULL, 0.1, 1, tnd, 0, 2147483647, 2147483647,
        false, dq, dk.t, dv.t, NULL, NULL, &ws, &ex);
    TC_CHECK(st == ACLNN_SUCCESS && ws == 0 && ex, "empty query: status %d, workspace %llu: %s", st,
             (unsigned long long)ws, st ? aclGetRecentErrMsg() : "");
    if (st == ACLNN_SUCCESS) {
        aclrtStream stream;
        aclrtCreateStream(&stream);
        st = aclnnSparseFlashAttentionGrad(NULL, 0, ex, stream);
        TC_CHECK(st == ACLNN_SUCCESS, "empty query: the second phase returned %d", st);
        aclrtDestroyStream(stream);
        unsigned char *img = dt_download(&dk);
        bool same = true;
        for (size_t b = 0; b < dk.bytes; b++)
            same = same && img[b] == 0x5A;
        TC_CHECK(same, "empty query: dKeyOut was written");
        free(img);
    }
    aclTensor *ts[] = {q, idx, dout, out, smax, ssum, dq};
    for (int n = 0; n < 7; n++)
        aclDestroyTensor(ts[n]), aclrtFree(mem[n]);
    dt_free(&k), dt_free(&v), dt_free(&dk), dt_free(&dv);
    tc_context("%s", "");
}

int main(void)
{
    cases();
    identities();
    sweep();
    empty_query();
    return tc_summary("cann_sfa_grad");
}
