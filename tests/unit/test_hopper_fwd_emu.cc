/*
 * The sm_90a forward (src/cuda/hopper/fwd_kernel.cuh: TMA, wgmma through CuTe's GMMA atoms,
 * mbarrier rings, warp specialisation, the persistent grid) run on the CPU, unchanged, by the CTA
 * emulator with its Hopper vocabulary (cta_emu_sm90.h), on the native harness: each case is lowered
 * by a CPU plan (the fc_problem the CUDA backend would get, host addresses); the Hopper plan and run
 * are the library's own host code (fwd_host.cu, tma_map.cu, launch.cu: the work list heaviest first,
 * the tensor maps through the emulator's encoder) on an emulated device of a few SMs, so every
 * persistent CTA takes several items and the rings wrap; the launchers below run the grid's CTAs one
 * after another.  The harness checks the output and statistics against the double-precision
 * reference and the CPU backend.  Both dtypes, classes 64 / 128 / 256, the three-warpgroup class-64
 * variant, ping-pong on and off, both epilogues (register stores; whole tiles through shared memory
 * and a TMA store) on every two-warpgroup case; odd sizes, Sq != Skv, causal / bands / prefixes,
 * GQA, packed and padded varlen (short batches: the edge fixer; tiles a TMA store must not take),
 * both statistics orders.  With the argument `paged` (its own ctest): the paged key/value kernels
 * (fwd_hopper_kernel_paged) on the harness's physical caches — blocks in random order, some shared,
 * NaN in every slot no used entry points at, garbage entries past each batch's length — after the
 * run's block-table check as forward.cu queues it; blocks of 16 to past the cache, tiles over
 * several pages and pages over several tiles, GQA/MQA, varlen, causal / bands / prefixes, lengths
 * that are multiples of neither the tile nor the page; each case also bit for bit against the
 * same kernels on the cache gathered into one dense tensor, and an out-of-range entry (reported,
 * nothing written).
 */
#include "cta_emu_sm90.h"

#include "cuda/hopper/fwd_kernel.cuh"
#include "hopper_emu.h"
#include "harness_nonfinite.h"

extern "C" {
#include "common/rng.h"
}

/* The grid's CTAs, one after another (each persistent over items w, w + grid, ...); the kernel the
 * library's launcher would start (TMA_OUT: the TMA-store epilogue's). */
static int g_launches_tma_out; /* launches of the TMA-store variant: the case ran the kernel it meant to */
static int g_launches_paged;  /* ... and of the paged kernels */
template <typename T, int D, int WG, bool TMA_OUT = false, bool PAGED = false>
static cudaError_t emu_launch(const fc_problem &p, const fc_hopper::FwdArgs &a, int grid)
{
    using Tr = fc_hopper::FwdTraits<T, D, WG>;
    static_assert(Tr::SMEM <= kCtaEmuSmem, "the emulator's shared memory holds the CTA's");
    g_launches_tma_out += TMA_OUT;
    g_launches_paged += PAGED;
    for (int x = 0; x < grid; x++)
        cta_emu_sm90::run_cta(Tr::THREADS, cta_emu_dim3{(unsigned)x, 0, 0}, (unsigned)grid, [&] {
            if constexpr (PAGED)
                fc_hopper::fwd_hopper_kernel_paged<T, D>(p, a);
            else if constexpr (TMA_OUT)
                fc_hopper::fwd_hopper_kernel_tma_store<T, D>(p, a);
            else
                fc_hopper::fwd_hopper_kernel<T, D, WG>(p, a);
        });
    return cudaSuccess;
}
#define EMU_LAUNCHER(dt, T, d, wg, suffix, tma_out, paged)                                                                    \
    cudaError_t fc_hopper::fwd_launch_##dt##_d##d##suffix(const fc_problem &p, const FwdArgs &a, int grid, cudaStream_t) \
    {                                                                                                                          \
        return emu_launch<T, d, wg, tma_out, paged>(p, a, grid);                                                              \
    }
