/*
 * infinirt allocations and copies (semantics §7.6): the runtime's allocation table, shared with
 * aclrt (§6.5), and its bounds-checked copy.  A copy that would leave an allocation, or touch
 * device memory from a host-side pointer, fails with BAD_PARAM and copies nothing.
 */
#include "infini/infini.h"
#include "runtime/alloc.h"
#include "runtime/device.h"
#include "runtime/memcheck.h"

static infiniStatus_t alloc_common(const char *fn, void **p_ptr, size_t size, fc_rt_mem kind)
{
    if (!p_ptr)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: p_ptr is NULL", fn);
    *p_ptr = NULL;
    if (size == 0)
        return infini_fail(INFINI_STATUS_BAD_PARAM, "%s: size must be > 0, got 0", fn);
    if (fc_rt_malloc(p_ptr, size, kind, infini_runtime_device()) != FC_RT_OK)
        return infini_fail(INFINI_STATUS_INTERNAL_ERROR, "%s: %s", fn, fc_rt_message());
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinirtMalloc(void **p_ptr, size_t size) { return alloc_common("infinirtMalloc", p_ptr, size, FC_RT_MEM_DEVICE); }

infiniStatus_t infinirtMallocHost(void **p_ptr, size_t size)
{
    return alloc_common("infinirtMallocHost", p_ptr, size, FC_RT_MEM_HOST);
}

/* Only the base of a live allocation of the right kind is freed; anything else is left alone. */
static infiniStatus_t free_common(const char *fn, void *ptr, fc_rt_mem kind)
{
    if (!ptr)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: ptr is NULL", fn);
    if (fc_rt_free(ptr, kind) != FC_RT_OK)
        return infini_fail(INFINI_STATUS_BAD_PARAM, "%s: %s", fn, fc_rt_message());
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinirtFree(void *ptr) { return free_common("infinirtFree", ptr, FC_RT_MEM_DEVICE); }

infiniStatus_t infinirtFreeHost(void *ptr) { return free_common("infinirtFreeHost", ptr, FC_RT_MEM_HOST); }

/* size 0 succeeds without access; then NULL pointers, the kind, the sides and ranges. */
static infiniStatus_t copy(const char *fn, void *dst, const void *src, size_t size, infinirtMemcpyKind_t kind)
{
    if (size == 0)
        return INFINI_STATUS_SUCCESS;
    if (!dst || !src)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: %s is NULL", fn, dst ? "src" : "dst");
    fc_rt_side ds, ss;
    switch ((int)kind) {
    case INFINIRT_MEMCPY_H2H: ds = FC_RT_SIDE_HOST, ss = FC_RT_SIDE_HOST; break;
    case INFINIRT_MEMCPY_H2D: ds = FC_RT_SIDE_DEVICE, ss = FC_RT_SIDE_HOST; break;
    case INFINIRT_MEMCPY_D2H: ds = FC_RT_SIDE_HOST, ss = FC_RT_SIDE_DEVICE; break;
    case INFINIRT_MEMCPY_D2D: ds = FC_RT_SIDE_DEVICE, ss = FC_RT_SIDE_DEVICE; break;
    default:
        return infini_fail(INFINI_STATUS_BAD_PARAM, "%s: kind must be an infinirtMemcpyKind_t in [0, 3], got %d", fn, (int)kind);
    }
    const fc_rt_status st = fc_rt_copy(dst, ds, src, ss, size);
    if (st != FC_RT_OK)
        return infini_fail(st == FC_RT_DEVICE ? INFINI_STATUS_INTERNAL_ERROR : INFINI_STATUS_BAD_PARAM, "%s: %s", fn,
                           fc_rt_message());
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinirtMemcpy(void *dst, const void *src, size_t size, infinirtMemcpyKind_t kind)
{
    return copy("infinirtMemcpy", dst, src, size, kind);
}

/* The copy is done before returning (after the work queued before it); the stream must be live
 * (NULL = the default stream). */
infiniStatus_t infinirtMemcpyAsync(void *dst, const void *src, size_t size, infinirtMemcpyKind_t kind,
                                   infinirtStream_t stream)
{
    if (!fc_rt_stream_live(stream))
        return infini_fail(INFINI_STATUS_BAD_PARAM, "infinirtMemcpyAsync: stream %p is not a live stream", stream);
    return copy("infinirtMemcpyAsync", dst, src, size, kind);
}
