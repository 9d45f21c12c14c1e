/* The Hopper forward for f16 operands, head-dim class 128, paged key/value (block tables; FwdArgs::page_rows). */
#include "fwd_launch.cuh"

FC_HOPPER_FWD_PAGED_VARIANT(f16, __half, 128)
