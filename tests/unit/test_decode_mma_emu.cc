/*
 * The CUDA tensor-core decode (src/cuda/decode_mma_kernel.cuh) run on the CPU, unchanged, by the
 * CTA emulator (cta_emu.h), on the native harness: each case is lowered by a CPU plan (the
 * fc_problem the CUDA backend would get, host addresses), the host makes the CUDA plan's decisions
 * (decode_plan.h: which problems the kernel takes, the kv cap and its blocks), every CTA of the
 * grid runs — the last of each (batch, kv head) folding the blocks' partials from the workspace —
 * and the harness checks the outputs against the reference (values within §0.4, empty and padding
 * rows exact, statistics, nothing written outside the outputs) and the CPU backend.  Each case
 * runs twice, the second time with another split count, the CTAs in a shuffled order (each round's
 * threads highest first: cta_emu reverse_order) and the other stage count: the two must agree bit
 * for bit (the blocks alone fix the bits).  Cases that bring their own lengths plan with the
 * padded length and pass the real ones as the run's device lengths (MmaLaunch.kv_lens).  Every case runs on the default kernel and again on the variant with
 * both run-time changes (kMmaLinearIssue | kMmaWideMerge), plus paged cases whose tiles lie inside
 * pages (the variant's one-stride copies); the integer-key variant (kMmaIntK) runs int8 cases of its
 * own, and again with the integer P·V (kMmaIntPV), plus fp32 outputs (the tightest tolerance).  What only a GPU shows (timing, concurrent CTAs, the real
 * cp.async and barriers) is tests/cuda/test_decode.c's.
 */
#include "cta_emu.h"

#include "cuda/dclass.h"
#include "cuda/decode_mma_kernel.cuh"
#include "cuda/decode_plan.h"
#include "emu_plan.h"

extern "C" {
#include "common/check.h"
#include "common/rng.h"
#include "core/plan.h"
#include "harness.h"
#include "harness_internal.h"
#include "harness_nonfinite.h"
}

#include <algorithm>

/* How one run of a case launches: CTAs per (batch, kv head), stages, CTA order. */
struct Schedule {
    int nsplit, stages;
    bool shuffle;
};
static Schedule g_sched[2];
static int g_run;       /* the run of the current case (nt_run_elsewhere runs the emulator twice) */
static int g_variant;   /* the kernel's variant (kMmaLinearIssue | kMmaWideMerge bits; 0 the default) */
static bool g_run_lens; /* plan with the padded kv length, run with the case's (the run's device lengths) */

/* A decode case: B batches of one query row, N1 query heads on N2 kv heads, statistics written. */
static nt_case decode(uint64_t seed, int B, int N1, int N2, int Skv, int D, fc_dtype dt)
{
    nt_case c = nt_default();
    c.seed = seed;
    c.B = B, c.N1 = N1, c.N2 = N2, c.D = D, c.Dv = D, c.Sq = 1, c.Skv = Skv;
    c.dt = c.out_dt = dt;
    c.layout = NT_BSND;
    c.stats = true;
    return c;
}

