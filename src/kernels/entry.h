/* Entry points every instruction set's kernels provide (suffixed with the ISA name). */
#ifndef FC_KERNELS_ENTRY_H
#define FC_KERNELS_ENTRY_H

#include "../cpu/work.h"
#include "simd.h"

size_t FC_ISA_FN(fc_fwd_workspace)(const fc_problem *p, fc_tiles t);
size_t FC_ISA_FN(fc_fwd_partial_floats)(const fc_problem *p, fc_tiles t);
/* forward items, one entry point per kind (work.h fc_fwd_kind) */
#define FC_FWD_ENTRY(name) void FC_ISA_FN(name)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, float *partial)
FC_FWD_ENTRY(fc_fwd_item_gemm);
FC_FWD_ENTRY(fc_fwd_item_dots);
FC_FWD_ENTRY(fc_fwd_item_decode);
FC_FWD_ENTRY(fc_fwd_item_tiles_qk); /* FC_BF16_PRODUCTS sets */
FC_FWD_ENTRY(fc_fwd_item_tiles);
FC_FWD_ENTRY(fc_fwd_item_fused);
void FC_ISA_FN(fc_fwd_merge)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws, const float *partial);
size_t FC_ISA_FN(fc_bwd_workspace)(const fc_problem *p, fc_tiles t);
fc_bwd_kind FC_ISA_FN(fc_bwd_products)(const fc_problem *p);
/* backward items, one entry point per products kind (work.h fc_bwd_kind; tiles and elements: amx) */
#define FC_BWD_ENTRY_DECLS(suffix)                                                                                     \
    void FC_ISA_FN(fc_bwd_dq_item_##suffix)(const fc_problem *p, const fc_item *it, fc_tiles t, void *ws);             \
    void FC_ISA_FN(fc_bwd_dkv_item_##suffix)(const fc_problem *p, const fc_kv_item *it, fc_tiles t, void *ws);         \
    void FC_ISA_FN(fc_bwd_head_item_##suffix)(const fc_problem *p, int64_t b, int64_t n2, fc_tiles t, void *ws);
FC_BWD_ENTRY_DECLS(fp32)
FC_BWD_ENTRY_DECLS(tiles)
FC_BWD_ENTRY_DECLS(elements)
void FC_ISA_FN(fc_bwd_sparse_dkv_item)(const fc_problem *p, const fc_kv_item *it, fc_tiles t, void *ws);
void FC_ISA_FN(fc_bwd_dsink_head)(const fc_problem *p, int64_t n1, void *ws);

#endif /* FC_KERNELS_ENTRY_H */
