/* The Hopper forward for bf16 operands, head-dim class 64, paged key/value (block tables; FwdArgs::page_rows). */
#include "fwd_launch.cuh"

FC_HOPPER_FWD_PAGED_VARIANT(bf16, __nv_bfloat16, 64)
