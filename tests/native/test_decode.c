/* Incremental decode through the native API: paged KV (any block size, permuted and shared
 * physical blocks, both block layouts) == the contiguous cache gathered through the table (§9 h);
 * per-batch tensors of different lengths == one padded tensor; left padding (kv_starts) == the
 * trimmed cache (§9 o); int8 key/value with per-tensor / per-channel scale and offset == float
 * key/value holding (x + offset)·scale (§9 n); int8 output quantisation (§4.6: saturation,
 * NaN → 0, empty rows 0, every element written); GQA with many heads per kv head; long kv rows
 * where flash-decoding splits kick in; bad block-table entries rejected by fc_plan_run with
 * nothing written.  Every run is also checked against the reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "harness.h"
#include "harness_internal.h"

static const int ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
static const int kvl[8] = {40, 17, 0, 33, 1, 40, 29, 8};

static nt_case decode(uint64_t seed)
{
    nt_case c = nt_default();
    c.seed = seed;
    c.B = 4, c.N1 = 8, c.N2 = 2, c.D = 32, c.Dv = 32;
    c.Sq = 1, c.Skv = 40;
    c.lens = true, c.sq = ones, c.skv = kvl;
    c.layout = NT_BSND;
    c.stats = true;
    return c;
}

static nt_case paged(nt_case c, int bs, bool head_major, bool shared)
{
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = bs, c.kv.head_major_blocks = head_major;
    c.kv.spare_blocks = 3, c.kv.shared_blocks = shared;
    return c;
}

static void pages(void)
{
    const int sizes[] = {1, 3, 7, 16, 64, 128, 200};
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int hm = 0; hm < 2; hm++) {
            nt_case t = decode(10 + s * 2 + hm);
            nt_case p = paged(t, sizes[s], hm, s % 2 == 1);
            p.dt = t.dt = s % 3 == 0 ? FC_F16 : s % 3 == 1 ? FC_BF16 : FC_F32;
            p.out_dt = t.out_dt = p.dt;
            tc_context("paged == gathered: block size %d, %s blocks%s", sizes[s], hm ? "head-major" : "slot-major",
                       s % 2 ? ", shared blocks" : "");
            nt_same_data("paged vs gathered", &t, &p, true);
        }
    nt_case c = paged(decode(30), 5, false, false);
    c.Dr = 16, c.N1 = 4, c.N2 = 1, c.pad = 2;
    tc_context("paged with rope (k_rope paged through the same table), padded strides");
    nt_run(&c);
    c = paged(decode(31), 4, true, true);
    static const int sq[4] = {4, 3, 4, 2};
    c.Sq = 4, c.sq = sq, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("paged, 4 query rows per batch (speculative decode), bottom-right causal");
    nt_run(&c);
    c = paged(decode(32), 8, false, false);
    c.sink = NT_SINK_FINITE, c.softcap = 5, c.alibi.on = true;
    tc_context("paged with sink, softcap, ALiBi");
    nt_run(&c);
}

static void batches(void)
{
    const fc_dtype dts[3] = {FC_F32, FC_F16, FC_BF16};
    for (int k = 0; k < 3; k++) {
        nt_case t = decode(40 + k);
        t.dt = t.out_dt = dts[k], t.layout = (nt_layout)k;
        nt_case b = t;
        b.kv.mode = NT_KV_BATCHES;
        tc_context("per-batch tensors == padded (dtype %d, layout %d)", dts[k], k);
        nt_same_data("per-batch vs padded", &t, &b, true);
    }
    nt_case c = decode(43);
    c.kv.mode = NT_KV_BATCHES, c.Dr = 8, c.kv_bcast_seq = false, c.pad = 1, c.dim_stride = 2;
    tc_context("per-batch tensors with rope and strided features");
    nt_run(&c);
}

/* §9 o: kv_starts == the cache trimmed to [kv_starts[b], Skv_b). */
static void left_padding(void)
{
    for (int k = 0; k < 3; k++) {
        nt_case c = decode(50 + k);
        c.kv_starts = true;
        if (k == 1)
            c.sink = NT_SINK_FINITE;
        if (k == 2)
            c.N1 = 4, c.N2 = 4, c.Dr = 8, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
        tc_context("kv_starts (case %d)", k);
        nt_data d = nt_prepare(&c);
        nt_result rp, rt;
        nt_execute(&c, &d, &rp);
        /* the trimmed cache: batch b's columns [start, S2_b) moved to the front */
        nt_data t = d;
        int s2[8];
        const int E[3] = {c.D, d.Dv, c.Dr};
        double *src[3] = {d.k, d.v, d.kr}, *dst[3] = {NULL, NULL, NULL};
        for (int w = 0; w < 3; w++) {
            if (!E[w])
                continue;
            dst[w] = calloc((size_t)c.B * c.N2 * d.S2cap * E[w], sizeof(double));
            for (int b = 0; b < c.B; b++)
                for (int h = 0; h < c.N2; h++)
                    for (int j = (int)d.kv_starts[b]; j < d.s2[b]; j++)
                        memcpy(dst[w] + (((int64_t)b * c.N2 + h) * d.S2cap + j - d.kv_starts[b]) * E[w],
                               src[w] + (((int64_t)b * c.N2 + h) * d.S2cap + j) * E[w], sizeof(double) * E[w]);
        }
        for (int b = 0; b < c.B; b++)
            s2[b] = d.s2[b] - (int)d.kv_starts[b];
        t.k = dst[0], t.v = dst[1], t.kr = dst[2], t.s2 = s2, t.kv_starts = NULL;
        nt_case ct = c;
        ct.kv_starts = false;
        nt_execute(&ct, &t, &rt);
        nt_compare_results("kv_starts vs trimmed cache", &rp, &rt, &c, true);
        nt_result_free(&rp), nt_result_free(&rt);
        free(dst[0]), free(dst[1]), free(dst[2]);
        nt_data_free(&d);
    }
    nt_case c = paged(decode(55), 6, false, true);
    c.kv_starts = true;
    tc_context("kv_starts with a paged cache");
    nt_run(&c);
}

