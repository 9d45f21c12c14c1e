/*
 * The Hopper forward's host side: which problems it takes, its plan (the work list, the L2 head
 * group, the persistent grid) and each run's tensor maps and launch.  The maps are encoded per
 * run by the driver's cuTensorMapEncodeTiled, reached through the runtime's entry-point query so
 * that libflashc keeps no link-time dependency on the driver.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime.h>

#include "../../core/dtype.h"
#include "../launch.h"
#include "fwd.h"
#include "fwd_args.h"
#include "fwd_traits.cuh"

namespace fc_hopper {

typedef CUresult (*EncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *, const cuuint64_t *,
                                const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

const char *fwd_unsupported(const fc_problem *p)
{
    if (p->q.dtype != FC_F16 && p->q.dtype != FC_BF16)
        return "operands other than fp16/bf16";
    if (p->k.dtype != p->q.dtype || p->v.dtype != p->q.dtype || p->out.dtype != p->q.dtype)
        return "operand or output dtypes that differ";
    if (p->Dr > 0 || p->q_rope.data || p->k_rope.data)
        return "rope features";
    if (p->Dqk > 256 || p->Dv > 256)
        return "head dims above 256";
    if (!(p->scale > 0.0f) || !isfinite(p->scale))
        return "a scale that is not positive and finite (the maximum is taken before scaling)";
    if (p->pse.data || p->alibi.slopes || p->mask.data || p->softcap > 0.0f)
        return "score terms (pse, ALiBi, mask, softcap)";
    if (p->sink || p->drop_bits || p->drop_philox)
        return "a sink or dropout";
    if (p->sparse.data || p->k.pages.table || p->v.pages.table || p->q.batch_data || p->k.batch_data || p->v.batch_data ||
        p->out.batch_data)
        return "sparse, paged or tensor-list storage";
    if (p->max_sq >= (1 << 30) || p->max_skv >= (1 << 30))
        return "sequence lengths of 2^30 or more";
    return NULL;
}

bool fwd_device_ok(const char **why)
{
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        *why = "the device's compute capability is unknown";
        return false;
    }
    if (major != 9 || minor != 0) {
        *why = "the device is not sm_90 (H100/H200)";
        return false;
    }
    return true;
}

void fwd_destroy(FwdPlan *plan)
{
    cudaFree(plan->items);
    memset(plan, 0, sizeof *plan);
}

/* Query heads whose tiles run side by side: as many as keep their keys and values in half the
 * L2 (a GQA group shares one kv head). */
static int head_group(const fc_problem *p, int l2_bytes)
{
    const int64_t kv_head = p->max_skv * (p->Dqk + p->Dv) * 2;
    int64_t kv_heads = kv_head > 0 ? (int64_t)l2_bytes / 2 / kv_head : p->Nkv;
    kv_heads = kv_heads < 1 ? 1 : kv_heads > p->Nkv ? p->Nkv : kv_heads;
    return (int)(kv_heads * p->G);
}

fc_status fwd_plan(const fc_problem *p, FwdPlan *out)
{
    const char *who = "fc_cuda_fwd_plan (sm_90a)";
    memset(out, 0, sizeof *out);
    int dev = 0, sms = 0, l2 = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (err == cudaSuccess)
        err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &out->encode, 12000, cudaEnableDefault, &found);
    if (err != cudaSuccess)
        return fc_cuda_err(err, who);
    if (found != cudaDriverEntryPointSuccess || !out->encode)
        return fc_fail(FC_ERR_BACKEND, "%s: the driver has no cuTensorMapEncodeTiled", who);
    out->dclass = fc_cuda_dclass(p);
    out->head_group = head_group(p, l2);
    const char *pp = getenv("FLASHC_CUDA_FWD_PINGPONG"); /* 0 turns the warpgroups' turns off (a variant to compare) */
    out->pingpong = !(pp && strcmp(pp, "0") == 0);
    /* FLASHC_CUDA_FWD_D64=wg3: class 64 on three consumer warpgroups (192-row items; a variant to
     * compare with the default wg2) */
    const char *d64 = getenv("FLASHC_CUDA_FWD_D64");
    if (d64 && *d64 && strcmp(d64, "wg2") != 0 && strcmp(d64, "wg3") != 0)
        return fc_fail(FC_ERR_BACKEND, "%s: FLASHC_CUDA_FWD_D64=%.64s names no variant (wg2 or wg3)", who, d64);
    out->rows = out->dclass == 64 && d64 && strcmp(d64, "wg3") == 0 ? FwdTraits<__half, 64, 3>::BM : kFwdRows;
    const fc_status st =
        fc_cuda_tile_order(p, out->rows, false, p->Nq, fc_cuda_q_tile_cost, &out->items, &out->n_items, who);
    if (st != FC_OK)
        return st;
    const int64_t work = (int64_t)out->n_items * p->Nq;
    out->grid = (int)(work < sms ? work : sms);
    return FC_OK;
}

