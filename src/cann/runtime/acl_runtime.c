/* aclInit/aclFinalize and the aclrt device, context, stream and option calls (semantics §6.5). */
#include <stdatomic.h>

#include "cann/common/errmsg.h"
#include "runtime/device.h"

static atomic_int acl_initialised;

aclError aclInit(const char *configPath)
{
    (void)configPath; /* ignored */
    if (atomic_exchange(&acl_initialised, 1))
        return cann_fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit: already initialised; call aclFinalize first");
    return ACL_SUCCESS;
}

aclError aclFinalize(void)
{
    if (!atomic_exchange(&acl_initialised, 0))
        return cann_fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize: not initialised (aclInit was not called, or finalised already)");
    return ACL_SUCCESS;
}

/* Maps a runtime failure to the acl code and message of fn. */
static aclError rt_error(const char *fn, fc_rt_status st)
{
    switch (st) {
    case FC_RT_OK: return ACL_SUCCESS;
    case FC_RT_BAD_DEVICE: return cann_fail(ACL_ERROR_RT_INVALID_DEVICEID, "%s: %s", fn, fc_rt_message());
    case FC_RT_NO_MEMORY: return cann_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: %s", fn, fc_rt_message());
    case FC_RT_DEVICE: return cann_fail(ACL_ERROR_RT_INTERNAL_ERROR, "%s: %s", fn, fc_rt_message());
    default: return cann_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn, fc_rt_message());
    }
}

aclError aclrtSetDevice(int32_t deviceId) { return rt_error("aclrtSetDevice", fc_rt_set_device(deviceId)); }

aclError aclrtResetDevice(int32_t deviceId)
{
    return rt_error("aclrtResetDevice", fc_rt_check_device(deviceId)); /* frees nothing */
}

aclError aclrtGetDevice(int32_t *deviceId)
{
    if (!deviceId)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is NULL");
    *deviceId = fc_rt_current_device();
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
    if (!count)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is NULL");
    *count = (uint32_t)fc_rt_device_count();
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void) { return rt_error("aclrtSynchronizeDevice", fc_rt_device_sync()); }

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
    if (!context)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateContext: context is NULL");
    fc_rt_context *ctx;
    const aclError e = rt_error("aclrtCreateContext", fc_rt_context_create(deviceId, &ctx));
    if (e == ACL_SUCCESS)
        *context = ctx;
    return e;
}

aclError aclrtDestroyContext(aclrtContext context)
{
    return rt_error("aclrtDestroyContext", fc_rt_context_destroy((fc_rt_context *)context));
}

aclError aclrtSetCurrentContext(aclrtContext context)
{
    return rt_error("aclrtSetCurrentContext", fc_rt_context_set_current((fc_rt_context *)context));
}

aclError aclrtGetCurrentContext(aclrtContext *context)
{
    if (!context)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext: context is NULL");
    *context = fc_rt_context_current();
    return ACL_SUCCESS;
}

aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    static const char fn[] = "aclrtCtxSetSysParamOpt";
    if ((int)opt < ACL_OPT_DETERMINISTIC || (int)opt > ACL_OPT_ENABLE_KERNEL_EARLY_START)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "%s: opt must be an aclSysParamOpt in [0, 3], got %d", fn, (int)opt);
    if (opt == ACL_OPT_DETERMINISTIC && (value < 0 || value > 3))
        return cann_fail(ACL_ERROR_INVALID_PARAM, "%s: value for ACL_OPT_DETERMINISTIC must be in [0, 3], got %lld", fn,
                         (long long)value);
    fc_rt_option_set((int)opt, value);
    return ACL_SUCCESS;
}

aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    static const char fn[] = "aclrtCtxGetSysParamOpt";
    if ((int)opt < ACL_OPT_DETERMINISTIC || (int)opt > ACL_OPT_ENABLE_KERNEL_EARLY_START)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "%s: opt must be an aclSysParamOpt in [0, 3], got %d", fn, (int)opt);
    if (!value)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "%s: value is NULL", fn);
    *value = fc_rt_option_get((int)opt);
    return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream *stream)
{
    if (!stream)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is NULL");
    fc_rt_stream *s;
    const aclError e = rt_error("aclrtCreateStream", fc_rt_stream_create(&s));
    if (e == ACL_SUCCESS)
        *stream = s;
    return e;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
    if (!stream)
        return cann_fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream: stream is NULL (the default stream cannot be destroyed)");
    return rt_error("aclrtDestroyStream", fc_rt_stream_destroy((fc_rt_stream *)stream));
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
    if (!fc_rt_stream_live((const fc_rt_stream *)stream))
        return cann_fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeStream: stream %p is not a live stream", stream);
    return rt_error("aclrtSynchronizeStream", fc_rt_stream_sync((const fc_rt_stream *)stream));
}
