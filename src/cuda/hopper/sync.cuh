/*
 * The sm_90 synchronisation and copy vocabulary of the Hopper kernels: transaction-count
 * mbarriers, bulk tensor copies (TMA) that complete on them, bulk tensor stores and their
 * groups, the async-proxy fence, named
 * barriers and the register reallocation between warpgroups.  Each wrapper is one PTX
 * instruction (or its retry loop); the pipelines built from them live in the kernels.
 */
#ifndef FC_CUDA_HOPPER_SYNC_CUH
#define FC_CUDA_HOPPER_SYNC_CUH

#include <cuda.h> /* CUtensorMap (a type only: the driver is reached through the runtime) */
#include <stdint.h>

namespace fc_hopper {

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* An mbarrier: `count` arrivals (plus the expected transaction bytes) complete a phase. */
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}

/* Makes the initialised barriers visible to the async proxy (TMA) and the other threads (with
 * the CTA barrier that follows). */
__device__ __forceinline__ void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

/* One arrival that also announces `bytes` of transactions for the current phase. */
__device__ __forceinline__ void mbar_arrive_tx(uint64_t *bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}

/* Waits until the phase of parity `phase` has completed. */
__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t phase)
{
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "retry:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra retry;\n"
                 "}\n" ::"r"(smem_u32(bar)),
                 "r"(phase)
                 : "memory");
}

/* A box of the 4-D tensor map at coordinates (c0 innermost .. c3) into shared memory, completing
 * `bytes` on bar (the caller announced them with mbar_arrive_tx). */
__device__ __forceinline__ void tma_load_4d(const CUtensorMap *map, uint64_t *bar, void *dst, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(smem_u32(dst)),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}

/* A box of shared memory at src to the 4-D tensor map at coordinates (c0 innermost .. c3): elements
 * outside the tensor are not written.  It joins the thread's open bulk group (bulk_commit); src
 * must not change until bulk_wait_read retires that group. */
__device__ __forceinline__ void tma_store_4d(const CUtensorMap *map, const void *src, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(smem_u32(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/* Until all but the newest N of the thread's bulk groups have read their shared memory. */
template <int N> __device__ __forceinline__ void bulk_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap *map)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

/* Orders this thread's ordinary shared-memory writes before later async-proxy reads (wgmma, TMA). */
__device__ __forceinline__ void fence_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

/* Named barriers among `threads` threads (a multiple of 32): sync waits, arrive does not. */
__device__ __forceinline__ void named_sync(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_arrive(int id, int threads)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/* Register reallocation between the warpgroups of a CTA launched with a register cap. */
template <int N> __device__ __forceinline__ void regs_grow() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N)); }
template <int N> __device__ __forceinline__ void regs_shrink() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N)); }

} // namespace fc_hopper

#endif /* FC_CUDA_HOPPER_SYNC_CUH */
