/*
 * The CUDA sparse forward kernel (src/cuda/sparse_fwd_kernel.cuh) run on the CPU, unchanged, by the
 * CTA emulator (cta_emu.h: every thread a coroutine, warp intrinsics and barriers as exchanges,
 * ldmatrix / mma.sync / cp.async spelled out from the PTX ISA), on the native harness: each case
 * is lowered by a CPU plan (the fc_problem the CUDA backend would get, host addresses), every CTA
 * of the kernel's grid runs, and the harness checks the outputs against the sparse reference
 * (values within §0.4, empty and padding rows exact, statistics replicas, nothing written outside
 * the outputs) and against the CPU backend.  So the walk, the row gathers (strided, packed, paged,
 * element loads), the fragment layouts, the online softmax and the stores are checked without a
 * GPU; what only a GPU shows (timing, the real cp.async and barriers) is tests/cuda/test_sparse.c's.
 */
#include "cta_emu.h"

#include "cuda/sparse_fwd_kernel.cuh"
#include "sparse_emu.h"

#include "harness_nonfinite.h"

template <typename T, int C> static void launch(const fc_problem &p, const fc_cuda::SfaLaunch &L, int64_t rows)
{
    using Sh = fc_cuda::SfaShape<C>;
    static_assert(fc_cuda::SfaSmem<Sh::DK, Sh::DV, Sh::BN>::bytes <= kCtaEmuSmem, "the emulator's shared memory holds the CTA's");
    for (int64_t x = 0; x < rows; x++)
        for (int64_t y = 0; y < p.Nkv * L.head_tiles; y++)
            cta_emu::run_cta(32 * Sh::WARPS, cta_emu_dim3{(unsigned)x, (unsigned)y, 0},
                             [&] { fc_cuda::sparse_fwd_kernel<T, Sh::DK, Sh::DV, Sh::BN, Sh::WARPS>(p, L); });
}

/* nt_runner: the kernel's grid on the emulator over the case's lowered problem. */
static fc_status emu_runner(const nt_case *, const nt_data *, const fc_attention_desc *a, nt_bufs *, size_t *ws_bytes)
{
    static int calls; /* every second run: each round's threads highest first (cta_emu reverse_order) */
    const cta_emu::OrderScope order(calls++ % 2 == 1);
    *ws_bytes = 0;
    fc_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = FC_BACKEND_CPU;
    fc_plan *plan = NULL;
    fc_status st = fc_plan_create(a, &opt, &plan);
    if (st != FC_OK)
        return st;
    const fc_problem &p = plan->prob;
    const fc_cuda::SfaLaunch L = sfa_launch_of(p);
    const int64_t rows = fc_sfa_rows(p.batch, p.B);
    if (!TC_CHECK(p.sparse.data && (p.q.dtype == FC_F16 || p.q.dtype == FC_BF16) && p.out.dtype == p.q.dtype &&
                      fc_sfa_class(p.Dqk, p.Dr, p.Dv) != 0,
                  "test bug: a case the sparse kernel does not take"))
        st = FC_ERR_BACKEND;
    else
        sparse_emu_dispatch(p, [&](auto inst) { launch<typename decltype(inst)::type, decltype(inst)::cls>(p, L, rows); });
    fc_plan_destroy(plan);
    return st;
}

/* The case on the CPU backend and on the emulated kernel: each against the reference, the kernel
 * against the CPU. */
static void run(const nt_case *c) { nt_run_elsewhere(c, emu_runner, 1); }

int main(int argc, char **argv)
{
    sparse_emu_cases(argc > 1 && strcmp(argv[1], "quick") == 0, "forward", run);
    nf_sparse_suite(FC_BF16, emu_runner); /* non-finite inputs (semantics §0.3) */
    return tc_summary("unit_sparse_fwd_emu");
}