EMU_LAUNCHER(f16, __half, 64, 2, , false, false)
EMU_LAUNCHER(f16, __half, 128, 2, , false, false)
EMU_LAUNCHER(f16, __half, 256, 2, , false, false)
EMU_LAUNCHER(bf16, __nv_bfloat16, 64, 2, , false, false)
EMU_LAUNCHER(bf16, __nv_bfloat16, 128, 2, , false, false)
EMU_LAUNCHER(bf16, __nv_bfloat16, 256, 2, , false, false)
EMU_LAUNCHER(f16, __half, 64, 3, _wg3, false, false)
EMU_LAUNCHER(bf16, __nv_bfloat16, 64, 3, _wg3, false, false)
EMU_LAUNCHER(f16, __half, 64, 2, _tma, true, false)
EMU_LAUNCHER(f16, __half, 128, 2, _tma, true, false)
EMU_LAUNCHER(f16, __half, 256, 2, _tma, true, false)
EMU_LAUNCHER(bf16, __nv_bfloat16, 64, 2, _tma, true, false)
EMU_LAUNCHER(bf16, __nv_bfloat16, 128, 2, _tma, true, false)
EMU_LAUNCHER(bf16, __nv_bfloat16, 256, 2, _tma, true, false)
EMU_LAUNCHER(f16, __half, 64, 2, _paged, false, true)
EMU_LAUNCHER(f16, __half, 128, 2, _paged, false, true)
EMU_LAUNCHER(bf16, __nv_bfloat16, 64, 2, _paged, false, true)
EMU_LAUNCHER(bf16, __nv_bfloat16, 128, 2, _paged, false, true)

/* How the next case runs: SMs of the emulated device, the class-64 variant, ping-pong, the epilogue. */
static int g_sms = 3;
static int g_l2 = 50 * 1024 * 1024; /* the emulated device's L2, which sets the plan's head group */
static bool g_wg3, g_pingpong = true, g_tma_out;
static bool g_run_lengths; /* cases with kv lengths: planned at the padded length, run with theirs */
static bool g_keys_seen = true; /* false: no row sees a key, and such rows go from registers */

/* A paged run's block-table check word and report. */
static struct {
    unsigned long long word;
    fc_cuda::DecReport report;
} g_fault;

/* The block-table check forward.cu queues before a paged forward (fwd_page_check_kernel's body: one
 * CTA per batch), into g_fault.word. */
static void emu_check_pages(const fc_problem &p)
{
    g_fault.word = 0;
    for (int64_t b = 0; b < p.B; b++)
        cta_emu_sm90::run_cta(128, cta_emu_dim3{(unsigned)b, 0, 0}, (unsigned)p.B,
                              [&] { fc_cuda::dec_check_table(&g_fault.word, p, b, p.batch[b].skv, threadIdx.x, 128); });
}

/* A run that brings its own kv lengths (a face's, e.g. IncreFlashAttention's kvPaddingSize): the
 * rule the description's lengths become facts by (native/lower.c's, for descriptions without a
 * mask, bias or dropout) and the run's lengths; NULL: the run keeps the planned facts. */
static const fc_attention_desc *g_run_desc;

static fc_batch_rule run_rule(const fc_attention_desc *d)
{
    fc_batch_rule r;
    memset(&r, 0, sizeof r);
    r.B = d->batch, r.q = {d->packed, d->q_len, d->q_len}, r.kv = {d->packed, d->kv_len, d->kv_len};
    r.window = d->vis.window, r.q_start = d->vis.q_start, r.kv_start = d->vis.kv_start;
    return r;
}

/* The forward's plans fix the query rows (their tile lists); a run's lengths move kv ranges only. */
static fc_status same_rows(const void *, int64_t b, const fc_batch &planned, const fc_batch &own)
{
    TC_CHECK(own.q_rows == planned.q_rows && own.sq == planned.sq, "test bug: batch %lld's query rows moved", (long long)b);
    return FC_OK;
}