/* Every CTA of the grid, in launch order, or shuffled by a nonzero seed. */
template <typename KT, int DC, int NT> static void launch(const fc_problem &p, const fc_cuda::MmaLaunch &L, uint64_t seed)
{
    static_assert(fc_cuda::mma_smem_bytes<KT, DC>(3) <= kCtaEmuSmem, "the emulator's shared memory holds the CTA's");
    std::vector<cta_emu_dim3> grid;
    for (unsigned z = 0; z < (unsigned)p.B; z++)
        for (unsigned y = 0; y < (unsigned)p.Nkv; y++)
            for (unsigned x = 0; x < (unsigned)L.nsplit; x++)
                grid.push_back(cta_emu_dim3{x, y, z});
    const cta_emu::OrderScope order(seed != 0); /* shuffled CTAs: each round's threads highest first too */
    if (seed) { /* a shuffled order */
        tc_rng r = tc_rng_seed(seed);
        for (size_t k = grid.size(); k > 1; k--)
            std::swap(grid[k - 1], grid[(size_t)tc_rng_int(&r, 0, (int64_t)k - 1)]);
    }
    using namespace fc_cuda;
    for (const cta_emu_dim3 &blk : grid)
        cta_emu::run_cta(kMmaThreads, blk, [&] {
            switch (g_variant) {
            case kMmaLinearIssue: dec_mmav_kernel<KT, DC, NT, kMmaLinearIssue>(p, L); break;
            case kMmaWideMerge: dec_mmav_kernel<KT, DC, NT, kMmaWideMerge>(p, L); break;
            case kMmaLinearIssue | kMmaWideMerge: dec_mmav_kernel<KT, DC, NT, kMmaLinearIssue | kMmaWideMerge>(p, L); break;
            case kMmaLinearIssue | kMmaWideMerge | kMmaPositionsM:
                dec_mmav_kernel<KT, DC, NT, kMmaLinearIssue | kMmaWideMerge | kMmaPositionsM>(p, L);
                break;
            case kMmaLinearIssue | kMmaWideMerge | kMmaPositionsM | kMmaIntK: /* int8, rows ≤ 8, class 128 (decode_mma.cu) */
                if constexpr (sizeof(KT) == 1 && NT == 1 && DC == 128)
                    dec_mmav_kernel<KT, DC, NT, kMmaLinearIssue | kMmaWideMerge | kMmaPositionsM | kMmaIntK>(p, L);
                else
                    dec_mmav_kernel<KT, DC, NT, kMmaLinearIssue | kMmaWideMerge | kMmaPositionsM>(p, L);
                break;
            case kMmaLinearIssue | kMmaWideMerge | kMmaPositionsM | kMmaIntK | kMmaIntPV: /* the same reach */
                if constexpr (sizeof(KT) == 1 && NT == 1 && DC == 128)
                    dec_mmav_kernel<KT, DC, NT, kMmaLinearIssue | kMmaWideMerge | kMmaPositionsM | kMmaIntK | kMmaIntPV>(p, L);
                else
                    dec_mmav_kernel<KT, DC, NT, kMmaLinearIssue | kMmaWideMerge | kMmaPositionsM>(p, L);
                break;
            default: dec_mma_kernel<KT, DC, NT>(p, L);
            }
        });
}

template <typename KT, int DC> static void launch_rows(const fc_problem &p, const fc_cuda::MmaLaunch &L, uint64_t seed)
{
    L.rows <= 8 ? launch<KT, DC, 1>(p, L, seed) : launch<KT, DC, 2>(p, L, seed);
}

template <typename KT> static void launch_class(int dclass, const fc_problem &p, const fc_cuda::MmaLaunch &L, uint64_t seed)
{
    dclass == 64 ? launch_rows<KT, 64>(p, L, seed) : dclass == 128 ? launch_rows<KT, 128>(p, L, seed) : launch_rows<KT, 256>(p, L, seed);
}

/* The stage bytes at 2 stages (the last CTA keeps each block's weights in them: decode.cu's rule). */
template <typename KT> static size_t stage_bytes2(int dclass)
{
    return (size_t)fc_cuda::kMmaWarps * 2 * 2 *
           (dclass == 64 ? fc_cuda::MmaShape<KT, 64>::TILE : dclass == 128 ? fc_cuda::MmaShape<KT, 128>::TILE : fc_cuda::MmaShape<KT, 256>::TILE);
}

/* What a run leaves in its workspace besides the partials. */
struct Arrivals {
    std::vector<unsigned> counter; /* per (batch, kv head) */
    unsigned long long fault;
    fc_cuda::DecReport report;
};

/* The grid of the problem's tensor-core decode on the emulator, launched as decode.cu launches it
 * with split count and stages of s (and the run's device lengths kv_lens, or NULL); false when the
 * kernel does not take the problem (a test bug). */
