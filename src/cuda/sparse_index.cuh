/*
 * The sparse backward's inverse index (sparse_plan.h): for every selection block of every kv head,
 * the query rows that selected it, in row order, built on the GPU by a counting sort.  A bucket is
 * (kv head n2, global block g): n2·nb + g, g = blk0[b] + the block's number in batch b.
 *   blocks:  blk0[b] = Σ_{b' < b} fc_sfag_blocks(kv_rows_b', bs) (one thread)
 *   count:   one thread per index row (query row, kv head) walks it as the forward does and counts
 *            each selected block in its bucket (integer atomics: the totals do not depend on order)
 *   scan:    one CTA: start[x] = Σ_{x' < x} count[x'], and count[x] = start[x] (the cursors)
 *   scatter: the same walk puts each row in its bucket at an atomically taken cursor
 *   sort:    one CTA per bucket sorts its rows (merge passes, each element placed by a binary
 *            search in the other run), so that the order is row order whatever the atomics did.
 * A row that lists a block twice is in its bucket twice (the selection is a multiset).  The grids
 * are passed in (`threads` = the launch's total) so that any launch shape gives the same lists.
 */
#ifndef FC_CUDA_SPARSE_INDEX_CUH
#define FC_CUDA_SPARSE_INDEX_CUH

#include "../core/visibility.h"
#include "sparse_plan.h"

namespace fc_cuda {

/* The inverse index in the run's workspace. */
struct SfagIndex {
    int64_t *blk0;  /* [B + 1] blocks before each batch (per kv head); blk0[B] = nb */
    int32_t *count; /* [nbk] per bucket: counts, then cursors */
    int32_t *start; /* [nbk + 1] first entry of each bucket in list */
    int32_t *list;  /* [entries] query rows (problem rows, fc_sfa_rows' numbering) */
    int32_t *tmp;   /* [entries] the sort's second buffer */
    int64_t nb;     /* blocks per kv head (the plan's bound; blk0[B] <= nb) */
};

__global__ void sfag_blocks_kernel(const __grid_constant__ fc_problem p, SfagIndex X)
{
    if (threadIdx.x != 0)
        return;
    int64_t g = 0;
    for (int64_t b = 0; b < p.B; b++) {
        X.blk0[b] = g;
        g += fc_sfag_blocks(p.batch[b].kv_rows, p.sparse.block_size);
    }
    X.blk0[p.B] = g;
}

/* Index row x = r·Nkv + n2 (r: problem row): each selected block's bucket to f(bucket, r). */
template <typename F> __device__ __forceinline__ void sfag_walk_row(const fc_problem &p, const SfagIndex &X, int64_t x, F f)
{
    const int64_t r = x / p.Nkv, n2 = x % p.Nkv;
    int64_t b, i;
    fc_sfa_token(p.batch, p.B, r, &b, &i);
    const fc_batch &bt = p.batch[b];
    if (i >= bt.sq)
        return; /* padding rows select nothing */
    const char *ind = fc_sparse_row(&p.sparse, &bt, b, i, n2);
    const int64_t thr = fc_sparse_threshold(&p.sparse, &bt, i), g0 = n2 * X.nb + X.blk0[b];
    int64_t a, z;
    int got;
    for (int64_t k = 0; thr > 0 && (got = fc_sparse_span(&p.sparse, ind, k, thr, &a, &z)) >= 0; k++)
        if (got)
            f(g0 + a / p.sparse.block_size, (int32_t)r);
}

/* The index rows [0, rows·Nkv), `threads` threads of the grid in all. */
__global__ void sfag_count_kernel(const __grid_constant__ fc_problem p, SfagIndex X, int64_t rows, int64_t threads,
                                  int per_cta)
{
    for (int64_t x = (int64_t)blockIdx.x * per_cta + threadIdx.x; x < rows * p.Nkv; x += threads)
        sfag_walk_row(p, X, x, [&](int64_t bucket, int32_t) { atomicAdd(&X.count[bucket], 1); });
}

__global__ void sfag_scatter_kernel(const __grid_constant__ fc_problem p, SfagIndex X, int64_t rows, int64_t threads,
                                    int per_cta)
{
    for (int64_t x = (int64_t)blockIdx.x * per_cta + threadIdx.x; x < rows * p.Nkv; x += threads)
        sfag_walk_row(p, X, x, [&](int64_t bucket, int32_t r) { X.list[atomicAdd(&X.count[bucket], 1)] = r; });
}

/* One CTA of THREADS: each thread scans a contiguous chunk of the nbk buckets. */
template <int THREADS> __global__ void __launch_bounds__(THREADS) sfag_scan_kernel(SfagIndex X, int64_t nbk)
{
    __shared__ int32_t part[THREADS];
    const int t = threadIdx.x;
    const int64_t chunk = fc_ceil_div(nbk, THREADS), lo = t * chunk < nbk ? t * chunk : nbk,
                  hi = lo + chunk < nbk ? lo + chunk : nbk;
    int32_t sum = 0;
    for (int64_t x = lo; x < hi; x++)
        sum += X.count[x];
    part[t] = sum;
    __syncthreads();
    for (int d = 1; d < THREADS; d *= 2) { /* inclusive scan of the chunk sums */
        const int32_t y = t >= d ? part[t - d] : 0;
        __syncthreads();
        part[t] += y;
        __syncthreads();
    }
    int32_t at = part[t] - sum;
    for (int64_t x = lo; x < hi; x++) {
        const int32_t n = X.count[x];
        X.start[x] = X.count[x] = at;
        at += n;
    }
    if (t == THREADS - 1)
        X.start[nbk] = at;
}

/* Entries of the sorted run [lo, hi) of v below x (or, with `equal`, at most x). */
__device__ __forceinline__ int64_t sfag_rank(const int32_t *v, int64_t lo, int64_t hi, int32_t x, bool equal)
{
    const int64_t base = lo;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x || (equal && v[mid] == x))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - base;
}

/* Bucket blockIdx.x sorted in place: merge passes of runs 1, 2, 4, … between list and tmp.  Positions
 * in 64 bits: a bucket may hold up to INT32_MAX − 1 entries, where run widths and pair ends pass 2^31. */
template <int THREADS> __global__ void __launch_bounds__(THREADS) sfag_sort_kernel(SfagIndex X)
{
    const int32_t s0 = X.start[blockIdx.x];
    const int64_t n = X.start[blockIdx.x + 1] - s0;
    int32_t *src = X.list + s0, *dst = X.tmp + s0;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t e = threadIdx.x; e < n; e += THREADS) {
            const int64_t run = e / w, pair0 = (run & ~(int64_t)1) * w;
            const bool left = (run & 1) == 0;
            const int64_t olo = left ? pair0 + w : pair0, ohi = left ? (pair0 + 2 * w < n ? pair0 + 2 * w : n) : pair0 + w;
            const int32_t x = src[e];
            const int64_t before = olo < n ? sfag_rank(src, olo, ohi, x, !left) : 0; /* equal rows: the left run's first */
            dst[pair0 + (e - run * w) + before] = x;
        }
        __syncthreads();
        int32_t *t = src;
        src = dst, dst = t;
    }
    if (src != X.list + s0)
        for (int64_t e = threadIdx.x; e < n; e += THREADS)
            X.list[s0 + e] = src[e];
}

} // namespace fc_cuda

#endif /* FC_CUDA_SPARSE_INDEX_CUH */
