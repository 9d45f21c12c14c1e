/*
 * IncreFlashAttentionV4's second phase (semantics §0.6, §4.3, §6.6): the device data it reads
 * only then — block-table entries (each used entry in [0, blockNum), unused ones never read) and
 * kvPaddingSize (read at every run of a repeatable executor) — and the allocation re-check of its
 * operands.  A failure gives 161002 with a message and leaves every output byte untouched.  Also:
 * results are bit-identical for 1 and 2 threads.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "ifa_run.h"

static aclnnStatus phase1(const ifa_run *r, aclOpExecutor **ex, uint64_t *ws) { return ifa_first_phase(r, ws, ex); }

/* The second phase with a fresh workspace. */
static aclnnStatus phase2(aclOpExecutor *ex, uint64_t ws)
{
    void *w = NULL;
    if (ws)
        aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    const aclnnStatus st = aclnnIncreFlashAttentionV4(w, ws, ex, NULL);
    aclrtFree(w);
    return st;
}

/* The output allocation still holds the sentinel the harness filled it with. */
static bool untouched(const ifa_run *r)
{
    unsigned char *img = dt_download(&r->tout);
    const bool same = memcmp(img, r->tout.host, r->tout.bytes) == 0;
    free(img);
    return same;
}

static void expect_failure(aclnnStatus st, const char *needle1, const char *needle2, const ifa_run *r)
{
    const char *msg = aclGetRecentErrMsg();
    TC_CHECK(st == ACLNN_ERR_PARAM_INVALID, "expected 161002, got %d (%s)", st, msg ? msg : "no message");
    TC_CHECK(msg && strstr(msg, "aclnnIncreFlashAttentionV4: ") == msg, "message must name the function: %s",
             msg ? msg : "(none)");
    TC_CHECK(msg && strstr(msg, needle1), "message must contain \"%s\": %s", needle1, msg ? msg : "(none)");
    if (needle2)
        TC_CHECK(msg && strstr(msg, needle2), "message must contain \"%s\": %s", needle2, msg ? msg : "(none)");
    TC_CHECK(untouched(r), "a failed second phase wrote to attentionOut");
}

static ifa_case paged_case(void)
{
    ifa_case c = ifa_case_default();
    c.form = IFA_PAGED4, c.block_size = 4, c.W = 3;
    c.act_count = 2, c.L[0] = 12, c.L[1] = 5; /* batch 0 uses 3 entries, batch 1 uses 2 */
    return c;
}

