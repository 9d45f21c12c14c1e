/* aclrtMalloc/Free/MallocHost/FreeHost and the bounds-checked aclrtMemcpy/aclrtMemset (§6.5). */
#include "cann/common/errmsg.h"
#include "runtime/alloc.h"
#include "runtime/device.h"
#include "runtime/memcheck.h"

static aclError alloc_common(const char *fn, const char *arg, void **out, size_t size, fc_rt_mem kind)
{
    if (!out)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", fn, arg);
    *out = NULL;
    if (size == 0)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "%s: size must be > 0, got 0", fn);
    if (fc_rt_malloc(out, size, kind, fc_rt_current_device()) != FC_RT_OK)
        return cann_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: %s", fn, fc_rt_message());
    return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    (void)policy; /* ignored */
    return alloc_common("aclrtMalloc", "devPtr", devPtr, size, FC_RT_MEM_DEVICE);
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    return alloc_common("aclrtMallocHost", "hostPtr", hostPtr, size, FC_RT_MEM_HOST);
}

aclError aclrtFree(void *devPtr)
{
    if (fc_rt_free(devPtr, FC_RT_MEM_DEVICE) != FC_RT_OK)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "aclrtFree: devPtr: %s", fc_rt_message());
    return ACL_SUCCESS;
}

aclError aclrtFreeHost(void *hostPtr)
{
    if (fc_rt_free(hostPtr, FC_RT_MEM_HOST) != FC_RT_OK)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "aclrtFreeHost: hostPtr: %s", fc_rt_message());
    return ACL_SUCCESS;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind)
{
    static const char fn[] = "aclrtMemcpy";
    if (count == 0)
        return ACL_SUCCESS;
    if (!dst || !src)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", fn, dst ? "src" : "dst");
    if (count > destMax)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "%s: count (%zu bytes) exceeds destMax (%zu bytes)", fn, count, destMax);
    fc_rt_side ds, ss;
    switch ((int)kind) {
    case ACL_MEMCPY_HOST_TO_HOST: ds = FC_RT_SIDE_HOST, ss = FC_RT_SIDE_HOST; break;
    case ACL_MEMCPY_HOST_TO_DEVICE:
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: ds = FC_RT_SIDE_DEVICE, ss = FC_RT_SIDE_HOST; break;
    case ACL_MEMCPY_DEVICE_TO_HOST: ds = FC_RT_SIDE_HOST, ss = FC_RT_SIDE_DEVICE; break;
    case ACL_MEMCPY_DEVICE_TO_DEVICE:
    case ACL_MEMCPY_INNER_DEVICE_TO_DEVICE:
    case ACL_MEMCPY_INTER_DEVICE_TO_DEVICE: ds = FC_RT_SIDE_DEVICE, ss = FC_RT_SIDE_DEVICE; break;
    case ACL_MEMCPY_DEFAULT: ds = FC_RT_SIDE_AUTO, ss = FC_RT_SIDE_AUTO; break;
    default:
        return cann_fail(ACL_ERROR_INVALID_PARAM, "%s: kind must be an aclrtMemcpyKind in [0, 7], got %d", fn, (int)kind);
    }
    const fc_rt_status st = fc_rt_copy(dst, ds, src, ss, count);
    if (st != FC_RT_OK)
        return cann_fail(st == FC_RT_DEVICE ? ACL_ERROR_RT_INTERNAL_ERROR : ACL_ERROR_INVALID_PARAM, "%s: %s", fn, fc_rt_message());
    return ACL_SUCCESS;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    static const char fn[] = "aclrtMemset";
    if (!devPtr)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "%s: devPtr is NULL", fn);
    if (count > maxCount)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "%s: count (%zu bytes) exceeds maxCount (%zu bytes)", fn, count, maxCount);
    if (count == 0)
        return ACL_SUCCESS;
    const fc_rt_status st = fc_rt_fill(devPtr, value & 0xff, count);
    if (st != FC_RT_OK)
        return cann_fail(st == FC_RT_DEVICE ? ACL_ERROR_RT_INTERNAL_ERROR : ACL_ERROR_INVALID_PARAM, "%s: devPtr: %s", fn,
                         fc_rt_message());
    return ACL_SUCCESS;
}