/* The library's Hopper plan and run of p on the emulator (a paged problem: after its check; a run
 * with its own lengths: its facts derived into a workspace as fc_cuda_fwd_run derives them). */
static fc_status emu_plan_run(const fc_problem &planned)
{
    fc_problem p = planned;
    fc_status st = FC_OK;
    const char *why = fc_hopper::fwd_unsupported(&p);
    cta_emu_device().sms = g_sms, cta_emu_device().l2 = g_l2;
    setenv("FLASHC_CUDA_FWD_D64", g_wg3 ? "wg3" : "wg2", 1);
    setenv("FLASHC_CUDA_FWD_PINGPONG", g_pingpong ? "1" : "0", 1);
    setenv("FLASHC_CUDA_FWD_EPILOGUE", g_tma_out ? "tma" : "regs", 1);
    fc_hopper::FwdPlan hp;
    memset(&hp, 0, sizeof hp);
    fc_cuda_facts facts;
    memset(&facts, 0, sizeof facts);
    bool launched = false;
    if (!TC_CHECK(!why, "test bug: the sm_90a forward does not take the case (%s)", why ? why : ""))
        st = FC_ERR_BACKEND;
    if (st == FC_OK)
        st = fc_hopper::fwd_plan(&p, &hp);
    if (st == FC_OK)
        st = fc_cuda_facts_plan(&facts, &p, "emu");
    fc_cuda_reach reach = facts.reach;
    std::vector<fc_batch> own;
    if (st == FC_OK && g_run_desc) {
        const fc_batch_rule rule = run_rule(g_run_desc);
        const fc_lengths len = {g_run_desc->q_lens, g_run_desc->kv_lens, g_run_desc->kv_starts};
        own.resize((size_t)p.B);
        st = fc_cuda_facts_for_run(&facts, &planned, fc_cuda_lengths{&rule, &len}, NULL, same_rows, own.data(), 0, "emu",
                                   &p.batch, &reach);
        TC_CHECK(st != FC_OK || p.batch == own.data(), "test bug: the run's facts are its own");
    }
    const bool paged = p.k.pages.table != NULL;
    if (paged)
        emu_check_pages(p);
    const fc_hopper::FwdFault fault = {paged ? &g_fault.word : NULL, paged ? &g_fault.report : NULL};
    if (st == FC_OK)
        st = fc_hopper::fwd_run(hp, p, reach, fault, 0, &launched, &why);
    if (st == FC_OK && !TC_CHECK(launched, "test bug: the run's views cannot be mapped (%s)", why ? why : ""))
        st = FC_ERR_BACKEND;
    fc_cuda_facts_free(&facts);
    fc_hopper::fwd_destroy(&hp);
    return st;
}

/* nt_runner over the case's lowered problem, each case twice: the threads of each round by index,
 * then highest first (a role that skips a wait then runs before the one it should wait for); the
 * harness checks both runs, and that they agree bit for bit. */
static fc_status emu_runner(const nt_case *, const nt_data *, const fc_attention_desc *a, nt_bufs *, size_t *ws_bytes)
{
    static int calls;
    *ws_bytes = 0;
    cta_emu::reverse_order() = calls++ % 2 == 1;
    fc_attention_desc planned = *a; /* own lengths: planned at the padded length, run with the case's */
    std::vector<int64_t> padded((size_t)a->batch, a->kv_len);
    if (g_run_lengths && a->kv_lens)
        planned.kv_lens = padded.data(), g_run_desc = a;
    const fc_status st = emu_with_plan(&planned, NULL, [](const fc_problem &p) { return emu_plan_run(p); });
    g_run_desc = NULL;
    cta_emu::reverse_order() = false;
    return st;
}

/* Each case with the register epilogue, then with the TMA store (the three-warpgroup variant has
 * only the first); the second must have run the variant's kernel and stored through the TMA. */
