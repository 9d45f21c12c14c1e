/*
 * The CUDA forward's paged and tensor-list key/value (src/cuda/forward_kernel.cuh with kFeatPaged:
 * FlashAttention's paged varlen) run on the CPU, unchanged, by the CTA emulator (cta_emu.h), on the
 * native harness: each case is lowered by a CPU plan (the fc_problem the CUDA backend would get,
 * host addresses), the run's block-table check kernel and then every CTA of the forward's grid run
 * as forward.cu launches them, and the harness checks the output and statistics against the
 * double-precision reference and the CPU backend.  The harness's paged caches are physical: blocks
 * in random order (some shared, spare ones), NaN in every slot no used entry points at, garbage
 * entries past each batch's length.  Covered: block sizes 1 to past the kv length (tiles in one
 * block and across blocks), both block layouts, odd lengths, Sq ≠ Skv, causal and band windows,
 * GQA/MQA, varlen, score terms and keep bits, sinks, odd strides (element loads), fp16, bf16 and
 * fp32, tensor lists; and an out-of-range entry: reported, nothing written.
 */
#include "cta_emu.h"

#include "cuda/dclass.h"
#include "cuda/decode_plan.h"
#include "cuda/forward_kernel.cuh"
#include "cuda/vec_rule.h"
#include "emu_plan.h"

extern "C" {
#include "common/check.h"
#include "common/rng.h"
#include "harness.h"
#include "harness_internal.h"
}

/* What a run leaves besides its outputs: the check kernel's fault word and the report. */
struct Fault {
    unsigned long long word = 0;
    fc_cuda::DecReport report{};
};

/* The check kernel (one CTA per batch) when the problem is paged, then every CTA of the forward. */
template <typename T, int D> static void launch(const fc_problem &p, const fc_cuda::FwdPagedLaunch &L, Fault *f)
{
    using Sh = fc_cuda::FwdShape<D>;
    using Sm = fc_cuda::FwdSmem<D, Sh::BM, Sh::BN_TERMS, (int)sizeof(T)>;
    constexpr int FEAT = fc_cuda::kFeatPaged | (sizeof(T) == 4 ? fc_cuda::kFeatF32 : 0);
    static_assert(Sm::bytes + Sm::scratch <= kCtaEmuSmem, "the emulator's shared memory holds the CTA's");
    f->word = 0; /* zeroed by the run */
    for (int64_t b = 0; p.k.pages.table && b < p.B; b++)
        cta_emu::run_cta(fc_cuda::kThreads, cta_emu_dim3{(unsigned)b, 0, 0}, [&] { fc_cuda::fwd_page_check_kernel<fc_cuda::kThreads>(p, &f->word); });
    for (int64_t x = 0; x < (int64_t)L.n_items * p.Nq; x++)
        cta_emu::run_cta(32 * Sh::WARPS, cta_emu_dim3{(unsigned)x, 0, 0},
                         [&] { fc_cuda::fwd_feat_kernel<T, D, Sh::BM, Sh::BN_TERMS, Sh::WARPS, FEAT>(p, L); });
}

template <typename T> static void launch_class(int cls, const fc_problem &p, const fc_cuda::FwdPagedLaunch &L, Fault *f)
{
    cls == 64 ? launch<T, 64>(p, L, f) : cls == 128 ? launch<T, 128>(p, L, f) : launch<T, 256>(p, L, f);
}

/* The problem's paged forward on the emulator, its launch made as forward.cu makes it (the query
 * tiles in batch order: the GPU's heaviest-first order changes no result); false when the kernel
 * does not take the problem (a test bug). */
static bool emu_forward(const fc_problem &p, Fault *f)
{
    const bool f32 = p.q.dtype == FC_F32;
    const int cls = fc_cuda_dclass(&p);
    if (!TC_CHECK(p.k.dtype == p.q.dtype && p.v.dtype == p.q.dtype && p.out.dtype == p.q.dtype && p.Dr == 0 && !p.drop_philox &&
                      (p.k.pages.table || p.k.batch_data) && p.B <= fc_cuda::kDecMaxList,
                  "test bug: a case the paged kernels do not take"))
        return false;
    const int bm = cls == 64 ? fc_cuda::FwdShape<64>::BM : cls == 128 ? fc_cuda::FwdShape<128>::BM : fc_cuda::FwdShape<256>::BM;
    std::vector<int2> items;
    for (int64_t b = 0; b < p.B; b++)
        for (int64_t t = 0; t * bm < p.batch[b].q_rows; t++)
            items.push_back(make_int2((int)b, (int)t));
    static fc_cuda::FwdPagedLaunch L; /* 4 KiB of list bases */
    memset(&L, 0, sizeof L);
    L.items = items.data(), L.n_items = (int)items.size();
    fc_cuda::fwd_launch_views(p, L);
    L.fault = &f->word, L.report = &f->report;
    for (int64_t b = 0; p.k.batch_data && b < p.B; b++)
        L.k_list[b] = p.k.batch_data[b], L.v_list[b] = p.v.batch_data[b];
    if (f32)
        launch_class<float>(cls, p, L, f);
    else if (p.q.dtype == FC_BF16)
        launch_class<__nv_bfloat16>(cls, p, L, f);
    else
        launch_class<__half>(cls, p, L, f);
    return true;
}

