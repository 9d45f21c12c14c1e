/*
 * CUDA features that are written but have not yet passed on a GPU stay off until the environment
 * names them: FLASHC_CUDA_EXPERIMENTAL, a comma-separated list of philox (dropout generated on the
 * device), rope (rope-split heads, Dr > 0), sparse (the sparse forward: SparseFlashAttention) or
 * all; read when a plan is made.
 * Without it the backend refuses them with FC_ERR_BACKEND naming the feature, as before they
 * were written.  (C, callable from the .cu files too.)
 */
#ifndef FC_CUDA_EXPERIMENTAL_H
#define FC_CUDA_EXPERIMENTAL_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether FLASHC_CUDA_EXPERIMENTAL turns `feature` on. */
bool fc_cuda_experimental(const char *feature);

/* NULL, or the first name in FLASHC_CUDA_EXPERIMENTAL that is no feature (a plan fails on it). */
const char *fc_cuda_experimental_unknown(void);

#ifdef __cplusplus
}
#endif

#endif /* FC_CUDA_EXPERIMENTAL_H */