static void run(const nt_case *c)
{
    g_tma_out = false;
    nt_run_elsewhere(c, emu_runner, 2);
    if (g_wg3)
        return;
    char ctx[512];
    snprintf(ctx, sizeof ctx, "%s", tc_context_text());
    tc_context("%s; TMA-store epilogue", ctx);
    g_tma_out = true;
    const int launches = g_launches_tma_out;
    const uint64_t stores = cta_emu_sm90::st().tma_stores;
    nt_run_elsewhere(c, emu_runner, 2);
    TC_CHECK(g_launches_tma_out > launches && (cta_emu_sm90::st().tma_stores > stores || !g_keys_seen),
             "the TMA-store variant ran and stored tiles");
    g_tma_out = false;
    tc_context("%s", ctx);
}

/* --- paged key/value ----------------------------------------------------------------------- */

/* A case with its key/value in a physical page pool of blocks of bs slots. */
static nt_case paged_case(uint64_t seed, fc_dtype dt, int D, int Sq, int Skv, int bs)
{
    nt_case c = hopper_case(seed, dt, D, Sq, Skv);
    c.kv.mode = NT_KV_PAGED, c.kv.block_size = bs, c.kv.spare_blocks = 2;
    return c;
}

/* Every output element and statistic a run wrote (the rows each batch has), in one order. */
static std::vector<uint32_t> written(const fc_problem &p)
{
    std::vector<uint32_t> w;
    for (int64_t b = 0; b < p.B; b++) {
        const fc_batch &bt = p.batch[b];
        for (int64_t n = 0; n < p.Nq; n++)
            for (int64_t i = 0; i < bt.q_rows; i++) {
                const char *row = fc_view_row(&p.out, 2, b, bt.q_tok, n, i);
                for (int64_t e = 0; e < p.Dv; e++)
                    w.push_back(*(const uint16_t *)(row + e * p.out.se * 2));
                if (!p.stats.max)
                    continue;
                const int64_t at = fc_stat_offset(&p, &bt, n, i);
                uint32_t m, l;
                memcpy(&m, &p.stats.max[at], 4), memcpy(&l, &p.stats.sum[at], 4);
                w.push_back(m), w.push_back(l);
            }
    }
    return w;
}

/* The paged run against the dense kernel's on the cache gathered into one BNSD tensor (NaN past
 * each batch's keys): bit for bit. */
static void same_as_gathered(const nt_case *c)
{
    emu_on_problem(c, [&](fc_problem p, const nt_data &, const nt_bufs &) {
        if (emu_plan_run(p) != FC_OK)
            return;
        const std::vector<uint32_t> paged = written(p);
        const int64_t S = p.max_skv > 0 ? p.max_skv : 1;
        std::vector<uint16_t> k((size_t)(p.B * p.Nkv * S * p.Dqk), 0xFFFF), v((size_t)(p.B * p.Nkv * S * p.Dv), 0xFFFF);
        for (int64_t b = 0; b < p.B; b++) {
            TC_CHECK(p.batch[b].kv_tok == 0, "test bug: a paged batch with a kv token offset");
            for (int64_t n = 0; n < p.Nkv; n++)
                for (int64_t s = 0; s < p.batch[b].skv; s++) {
                    const char *kr = fc_view_row(&p.k, 2, b, 0, n, s), *vr = fc_view_row(&p.v, 2, b, 0, n, s);
                    for (int64_t e = 0; e < p.Dqk; e++)
                        memcpy(&k[(size_t)(((b * p.Nkv + n) * S + s) * p.Dqk + e)], kr + e * p.k.se * 2, 2);
                    for (int64_t e = 0; e < p.Dv; e++)
                        memcpy(&v[(size_t)(((b * p.Nkv + n) * S + s) * p.Dv + e)], vr + e * p.v.se * 2, 2);
                }
        }
        fc_problem d = p;
        d.k.data = (char *)k.data(), d.v.data = (char *)v.data();
        d.k.pages = d.v.pages = fc_pages{};
        d.k.se = d.v.se = 1, d.k.ss = p.Dqk, d.v.ss = p.Dv;
        d.k.sn = S * p.Dqk, d.v.sn = S * p.Dv, d.k.sb = p.Nkv * S * p.Dqk, d.v.sb = p.Nkv * S * p.Dv;
        if (emu_plan_run(d) != FC_OK)
            return;
        const std::vector<uint32_t> dense = written(d);
        size_t diff = 0;
        for (size_t i = 0; i < paged.size() && i < dense.size(); i++)
            diff += paged[i] != dense[i];
        TC_CHECK(paged.size() == dense.size() && diff == 0, "paged == gathered, bit for bit (%zu of %zu values differ)", diff,
                 paged.size());
    });
}

