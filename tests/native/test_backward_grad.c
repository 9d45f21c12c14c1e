/* Gradients against the library's own forward (semantics §9 b): central finite differences of
 * L = Σ d_out·out on tiny fp32 problems, every input element perturbed, plus dsink; and the
 * determinism of §3.4 / §9 p: bit-identical gradients for 1 and 2 threads on problems large
 * enough to be split. */
#include "common/check.h"
#include "harness.h"
#include "harness_bwd.h"

static nt_case tiny(uint64_t seed)
{
    nt_case c = nt_default();
    c.seed = seed;
    c.B = 2, c.N1 = 2, c.N2 = 1, c.D = 3, c.Dv = 2;
    c.Sq = 3, c.Skv = 4;
    return c;
}

static void finite_differences(void)
{
    nt_case c = tiny(1);
    tc_context("fd: plain GQA");
    nt_bwd_finite_differences(&c);
    c = tiny(2);
    c.Dr = 2, c.layout = NT_BSND, c.pad = 1;
    tc_context("fd: rope, strided");
    nt_bwd_finite_differences(&c);
    c = tiny(3);
    c.mask.on = true, c.mask.density = 0.4, c.bias.on = true, c.softcap = 1.5f;
    tc_context("fd: mask, bias after, softcap");
    nt_bwd_finite_differences(&c);
    c = tiny(4);
    c.bias.on = true, c.bias.order = FC_BIAS_BEFORE_SCALE, c.alibi.on = true, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("fd: bias before scale, ALiBi, causal");
    nt_bwd_finite_differences(&c);
    c = tiny(5);
    c.sink = NT_SINK_SOME_NEG_INF, c.N1 = 4, c.N2 = 2, c.mask.on = true, c.mask.density = 0.5;
    tc_context("fd: sinks (dsink)");
    nt_bwd_finite_differences(&c);
    c = tiny(6);
    c.keep_prob = 0.6;
    tc_context("fd: dropout");
    nt_bwd_finite_differences(&c);
    static const int sq[3] = {2, 0, 3}, skv[3] = {3, 2, 1};
    c = tiny(7);
    c.B = 3, c.packed = true, c.sq = sq, c.skv = skv, c.Dv = 4, c.sink = NT_SINK_FINITE;
    tc_context("fd: packed with empty batches, sink");
    nt_bwd_finite_differences(&c);
}

static void determinism(void)
{
    nt_bwd o = nt_bwd_default();
    o.check_threads = true;
    nt_case c = nt_default();
    c.seed = 20;
    c.B = 2, c.N1 = 4, c.N2 = 1, c.D = 32, c.Dv = 24, c.Sq = 70, c.Skv = 90, c.stats = true;
    c.sink = NT_SINK_FINITE, c.Dr = 8;
    tc_context("determinism: GQA, rope, sink");
    nt_bwd_run(&c, &o);
    static const int sq[3] = {50, 1, 77}, skv[3] = {60, 100, 33};
    c.packed = true, c.B = 3, c.sq = sq, c.skv = skv, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT), c.keep_prob = 0.9;
    c.dt = c.out_dt = FC_F16;
    o.grad_dt = FC_BF16;
    tc_context("determinism: packed, causal, dropout, fp16 in, bf16 gradients");
    nt_bwd_run(&c, &o);
    o.threads = 2;
    c.B = 1, c.packed = false, c.sq = c.skv = NULL, c.Sq = 1, c.Skv = 300, c.N1 = 16, c.N2 = 2, c.window.enabled = false;
    tc_context("determinism: one row per head, long kv");
    nt_bwd_run(&c, &o);
}

static void body(void)
{
    finite_differences();
    determinism();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_backward_grad", body); }
