/* Plan helpers shared by the CUDA plans (launch.h). */
#include <stdlib.h>

#include "launch.h"

#include "../core/visibility.h"
#include "dq_order.h"

fc_status fc_cuda_err(cudaError_t err, const char *what)
{
    if (err == cudaErrorMemoryAllocation)
        return fc_fail(FC_ERR_NO_MEMORY, "%s: out of device memory", what);
    return fc_fail(FC_ERR_BACKEND, "%s: %s", what, cudaGetErrorString(err));
}

fc_status fc_cuda_upload(void **dev, const void *host, size_t bytes, const char *what)
{
    cudaError_t err = cudaMalloc(dev, bytes ? bytes : 1);
    if (err == cudaSuccess && bytes)
        err = cudaMemcpy(*dev, host, bytes, cudaMemcpyHostToDevice);
    return err == cudaSuccess ? FC_OK : fc_cuda_err(err, what);
}

bool fc_cuda_vec_ok(const fc_view *v, int64_t d)
{
    return fc_cuda_vec_fits(v, d, 2);
}

bool fc_cuda_vec_qk_ok(const fc_problem *p, const fc_view *v, const fc_view *r)
{
    return fc_cuda_vec_qk_fits(p, v, r, 2);
}

int64_t fc_cuda_q_tile_cost(const fc_batch *bt, int64_t t, int bm)
{
    int64_t w = bm, sp[4];
    for (int64_t i = t * bm; i < (t + 1) * bm && i < bt->sq; i++)
        w += fc_row_spans(bt, i, sp);
    return w;
}

int64_t fc_cuda_kv_tile_cost(const fc_batch *bt, int64_t t, int bn)
{
    const int64_t a = t * bn, z = a + bn < bt->skv ? a + bn : bt->skv;
    int64_t w = bn, i0, i1, sp[4];
    if (a >= z)
        return w;
    fc_col_rows(bt, a, z, &i0, &i1);
    for (int64_t i = i0; i < i1; i++) {
        fc_row_spans(bt, i, sp);
        for (int k = 0; k < 4; k += 2) {
            const int64_t lo = sp[k] > a ? sp[k] : a, hi = sp[k + 1] < z ? sp[k + 1] : z;
            w += hi > lo ? hi - lo : 0;
        }
    }
    return w;
}

typedef struct {
    int64_t work;
    int idx;
    int2 item;
} fc_tile_rank;

static int fc_tile_cmp(const void *a, const void *b)
{
    const fc_tile_rank *x = (const fc_tile_rank *)a, *y = (const fc_tile_rank *)b;
    if (x->work != y->work)
        return x->work > y->work ? -1 : 1;
    return x->idx - y->idx;
}

fc_status fc_cuda_tile_order(const fc_problem *p, int tile, int walk, int64_t per_tile, fc_tile_cost cost, int2 **dev, int *n_out,
                             const char *what)
{
    const bool kv = walk != FC_TILES_Q;
    int64_t n = 0;
    for (int64_t b = 0; b < p->B; b++)
        n += ((kv ? p->batch[b].kv_rows : p->batch[b].q_rows) + tile - 1) / tile;
    if (n * per_tile > INT32_MAX)
        return fc_fail(FC_ERR_BACKEND, "%s: %lld tiles × %lld CTAs each exceed one CUDA launch", what, (long long)n,
                       (long long)per_tile);
    fc_tile_rank *order = (fc_tile_rank *)malloc((size_t)(n ? n : 1) * sizeof *order);
    int2 *items = (int2 *)malloc((size_t)(n ? n : 1) * sizeof *items);
    fc_status st = order && items ? FC_OK : fc_fail(FC_ERR_NO_MEMORY, "%s: out of host memory", what);
    if (st == FC_OK) {
        int k = 0;
        for (int64_t b = 0; b < p->B; b++)
            for (int64_t t = 0; t * tile < (kv ? p->batch[b].kv_rows : p->batch[b].q_rows); t++, k++)
                order[k] = fc_tile_rank{cost(&p->batch[b], t, tile), k, make_int2((int)b, (int)t)};
        qsort(order, (size_t)n, sizeof *order, fc_tile_cmp);
        for (int64_t x = 0; x < n; x++)
            items[x] = order[x].item;
        int64_t *next = kv ? (int64_t *)calloc((size_t)(p->B ? p->B : 1), sizeof *next) : NULL;
        if (kv && !next)
            st = fc_fail(FC_ERR_NO_MEMORY, "%s: out of host memory", what);
        else if (kv) /* the fused backward's turns need each batch's kv tiles in increasing order */
            fc_dq_ascending_tiles(&items[0].x, n, next);
        free(next);
        if (st == FC_OK && walk == FC_TILES_KV_SPREAD && !fc_dq_spread_tiles(&items[0].x, n))
            st = fc_fail(FC_ERR_NO_MEMORY, "%s: out of host memory", what);
    }
    if (st == FC_OK) {
        st = fc_cuda_upload((void **)dev, items, (size_t)n * sizeof(int2), what);
        *n_out = (int)n;
    }
    free(order);
    free(items);
    return st;
}
