/*
 * The Hopper backward's host side: which problems it takes and each run's tensor maps (tma_map.h)
 * and launch.  The plan (work list, accumulators, turn counters, ticket) is the CUDA backward's
 * (backward.cu), sized by kBwdKvRows and kBwdQRows.
 */
#define FC_CUDA_BWD_SINK_ELSEWHERE /* the dsink kernel is backward.cu's alone */
#include <string.h>

#include "../backward_common.cuh"
#include "../launch.h"
#include "bwd.h"
#include "bwd_args.h"
#include "fwd.h"
#include "tma_map.h"

namespace fc_hopper {

const char *bwd_unsupported(const fc_problem *p, int dclass)
{
    const char *fwd = fwd_unsupported(p);
    if (fwd)
        return fwd;
    if (p->dout.dtype != p->q.dtype || p->dq.dtype != p->q.dtype || p->dk.dtype != p->q.dtype || p->dv.dtype != p->q.dtype)
        return "gradient dtypes other than the operands'";
    if (dclass != 64 && dclass != 128)
        return "head-dim class 256 (the sm_90a backward has classes 64 and 128)";
    return NULL;
}

fc_status bwd_run(void *encode, int dclass, const fc_problem &run, const fc_cuda::BwdLaunch &L, const fc_cuda_reach &reach, int grid,
                  cudaStream_t stream, bool *launched, const char **why)
{
    *launched = false;
    BwdArgs a;
    memset(&a, 0, sizeof a);
    const bool qb = run.q.sb != 0 && run.B > 1, kb = run.k.sb != 0 && run.B > 1;
    if (kb != (run.v.sb != 0 && run.B > 1) || qb != (run.dout.sb != 0 && run.B > 1)) { /* one batch coordinate per side */
        *why = "views of one side that differ in having a batch stride";
        return FC_OK;
    }
    const int64_t nb_q = qb ? run.B : 1, nb_kv = kb ? run.B : 1;
    *why = tma_map_view(encode, &a.q, run.q, run.Dqk, reach.q, run.Nq, nb_q, kBwdQRows);
    if (!*why)
        *why = tma_map_view(encode, &a.dout, run.dout, run.Dv, reach.q, run.Nq, nb_q, kBwdQRows);
    if (!*why)
        *why = tma_map_view(encode, &a.k, run.k, run.Dqk, reach.kv, run.Nkv, nb_kv, kBwdKvRows);
    if (!*why)
        *why = tma_map_view(encode, &a.v, run.v, run.Dv, reach.kv, run.Nkv, nb_kv, kBwdKvRows);
    if (*why)
        return FC_OK;
    a.q_batched = qb, a.kv_batched = kb;
    *launched = true;
    if (grid == 0)
        return FC_OK;
    const bool bf = run.q.dtype == FC_BF16;
    const cudaError_t err = dclass == 64 ? (bf ? bwd_launch_bf16_d64(run, L, a, grid, stream) : bwd_launch_f16_d64(run, L, a, grid, stream))
                                         : (bf ? bwd_launch_bf16_d128(run, L, a, grid, stream) : bwd_launch_f16_d128(run, L, a, grid, stream));
    return err == cudaSuccess ? FC_OK : fc_cuda_err(err, "fc_cuda_bwd_run: the sm_90a backward launch");
}

} // namespace fc_hopper
