/* infiniop handles and the device queries of operator descriptors (semantics §7.2). */
#include <stdlib.h>

#include "objects.h"
#include "runtime/device.h"

const fc_rt_kind infini_kind_handle = {"infiniopHandle_t"};

infiniStatus_t infiniopCreateHandle(infiniopHandle_t *handle_ptr)
{
    static const char fn[] = "infiniopCreateHandle";
    if (!handle_ptr)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: handle_ptr is NULL", fn);
    *handle_ptr = NULL;
    const infiniDevice_t device = infini_current_device_type();
    const int device_id = fc_rt_current_device();
    if (!infini_device_supported(device))
        return infini_fail(INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED, "%s: device type %d is not supported", fn, (int)device);
    struct InfiniopHandle *h = malloc(sizeof *h);
    if (!h)
        return infini_fail(INFINI_STATUS_INTERNAL_ERROR, "%s: out of host memory", fn);
    h->device = device;
    h->device_id = device_id;
    const infiniStatus_t st = infini_register(h, &infini_kind_handle, fn);
    if (st != INFINI_STATUS_SUCCESS) {
        free(h);
        return st;
    }
    *handle_ptr = h;
    return INFINI_STATUS_SUCCESS;
}

/* Descriptors created from the handle copied its device and stay usable after this. */
infiniStatus_t infiniopDestroyHandle(infiniopHandle_t handle)
{
    const infiniStatus_t st = infini_unregister(handle, &infini_kind_handle, "infiniopDestroyHandle", "handle");
    if (st == INFINI_STATUS_SUCCESS)
        free(handle);
    return st;
}

/* NULL pointers first, then liveness (operator descriptors of every kind flashc provides). */
static infiniStatus_t check_descriptor(const struct InfiniopDescriptor *d, const void *out, const char *fn,
                                       const char *out_name)
{
    if (d && !out)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: %s is NULL", fn, out_name);
    return infini_check_live(d, &infini_kind_flash_attention, fn, "desc_ptr");
}

infiniStatus_t infiniopGetDescriptorDeviceType(const struct InfiniopDescriptor *desc_ptr, infiniDevice_t *device_type)
{
    const infiniStatus_t st = check_descriptor(desc_ptr, device_type, "infiniopGetDescriptorDeviceType", "device_type");
    if (st == INFINI_STATUS_SUCCESS)
        *device_type = (infiniDevice_t)desc_ptr->device;
    return st;
}

infiniStatus_t infiniopGetDescriptorDeviceId(const struct InfiniopDescriptor *desc_ptr, int *device_id)
{
    const infiniStatus_t st = check_descriptor(desc_ptr, device_id, "infiniopGetDescriptorDeviceId", "device_id");
    if (st == INFINI_STATUS_SUCCESS)
        *device_id = desc_ptr->device_id;
    return st;
}
