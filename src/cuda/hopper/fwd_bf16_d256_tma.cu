/* The Hopper forward for bf16 operands, head-dim class 256, the TMA-store epilogue (a variant: FLASHC_CUDA_FWD_EPILOGUE=tma). */
#include "fwd_launch.cuh"

FC_HOPPER_FWD_TMA_VARIANT(bf16, __nv_bfloat16, 256)
