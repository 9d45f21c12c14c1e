/* What the host gives the Hopper backward kernel beside the problem and the backward's launch
 * facts: the tensor maps of the query, output-gradient, key and value views (per run) and their
 * batch coordinates. */
#ifndef FC_CUDA_HOPPER_BWD_ARGS_H
#define FC_CUDA_HOPPER_BWD_ARGS_H

#include <cuda.h>

namespace fc_hopper {

struct BwdArgs {
    CUtensorMap q, dout, k, v; /* 4-D (feature, position, head, batch), boxes of 64 features × rows */
    int q_batched, kv_batched; /* the maps have a batch dimension (padded batches); else coordinate 0 */
};

} // namespace fc_hopper

#endif /* FC_CUDA_HOPPER_BWD_ARGS_H */
