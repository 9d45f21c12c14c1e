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

/* quick (the sanitizer builds, where ASan intercepts every coroutine switch): the first cases */
inline bool hopper_quick(int argc, char **argv)
{
    return getenv("FLASHC_EMU_QUICK") != NULL || (argc > 1 && strcmp(argv[1], "quick") == 0);
}

#endif /* FLASHC_TESTS_UNIT_HOPPER_EMU_H */
