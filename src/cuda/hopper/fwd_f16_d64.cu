/* The Hopper forward for f16 operands, head-dim class 64 (one instantiation per file: parallel builds). */
#include "fwd_launch.cuh"

FC_HOPPER_FWD_INSTANCE(f16, __half, 64)
