/* The environment variables read while a plan is made.  Each picks a path a backend would
 * otherwise choose itself (or forces one for tests and benchmarks), so two plans of one problem made
 * under different values may run different kernels.  Callers that keep plans across calls key
 * them on these values (the Python package does); tools/switch-check.sh fails CI when a backend
 * reads a FLASHC_ variable at planning that this list lacks. */
#include "flashc.h"

#include <stddef.h>

FC_API const char *const *fc_plan_switches(void)
{
    static const char *const names[] = {
        "FLASHC_ISA",                 /* the CPU kernel set */
        "FLASHC_CUDA_FWD",            /* the CUDA forward: sm80, sm90 or auto */
        "FLASHC_CUDA_FWD_PINGPONG",   /* the sm_90a forward's warpgroup turns on or off */
        "FLASHC_CUDA_FWD_D64",        /* the sm_90a forward's head-dim-64 shape (two or three warpgroups) */
        "FLASHC_CUDA_FWD_EPILOGUE",   /* the sm_90a forward's output stores (registers or a TMA store) */
        "FLASHC_CUDA_BWD",            /* the CUDA backward's path */
        "FLASHC_CUDA_BWD_GRID",       /* a cap on the fused backward's grid */
        "FLASHC_CUDA_BWD_ORDER",      /* the fused backward's unit order (tests) */
        "FLASHC_CUDA_BWD_SYNC",       /* the fused backward's turn wait (tests) */
        "FLASHC_CUDA_DECODE",         /* the CUDA decode kernel */
        "FLASHC_CUDA_DECODE_SPLITS",  /* a forced split count of the CUDA decode */
        "FLASHC_CUDA_DECODE_VARIANT", /* the tensor-core decode's variant */
        NULL,
    };
    return names;
}
