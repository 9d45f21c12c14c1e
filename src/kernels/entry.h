/* Entry points every instruction set's kernels provide (suffixed with the ISA name). */
#ifndef FC_KERNELS_ENTRY_H
#define FC_KERNELS_ENTRY_H

#include "../cpu/work.h"
#include "simd.h"

int FC_ISA_FN(fc_fwd_cols)(const fc_problem *p);
int FC_ISA_FN(fc_fwd_rows)(const fc_problem *p);
size_t FC_ISA_FN(fc_fwd_workspace)(const fc_problem *p, fc_tiles t);
size_t FC_ISA_FN(fc_fwd_partial_floats)(const fc_problem *p, fc_tiles t);
void FC_ISA_FN(fc_fwd_item)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, float *partial);
void FC_ISA_FN(fc_fwd_merge)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, const float *partial);
size_t FC_ISA_FN(fc_bwd_workspace)(const fc_problem *p, fc_tiles t);
void FC_ISA_FN(fc_bwd_dq_item)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws);
void FC_ISA_FN(fc_bwd_dkv_item)(const fc_problem *p, const fc_kv_item *it, fc_tiles t, void *ws);
void FC_ISA_FN(fc_bwd_sparse_dkv_item)(const fc_problem *p, const fc_kv_item *it, fc_tiles t, void *ws);
void FC_ISA_FN(fc_bwd_dsink_head)(const fc_problem *p, int64_t n1, void *ws);
void FC_ISA_FN(fc_bwd_head_item)(const fc_problem *p, int64_t b, int64_t n2, fc_tiles t, void *ws);

#endif /* FC_KERNELS_ENTRY_H */
