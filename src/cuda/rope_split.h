/*
 * Rope-split heads on the GPU (Dr > 0: q·k = q·k + q_rope·k_rope): the kernels that take them load
 * one query or key tile of Dqk + Dr ≤ D features, the rope features after the others, so that
 * every product over the tile's features (S = Q·Kᵀ, dQ = dS·K, dK = dSᵀ·Q) covers both parts; the
 * gradient columns go back to dq / dq_rope and dk / dk_rope by the same map.  Plain C (FC_HD), so
 * tests/unit/test_cuda_rope.c checks the map on any machine.
 */
#ifndef FC_CUDA_ROPE_SPLIT_H
#define FC_CUDA_ROPE_SPLIT_H

#include "../core/dtype.h"
#include "../core/hd.h"
#include "../core/problem.h"

/* Which part column e of a joint tile holds: 0 = the main view's feature *f (e < dqk), 1 = the rope
 * view's feature *f (dqk ≤ e < dqk + dr), −1 = a zero column past both (*f = 0). */
static inline FC_HD int fc_rope_part(int e, int dqk, int dr, int *f)
{
    if (e < dqk) {
        *f = e;
        return 0;
    }
    *f = e - dqk < dr ? e - dqk : 0;
    return e - dqk < dr ? 1 : -1;
}

/* Where joint feature e (< dqk + dr) of a query or key row lies: the view that holds it (v, or vr
 * for the rope features) is returned, its byte offset within that view's row in *offset. */
static inline FC_HD const fc_view *fc_rope_elem(const fc_view *v, const fc_view *vr, int dqk, int dr, int e, int64_t *offset)
{
    int f;
    const fc_view *w = fc_rope_part(e, dqk, dr, &f) == 1 ? vr : v;
    *offset = (int64_t)f * w->se * (int64_t)fc_dtype_bytes(w->dtype);
    return w;
}

#endif /* FC_CUDA_ROPE_SPLIT_H */
