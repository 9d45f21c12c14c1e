/* The Hopper backward for bf16 operands, head-dim class 64 (one instantiation per file: parallel builds). */
#include "bwd_launch.cuh"

FC_HOPPER_BWD_INSTANCE(bf16, __nv_bfloat16, 64)