/* nt_runner: the emulated forward over the case's lowered problem; no fault may be found. */
static fc_status emu_runner(const nt_case *, const nt_data *, const fc_attention_desc *a, nt_bufs *, size_t *ws_bytes)
{
    static int calls; /* every second run: each round's threads highest first (cta_emu reverse_order) */
    const cta_emu::OrderScope order(calls++ % 2 == 1);
    *ws_bytes = 0;
    fc_plan *plan = NULL;
    fc_status st = emu_cpu_plan(a, &plan);
    if (st != FC_OK)
        return st;
    Fault f;
    if (emu_forward(plan->prob, &f))
        TC_CHECK(f.word == 0 && f.report.seq == 0, "no fault recorded (word %llx, %u reports)", f.word, f.report.seq);
    else
        st = FC_ERR_BACKEND;
    fc_plan_destroy(plan);
    return st;
}

static void run(const nt_case *c) { nt_run_elsewhere(c, emu_runner, 1); }

/* A prefill case with paged key/value in blocks of bs (BSND query and output, statistics). */
static nt_case paged(uint64_t seed, fc_dtype dt, int D, int Sq, int Skv, int bs)
{
    nt_case c = nt_fixture(seed, (nt_sizes){2, 4, 2, D, D, Sq, Skv});
    c.layout = NT_BSND;
    c.dt = c.out_dt = dt;
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = bs, c.kv.spare_blocks = 2;
    return c;
}

/* An out-of-range value block-table entry of batch 1: the check kernel records it, the forward's
 * first CTA reports it (the smallest bad entry) and no CTA writes anything. */
static void bad_entry(void)
{
    const nt_case c = paged(40, FC_F16, 64, 70, 90, 16);
    tc_context("emulated paged forward: an out-of-range value block-table entry in batch 1");
    emu_on_problem(&c, [&](fc_problem p, const nt_data &d, const nt_bufs &L) {
        const fc_pages &pg = p.v.pages;
        std::vector<int32_t> table = emu_table_copy(pg, p.B);
        table[(size_t)pg.table_stride + 3] = -7, table[(size_t)pg.table_stride + 4] = (int32_t)pg.blocks;
        p.v.pages.table = table.data(); /* the key's table stays good */
        Fault f;
        if (!emu_forward(p, &f))
            return;
        TC_CHECK(f.report.seq == 1 && f.report.tensor == 1 && f.report.batch == 1 && f.report.entry == 3 && f.report.value == -7 &&
                     f.report.whole,
                 "the report names value entry [1][3] = -7 once, no output written (%u reports: tensor %d [%lld][%lld] = %lld)", f.report.seq,
                 f.report.tensor, (long long)f.report.batch, (long long)f.report.entry, (long long)f.report.value);
        const int64_t written = emu_out_written(c, d, L);
        TC_CHECK(written == 0, "no output written (%lld elements were)", (long long)written);
    });
}

