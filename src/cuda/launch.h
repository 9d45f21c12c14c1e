/*
 * Host-side planning shared by the CUDA kernels' plans: device copies of plan data, which views
 * cp.async can load, and the list of work tiles in launch order (heaviest first, so that causal and varlen problems do not leave
 * SMs idle at the tail).
 */
#ifndef FC_CUDA_LAUNCH_H
#define FC_CUDA_LAUNCH_H

#include <cuda_runtime.h>

extern "C" {
#include "../core/error.h"
}
#include "../core/problem.h"
#include "dclass.h"
#include "vec_rule.h"

/* FC_ERR_BACKEND (FC_ERR_NO_MEMORY for an allocation) naming what failed. */
fc_status fc_cuda_err(cudaError_t err, const char *what);

/* *dev = a new device copy of bytes of host. */
fc_status fc_cuda_upload(void **dev, const void *host, size_t bytes, const char *what);

/* Whether cp.async can load the view's rows of d features: unit feature stride and 16-byte
 * aligned rows and feature chunks. */
bool fc_cuda_vec_ok(const fc_view *v, int64_t d);

/* The same for a query or key tile: v's rows of Dqk features and, with rope features, r's of Dr. */
bool fc_cuda_vec_qk_ok(const fc_problem *p, const fc_view *v, const fc_view *r);

/* The cost of tile t (of `tile` rows) of a batch. */
typedef int64_t (*fc_tile_cost)(const fc_batch *bt, int64_t t, int tile);

/* Visible scores of query tile t, and of kv tile t, of a batch (+ the rows written). */
int64_t fc_cuda_q_tile_cost(const fc_batch *bt, int64_t t, int tile);
int64_t fc_cuda_kv_tile_cost(const fc_batch *bt, int64_t t, int tile);

/* How fc_cuda_tile_order lays out the tiles (false / true name the first two). */
enum { FC_TILES_Q = 0, FC_TILES_KV = 1, FC_TILES_KV_SPREAD = 2 };

/* Tiles (batch, tile index) of `tile` query rows (FC_TILES_Q: over q_rows) or key/value rows (else:
 * over kv_rows) of every batch, heaviest first, in a new device array *dev of *n entries;
 * `per_tile` CTAs run each (heads, parts), and the total must fit one launch.  kv: the slots of
 * each batch then take its tiles in increasing order (dq_order.h: the backward's dQ turns wait
 * only on earlier units); FC_TILES_KV_SPREAD then interleaves the batches (fc_dq_spread_tiles). */
fc_status fc_cuda_tile_order(const fc_problem *p, int tile, int walk, int64_t per_tile, fc_tile_cost cost, int2 **dev, int *n,
                             const char *what);

#endif /* FC_CUDA_LAUNCH_H */
