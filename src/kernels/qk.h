/* S[j][r] = k_j · q_r over the query and rope features, for one kv tile and the item's rows. */
#ifndef FC_KERNELS_QK_H
#define FC_KERNELS_QK_H

#include "gemm.h"
#include "pack.h"

/* qt is the rows' transposed query (fc_pack_q_transposed): [Dqk + Dr][Rp]. */
static inline void fc_qk(float *S, const fc_kv_tile *kv, const float *qt, const fc_problem *p, const fc_rows *rw, int jn)
{
    const int Rp = rw->padded, Dqk = (int)p->Dqk;
    fc_gemm(jn, Rp, kv->k_width, kv->k, kv->ldk, 1, qt, Rp, S, Rp, false);
    if (kv->kr)
        fc_gemm(jn, Rp, (int)p->Dr, kv->kr, kv->ldkr, 1, qt + (ptrdiff_t)Dqk * Rp, Rp, S, Rp, true);
}

#endif /* FC_KERNELS_QK_H */
