/*
 * The bulk-copy tensor maps of the Hopper kernels (host side): the driver's
 * cuTensorMapEncodeTiled, reached through the runtime's entry-point query so that libflashc keeps
 * no link-time dependency on the driver, and the 4-D map of one view the kernels load from.
 */
#ifndef FC_CUDA_HOPPER_TMA_MAP_H
#define FC_CUDA_HOPPER_TMA_MAP_H

#include <cuda.h>
#include <stdint.h>

extern "C" {
#include "../../core/error.h"
}
#include "../../core/problem.h"

namespace fc_hopper {

/* The driver's cuTensorMapEncodeTiled into *encode; who names the caller in a failure. */
fc_status tma_encoder(void **encode, const char *who);

/* A 4-D map (feature, position, head, batch) of view v, boxes of 64 features × rows, 128-byte
 * swizzled; NULL, or why the view cannot be mapped. */
const char *tma_map_view(void *encode, CUtensorMap *map, const fc_view &v, int64_t features, int64_t positions, int64_t heads,
                         int64_t batches, int rows);

} // namespace fc_hopper

#endif /* FC_CUDA_HOPPER_TMA_MAP_H */
