/*
 * The selected positions of one sparse index row (semantics §5.3), walked by one warp a tile at a
 * time: entries in order, −1 (or the end of the row) ends the list, a block that starts at or past
 * the causal threshold is skipped, a block listed twice counts twice (core/visibility.h's
 * fc_sparse_span reads each entry, so any int64 index is safe).  A tile is the next N (≤ 64)
 * positions of the concatenated spans, whatever the block size: lane x gets tile slots x and x + 32.
 */
#ifndef FC_CUDA_SPARSE_SELECT_CUH
#define FC_CUDA_SPARSE_SELECT_CUH

#include "../core/visibility.h"

namespace fc_cuda {

/* Where the walk stands: entry k of the row, `off` positions into its span; done once the list
 * has ended.  Kept in registers of the walking warp (every lane holds the same values). */
struct SelCursor {
    int64_t k, off;
    bool done;
};

__device__ __forceinline__ SelCursor sel_start(bool live, int64_t thr) { return SelCursor{0, 0, !live || thr <= 0}; }

/* Inclusive prefix sum over the warp. */
__device__ __forceinline__ int warp_incl_scan(int x, int lane)
{
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        const int y = __shfl_up_sync(0xffffffffu, x, d);
        x += lane >= d ? y : 0;
    }
    return x;
}

/* The entry (lane index) whose [excl, incl) holds slot q: the number of entries with incl ≤ q
 * (incl is non-decreasing over the lanes); every lane calls it, each with its own q. */
__device__ __forceinline__ int warp_slot_owner(int incl, int q)
{
    int e = 0;
#pragma unroll
    for (int step = 16; step > 0; step /= 2) {
        const int v = __shfl_sync(0xffffffffu, incl, e + step - 1);
        e += v <= q ? step : 0;
    }
    return e;
}

/* The next up to N positions of the row (row: fc_sparse_row; thr: fc_sparse_threshold): slot x
 * of the tile in pos[x / 32] of lane x % 32, −1 past the end; returns the count (every lane). */
template <int N>
__device__ __forceinline__ int sel_next(const fc_sparse_view &sv, const char *row, int64_t thr, SelCursor &cur, int lane,
                                        int (&pos)[2])
{
    static_assert(N >= 1 && N <= 64, "two slots per lane");
    pos[0] = pos[1] = -1;
    int filled = 0;
    while (!cur.done && filled < N) {
        const int64_t k = cur.k + lane;
        int64_t a = 0, z = 0;
        const int got = k < sv.count ? fc_sparse_span(&sv, row, k, thr, &a, &z) : -1;
        const unsigned ends = __ballot_sync(0xffffffffu, got < 0);
        const int live = ends ? __ffs((int)ends) - 1 : 32; /* entries before the end of the list */
        int len = 0;
        if (lane < live && got > 0) {
            const int64_t skip = lane == 0 ? cur.off : 0, n = z - a - skip;
            len = (int)(n < N + 1 ? n : N + 1); /* past N + 1 only "more than a tile" matters */
            a += skip;
        }
        const int incl = warp_incl_scan(len, lane), excl = incl - len;
        const int total = __shfl_sync(0xffffffffu, incl, 31), need = N - filled;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int q = lane + 32 * h - filled; /* this slot's place among this round's positions */
            const int e = warp_slot_owner(incl, q);
            const int64_t ae = __shfl_sync(0xffffffffu, a, e);
            const int xe = __shfl_sync(0xffffffffu, excl, e);
            if (32 * h + lane < N && q >= 0 && q < total && q < need)
                pos[h] = (int)(ae + (q - xe));
        }
        if (total <= need) { /* every entry before the end was placed whole */
            filled += total;
            cur.k += live, cur.off = 0;
            cur.done = live < 32;
        } else { /* the tile ends inside entry e */
            const int e = warp_slot_owner(incl, need - 1);
            const int xe = __shfl_sync(0xffffffffu, excl, e);
            cur.off = (e == 0 ? cur.off : 0) + (need - xe);
            cur.k += e;
            filled = N;
        }
    }
    return filled;
}

} // namespace fc_cuda

#endif /* FC_CUDA_SPARSE_SELECT_CUH */
