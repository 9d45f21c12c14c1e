/* Failure messages, dtype sizes, the current device and liveness checks of the InfiniCore face. */
#include "infini.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "runtime/alloc.h"
#include "runtime/devmem.h"
#include "runtime/device.h"

infiniStatus_t infini_fail(infiniStatus_t st, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fc_fail(FC_ERR_INVALID_ARG, "%s", msg);
    return st;
}

size_t infini_dtype_size(int dtype)
{
    switch (dtype) {
    case INFINI_DTYPE_BYTE: case INFINI_DTYPE_BOOL: case INFINI_DTYPE_I8: case INFINI_DTYPE_U8: case INFINI_DTYPE_F8:
        return 1;
    case INFINI_DTYPE_I16: case INFINI_DTYPE_U16: case INFINI_DTYPE_F16: case INFINI_DTYPE_BF16: case INFINI_DTYPE_C16:
        return 2;
    case INFINI_DTYPE_I32: case INFINI_DTYPE_U32: case INFINI_DTYPE_F32: case INFINI_DTYPE_C32:
        return 4;
    case INFINI_DTYPE_I64: case INFINI_DTYPE_U64: case INFINI_DTYPE_F64: case INFINI_DTYPE_C64:
        return 8;
    case INFINI_DTYPE_C128:
        return 16;
    default:
        return 0;
    }
}

static _Thread_local infiniDevice_t tl_type = INFINI_DEVICE_CPU;

bool infini_device_supported(int device)
{
    if (device == INFINI_DEVICE_NVIDIA) /* the runtime's device memory is CUDA's (a GPU, FLASHC_DEVICE not cpu) */
        return strcmp(fc_rt_devmem_name(), "CUDA") == 0;
    return device == INFINI_DEVICE_CPU;
}

int infini_device_count(int device)
{
    if (!infini_device_supported(device))
        return 0;
    return device == INFINI_DEVICE_CPU ? 1 : fc_rt_device_count();
}

int infini_runtime_device(void)
{
    return tl_type == INFINI_DEVICE_CPU ? FC_RT_CPU_DEVICE : fc_rt_current_device();
}

infiniDevice_t infini_current_device_type(void) { return tl_type; }

void infini_set_current_device_type(infiniDevice_t device) { tl_type = device; }

infiniStatus_t infini_check_live(const void *p, const fc_rt_kind *kind, const char *fn, const char *name)
{
    if (!p)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: %s is NULL", fn, name);
    if (!fc_rt_registry_has(p, kind))
        return infini_fail(INFINI_STATUS_BAD_PARAM, "%s: %s (%p) is not a live %s", fn, name, p, kind->name);
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infini_register(const void *p, const fc_rt_kind *kind, const char *fn)
{
    if (!fc_rt_registry_add(p, kind))
        return infini_fail(INFINI_STATUS_INTERNAL_ERROR, "%s: out of host memory for the handle registry", fn);
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infini_unregister(const void *p, const fc_rt_kind *kind, const char *fn, const char *name)
{
    if (!p)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: %s is NULL", fn, name);
    if (!fc_rt_registry_remove(p, kind))
        return infini_fail(INFINI_STATUS_BAD_PARAM, "%s: %s (%p) is not a live %s", fn, name, p, kind->name);
    return INFINI_STATUS_SUCCESS;
}
