/* The kernel table of one instruction set (this file is compiled once per ISA, see simd.h) and the
 * kinds its kernels take a problem's items with. */
#include "decode.h"
#include "entry.h"
#if FC_BF16_FUSED
#include "amx_rows.h"
#elif FC_BF16_PRODUCTS
#include "bfdot_pack.h"
#endif

static void FC_ISA_FN(fc_kinds)(const fc_problem *p, fc_kinds *out)
{
    out->few = fc_decode_fits(p) ? FC_FWD_DECODE : FC_FWD_DOTS;
    out->many = FC_FWD_GEMM;
    out->parts = false;
#if FC_BF16_PRODUCTS
    if (fc_amx_applies(p, FC_FEW_ROWS + 1)) {
        out->many = fc_amx_pv_tiles(p) ? FC_FWD_TILES : FC_FWD_TILES_QK;
#if FC_BF16_FUSED
        out->many = fc_amx_rows_applies(p) ? FC_FWD_FUSED : out->many;
#endif
        out->parts = fc_amx_qk_parts(p) > 1 || fc_amx_pv_parts(p) > 1;
    }
#endif
    out->bwd = FC_ISA_FN(fc_bwd_products)(p);
}

/* A kind's entry points; those a set lacks stay NULL (its kinds never name them). */
#if FC_BF16_FUSED
#define FC_FWD_FUSED_ENTRY , [FC_FWD_FUSED] = FC_ISA_FN(fc_fwd_item_fused)
#else
#define FC_FWD_FUSED_ENTRY
#endif
#if FC_BF16_PRODUCTS
#define FC_FWD_TILE_ENTRIES                                                                                            \
    [FC_FWD_TILES_QK] = FC_ISA_FN(fc_fwd_item_tiles_qk), [FC_FWD_TILES] = FC_ISA_FN(fc_fwd_item_tiles)                 \
    FC_FWD_FUSED_ENTRY
#else
#define FC_FWD_TILE_ENTRIES
#endif
#if FC_AMX
#define FC_BWD_TILE_ENTRIES(name) [FC_BWD_TILES] = FC_ISA_FN(name##_tiles), [FC_BWD_ELEMENTS] = FC_ISA_FN(name##_elements)
#else
#define FC_BWD_TILE_ENTRIES(name)
#endif
#define FC_BWD_KIND_ENTRIES(name) {[FC_BWD_FP32] = FC_ISA_FN(name##_fp32), FC_BWD_TILE_ENTRIES(name)}

const fc_cpu_kernels FC_ISA_FN(fc_cpu_kernels) = {
    .isa = FC_STR(FC_ISA),
#if defined(__AVX512F__)
    .avx512 = true,
#elif defined(__AVX2__) && FC_W == 8
    .avx2 = true,
#endif
    .kinds = FC_ISA_FN(fc_kinds),
    .fwd_workspace = FC_ISA_FN(fc_fwd_workspace),
    .fwd_partial_floats = FC_ISA_FN(fc_fwd_partial_floats),
    .fwd_item = {[FC_FWD_GEMM] = FC_ISA_FN(fc_fwd_item_gemm), [FC_FWD_DOTS] = FC_ISA_FN(fc_fwd_item_dots),
                 [FC_FWD_DECODE] = FC_ISA_FN(fc_fwd_item_decode), FC_FWD_TILE_ENTRIES},
    .fwd_merge = FC_ISA_FN(fc_fwd_merge),
    .bwd_workspace = FC_ISA_FN(fc_bwd_workspace),
    .bwd_dq_item = FC_BWD_KIND_ENTRIES(fc_bwd_dq_item),
    .bwd_dkv_item = FC_BWD_KIND_ENTRIES(fc_bwd_dkv_item),
    .bwd_head_item = FC_BWD_KIND_ENTRIES(fc_bwd_head_item),
    .bwd_sparse_dkv_item = FC_ISA_FN(fc_bwd_sparse_dkv_item),
    .bwd_dsink_head = FC_ISA_FN(fc_bwd_dsink_head),
};
