/* The kernel table of one instruction set (this file is compiled once per ISA, see simd.h). */
#include "entry.h"

const fc_cpu_kernels FC_ISA_FN(fc_cpu_kernels) = {
    .isa = FC_STR(FC_ISA),
    .fwd_cols = FC_ISA_FN(fc_fwd_cols),
    .fwd_rows = FC_ISA_FN(fc_fwd_rows),
    .fwd_workspace = FC_ISA_FN(fc_fwd_workspace),
    .fwd_partial_floats = FC_ISA_FN(fc_fwd_partial_floats),
    .fwd_item = FC_ISA_FN(fc_fwd_item),
    .fwd_merge = FC_ISA_FN(fc_fwd_merge),
    .bwd_workspace = FC_ISA_FN(fc_bwd_workspace),
    .bwd_dq_item = FC_ISA_FN(fc_bwd_dq_item),
    .bwd_dkv_item = FC_ISA_FN(fc_bwd_dkv_item),
    .bwd_sparse_dkv_item = FC_ISA_FN(fc_bwd_sparse_dkv_item),
    .bwd_dsink_head = FC_ISA_FN(fc_bwd_dsink_head),
    .bwd_head_item = FC_ISA_FN(fc_bwd_head_item),
};