static void set_entry(ifa_run *r, int b, int k, int32_t v)
{
    int32_t *dev = (int32_t *)r->tbt.dev + b * r->c->W + k;
    if (aclrtMemcpy(dev, sizeof v, &v, sizeof v, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
        TC_CHECK(false, "writing a block-table entry failed");
}

static void block_table(void)
{
    const ifa_case c = paged_case();
    const struct { int b, k; int32_t v; const char *where; } bad[] = {
        {0, 2, 0, "[0][2]"}, {1, 1, -1, "[1][1]"}, {0, 0, 1 << 30, "[0][0]"}, {1, 0, INT32_MIN, "[1][0]"}};
    for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
        tc_context("block-table entry %s = %d", bad[t].where, bad[t].v);
        ifa_run r;
        ifa_build(&r, &c);
        aclOpExecutor *ex;
        uint64_t ws;
        TC_CHECK(phase1(&r, &ex, &ws) == ACLNN_SUCCESS, "first phase: %s", aclGetRecentErrMsg());
        const int32_t v = bad[t].v ? bad[t].v : r.blocks; /* blockNum itself is one past the end */
        set_entry(&r, bad[t].b, bad[t].k, v);
        expect_failure(phase2(ex, ws), "blocktable", bad[t].where, &r);
        /* the executor was consumed by the failed run */
        TC_CHECK(phase2(ex, ws) == ACLNN_ERR_PARAM_INVALID, "a consumed executor must be refused");
        aclGetRecentErrMsg();
        ifa_free(&r);
    }

    tc_context("unused block-table entries are never read; a repeatable executor re-reads the table");
    ifa_run r;
    ifa_build(&r, &c);
    aclOpExecutor *ex;
    uint64_t ws;
    TC_CHECK(phase1(&r, &ex, &ws) == ACLNN_SUCCESS, "first phase: %s", aclGetRecentErrMsg());
    aclSetAclOpExecutorRepeatable(ex);
    set_entry(&r, 1, 2, -77); /* beyond batch 1's two blocks */
    TC_CHECK(phase2(ex, ws) == ACLNN_SUCCESS, "garbage in an unused entry: %s", aclGetRecentErrMsg());
    unsigned char *good = dt_download(&r.tout);
    const int32_t keep = r.table[1 * c.W + 1];
    set_entry(&r, 1, 1, r.blocks + 5);
    memcpy(r.tout.host, good, r.tout.bytes); /* "untouched" now means: still the good result */
    expect_failure(phase2(ex, ws), "blocktable", "[1][1]", &r);
    set_entry(&r, 1, 1, keep);
    TC_CHECK(phase2(ex, ws) == ACLNN_SUCCESS, "the repaired table runs: %s", aclGetRecentErrMsg());
    unsigned char *again = dt_download(&r.tout);
    TC_CHECK(memcmp(good, again, r.tout.bytes) == 0, "repeated runs give identical outputs");
    free(good), free(again);
    aclDestroyAclOpExecutor(ex);
    ifa_free(&r);
}

static void padding(void)
{
    tc_context("kvPaddingSize is read at every run");
    ifa_case c = ifa_case_default();
    c.B = 3, c.S[0] = 20, c.act_count = 3, c.L[0] = 6, c.L[1] = 13, c.L[2] = 0, c.left_pad = true;
    c.by_position = true; /* the stored cache does not depend on the padding */
    c.mask_rank = 2, c.pse = true;
    ifa_run r;
    ifa_build(&r, &c);
    aclOpExecutor *ex;
    uint64_t ws;
    TC_CHECK(phase1(&r, &ex, &ws) == ACLNN_SUCCESS, "first phase: %s", aclGetRecentErrMsg());
    aclSetAclOpExecutorRepeatable(ex);
    const int64_t pads[] = {0, 3, 7, 14, 100, -4};
    const int64_t n = (int64_t)c.B * c.N1 * c.D;
    for (size_t k = 0; k < sizeof pads / sizeof pads[0]; k++) {
        tc_context("kvPaddingSize %lld at run %zu of one executor", (long long)pads[k], k);
        aclrtMemcpy(r.tpad.dev, 8, &pads[k], 8, ACL_MEMCPY_HOST_TO_DEVICE);
        TC_CHECK(phase2(ex, ws) == ACLNN_SUCCESS, "run: %s", aclGetRecentErrMsg());
        /* the same logical call planned afresh with that padding (tests/reference checks that one) */
        ifa_case d = c;
        d.pad = pads[k];
        double *want = malloc((size_t)n * sizeof *want);
        ifa_run_case("fresh call with the same padding", &d, want);
        tc_context("kvPaddingSize %lld at run %zu of one executor", (long long)pads[k], k);
        unsigned char *img = dt_download(&r.tout);
        int64_t diff = 0;
        for (int b = 0; b < c.B; b++)
            for (int h = 0; h < c.N1; h++)
                for (int e = 0; e < c.D; e++) {
                    int64_t idx[4];
                    ifa_seq_index(c.layout, c.D, b, h, 0, e, idx);
                    diff += dt_get(&r.tout, img, idx) != want[((int64_t)b * c.N1 + h) * c.D + e];
                }
        TC_CHECK(diff == 0, "%lld outputs differ from the fresh call's", (long long)diff);
        free(img), free(want);
    }
    aclDestroyAclOpExecutor(ex);
    ifa_free(&r);
}

/* Freed operand allocations are found by the second phase's re-check. */
static void freed(void)
{
    const char *what[] = {"kvPaddingSize", "blocktable", "key[0]", "value[0]"};
    for (int w = 0; w < 4; w++) {
        tc_context("%s freed between the phases", what[w]);
        ifa_case c = w == 0 ? ifa_case_default() : paged_case();
        if (w == 0)
            c.act_count = 1, c.L[0] = 4, c.left_pad = true, c.pad = 1;
        ifa_run r;
        ifa_build(&r, &c);
        aclOpExecutor *ex;
        uint64_t ws;
        TC_CHECK(phase1(&r, &ex, &ws) == ACLNN_SUCCESS, "first phase: %s", aclGetRecentErrMsg());
        dev_tensor *t = w == 0 ? &r.tpad : w == 1 ? &r.tbt : w == 2 ? &r.tk[0] : &r.tv[0];
        aclrtFree(t->dev);
        t->dev = NULL;
        expect_failure(phase2(ex, ws), what[w], "freed", &r);
        ifa_free(&r);
    }
}

static void threads(void)
{
    tc_context("1 and 2 threads give bit-identical outputs");
    ifa_case c = ifa_case_default();
    c.B = 2, c.N1 = 8, c.N2 = 2, c.D = 64, c.S[0] = 3000, c.mask_rank = 2, c.pse = true;
    c.act_count = 2, c.L[0] = 2999, c.L[1] = 1500;
    unsigned char *img[2];
    for (int t = 0; t < 2; t++) {
        omp_set_num_threads(t + 1);
        ifa_run r;
        ifa_build(&r, &c);
        aclOpExecutor *ex;
        uint64_t ws;
        TC_CHECK(phase1(&r, &ex, &ws) == ACLNN_SUCCESS, "first phase: %s", aclGetRecentErrMsg());
        TC_CHECK(phase2(ex, ws) == ACLNN_SUCCESS, "second phase: %s", aclGetRecentErrMsg());
        img[t] = dt_download(&r.tout);
        ifa_free(&r);
    }
    TC_CHECK(memcmp(img[0], img[1], 2 * (size_t)c.B * c.N1 * c.D) == 0, "outputs differ between thread counts");
    free(img[0]), free(img[1]);
}

int main(void)
{
    block_table();
    padding();
    freed();
    threads();
    return tc_summary("cann_ifa_device_data");
}