/* A paged case: the harness (reference, CPU backend, two thread orders), then the gathered twin. */
static void run_paged(const nt_case *c)
{
    const int launches = g_launches_paged;
    nt_run_elsewhere(c, emu_runner, 2);
    TC_CHECK(g_launches_paged > launches, "the paged kernel ran");
    same_as_gathered(c);
}

/* Out-of-range entries in batch 1 of the (shared) block table: the check records them, the first
 * CTA reports the smallest (the key table's) and no CTA writes anything. */
static void paged_bad_entry(void)
{
    const nt_case c = paged_case(40, FC_F16, 64, 70, 90, 16);
    tc_context("emulated sm_90a forward, paged: out-of-range block-table entries in batch 1");
    emu_on_problem(&c, [&](fc_problem p, const nt_data &d, const nt_bufs &L) {
        std::vector<int32_t> table = emu_table_copy(p.k.pages, p.B);
        table[(size_t)p.k.pages.table_stride + 3] = -7, table[(size_t)p.k.pages.table_stride + 4] = (int32_t)p.k.pages.blocks;
        p.k.pages.table = p.v.pages.table = table.data();
        memset(&g_fault.report, 0, sizeof g_fault.report);
        if (emu_plan_run(p) != FC_OK)
            return;
        const fc_cuda::DecReport &r = g_fault.report;
        TC_CHECK(r.seq == 1 && r.tensor == 0 && r.batch == 1 && r.entry == 3 && r.value == -7 && r.whole,
                 "the report names key entry [1][3] = -7 once, no output written (%u reports: tensor %d [%lld][%lld] = %lld)", r.seq, r.tensor,
                 (long long)r.batch, (long long)r.entry, (long long)r.value);
        const int64_t wrote = emu_out_written(c, d, L);
        TC_CHECK(wrote == 0, "no output written (%lld elements were)", (long long)wrote);
    });
}