static bool emu_decode(const fc_problem &p, const Schedule &s, const int64_t *kv_lens, uint64_t seed, Arrivals *out)
{
    const int qr = (int)(p.max_sq > 0 ? p.max_sq : 1), rows = (int)(p.G * qr), dclass = fc_cuda_dclass(&p);
    const int64_t maxblk = fc_dec_blocks(fc_dec_kv_cap(&p));
    const size_t stage2 = p.k.dtype == FC_I8 ? stage_bytes2<int8_t>(dclass) : stage_bytes2<__half>(dclass);
    const char *gap = fc_dec_mma_gap(&p, rows, fc_cuda::mma_int_pv(p.k.dtype, dclass, rows, g_variant));
    if (!TC_CHECK(!gap, "test bug: the tensor-core decode does not take the case (%s)", gap ? gap : "") ||
        !TC_CHECK((size_t)maxblk * rows * 4 <= stage2 / 2 * s.stages, "test bug: the case's blocks do not fit the merge"))
        return false;
    /* The run's workspace: counters and the fault word zeroed (as the run does), partials NaN
     * (a fold that reads a block nobody wrote poisons its rows). */
    out->counter.assign((size_t)(p.B * p.Nkv), 0u);
    out->fault = 0;
    memset(&out->report, 0, sizeof out->report);
    std::vector<float> partial((size_t)(p.B * p.Nkv * maxblk * rows * (dclass + 2)) + 1, NAN);
    fc_cuda::MmaLaunch L;
    memset(&L, 0, sizeof L);
    L.partial = partial.data(), L.counter = out->counter.data(), L.fault = &out->fault, L.report = &out->report;
    L.kv_lens = kv_lens;
    L.rows = rows, L.qr = qr, L.nsplit = s.nsplit, L.maxblk = (int)maxblk, L.stages = s.stages;
    L.qlo = p.q.dtype != p.k.dtype;
    for (int64_t b = 0; p.k.batch_data && b < p.B; b++)
        L.k_list[b] = p.k.batch_data[b], L.v_list[b] = p.v.batch_data[b];
    if (p.k.dtype == FC_I8)
        launch_class<int8_t>(dclass, p, L, s.shuffle ? seed : 0);
    else if (p.k.dtype == FC_BF16)
        launch_class<__nv_bfloat16>(dclass, p, L, s.shuffle ? seed : 0);
    else
        launch_class<__half>(dclass, p, L, s.shuffle ? seed : 0);
    return true;
}

/* nt_runner: the kernel's grid on the emulator over the case's lowered problem. */
static fc_status emu_runner(const nt_case *c, const nt_data *, const fc_attention_desc *a, nt_bufs *, size_t *ws_bytes)
{
    *ws_bytes = 0;
    fc_attention_desc desc = *a;
    std::vector<int64_t> planned((size_t)a->batch, a->kv_len);
    if (g_run_lens && a->kv_lens)
        desc.kv_lens = planned.data();
    fc_plan *plan = NULL;
    fc_status st = emu_cpu_plan(&desc, &plan);
    if (st != FC_OK)
        return st;
    const Schedule &s = g_sched[g_run];
    Arrivals arr;
    if (emu_decode(plan->prob, s, g_run_lens ? a->kv_lens : NULL, c->seed * 31u + (uint64_t)g_run, &arr)) {
        bool once = true;
        for (unsigned n : arr.counter)
            once = once && n == (unsigned)s.nsplit;
        TC_CHECK(once, "every CTA of each (batch, kv head) arrived once, none found a fault");
        TC_CHECK(arr.fault == 0 && arr.report.seq == 0, "no fault recorded (word %llx, %u reports)", arr.fault, arr.report.seq);
    } else {
        st = FC_ERR_BACKEND;
    }
    fc_plan_destroy(plan);
    g_run ^= 1;
    return st;
}

/* An out-of-range key block-table entry of batch 1: its rows are left unwritten, the other
 * batches' rows are written, and the last CTA of one of its rows reports the entry, once per run
 * (dec_claim_report), naming the batch's rows alone. */
