/*
 * The Hopper forward's host side: which problems it takes, its plan (the work list, the L2 head
 * group, the persistent grid) and each run's tensor maps (tma_map.h, encoded per run) and launch.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <numeric>

#include <cuda.h>
#include <cuda_runtime.h>

#include "../../core/dtype.h"
#include "../launch.h"
#include "fwd.h"
#include "fwd_args.h"
#include "fwd_traits.cuh"
#include "tma_map.h"

namespace fc_hopper {

/* Blocks past 2^30 rows act as 2^30 (positions stay below it): the maps' slot extent. */
static int64_t page_slots(const fc_pages &pg) { return pg.block_size < (1 << 30) ? pg.block_size : (1 << 30); }

/* Why the paged kernels cannot take p's paged key/value (NULL: they can).  A bulk copy's box has
 * a fixed row count, so each tile is loaded in boxes of gcd(block size, BN) rows, each inside one
 * page: blocks of a multiple of 16 rows (boxes of at least 2 KiB per 64 features). */
static const char *paged_unsupported(const fc_problem *p)
{
    const fc_pages &k = p->k.pages, &v = p->v.pages;
    if (!k.table || !v.table || k.table != v.table || k.table_stride != v.table_stride || k.block_size != v.block_size ||
        k.blocks != v.blocks)
        return "key and value pages that differ (one block table drives both copies)";
    if (k.block_size % 16)
        return "paged key/value in blocks that are not a multiple of 16 rows (a bulk copy's rows must divide the block)";
    if (fc_cuda_dclass(p) > 128)
        return "paged key/value at head-dim class 256 (not instantiated, to keep the build's time)";
    return NULL;
}

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
    if (p->sparse.data || p->q.batch_data || p->k.batch_data || p->v.batch_data || p->out.batch_data)
        return "sparse or tensor-list storage";
    if (p->k.pages.table || p->v.pages.table) {
        const char *why = paged_unsupported(p);
        if (why)
            return why;
    }
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
    if (err != cudaSuccess)
        return fc_cuda_err(err, who);
    const fc_status enc = tma_encoder(&out->encode, who);
    if (enc != FC_OK)
        return enc;
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
    /* FLASHC_CUDA_FWD_EPILOGUE=tma: output tiles through shared memory and a TMA store (a variant of
     * the two-warpgroup kernels to compare with the default register stores, regs) */
    const char *epi = getenv("FLASHC_CUDA_FWD_EPILOGUE");
    if (epi && *epi && strcmp(epi, "regs") != 0 && strcmp(epi, "tma") != 0)
        return fc_fail(FC_ERR_BACKEND, "%s: FLASHC_CUDA_FWD_EPILOGUE=%.64s names no variant (regs or tma)", who, epi);
    out->tma_out = epi && strcmp(epi, "tma") == 0 && out->rows == kFwdRows;
    if (p->k.pages.table) { /* one variant: two warpgroups, register stores */
        const int bn = out->dclass == 128 ? FwdTile<128>::BN : FwdTile<64>::BN;
        out->page_rows = (int)std::gcd(page_slots(p->k.pages), (int64_t)bn), out->rows = kFwdRows, out->tma_out = 0;
    }
    const fc_status st =
        fc_cuda_tile_order(p, out->rows, false, p->Nq, fc_cuda_q_tile_cost, &out->items, &out->n_items, who);
    if (st != FC_OK)
        return st;
    const int64_t work = (int64_t)out->n_items * p->Nq;
    out->grid = (int)(work < sms ? work : sms);
    return FC_OK;
}

/* The paged kernels' maps of k and v: the pool as (feature, slot, head, block), boxes of
 * page_rows rows; every value tile passes the edge fixer (rows past a batch's last key hold other
 * slots). */
static const char *map_pages(const FwdPlan &plan, const fc_problem &run, const FwdFault &fault, FwdArgs *a)
{
    const fc_pages &pg = run.k.pages;
    const int64_t slots = page_slots(pg);
    const char *why = tma_map_view(plan.encode, &a->k, run.k, run.Dqk, slots, run.Nkv, pg.blocks, plan.page_rows);
    if (!why)
        why = tma_map_view(plan.encode, &a->v, run.v, run.Dv, slots, run.Nkv, pg.blocks, plan.page_rows);
    a->page_rows = plan.page_rows, a->fault = fault.word, a->report = fault.report, a->edge_fixes = 1;
    return why;
}

