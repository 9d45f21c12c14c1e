/*
 * Run-time checks of the data addresses (semantics §8.18: no call reads or writes outside a live
 * allocation it can see).  Memory from infinirtMalloc/aclrtMalloc is in the runtime's allocation
 * table; an operand whose address lies in such an allocation must lie wholly inside it, and one
 * whose address is untracked host memory (trusted, it cannot be checked) must not reach into one.
 * And an operand must be the memory of the descriptor's device: the GPU's for NVIDIA, the host's
 * for the CPU.
 */
#include "fa.h"
#include "runtime/alloc.h"
#include "runtime/memcheck.h"

/* The operand lies in the memory the descriptor's device runs on. */
static infiniStatus_t check_memory(const infini_fa *d, int x, const void *p)
{
    const bool nvidia = d->base.device == INFINI_DEVICE_NVIDIA;
    if (fc_rt_in_device_memory(p) == nvidia)
        return INFINI_STATUS_SUCCESS;
    return infini_fail(INFINI_STATUS_BAD_PARAM, "infiniopFlashAttention: %s (%p) is %s memory, but the descriptor's device is %s",
                       infini_fa_data_names[x], p, nvidia ? "host" : "device", nvidia ? "INFINI_DEVICE_NVIDIA" : "the CPU");
}

infiniStatus_t infini_fa_check_operands(const infini_fa *d, const void *const ptr[FA_TENSORS])
{
    const infini_fa_geom *g = &d->g;
    for (int x = 0; x < FA_TENSORS; x++) {
        const uintptr_t p = (uintptr_t)ptr[x];
        if (!p)
            continue;
        if (p % (uintptr_t)g->esize[x] != 0)
            return infini_fail(INFINI_STATUS_BAD_PARAM, "infiniopFlashAttention: %s (%p) is not aligned to its %lld-byte elements",
                               infini_fa_data_names[x], ptr[x], (long long)g->esize[x]);
        /* [p + lo, p + hi), judged from p (semantics §8.18) as every face does (fc_rt_check_view) */
        const uintptr_t below = (uintptr_t)0 - (uintptr_t)g->lo[x];
        int tracked;
        if (g->hi[x] > g->lo[x] &&
            (p < below || fc_rt_check_view(ptr[x], p - below, (size_t)(g->hi[x] - g->lo[x]), &tracked) != FC_RT_OK))
            return infini_fail(INFINI_STATUS_BAD_PARAM, "infiniopFlashAttention: %s (%p) spans bytes [%lld, %lld) around it: %s",
                               infini_fa_data_names[x], ptr[x], (long long)g->lo[x], (long long)g->hi[x],
                               p < below ? "below address 0" : fc_rt_message());
        const infiniStatus_t st = check_memory(d, x, ptr[x]);
        if (st != INFINI_STATUS_SUCCESS)
            return st;
    }
    return INFINI_STATUS_SUCCESS;
}

bool infini_workspace_fits(const void *workspace, size_t need)
{
    fc_rt_alloc a;
    if (!workspace || !fc_rt_alloc_find(workspace, &a))
        return true;
    return need <= a.base + a.size - (uintptr_t)workspace;
}
