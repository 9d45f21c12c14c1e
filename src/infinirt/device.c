/*
 * infinirt devices and streams (semantics §7.6) over the face-neutral runtime, which aclrt uses
 * too: one current device per thread, registered streams.  The CPU is always a device type; NVIDIA
 * is one when the runtime's device memory is CUDA's (infini_device_supported), and its device ids
 * are the runtime's.
 */
#include "infini/infini.h"
#include "runtime/device.h"

infiniStatus_t infinirtInit(void) { return INFINI_STATUS_SUCCESS; /* nothing to set up */ }

static infiniStatus_t unsupported(const char *fn, infiniDevice_t device)
{
    return infini_fail(INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED, "%s: device type %d is not supported by this build", fn,
                       (int)device);
}

infiniStatus_t infinirtGetAllDeviceCount(int *count_array)
{
    if (!count_array)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "infinirtGetAllDeviceCount: count_array is NULL");
    for (int d = 0; d < INFINI_DEVICE_TYPE_COUNT; d++)
        count_array[d] = infini_device_count(d);
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinirtGetDeviceCount(infiniDevice_t device, int *count)
{
    if (!count)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "infinirtGetDeviceCount: count is NULL");
    if (!infini_device_supported(device))
        return unsupported("infinirtGetDeviceCount", device);
    *count = infini_device_count(device);
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinirtSetDevice(infiniDevice_t device, int device_id)
{
    if (!infini_device_supported(device))
        return unsupported("infinirtSetDevice", device);
    if (device == INFINI_DEVICE_CPU && device_id != 0) /* the CPU is one device whatever else is present */
        return infini_fail(INFINI_STATUS_DEVICE_NOT_FOUND, "infinirtSetDevice: CPU device id %d is out of range [0, 1)",
                           device_id);
    if (device != INFINI_DEVICE_CPU && fc_rt_set_device(device_id) != FC_RT_OK)
        return infini_fail(INFINI_STATUS_DEVICE_NOT_FOUND, "infinirtSetDevice: %s", fc_rt_message());
    infini_set_current_device_type(device);
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinirtGetDevice(infiniDevice_t *device_ptr, int *device_id_ptr)
{
    if (!device_ptr || !device_id_ptr)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "infinirtGetDevice: %s is NULL",
                           device_ptr ? "device_id_ptr" : "device_ptr");
    *device_ptr = infini_current_device_type();
    *device_id_ptr = fc_rt_current_device();
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinirtDeviceSynchronize(void)
{
    if (infini_current_device_type() != INFINI_DEVICE_CPU && fc_rt_device_sync() != FC_RT_OK) /* CPU work is done */
        return infini_fail(INFINI_STATUS_INTERNAL_ERROR, "infinirtDeviceSynchronize: %s", fc_rt_message());
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinirtStreamCreate(infinirtStream_t *stream_ptr)
{
    if (!stream_ptr)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "infinirtStreamCreate: stream_ptr is NULL");
    fc_rt_stream *s = NULL;
    if (fc_rt_stream_create(&s) != FC_RT_OK)
        return infini_fail(INFINI_STATUS_INTERNAL_ERROR, "infinirtStreamCreate: %s", fc_rt_message());
    *stream_ptr = s;
    return INFINI_STATUS_SUCCESS;
}

/* NULL is the default stream: it cannot be destroyed. */
infiniStatus_t infinirtStreamDestroy(infinirtStream_t stream)
{
    if (!stream)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "infinirtStreamDestroy: stream is NULL (the default stream)");
    if (fc_rt_stream_destroy(stream) != FC_RT_OK)
        return infini_fail(INFINI_STATUS_BAD_PARAM, "infinirtStreamDestroy: %s", fc_rt_message());
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinirtStreamSynchronize(infinirtStream_t stream)
{
    if (!fc_rt_stream_live(stream))
        return infini_fail(INFINI_STATUS_BAD_PARAM, "infinirtStreamSynchronize: stream %p is not a live stream", stream);
    if (fc_rt_stream_sync(stream) != FC_RT_OK) /* without a device: CPU work is already done */
        return infini_fail(INFINI_STATUS_INTERNAL_ERROR, "infinirtStreamSynchronize: %s", fc_rt_message());
    return INFINI_STATUS_SUCCESS;
}