static void bad_entry(void)
{
    nt_case c = decode(11, 3, 4, 2, 1100, 64, FC_BF16);
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 16;
    tc_context("emulated mma decode: an out-of-range key block-table entry in batch 1");
    emu_on_problem(&c, [&](fc_problem p, const nt_data &d, const nt_bufs &L) {
        const fc_pages &pg = p.k.pages;
        std::vector<int32_t> table = emu_table_copy(pg, p.B);
        table[(size_t)pg.table_stride + 5] = (int32_t)pg.blocks + 3;
        p.k.pages.table = table.data();
        Arrivals arr;
        if (!emu_decode(p, Schedule{3, 3, true}, NULL, 11, &arr))
            return;
        TC_CHECK(arr.report.seq == 1 && arr.report.tensor == 0 && arr.report.batch == 1 && arr.report.entry == 5 &&
                     arr.report.value == pg.blocks + 3 && !arr.report.whole,
                 "the report names key entry [1][5] = %lld once, the batch's rows alone (%u reports: tensor %d [%lld][%lld] = %lld)",
                 (long long)pg.blocks + 3, arr.report.seq, arr.report.tensor, (long long)arr.report.batch,
                 (long long)arr.report.entry, (long long)arr.report.value);
        int64_t wrong = 0;
        for (int b = 0; b < c.B; b++)
            for (int n = 0; n < c.N1; n++)
                for (int e = 0; e < c.Dv; e++)
                    wrong += nt_is_sentinel(c.out_dt, L.out, nt_offset(&c, &d, &L.gout, NT_OUT, b, n, 0, e)) != (b == 1);
        TC_CHECK(wrong == 0, "batch 1's rows unwritten, the others written (%lld elements wrong)", (long long)wrong);
    });
}

/* The case on the CPU backend, then on the emulated kernel at split count `split` (1 first) and
 * `stages` stages, then again at split count `split2`, shuffled, with the other stage count. */
static void run(const nt_case *c, int split, int split2, int stages, bool run_lens = false)
{
    g_sched[0] = Schedule{split, stages, false};
    g_sched[1] = Schedule{split2, 5 - stages, true};
    g_run = 0, g_run_lens = run_lens;
    nt_run_elsewhere(c, emu_runner, 2);
}

