/* The Hopper forward for bf16 operands, head-dim class 256 (one instantiation per file: parallel builds). */
#include "fwd_launch.cuh"

FC_HOPPER_FWD_INSTANCE(bf16, __nv_bfloat16, 256)