static void int8_kv(void)
{
    const nt_kv_mode modes[3] = {NT_KV_TENSOR, NT_KV_PAGED, NT_KV_BATCHES};
    const fc_dtype adt[3] = {FC_F32, FC_F16, FC_BF16};
    int k = 0;
    for (int m = 0; m < 3; m++)
        for (int pc = 0; pc < 2; pc++)
            for (int off = 0; off < 2; off++, k++) {
                nt_case q = decode(60 + k);
                q.dt = q.out_dt = adt[k % 3];
                q.kv.mode = modes[m], q.kv.block_size = 5 + m;
                q.kv.int8 = true, q.kv.per_channel = pc, q.kv.offset = off, q.kv.affine_dt = adt[(k + 1) % 3];
                q.Dv = 24;
                nt_case f = q; /* float key/value holding the dequantised values (§9 n): fp32, so that
                                  they hold them exactly (the queries are fp16/bf16 values either way) */
                f.kv.int8 = false, f.dt = FC_F32;
                tc_context("int8 kv == float kv holding (x + offset)·scale: storage %d, per-channel %d, offset %d, map dtype %d",
                           m, pc, off, q.kv.affine_dt);
                nt_same_data("int8 vs dequantised float", &f, &q, true);
            }
}

static void int8_out(void)
{
    const fc_dtype dts[3] = {FC_F16, FC_BF16, FC_F32};
    int k = 0;
    for (int pc = 0; pc < 2; pc++)
        for (int off = 0; off < 2; off++)
            for (int t = 0; t < 3; t++, k++) {
                nt_case c = decode(80 + k);
                c.dt = dts[t], c.out_dt = FC_I8;
                c.out_quant.per_channel = pc, c.out_quant.offset = off, c.out_quant.dtype = t == 1 && k % 2 ? FC_BF16 : FC_F32;
                c.v_range = 2.5; /* with scales up to 150: many values saturate */
                if (k % 4 == 3)
                    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 4, c.kv.int8 = true, c.kv.per_channel = true,
                    c.kv.affine_dt = FC_F16;
                tc_context("int8 output: per-channel %d, offset %d, query dtype %d%s", pc, off, c.dt,
                           k % 4 == 3 ? ", int8 paged kv" : "");
                nt_run(&c);
            }
    /* NaN in a visible value: its output channel quantises to 0 */
    nt_case c = decode(95);
    c.dt = FC_F16, c.out_dt = FC_I8, c.out_quant.per_channel = true, c.out_quant.offset = true;
    nt_data d = nt_prepare(&c);
    for (int b = 0; b < c.B; b++)
        for (int j = 0; j < d.s2[b]; j++)
            d.v[(((int64_t)b * c.N2 + 1) * d.S2cap + j) * d.Dv + 3] = NAN; /* kv head 1, feature 3 */
    tc_context("int8 output: NaN values quantise to 0");
    nt_result r;
    nt_execute(&c, &d, &r);
    int nan_rows = 0;
    for (int b = 0; b < c.B; b++)
        for (int n = c.N1 / 2; n < c.N1; n++)
            if (d.s2[b] > 0)
                nan_rows++, TC_CHECK(r.out[nt_row(&c, 1, b, n, 0) * d.Dv + 3] == 0, "b %d head %d: NaN → 0, got %g", b,
                                     n, r.out[nt_row(&c, 1, b, n, 0) * d.Dv + 3]);
    TC_CHECK(nan_rows > 0, "the case has rows reading the NaN");
    nt_result_free(&r);

    /* every int8 element written: two runs over different fills, no byte keeps both fills */
    tc_context("int8 output: every element written, gaps untouched");
    c.pad = 3;
    nt_data_free(&d);
    d = nt_prepare(&c);
    nt_bufs L;
    fc_attention_desc a = nt_make_desc(&c, &d, &L);
    size_t ws;
    const size_t n = (size_t)L.gout.count;
    uint8_t *first = malloc(n);
    TC_CHECK(nt_run_library(&c, &a, &ws) == FC_OK, "run 1: %s", fc_last_error());
    memcpy(first, L.out, n);
    memset(L.out, 0xA5, n);
    TC_CHECK(nt_run_library(&c, &a, &ws) == FC_OK, "run 2: %s", fc_last_error());
    char *logical = calloc(n, 1);
    for (int b = 0; b < c.B; b++)
        for (int h = 0; h < c.N1; h++)
            for (int e = 0; e < d.Dv; e++)
                logical[nt_offset(&c, &d, &L.gout, NT_OUT, b, h, 0, e)] = 1;
    int64_t unwritten = 0, gaps = 0;
    for (size_t t = 0; t < n; t++) {
        const bool kept = first[t] == NT_SENT_I8 && ((uint8_t *)L.out)[t] == 0xA5;
        if (logical[t])
            unwritten += kept;
        else
            gaps += !kept;
    }
    TC_CHECK(unwritten == 0, "%lld int8 output elements not written", (long long)unwritten);
    TC_CHECK(gaps == 0, "%lld bytes written outside the int8 output", (long long)gaps);
    free(first), free(logical);
    nt_bufs_free(&L);
    nt_data_free(&d);
}