/* Every case on the kernel's variant g_variant. */
static void cases(bool quick)
{
    static const int ones[3] = {1, 1, 1}, kvl[3] = {2100, 0, 1025};
    nt_case c = decode(1, 2, 8, 2, 1500, 128, FC_F16);
    tc_context("emulated mma decode: fp16, D 128, GQA 4, two blocks (1500 positions)");
    run(&c, 1, 2, 3);
    c = decode(2, 3, 4, 2, 2100, 64, FC_BF16);
    c.lens = true, c.sq = ones, c.skv = kvl, c.layout = NT_BNSD, c.sink = NT_SINK_FINITE;
    tc_context("emulated mma decode: bf16, D 64, per-batch lengths (2100, 0, 1025), sink, BNSD");
    run(&c, 1, 3, 2);
    tc_context("emulated mma decode: the same lengths brought by the run (device kv lengths)");
    run(&c, 2, 3, 3, true);
    c = decode(3, 2, 4, 2, 1100, 64, FC_F16);
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 16, c.kv.spare_blocks = 2;
    tc_context("emulated mma decode: paged (block 16), two blocks");
    run(&c, 1, 2, 3);
    c = decode(4, 2, 2, 1, 1030, 256, FC_BF16);
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 7, c.kv.head_major_blocks = true, c.kv.spare_blocks = 1;
    c.kv.shared_blocks = true;
    tc_context("emulated mma decode: D 256, paged head-major (block 7), shared blocks");
    run(&c, 1, 2, 2);
    c = decode(5, 3, 4, 2, 1200, 128, FC_F16);
    c.kv.mode = NT_KV_BATCHES;
    tc_context("emulated mma decode: per-batch tensors (a tensor list)");
    run(&c, 1, 2, 3);
    c = decode(6, 2, 4, 2, 1100, 128, FC_BF16);
    c.kv.int8 = true, c.kv.per_channel = true, c.kv.offset = true, c.kv.affine_dt = FC_F32;
    tc_context("emulated mma decode: int8 key/value per channel with offsets");
    run(&c, 1, 2, 3);
    c = decode(7, 2, 2, 2, 300, 64, FC_F16);
    c.kv.int8 = true, c.kv.per_channel = false, c.kv.offset = false, c.kv.affine_dt = FC_F16;
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 32;
    c.out_dt = FC_I8, c.out_quant = nt_quant_spec{true, true, FC_F32};
    tc_context("emulated mma decode: int8 key/value per tensor, paged, int8 output");
    run(&c, 1, 1, 3);
    static const int sq4[2] = {4, 3}, skv4[2] = {1300, 777};
    c = decode(8, 2, 8, 2, 1300, 128, FC_BF16);
    c.Sq = 4, c.lens = true, c.sq = sq4, c.skv = skv4, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("emulated mma decode: 16 rows per kv head (4 heads x 4 speculative rows, one padding row), causal");
    run(&c, 1, 2, 3);
    c = decode(9, 2, 4, 2, 1100, 64, FC_F16);
    c.kv_starts = true;
    tc_context("emulated mma decode: left padding (kv_starts)");
    run(&c, 1, 2, 3);
    c = decode(14, 2, 4, 2, 40, 64, FC_BF16);
    c.kv.int8 = true, c.kv.per_channel = true, c.kv.offset = true, c.kv.affine_dt = FC_F32, c.sink = NT_SINK_FINITE;
    tc_context("emulated mma decode: int8 values with offsets and a sink over 40 positions (the offset weighs the positions' share)");
    run(&c, 1, 2, 3);
    bad_entry();
    if (!quick) {
        c = decode(10, 1, 9, 1, 2200, 128, FC_BF16);
        c.kv.int8 = true, c.kv.per_channel = true, c.kv.offset = true, c.kv.affine_dt = FC_BF16;
        c.kv.mode = NT_KV_PAGED, c.kv.block_size = 16;
        tc_context("emulated mma decode: MQA 9 (two n tiles), int8 paged, three blocks");
        run(&c, 1, 3, 3);
        tc_rng r = tc_rng_seed(29);
        for (int x = 0; x < 2; x++) { /* small random cases */
            static const int dims[] = {64, 128, 256, 96, 40};
            const int nkv = (int)tc_rng_int(&r, 1, 2), g = (int)tc_rng_int(&r, 1, 8);
            c = decode(100 + x, (int)tc_rng_int(&r, 1, 3), nkv * g, nkv, (int)tc_rng_int(&r, 1, 1600), dims[tc_rng_int(&r, 0, 4)],
                       tc_rng_bool(&r, 0.5) ? FC_BF16 : FC_F16);
            c.layout = tc_rng_bool(&r, 0.5) ? NT_BSND : NT_BNSD;
            c.sink = tc_rng_bool(&r, 0.3) ? NT_SINK_FINITE : NT_SINK_NONE;
            const int form = (int)tc_rng_int(&r, 0, 2);
            c.kv.mode = form == 1 ? NT_KV_PAGED : form == 2 ? NT_KV_BATCHES : NT_KV_TENSOR;
            c.kv.block_size = (int)tc_rng_int(&r, 1, 100), c.kv.head_major_blocks = tc_rng_bool(&r, 0.5);
            c.kv.int8 = tc_rng_bool(&r, 0.3), c.kv.per_channel = tc_rng_bool(&r, 0.5), c.kv.offset = tc_rng_bool(&r, 0.5);
            c.kv.affine_dt = FC_F32;
            if (c.kv.int8) /* 16-byte int8 rows */
                c.D = c.Dv = (c.D + 15) / 16 * 16;
            tc_context("emulated mma decode: random case %d", x);
            run(&c, 1, (int)tc_rng_int(&r, 1, 4), tc_rng_bool(&r, 0.5) ? 3 : 2);
        }
    }
}

/* The integer-key variant (kMmaIntK): int8 caches at head-dim class 128 and rows ≤ 8 — every dequant
 * form (per tensor / per channel, with and without offsets, fp16 / bf16 / fp32 maps), contiguous,
 * paged (tiles inside pages and across them) and tensor lists, GQA 1 to 8, speculative rows, odd
 * lengths, Dqk below the class, fp16 and bf16 queries, int8 output. */
