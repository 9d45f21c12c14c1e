/*
 * What the sm_90a emulated tests share (test_hopper_fwd_emu.cc, test_hopper_bwd_emu.cc), included
 * after the kernel headers: the library's host side of the Hopper kernels compiled against the
 * emulated runtime (emu_sm90/cuda_runtime.h: plans, tensor maps through the emulator's encoder,
 * launch arguments) and the cases' common fixture.
 */
#ifndef FLASHC_TESTS_UNIT_HOPPER_EMU_H
#define FLASHC_TESTS_UNIT_HOPPER_EMU_H

#include "cuda/hopper/fwd_host.cu"
#include "cuda/hopper/tma_map.cu"
#include "cuda/launch.cu"
#include "cuda/plan_facts.cu"
#include "emu_plan.h"

/* B = 2, four query heads on two kv heads, D = Dv, BSND, statistics written. */
inline nt_case hopper_case(uint64_t seed, fc_dtype dt, int D, int Sq, int Skv)
{
    nt_case c = nt_fixture(seed, (nt_sizes){2, 4, 2, D, D, Sq, Skv});
    c.dt = c.out_dt = dt;
    c.layout = NT_BSND;
    return c;
}

/* The first cases of both tests (the quick ones), of the `what` ("forward", "backward") run runs:
 * fp16 class 64 with GQA; bf16 class 128, BNSD, causal bottom-right over several query tiles. */
inline void hopper_first_cases(const char *what, void (*run)(const nt_case *))
{
    nt_case c = hopper_case(1, FC_F16, 64, 37, 150);
    tc_context("emulated sm_90a %s: fp16 class 64, GQA 2, two kv tiles, Sq != Skv", what);
    run(&c);
    c = hopper_case(2, FC_BF16, 128, 150, 90), c.layout = NT_BNSD, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("emulated sm_90a %s: bf16 class 128, BNSD, causal bottom-right, Sq 150 (several query tiles)", what);
    run(&c);
}

/* quick (the sanitizer builds, where ASan intercepts every coroutine switch): the first cases */
inline bool hopper_quick(int argc, char **argv)
{
    return getenv("FLASHC_EMU_QUICK") != NULL || (argc > 1 && strcmp(argv[1], "quick") == 0);
}

#endif /* FLASHC_TESTS_UNIT_HOPPER_EMU_H */