/* A 4-D map (feature, position, head, batch) of view v, boxes of 64 features × rows; NULL, or
 * why the view cannot be mapped. */
static const char *encode_map(EncodeTiled encode, CUtensorMap *map, const fc_view &v, int64_t features, int64_t positions,
                              int64_t heads, int64_t batches, int rows)
{
    if (v.se != 1)
        return "a feature stride other than 1";
    if ((uintptr_t)v.data % 16)
        return "a base address not 16-byte aligned";
    cuuint64_t dim[4] = {(cuuint64_t)features, (cuuint64_t)positions, (cuuint64_t)heads, (cuuint64_t)batches};
    const int64_t step[3] = {v.ss * 2, v.sn * 2, v.sb * 2};
    cuuint64_t stride[3];
    int64_t natural = features * 2; /* a stride for a dimension of extent 1, which is never stepped */
    for (int d = 0; d < 3; d++) {
        const int64_t s = dim[d + 1] > 1 ? step[d] : (natural + 15) / 16 * 16;
        if (s <= 0 || s % 16 || s >= ((int64_t)1 << 40))
            return "strides that are not positive multiples of 16 bytes";
        stride[d] = (cuuint64_t)s;
        natural = s * (int64_t)dim[d + 1];
    }
    for (int d = 0; d < 4; d++)
        if (dim[d] == 0 || dim[d] >= ((cuuint64_t)1 << 31))
            return "an extent beyond 2^31";
    const cuuint32_t box[4] = {64, (cuuint32_t)rows, 1, 1}, unit[4] = {1, 1, 1, 1};
    const CUtensorMapDataType dt = v.dtype == FC_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const CUresult r = encode(map, dt, 4, v.data, dim, stride, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? NULL : "cuTensorMapEncodeTiled refused the view";
}

fc_status fwd_run(const FwdPlan &plan, const fc_problem &run, const fc_cuda_reach &reach, cudaStream_t stream,
                  bool *launched, const char **why)
{
    *launched = false;
    const int64_t q_ext = reach.q, kv_ext = reach.kv;
    FwdArgs a;
    memset(&a, 0, sizeof a);
    const bool qb = run.q.sb != 0 && run.B > 1, kb = run.k.sb != 0 && run.B > 1;
    if (kb != (run.v.sb != 0 && run.B > 1)) { /* the kernel has one batch coordinate for K and V */
        *why = "key and value views that differ in having a batch stride";
        return FC_OK;
    }
    EncodeTiled enc = (EncodeTiled)plan.encode;
    const int bn = plan.dclass == 256 ? FwdTile<256>::BN : plan.dclass == 128 ? FwdTile<128>::BN : FwdTile<64>::BN;
    *why = encode_map(enc, &a.q, run.q, run.Dqk, q_ext, run.Nq, qb ? run.B : 1, plan.rows);
    if (!*why)
        *why = encode_map(enc, &a.k, run.k, run.Dqk, kv_ext, run.Nkv, kb ? run.B : 1, bn);
    if (!*why)
        *why = encode_map(enc, &a.v, run.v, run.Dv, kv_ext, run.Nkv, kb ? run.B : 1, bn);
    if (*why)
        return FC_OK;
    a.items = plan.items;
    a.n_items = plan.n_items;
    a.n_work = plan.n_items * (int)run.Nq;
    a.head_group = plan.head_group;
    a.q_batched = qb, a.kv_batched = kb;
    a.kv_extent = (int)kv_ext;
    a.edge_fixes = reach.kv_short < kv_ext;
    a.pingpong = plan.pingpong;
    a.pair_out = run.out.se == 1 && (uintptr_t)run.out.data % 4 == 0 && run.out.sb % 2 == 0 && run.out.sn % 2 == 0 &&
                 run.out.ss % 2 == 0;
    if (plan.grid == 0) {
        *launched = true;
        return FC_OK;
    }
    const bool bf = run.q.dtype == FC_BF16, wg3 = plan.rows != kFwdRows;
    cudaError_t err;
    switch (plan.dclass) {
    case 64:
        if (wg3)
            err = bf ? fwd_launch_bf16_d64_wg3(run, a, plan.grid, stream) : fwd_launch_f16_d64_wg3(run, a, plan.grid, stream);
        else
            err = bf ? fwd_launch_bf16_d64(run, a, plan.grid, stream) : fwd_launch_f16_d64(run, a, plan.grid, stream);
        break;
    case 128: err = bf ? fwd_launch_bf16_d128(run, a, plan.grid, stream) : fwd_launch_f16_d128(run, a, plan.grid, stream); break;
    default: err = bf ? fwd_launch_bf16_d256(run, a, plan.grid, stream) : fwd_launch_f16_d256(run, a, plan.grid, stream); break;
    }
    if (err != cudaSuccess)
        return fc_cuda_err(err, "fc_cuda_fwd_run: the sm_90a forward launch");
    *launched = true;
    return FC_OK;
}

} // namespace fc_hopper
