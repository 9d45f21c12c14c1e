/* The Hopper forward for fp16 operands, head-dim class 64, the TMA-store epilogue (a variant: FLASHC_CUDA_FWD_EPILOGUE=tma). */
#include "fwd_launch.cuh"

FC_HOPPER_FWD_TMA_VARIANT(f16, __half, 64)
