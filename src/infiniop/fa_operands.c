/*
 * Run-time checks of the data addresses (semantics §8.18: no call reads or writes outside a live
 * allocation it can see).  Memory from infinirtMalloc/aclrtMalloc is in the runtime's allocation
 * table; an operand that starts in such an allocation must lie wholly inside it.  Untracked host
 * memory cannot be checked and is trusted.
 */
#include "fa.h"
#include "runtime/alloc.h"

infiniStatus_t infini_fa_check_operands(const infini_fa_geom *g, const void *const ptr[FA_TENSORS])
{
    for (int x = 0; x < FA_TENSORS; x++) {
        const uintptr_t p = (uintptr_t)ptr[x];
        if (!p)
            continue;
        if (p % (uintptr_t)g->esize[x] != 0)
            return infini_fail(INFINI_STATUS_BAD_PARAM, "infiniopFlashAttention: %s (%p) is not aligned to its %lld-byte elements",
                               infini_fa_data_names[x], ptr[x], (long long)g->esize[x]);
        fc_rt_alloc a;
        if (!fc_rt_alloc_find(ptr[x], &a))
            continue;
        /* [p + lo, p + hi) inside [base, base + size), without forming out-of-range pointers */
        const uintptr_t below = p - a.base, above = a.base + a.size - p;
        if ((uintptr_t)0 - (uintptr_t)g->lo[x] > below || (uintptr_t)g->hi[x] > above)
            return infini_fail(INFINI_STATUS_BAD_PARAM,
                               "infiniopFlashAttention: %s (%p) spans bytes [%lld, %lld) around it, leaving its %zu-byte %s allocation at %p",
                               infini_fa_data_names[x], ptr[x], (long long)g->lo[x], (long long)g->hi[x], a.size, fc_rt_mem_name(a.kind),
                               (void *)a.base);
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