static void int8_cases(bool quick)
{
    static const int ones[3] = {1, 1, 1}, kvl[3] = {2100, 1, 1025}, sq4[2] = {4, 3}, skv4[2] = {1301, 777}, sq2[3] = {2, 1, 2},
                     skv2[3] = {65, 1999, 63};
    nt_case c = decode(41, 2, 8, 2, 1500, 128, FC_F16);
    c.kv.int8 = true, c.kv.per_channel = false, c.kv.offset = false, c.kv.affine_dt = FC_F16;
    tc_context("emulated imma decode: per tensor, fp16 map, GQA 4, contiguous");
    run(&c, 1, 2, 3);
    c = decode(42, 3, 8, 1, 2100, 128, FC_BF16);
    c.kv.int8 = true, c.kv.per_channel = false, c.kv.offset = true, c.kv.affine_dt = FC_BF16;
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 16, c.kv.spare_blocks = 2;
    c.lens = true, c.sq = ones, c.skv = kvl, c.sink = NT_SINK_FINITE;
    tc_context("emulated imma decode: per tensor with offset, bf16 map, MQA 8, paged 16, lengths (2100, 1, 1025), sink "
               "(a one-position row: the sink's share of the sum carries no offset)");
    run(&c, 1, 3, 2);
    tc_context("emulated imma decode: the same lengths brought by the run (device kv lengths)");
    run(&c, 2, 3, 3, true);
    c = decode(43, 2, 3, 3, 777, 96, FC_F16);
    c.kv.int8 = true, c.kv.per_channel = true, c.kv.offset = false, c.kv.affine_dt = FC_F32;
    c.kv.mode = NT_KV_BATCHES, c.layout = NT_BNSD;
    tc_context("emulated imma decode: per channel, fp32 map, MHA, tensor list, D 96, 777 positions");
    run(&c, 1, 2, 3);
    c = decode(44, 2, 4, 2, 1301, 128, FC_BF16);
    c.kv.int8 = true, c.kv.per_channel = true, c.kv.offset = true, c.kv.affine_dt = FC_F32;
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 64;
    c.Sq = 4, c.lens = true, c.sq = sq4, c.skv = skv4, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("emulated imma decode: per channel with offset, GQA 2 x 4 speculative rows (one padding), causal, paged 64");
    run(&c, 1, 2, 3);
    c = decode(45, 3, 8, 2, 1999, 112, FC_F16);
    c.kv.int8 = true, c.kv.per_channel = true, c.kv.offset = true, c.kv.affine_dt = FC_BF16;
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 128, c.kv.head_major_blocks = true;
    c.Sq = 2, c.lens = true, c.sq = sq2, c.skv = skv2, c.kv_starts = true;
    tc_context("emulated imma decode: per channel with offset, bf16 map, GQA 4 x 2 rows, paged 128 head-major, left padding, D 112");
    run(&c, 1, 3, 3);
    c = decode(46, 2, 4, 2, 301, 128, FC_F16);
    c.kv.int8 = true, c.kv.per_channel = false, c.kv.offset = true, c.kv.affine_dt = FC_F16;
    c.out_dt = FC_I8, c.out_quant = nt_quant_spec{true, true, FC_F32};
    tc_context("emulated imma decode: per tensor with offset, int8 output");
    run(&c, 1, 1, 3);
    if (g_variant & fc_cuda::kMmaIntPV) { /* fp32 outputs: fp16 P (the other variants) misses §0.4's fp32 row by up to 1.7x */
    c = decode(47, 2, 8, 2, 2300, 128, FC_BF16);
    c.kv.int8 = true, c.kv.per_channel = true, c.kv.offset = true, c.kv.affine_dt = FC_F32, c.sink = NT_SINK_FINITE;
    c.out_dt = FC_F32;
    tc_context("emulated imma decode: per channel with offset, sink, fp32 output (§0.4's tightest row)");
    run(&c, 1, 3, 3);
    c = decode(48, 3, 4, 1, 1700, 128, FC_F16);
    c.kv.int8 = true, c.kv.per_channel = false, c.kv.offset = true, c.kv.affine_dt = FC_F16;
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = 64, c.out_dt = FC_F32;
    tc_context("emulated imma decode: per tensor with offset, paged 64, fp32 output");
    run(&c, 1, 2, 2);
    }
    /* logits in the hundreds: the tile max's p = e^(its rounding) > 1, which integer P·V must keep
     * below 65536 (it wrapped to 0 there: the row's largest weight lost from O).  Outputs only: the
     * statistics of such rows miss their tolerance by about 2x on every variant (q's 22 bits) */
    c = decode(49, 2, 8, 2, 1900, 128, FC_BF16);
    c.kv.int8 = true, c.kv.per_channel = true, c.kv.offset = false, c.kv.affine_dt = FC_F32, c.scale = 60.0;
    c.stats = false;
    tc_context("emulated imma decode: logits of several hundred (scale 60)");
    run(&c, 1, 2, 3);
    if (quick)
        return;
    tc_rng r = tc_rng_seed(41);
    for (int x = 0; x < 3; x++) { /* random int8 cases of the variant's reach */
        static const int dims[] = {128, 80, 96, 112};
        const int nkv = (int)tc_rng_int(&r, 1, 2), g = (int)tc_rng_int(&r, 1, 8), sq = (int)tc_rng_int(&r, 1, 8 / g);
        c = decode(400 + x, (int)tc_rng_int(&r, 1, 3), nkv * g, nkv, (int)tc_rng_int(&r, 1, 2300), dims[tc_rng_int(&r, 0, 3)],
                   tc_rng_bool(&r, 0.5) ? FC_BF16 : FC_F16);
        c.Sq = sq, c.window = sq > 1 ? fc_window_causal(FC_ALIGN_BOTTOM_RIGHT) : c.window;
        c.layout = tc_rng_bool(&r, 0.5) ? NT_BSND : NT_BNSD;
        c.sink = tc_rng_bool(&r, 0.3) ? NT_SINK_FINITE : NT_SINK_NONE;
        const int form = (int)tc_rng_int(&r, 0, 2);
        c.kv.mode = form == 1 ? NT_KV_PAGED : form == 2 ? NT_KV_BATCHES : NT_KV_TENSOR;
        c.kv.block_size = (int)tc_rng_int(&r, 1, 100), c.kv.head_major_blocks = tc_rng_bool(&r, 0.5);
        c.kv.int8 = true, c.kv.per_channel = tc_rng_bool(&r, 0.5), c.kv.offset = tc_rng_bool(&r, 0.5);
        static const fc_dtype adts[] = {FC_F16, FC_BF16, FC_F32};
        c.kv.affine_dt = adts[tc_rng_int(&r, 0, 2)];
        tc_context("emulated imma decode: random case %d (G %d, Sq %d, Skv %d, D %d)", x, g, sq, c.Skv, c.D);
        run(&c, 1, (int)tc_rng_int(&r, 1, 4), tc_rng_bool(&r, 0.5) ? 3 : 2);
    }
}

