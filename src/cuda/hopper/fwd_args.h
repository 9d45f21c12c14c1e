/*
 * What the host gives the Hopper forward kernel beside the problem: the bulk-copy tensor maps of
 * the query, key and value views (encoded per run, since a run may bring new addresses), the
 * work list and the facts of the maps the kernel needs for coordinates and edges.
 */
#ifndef FC_CUDA_HOPPER_FWD_ARGS_H
#define FC_CUDA_HOPPER_FWD_ARGS_H

#include <cuda.h>
#include <vector_types.h>

namespace fc_cuda {
struct DecReport;
}

namespace fc_hopper {

/* A 4-D map over (feature, position, head, batch) of one view: boxes of 64 features × rows. */
struct FwdArgs {
    CUtensorMap q, k, v;
    const int2 *items;  /* (batch, query tile) in launch order, heaviest first */
    int n_items;
    int n_work;         /* n_items × query heads: the persistent CTAs take work w, w + grid, ... */
    int head_group;     /* query heads whose tiles run next to each other (their K/V stay in L2) */
    int q_batched, kv_batched; /* the map has a batch dimension (padded batches); else coordinate 0 */
    int kv_extent;      /* positions of the kv maps: rows at or past it load as zeros */
    int edge_fixes;     /* some batch ends before kv_extent, or a tile may hide pairs: every value tile passes the edge fixer */
    int pair_out;       /* out has unit feature stride and 4-byte aligned rows */
    int pingpong;       /* the consumer warpgroups take turns issuing GEMMs (FLASHC_CUDA_FWD_PINGPONG) */
    /* The TMA-store epilogue's (FLASHC_CUDA_FWD_EPILOGUE=tma; after the fields above, which keep
     * their offsets in the other kernels): out mapped in boxes of 64 features × 64 rows (o_tma 0:
     * the view cannot be, every row is stored from registers), its batch coordinate, and the
     * positions the map covers (a tile's rows past the batch that the map clips may be stored). */
    int o_tma, o_batched, q_extent;
    CUtensorMap o;
    /* The paged kernels' (fwd_hopper_kernel_paged; after every field above): k and v map the page
     * pool as (feature, slot, head, block) in boxes of page_rows rows — gcd(block size, BN), a
     * multiple of 16 — so that each box lies in one page; fault, the run's block-table check word
     * (forward.cu launches the check first): set, the kernel writes nothing and CTA 0 reports. */
    int page_rows;
    const unsigned long long *fault;
    fc_cuda::DecReport *report;
};

} // namespace fc_hopper

#endif /* FC_CUDA_HOPPER_FWD_ARGS_H */
