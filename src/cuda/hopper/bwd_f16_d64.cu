/* The Hopper backward for fp16 operands, head-dim class 64 (one instantiation per file: parallel builds). */
#include "bwd_launch.cuh"

FC_HOPPER_BWD_INSTANCE(f16, __half, 64)
