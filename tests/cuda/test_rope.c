/*
 * Rope-split heads (Dr > 0: q·k = q·k + q_rope·k_rope) on the GPU against the CPU backend
 * (gpu_case.h: poisoned outputs, two bitwise-equal GPU runs), forward and backward: the MLA
 * training form (128 + 64, Dv = 128), UnpaddingScoreGradV5's packed (TND) varlen causal form,
 * odd splits (element loads), every layout, GQA and MQA, masks, bias, ALiBi, sink, the caller's
 * dropout bits, Sq ≠ Skv, decode shapes; then seeded sweeps of random rope cases.  (Which rope
 * problems the kernels refuse, by name: tests/unit/test_cuda_rope.c.)  Skips (77) without a GPU.
 *   test_cuda_rope [cases [sweep]]   (default 40 per direction; sweep: the sweeps alone, for the sanitizers)
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/check.h"
#include "gpu_args.h"
#include "gpu_case.h"

static gc_case base(int D, int Dr, fc_dtype dt, bool backward)
{
    gc_case c = {.B = 2, .Nq = 4, .Nkv = 2, .Sq = 77, .Skv = 93, .D = D, .Dr = Dr, .Dv = D, .dt = dt, .layout = GC_BSND,
                 .backward = backward, .seed = 30};
    return c;
}

static void named_cases(bool bwd)
{
    for (int t = 0; t < 2; t++) { /* the MLA form, every layout and visibility form (odd strides: element loads) */
        gc_layouts(base(128, 64, t ? FC_BF16 : FC_F16, bwd));
        gc_layouts(base(64, 64, t ? FC_BF16 : FC_F16, bwd)); /* class 128 */
    }
    gc_case c = base(128, 64, FC_F16, bwd); /* UnpaddingScoreGradV5: TND, varlen, causal, sink */
    c.packed = c.varlen = true, c.B = 4, c.window = GC_CAUSAL, c.sink = true, c.stats = true, gc_run(&c);
    c = base(192, 64, FC_BF16, bwd), c.Dv = 128, gc_run(&c); /* Dqk + Dr = 256 exactly */
    c = base(7, 5, FC_F16, bwd), c.Dv = 3, gc_run(&c);        /* odd split, element loads */
    c = base(120, 8, FC_BF16, bwd), c.Dv = 200, gc_run(&c);   /* class 256 from Dv */
    c = base(128, 64, FC_BF16, bwd), c.Nq = 8, c.Nkv = 1, c.Sq = 300, c.Skv = 260, c.window = GC_CAUSAL, gc_run(&c); /* MQA */
    c = base(128, 64, FC_F16, bwd), c.mask = true, c.bias = true, gc_run(&c);
    c = base(128, 64, FC_BF16, bwd), c.alibi = true, c.softcap = 5.0f, c.q_start = 70, c.kv_start = 60, gc_run(&c);
    c = base(128, 64, FC_BF16, bwd), c.dropout = true, c.stats = true, gc_run(&c);
    c = base(64, 32, FC_F16, bwd), c.varlen = true, c.pad_nan = true, c.B = 3, gc_run(&c); /* NaN padding nobody sees */
    c = base(128, 64, FC_BF16, bwd), c.Sq = 1, c.Skv = 1000, gc_run(&c); /* decode shape: the tiled kernel */
    c = base(128, 64, FC_F16, bwd), c.Sq = 700, c.Skv = 9, c.window = GC_BAND, gc_run(&c);
    c = base(128, 64, FC_BF16, bwd), c.B = 1, c.Nq = c.Nkv = 2, c.Sq = c.Skv = 1500, c.window = GC_CAUSAL, gc_run(&c);
    if (bwd)
        c = base(128, 64, FC_F16, bwd), c.grad_f32 = true, gc_run(&c); /* fp32 gradients: refused by name */
}

int main(int argc, char **argv)
{
    if (!gc_args_ok(argc, argv, "sweep"))
        return 2;
    if (!gc_require_gpu("test_cuda_rope"))
        return TC_SKIP;
    const int cases = argc > 1 ? atoi(argv[1]) : 40;
    if (!(argc > 2 && strcmp(argv[2], "sweep") == 0)) {
        named_cases(false);
        named_cases(true);
    }
    gc_sweep_rope(20261130u, cases, false);
    gc_sweep_rope(20261131u, cases, true);
    return tc_summary("test_cuda_rope");
}