fc_status fwd_run(const FwdPlan &plan, const fc_problem &run, const fc_cuda_reach &reach, const FwdFault &fault,
                  cudaStream_t stream, bool *launched, const char **why)
{
    *launched = false;
    const int64_t q_ext = reach.q, kv_ext = reach.kv;
    FwdArgs a;
    memset(&a, 0, sizeof a);
    const bool qb = run.q.sb != 0 && run.B > 1, kb = run.k.sb != 0 && run.B > 1, paged = plan.page_rows > 0;
    if (!paged && kb != (run.v.sb != 0 && run.B > 1)) { /* the kernel has one batch coordinate for K and V */
        *why = "key and value views that differ in having a batch stride";
        return FC_OK;
    }
    void *enc = plan.encode;
    const int bn = plan.dclass == 256 ? FwdTile<256>::BN : plan.dclass == 128 ? FwdTile<128>::BN : FwdTile<64>::BN;
    *why = tma_map_view(enc, &a.q, run.q, run.Dqk, q_ext, run.Nq, qb ? run.B : 1, plan.rows);
    if (!*why && paged)
        *why = map_pages(plan, run, fault, &a);
    if (!*why && !paged)
        *why = tma_map_view(enc, &a.k, run.k, run.Dqk, kv_ext, run.Nkv, kb ? run.B : 1, bn);
    if (!*why && !paged)
        *why = tma_map_view(enc, &a.v, run.v, run.Dv, kv_ext, run.Nkv, kb ? run.B : 1, bn);
    if (*why)
        return FC_OK;
    a.items = plan.items;
    a.n_items = plan.n_items;
    a.n_work = plan.n_items * (int)run.Nq;
    a.head_group = plan.head_group;
    a.q_batched = qb, a.kv_batched = kb;
    a.kv_extent = (int)kv_ext;
    a.edge_fixes = paged || reach.kv_short < kv_ext || reach.hides;
    a.pingpong = plan.pingpong;
    a.pair_out = run.out.se == 1 && (uintptr_t)run.out.data % 4 == 0 && run.out.sb % 2 == 0 && run.out.sn % 2 == 0 &&
                 run.out.ss % 2 == 0;
    if (plan.tma_out) { /* an output view the map cannot take is stored from registers */
        const bool ob = run.out.sb != 0 && run.B > 1;
        a.o_tma = tma_map_view(enc, &a.o, run.out, run.Dv, q_ext, run.Nq, ob ? run.B : 1, 64) == NULL;
        a.o_batched = ob;
        a.q_extent = (int)q_ext;
    }
    if (plan.grid == 0) {
        *launched = true;
        return FC_OK;
    }
    const bool bf = run.q.dtype == FC_BF16, wg3 = plan.rows != kFwdRows;
    cudaError_t err;
    if (paged) {
        if (plan.dclass == 64)
            err = bf ? fwd_launch_bf16_d64_paged(run, a, plan.grid, stream) : fwd_launch_f16_d64_paged(run, a, plan.grid, stream);
        else
            err = bf ? fwd_launch_bf16_d128_paged(run, a, plan.grid, stream) : fwd_launch_f16_d128_paged(run, a, plan.grid, stream);
    } else if (plan.tma_out) {
        switch (plan.dclass) {
        case 64: err = bf ? fwd_launch_bf16_d64_tma(run, a, plan.grid, stream) : fwd_launch_f16_d64_tma(run, a, plan.grid, stream); break;
        case 128: err = bf ? fwd_launch_bf16_d128_tma(run, a, plan.grid, stream) : fwd_launch_f16_d128_tma(run, a, plan.grid, stream); break;
        default: err = bf ? fwd_launch_bf16_d256_tma(run, a, plan.grid, stream) : fwd_launch_f16_d256_tma(run, a, plan.grid, stream); break;
        }
    } else switch (plan.dclass) {
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