static void gqa_and_long(void)
{
    nt_case c = decode(100);
    c.B = 2, c.N1 = 64, c.N2 = 1, c.D = 128, c.Dv = 128, c.dt = c.out_dt = FC_BF16;
    tc_context("64 query heads per kv head, D 128");
    nt_run(&c);
    c = paged(decode(101), 16, true, false);
    c.N1 = 256, c.N2 = 4, c.D = 16, c.Dv = 16;
    tc_context("256 query heads, 4 kv heads, paged");
    nt_run(&c);
    static const int one[1] = {1}, k1[1] = {4133}, k2[2] = {2047, 1500};
    c = decode(102);
    c.B = 1, c.sq = one, c.skv = k1, c.Skv = 4133, c.N1 = 4, c.N2 = 1, c.D = 64, c.Dv = 48;
    tc_context("long kv, one batch, one kv head (flash-decoding splits)");
    nt_run(&c);
    c.sink = NT_SINK_FINITE, c.stats_order = FC_STATS_TOKEN_MAJOR, c.replicas = 8, c.kv_starts = true;
    tc_context("long kv, sink, left padding, 8 replicas");
    nt_run(&c);
    c = paged(decode(103), 64, false, false);
    c.B = 2, c.skv = k2, c.Skv = 2047, c.N1 = 8, c.N2 = 2, c.dt = c.out_dt = FC_F16;
    c.kv.int8 = true, c.kv.per_channel = true, c.kv.offset = true, c.kv.affine_dt = FC_F32;
    tc_context("long kv, paged int8 (splits over pages)");
    nt_run(&c);
    c = decode(104);
    c.B = 1, c.sq = one, c.skv = k1, c.Skv = 4133, c.N1 = 2, c.N2 = 1, c.D = 8, c.Dv = 8;
    c.mask.on = true, c.mask.density = 0.995, c.threads = 2;
    tc_context("long kv, a mask hiding almost every column (splits with nothing visible)");
    nt_run(&c);
    c.mask.density = 1;
    tc_context("long kv, every column hidden");
    nt_run(&c);
    c = decode(105);
    c.B = 1, c.sq = one, c.skv = k1, c.Skv = 4133, c.N1 = 4, c.N2 = 1, c.out_dt = FC_I8, c.dt = FC_F16;
    c.out_quant.per_channel = true;
    tc_context("long kv, int8 output");
    nt_run(&c);
}

