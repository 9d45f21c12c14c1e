/*
 * What an emulated kernel test runs over: a CPU plan of the case's description, whose fc_problem is
 * the one the CUDA backend would get (host addresses).
 */
#ifndef FLASHC_TESTS_UNIT_EMU_PLAN_H
#define FLASHC_TESTS_UNIT_EMU_PLAN_H

#include <math.h>
#include <string.h>

#include <vector>

extern "C" {
#include "common/check.h"
#include "core/philox.h"
#include "core/plan.h"
#include "harness.h"
#include "harness_bwd.h"
#include "harness_internal.h"
}
#include "harness_nonfinite.h"

/* Dropout generated on the device: an emulated kernel draws its keep bits from this seed and offset
 * (core/philox.h; emu_philox_problem), while the reference and the CPU backend read the caller's
 * bits, set by emu_philox_bits to what Philox makes for the same seed, offset and bit index
 * (core/terms.h): the results agree only if the kernel's bits are those.  The offset sits just
 * below 2³², so that the counter's carry into its high word is crossed. */
constexpr uint64_t kEmuPhiloxSeed = 0x9E3779B97F4A7C15ull, kEmuPhiloxOffset = 0xFFFFFFFFull - 40;

inline void emu_philox_bits(const nt_case *c, nt_data *d)
{
    const uint64_t threshold = (uint64_t)ceil(ldexp(c->keep_prob, 32)); /* the lowering's (native/lower.c) */
    for (int64_t e = 0; e < d->keep_n * 8; e++) {
        const unsigned bit = fc_philox_keep_at(kEmuPhiloxSeed, kEmuPhiloxOffset, threshold, (uint64_t)e);
        d->keep[e >> 3] = (uint8_t)((d->keep[e >> 3] & ~(1u << (e & 7))) | bit << (e & 7));
    }
}

/* The lowered problem with its keep bits generated (the plan's keep probability stays). */
inline void emu_philox_problem(fc_problem &p)
{
    p.drop_philox = true, p.drop_bits = NULL, p.drop_seed = kEmuPhiloxSeed, p.drop_offset = kEmuPhiloxOffset;
}

inline fc_status emu_cpu_plan(const fc_attention_desc *a, fc_plan **plan)
{
    fc_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = FC_BACKEND_CPU;
    return fc_plan_create(a, &opt, plan);
}

/* f(problem) over a CPU plan of the description (a backward's with gradients gr, else a
 * forward's), the plan destroyed after: the planning's status, else f's. */
template <typename F> inline fc_status emu_with_plan(const fc_attention_desc *a, const fc_attention_grads *gr, F f)
{
    fc_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = FC_BACKEND_CPU;
    fc_plan *plan = NULL;
    fc_status st = gr ? fc_plan_create_backward(a, gr, &opt, &plan) : fc_plan_create(a, &opt, &plan);
    if (st == FC_OK)
        st = f(plan->prob);
    fc_plan_destroy(plan);
    return st;
}

/* nt_bwd_runner_fn: RUN(problem, launch configuration) over a CPU plan of the case's backward. */
template <fc_status (*RUN)(const fc_problem &, int)>
fc_status emu_bwd_runner(const nt_case *, const nt_data *, const fc_attention_desc *a, const struct nt_bufs *,
                         const fc_attention_grads *gr, const size_t *, int config)
{
    return emu_with_plan(a, gr, [config](const fc_problem &p) { return RUN(p, config); });
}

/* The backward harness's options for gradients of grad_dt, the kernels run by RUN in two launch
 * configurations (0, 1), whose results must agree bit for bit. */
template <fc_status (*RUN)(const fc_problem &, int)> nt_bwd emu_bwd_options(fc_dtype grad_dt)
{
    nt_bwd o = nt_bwd_default();
    o.grad_dt = grad_dt;
    o.runner = emu_bwd_runner<RUN>;
    o.runner_configs = 2;
    return o;
}

/* The backward harness over case c so (emu_bwd_options). */
template <fc_status (*RUN)(const fc_problem &, int)> void emu_bwd_run(const nt_case *c, fc_dtype grad_dt)
{
    const nt_bwd o = emu_bwd_options<RUN>(grad_dt);
    nt_bwd_run(c, &o);
}

/* ... with the non-finite puts in its inputs (harness_nonfinite.h). */
template <fc_status (*RUN)(const fc_problem &, int)>
void emu_bwd_nonfinite(const nt_case *c, fc_dtype grad_dt, const nf_put *puts, int n)
{
    const nt_bwd o = emu_bwd_options<RUN>(grad_dt);
    nf_backward(c, puts, n, &o);
}

/* f(problem, its data, its buffers) over the case's lowered problem (a CPU plan's), all freed after;
 * for tests that change the problem (a corrupt block table) before they run a kernel on it. */
template <typename F> inline void emu_on_problem(const nt_case *c, F f)
{
    nt_data d = nt_prepare(c);
    nt_bufs L;
    const fc_attention_desc a = nt_make_desc(c, &d, &L);
    fc_plan *plan = NULL;
    if (TC_CHECK(emu_cpu_plan(&a, &plan) == FC_OK, "CPU plan"))
        f(plan->prob, d, L);
    fc_plan_destroy(plan);
    nt_bufs_free(&L);
    nt_data_free(&d);
}

/* How many output elements of case c a run wrote into L's output (not its sentinel). */
inline int64_t emu_out_written(const nt_case &c, const nt_data &d, const nt_bufs &L)
{
    int64_t n = 0;
    for (int b = 0; b < c.B; b++)
        for (int h = 0; h < c.N1; h++)
            for (int s = 0; s < c.Sq; s++)
                for (int e = 0; e < c.Dv; e++)
                    n += !nt_is_sentinel(c.out_dt, L.out, nt_offset(&c, &d, &L.gout, NT_OUT, b, h, s, e));
    return n;
}

/* A copy of the problem's B rows of a block table (to corrupt). */
inline std::vector<int32_t> emu_table_copy(const fc_pages &pg, int64_t B)
{
    return std::vector<int32_t>(pg.table, pg.table + B * pg.table_stride);
}

#endif /* FLASHC_TESTS_UNIT_EMU_PLAN_H */