int main(int argc, char **argv)
{
    const bool quick = argc > 1 && strcmp(argv[1], "quick") == 0, only_imma = argc > 1 && strcmp(argv[1], "imma") == 0;
    /* the default kernel, then the variant with both changes (each bit's code runs there) */
    static const int variants[] = {0, fc_cuda::kMmaLinearIssue | fc_cuda::kMmaWideMerge,
                                   fc_cuda::kMmaLinearIssue | fc_cuda::kMmaWideMerge | fc_cuda::kMmaPositionsM};
    for (int v : variants) {
        if (only_imma) /* the integer-key variants' cases alone */
            break;
        g_variant = v;
        cases(quick);
        if (v) { /* whole tiles inside pages of 64 and 128, with a left-padded start (tiles across pages) */
            nt_case c = decode(12, 2, 8, 2, 2500, 128, FC_BF16);
            c.kv.mode = NT_KV_PAGED, c.kv.block_size = 64;
            tc_context("emulated mma decode, variant %d: paged (block 64), D 128", v);
            run(&c, 1, 3, 3);
            c = decode(13, 2, 4, 1, 2100, 128, FC_F16);
            c.kv.mode = NT_KV_PAGED, c.kv.block_size = 128, c.kv.int8 = true, c.kv.per_channel = true, c.kv.affine_dt = FC_F32;
            tc_context("emulated mma decode, variant %d: int8 paged (block 128), D 128", v);
            run(&c, 1, 2, 3);
        }
    }
    g_variant = 0; /* non-finite inputs (semantics §0.3): one split, then three */
    g_sched[0] = Schedule{1, 3, false}, g_sched[1] = Schedule{3, 2, true}, g_run = 0, g_run_lens = false;
    for (int g = 1; g <= 4; g++)
        nf_decode_suite(g, g % 2 ? FC_F16 : FC_BF16, emu_runner);
    const int imma = fc_cuda::kMmaLinearIssue | fc_cuda::kMmaWideMerge | fc_cuda::kMmaPositionsM | fc_cuda::kMmaIntK;
    for (int v : {imma, imma | fc_cuda::kMmaIntPV}) {
        g_variant = v;
        int8_cases(quick);
    }
    return tc_summary("unit_decode_mma_emu");
}