/* §9 p: the forward (flash-decoding splits and their merge included) is bit-identical for 1 and
 * 2 threads. */
static void threads(void)
{
    static const int one[2] = {1, 1}, k2[2] = {3001, 77};
    for (int k = 0; k < 3; k++) {
        nt_case c = decode(120 + k);
        c.B = k == 0 ? 1 : 2, c.sq = one, c.skv = k2, c.Skv = 3001, c.N1 = 4, c.N2 = k == 2 ? 2 : 1;
        if (k == 1)
            c = paged(c, 32, false, true), c.kv.int8 = true, c.kv.per_channel = true, c.kv.affine_dt = FC_BF16;
        if (k == 2)
            c.sink = NT_SINK_FINITE, c.kv_starts = true, c.out_dt = FC_I8, c.dt = FC_F16;
        tc_context("decode, 1 and 2 threads bit-identical (case %d)", k);
        nt_run_threads(&c);
    }
}

/* Block-table entries outside [0, num_blocks) in the used range: fc_plan_run fails with
 * FC_ERR_INVALID_ARG and writes nothing. */
static void bad_tables(void)
{
    const int32_t bad[3] = {-1, 0, INT32_MIN};
    for (int k = 0; k < 3; k++) {
        nt_case c = paged(decode(110 + k), 4, k == 1, false);
        c.Dr = k == 2 ? 8 : 0;
        nt_data d = nt_prepare(&c);
        nt_bufs L;
        fc_attention_desc a = nt_make_desc(&c, &d, &L);
        fc_plan *plan = NULL;
        tc_context("bad block table entry %d", k);
        if (!TC_CHECK(fc_plan_create(&a, NULL, &plan) == FC_OK, "plan: %s", fc_last_error())) {
            nt_bufs_free(&L), nt_data_free(&d);
            continue;
        }
        size_t ws = 0;
        fc_plan_workspace_size(plan, &ws);
        void *w = ws ? malloc(ws) : NULL;
        /* batch 3 (length 33, 9 blocks): its last used entry */
        int32_t *e = &d.table[3 * d.table_stride + 8];
        const int32_t keep = *e;
        *e = k == 1 ? (int32_t)d.num_blocks : bad[k];
        const fc_status st = fc_plan_run(plan, NULL, w, ws);
        TC_CHECK(st == FC_ERR_INVALID_ARG, "status %s", fc_status_name(st));
        TC_CHECK(strstr(fc_last_error(), "block table") != NULL, "message \"%s\" names the block table", fc_last_error());
        int64_t touched = 0;
        for (int64_t t = 0; t < L.gout.count; t++)
            touched += !nt_is_sentinel(c.out_dt, L.out, t);
        for (int64_t t = 0; t < L.stat_n + NT_STAT_GUARD; t++)
            touched += !nt_is_sentinel(FC_F32, L.smax, t) || !nt_is_sentinel(FC_F32, L.ssum, t);
        TC_CHECK(touched == 0, "%lld output / statistics elements written by a rejected run", (long long)touched);
        *e = keep;
        TC_CHECK(fc_plan_run(plan, NULL, w, ws) == FC_OK, "the repaired table runs: %s", fc_last_error());
        d.table[2 * d.table_stride + 0] = -1; /* batch 2 has length 0: its entries are not used */
        TC_CHECK(fc_plan_run(plan, NULL, w, ws) == FC_OK, "entries of a zero-length batch are not read: %s", fc_last_error());
        free(w);
        fc_plan_destroy(plan);
        nt_bufs_free(&L);
        nt_data_free(&d);
    }
}

static void body(void)
{
    pages();
    batches();
    left_padding();
    int8_kv();
    int8_out();
    gqa_and_long();
    threads();
    bad_tables();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_decode", body); }