/* tiny (the sanitizer builds): the first two cases */
static void paged_cases(bool tiny)
{
    nt_case c = paged_case(60, FC_F16, 64, 37, 150, 16);
    tc_context("emulated sm_90a forward, paged: fp16 class 64, blocks of 16 (eight copies per key tile), GQA 2, Skv 150");
    run_paged(&c);
    c = paged_case(61, FC_BF16, 128, 150, 333, 64), c.kv.head_major_blocks = true, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("emulated sm_90a forward, paged: bf16 class 128, head-major blocks of 64 (two per tile), causal bottom-right");
    run_paged(&c);
    if (tiny)
        return;
    static const int sq[3] = {40, 0, 130}, skv[3] = {200, 9, 77};
    c = paged_case(62, FC_BF16, 64, 130, 200, 48), c.B = 3, c.lens = true, c.sq = sq, c.skv = skv, c.kv.shared_blocks = true;
    c.window = fc_window_band(60, 3, FC_ALIGN_TOP_LEFT);
    tc_context("emulated sm_90a forward, paged: blocks of 48 (pages start inside tiles), varlen with a batch without rows, "
               "shared blocks, a band");
    run_paged(&c);
    g_sms = 2;
    c = paged_case(63, FC_F16, 128, 200, 600, 256), c.B = 1, c.N1 = 4, c.N2 = 1;
    tc_context("emulated sm_90a forward, paged: blocks of 256 (a page over two key tiles), MQA, five kv tiles per item");
    run_paged(&c);
    g_pingpong = false;
    c = paged_case(64, FC_F16, 96, 33, 257, 128), c.Dv = 80, c.prefix = true, c.layout = NT_BNSD;
    tc_context("emulated sm_90a forward, paged: class 128 with D 96, Dv 80, blocks of 128 (a tile per page), prefixes, "
               "ping-pong off");
    run_paged(&c);
    g_pingpong = true, g_sms = 3;
    c = paged_case(65, FC_BF16, 64, 140, 70, 1024), c.N1 = 6, c.N2 = 3, c.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
    tc_context("emulated sm_90a forward, paged: one block longer than the cache (1024 > 70), Sq > Skv, causal top-left");
    run_paged(&c);
    tc_rng r = tc_rng_seed(43);
    for (int x = 0; x < 3; x++) {
        static const int ds[] = {32, 64, 104, 128};
        c = paged_case(200 + x, tc_rng_bool(&r, 0.5) ? FC_F16 : FC_BF16, ds[tc_rng_int(&r, 0, 3)], (int)tc_rng_int(&r, 1, 200),
                       (int)tc_rng_int(&r, 1, 400), 16 * (int)tc_rng_int(&r, 1, 20));
        c.N2 = (int)tc_rng_int(&r, 1, 2), c.N1 = c.N2 * (int)tc_rng_int(&r, 1, 3), c.B = (int)tc_rng_int(&r, 1, 3);
        c.kv.head_major_blocks = tc_rng_bool(&r, 0.5), c.kv.shared_blocks = tc_rng_bool(&r, 0.3);
        c.layout = tc_rng_bool(&r, 0.5) ? NT_BSND : NT_BNSD;
        if (tc_rng_bool(&r, 0.6))
            c.window = fc_window_causal(tc_rng_bool(&r, 0.5) ? FC_ALIGN_BOTTOM_RIGHT : FC_ALIGN_TOP_LEFT);
        g_sms = (int)tc_rng_int(&r, 1, 5), g_pingpong = tc_rng_bool(&r, 0.5);
        tc_context("emulated sm_90a forward, paged: random case %d (D %d, Sq %d, Skv %d, blocks of %d, %d SMs)", x, c.D, c.Sq,
                   c.Skv, c.kv.block_size, g_sms);
        run_paged(&c);
    }
    g_sms = 3, g_pingpong = true;
}

/* Non-finite inputs (semantics §0.3): a NaN query row, an infinite query element (a NaN row with
 * maximum +inf), a NaN key that only the rows from 100 see, a NaN and a −inf value that rows of
 * their tile do not see (the edge fixer's poison table), at both epilogues; then the hidden values
 * at head-dim classes 128 and 256, whose value stages hold 64-feature chunks one after another
 * (the table must name the row and feature of each, past feature 64 too). */