int main(int argc, char **argv)
{
    /* quick: the named cases; FLASHC_EMU_QUICK (the sanitizer builds, where ASan intercepts every
     * coroutine switch): the first three, small ones */
    const bool tiny = getenv("FLASHC_EMU_QUICK") != NULL, quick = tiny || (argc > 1 && strcmp(argv[1], "quick") == 0);
    nt_case c = paged(1, FC_F16, 128, 70, 150, 16);
    c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("emulated paged forward: fp16, class 128, blocks of 16 (every tile across blocks), GQA 2, causal bottom-right");
    run(&c);
    static const int sq3[3] = {33, 0, 130}, skv3[3] = {71, 5, 140};
    c = paged(2, FC_BF16, 64, 130, 140, 7), c.B = 3, c.lens = true, c.sq = sq3, c.skv = skv3;
    c.kv.head_major_blocks = true, c.kv.shared_blocks = true, c.window = fc_window_band(20, 9, FC_ALIGN_TOP_LEFT);
    tc_context("emulated paged forward: bf16, class 64, blocks of 7 head-major, shared blocks, varlen (a batch without rows), a band");
    run(&c);
    c = paged(3, FC_F32, 40, 21, 33, 5), c.Dv = 24, c.pad = 3, c.dim_stride = 2, c.N2 = 1;
    tc_context("emulated paged forward: fp32, odd strides (element loads), Dv != D, MQA, blocks of 5");
    run(&c);
    if (tiny)
        return tc_summary("unit_fwd_paged_emu");
    c = paged(4, FC_F16, 256, 20, 100, 64), c.Dv = 200, c.mask.on = true, c.bias.on = true, c.softcap = 3.0f;
    c.sink = NT_SINK_FINITE;
    tc_context("emulated paged forward: fp16, class 256, blocks of 64 (tiles inside one block), mask, bias, softcap, sink");
    run(&c);
    c = paged(5, FC_BF16, 96, 40, 37, 1), c.alibi.on = true, c.keep_prob = 0.8, c.prefix = true;
    tc_context("emulated paged forward: bf16, blocks of 1, ALiBi, dropout keep bits, prefixes");
    run(&c);
    c = paged(6, FC_F16, 64, 140, 60, 256), c.N1 = 6, c.N2 = 3;
    c.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    tc_context("emulated paged forward: one block longer than the cache (256 > 60), Sq > Skv, causal top-left");
    run(&c);
    c = paged(7, FC_F32, 256, 30, 75, 32), c.Dv = 136, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("emulated paged forward: fp32, class 256 (every tile row by row), blocks of 32, causal");
    run(&c);
    c = paged(8, FC_F32, 128, 65, 129, 48), c.kv.head_major_blocks = true;
    tc_context("emulated paged forward: fp32, class 128, blocks of 48 head-major, two query tiles");
    run(&c);
    c = paged(9, FC_F16, 128, 70, 90, 16), c.kv.mode = NT_KV_BATCHES;
    tc_context("emulated paged forward: per-batch key/value tensors (a tensor list), cp.async rows");
    run(&c);
    c = paged(10, FC_BF16, 40, 17, 45, 16), c.kv.mode = NT_KV_BATCHES, c.dim_stride = 2, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("emulated paged forward: a tensor list with odd strides (element loads), causal");
    run(&c);
    c = paged(11, FC_F32, 64, 30, 50, 16), c.kv.mode = NT_KV_BATCHES;
    tc_context("emulated paged forward: fp32 tensor list");
    run(&c);
    bad_entry();
    if (!quick) {
        tc_rng r = tc_rng_seed(41);
        static const fc_dtype dts[3] = {FC_F16, FC_BF16, FC_F32};
        for (int x = 0; x < 6; x++) {
            c = paged(100 + x, dts[tc_rng_int(&r, 0, 2)], 8 * (int)tc_rng_int(&r, 1, 32), (int)tc_rng_int(&r, 1, 140),
                      (int)tc_rng_int(&r, 1, 200), (int)tc_rng_int(&r, 1, 80));
            c.N2 = (int)tc_rng_int(&r, 1, 2), c.N1 = c.N2 * (int)tc_rng_int(&r, 1, 3), c.B = (int)tc_rng_int(&r, 1, 3);
            c.Dv = 8 * (int)tc_rng_int(&r, 1, 32);
            c.kv.head_major_blocks = tc_rng_bool(&r, 0.5), c.kv.shared_blocks = tc_rng_bool(&r, 0.3);
            if (tc_rng_bool(&r, 0.2))
                c.kv.mode = NT_KV_BATCHES;
            c.layout = tc_rng_bool(&r, 0.5) ? NT_BSND : NT_BNSD;
            c.mask.on = tc_rng_bool(&r, 0.2);
            if (tc_rng_bool(&r, 0.6))
                c.window = fc_window_causal(tc_rng_bool(&r, 0.5) ? FC_ALIGN_BOTTOM_RIGHT : FC_ALIGN_TOP_LEFT);
            tc_context("emulated paged forward: random case %d (%s, D %d, Dv %d, Sq %d, Skv %d, blocks of %d%s)", x,
                       c.dt == FC_F32 ? "fp32" : c.dt == FC_BF16 ? "bf16" : "fp16", c.D, c.Dv, c.Sq, c.Skv, c.kv.block_size,
                       c.kv.mode == NT_KV_BATCHES ? ", a tensor list" : "");
            run(&c);
        }
    }
    return tc_summary("unit_fwd_paged_emu");
}