static void nonfinite(bool quick)
{
    nt_case c = hopper_case(13, FC_BF16, 64, 130, 150);
    c.window = fc_window_causal(FC_ALIGN_TOP_LEFT), c.stats = true;
    static const nf_put puts[] = {{NF_Q, 1, 2, 70, 0, 3, NAN}, {NF_Q, 0, 3, 40, 0, 1, INFINITY}, {NF_K, 0, 1, 0, 100, 0, NAN},
                                  {NF_V, 1, 0, 0, 90, 5, NAN}, {NF_V, 0, 0, 0, 20, 2, -INFINITY}};
    for (int tma = 0; tma < 2; tma++) {
        tc_context("emulated sm_90a forward: NaN query row, +inf query element, NaN key seen by rows >= 100; %s epilogue",
                   tma ? "TMA-store" : "register");
        g_tma_out = tma;
        nf_forward(&c, puts, 5, emu_runner);
    }
    g_tma_out = false;
    static const nf_put wide[] = {{NF_V, 1, 0, 0, 90, 5, NAN}, {NF_V, 0, 1, 0, 33, 100, -INFINITY},
                                  {NF_V, 0, 0, 0, 20, 70, INFINITY}, {NF_V, 1, 1, 0, 61, 127, NAN}};
    for (int D = 128; D <= (quick ? 128 : 256); D *= 2) {
        c = hopper_case(14, FC_F16, D, 130, 150), c.window = fc_window_causal(FC_ALIGN_TOP_LEFT), c.stats = true;
        tc_context("emulated sm_90a forward: class %d, NaN and ±inf values past feature 64 that rows of their tile do not see", D);
        nf_forward(&c, wide, 4, emu_runner);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "paged") == 0) {
        paged_cases(getenv("FLASHC_EMU_QUICK") != NULL);
        paged_bad_entry();
        return tc_summary("unit_hopper_fwd_paged_emu");
    }
    const bool quick = hopper_quick(argc, argv);
    hopper_first_cases("forward", run);
    nonfinite(quick);
    /* head groups (fwd_host.cu head_group: the kv heads whose keys and values fit half the L2):
     * an L2 of 4 kv heads' bytes gives groups of 2 kv heads × GQA 2 = 4 query heads over Nq = 6, so
     * the work list's last group is partial; one SM walks every item, with varlen items that have
     * no kv tile between them */
    static const int gsq[3] = {70, 0, 40}, gskv[3] = {100, 9, 0};
    nt_case g = hopper_case(15, FC_BF16, 64, 70, 100);
    g.B = 3, g.N1 = 6, g.N2 = 3, g.lens = true, g.sq = gsq, g.skv = gskv, g.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    g_l2 = 4 * 100 * (64 + 64) * 2, g_sms = 1;
    tc_context("emulated sm_90a forward: head groups of 4 over 6 query heads (a partial last group), one SM, a batch "
               "without keys");
    run(&g);
    g_l2 = 50 * 1024 * 1024, g_sms = 3;
    if (quick)
        return tc_summary("unit_hopper_fwd_emu");
    g_pingpong = false;
    nt_case c = hopper_case(3, FC_BF16, 128, 70, 200);
    c.N2 = 1, c.window = fc_window_band(40, 20, FC_ALIGN_TOP_LEFT);
    tc_context("emulated sm_90a forward: ping-pong off, MQA, a band");
    run(&c);
    g_pingpong = true;
    c = hopper_case(4, FC_F16, 256, 40, 150), c.Dv = 192, c.window = fc_window_causal(FC_ALIGN_TOP_LEFT), c.prefix = true;
    tc_context("emulated sm_90a forward: fp16 class 256, Dv 192, causal top-left, prefixes");
    run(&c);
    static const int sq[3] = {9, 0, 200}, skv[3] = {140, 7, 65};
    c = hopper_case(5, FC_BF16, 64, 200, 140), c.B = 3, c.packed = true, c.sq = sq, c.skv = skv,
    c.window = fc_window_band(60, 3, FC_ALIGN_TOP_LEFT);
    tc_context("emulated sm_90a forward: TND (packed) varlen, a batch without rows, a band");
    run(&c);
    g_wg3 = true;
    c.seed = 6, c.dt = c.out_dt = FC_F16, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("emulated sm_90a forward: class 64 on three warpgroups, packed varlen, causal");
    run(&c);
    c = hopper_case(7, FC_BF16, 64, 250, 170), c.N1 = 6, c.N2 = 2;
    tc_context("emulated sm_90a forward: class 64 on three warpgroups, GQA 3, two query tiles");
    run(&c);
    g_wg3 = false;
    static const int psq[2] = {130, 17}, pskv[2] = {33, 180};
    c = hopper_case(8, FC_F16, 128, 130, 180), c.sq = psq, c.skv = pskv, c.lens = true, c.stats_order = FC_STATS_TOKEN_MAJOR;
    tc_context("emulated sm_90a forward: padded varlen (lengths), short kv batches, token-major statistics");
    run(&c);
    /* the same lengths brought by the run (fc_cuda_facts_for_run: the tile list of the padded plan,
     * the kv ranges of the run's facts), causal bottom-right, so every row's band moves with them */
    c.seed = 16, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT), g_run_lengths = true;
    tc_context("emulated sm_90a forward: kv lengths brought by the run (planned at 180), causal bottom-right");
    run(&c);
    g_run_lengths = false;
    static const int zsq[2] = {70, 33}, zskv[2] = {0, 0};
    c = hopper_case(17, FC_BF16, 128, 70, 5), c.lens = true, c.sq = zsq, c.skv = zskv, c.stats_order = FC_STATS_TOKEN_MAJOR;
    tc_context("emulated sm_90a forward: no batch has keys (kv lengths 0, 0): every row sees nothing");
    g_keys_seen = false;
    run(&c);
    g_keys_seen = true;
    c = hopper_case(9, FC_BF16, 96, 33, 257), c.Dv = 80, c.layout = NT_BSH, c.batch_windows = true;
    tc_context("emulated sm_90a forward: class 128 with D 96, Dv 80, BSH, per-batch windows");
    run(&c);
    /* long kv ranges (several tiles per item, both warpgroups' rows written): a ring stage released
     * too early is overwritten while a product still reads it */
    c = hopper_case(10, FC_F16, 128, 256, 600), c.B = 1, c.N1 = 2, c.N2 = 1;
    tc_context("emulated sm_90a forward: five kv tiles per item, two query tiles");
    run(&c);
    c = hopper_case(11, FC_BF16, 256, 130, 330), c.B = 1, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("emulated sm_90a forward: class 256, six kv tiles per item, causal");
    run(&c);
    g_wg3 = true, g_pingpong = false;
    c = hopper_case(12, FC_F16, 64, 200, 520), c.B = 1, c.N1 = 2, c.N2 = 2;
    tc_context("emulated sm_90a forward: class 64 on three warpgroups, ping-pong off, five kv tiles");
    run(&c);
    g_wg3 = false, g_pingpong = true;
    tc_rng r = tc_rng_seed(41);
    for (int x = 0; x < 3; x++) {
        static const int ds[] = {32, 64, 104, 128, 200, 256};
        c = hopper_case(100 + x, tc_rng_bool(&r, 0.5) ? FC_F16 : FC_BF16, ds[tc_rng_int(&r, 0, 5)], (int)tc_rng_int(&r, 1, 300),
                 (int)tc_rng_int(&r, 1, 500));
        c.N2 = (int)tc_rng_int(&r, 1, 2), c.N1 = c.N2 * (int)tc_rng_int(&r, 1, 3), c.B = (int)tc_rng_int(&r, 1, 2);
        static const nt_layout lays[] = {NT_BNSD, NT_BSND, NT_BSH, NT_SBH};
        c.layout = lays[tc_rng_int(&r, 0, 3)];
        if (tc_rng_bool(&r, 0.5))
            c.window = fc_window_causal(tc_rng_bool(&r, 0.5) ? FC_ALIGN_BOTTOM_RIGHT : FC_ALIGN_TOP_LEFT);
        g_sms = (int)tc_rng_int(&r, 1, 5), g_pingpong = tc_rng_bool(&r, 0.5);
        tc_context("emulated sm_90a forward: random case %d (D %d, Sq %d, Skv %d, %d SMs)", x, c.D, c.Sq, c.Skv, g_sms);
        run(&c);
    }
    return tc_summary("unit_hopper_fwd_emu");
}
