/*
 * infiniopCreateFlashAttentionDescriptor, GetFlashAttentionWorkspaceSize, FlashAttention and both
 * destroy spellings (semantics §7.3–§7.5).  Each call checks in the order of §7.5.
 */
#include <stdlib.h>

#include "core/error.h"
#include "fa.h"
#include "runtime/device.h"

const fc_rt_kind infini_kind_flash_attention = {"infiniopFlashAttentionDescriptor_t"};
const char *const infini_fa_desc_names[FA_TENSORS] = {"out_desc", "q_desc", "k_desc", "v_desc", "mask_desc"};
const char *const infini_fa_data_names[FA_TENSORS] = {"out", "q", "k", "v", "mask"};

#define TRY(call)                                                                                                      \
    if ((st = (call)) != INFINI_STATUS_SUCCESS)                                                                        \
        return st;

/* NULL_POINTER for the required pointers, then BAD_PARAM for objects that are not live. */
static infiniStatus_t check_args(infiniopHandle_t handle, infiniopFlashAttentionDescriptor_t *desc_ptr,
                                 const struct InfiniopTensorDescriptor *const t[FA_TENSORS])
{
    static const char fn[] = "infiniopCreateFlashAttentionDescriptor";
    infiniStatus_t st;
    if (!handle || !desc_ptr)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: %s is NULL", fn, handle ? "desc_ptr" : "handle");
    for (int x = FA_OUT; x <= FA_V; x++)
        if (!t[x])
            return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: %s is NULL", fn, infini_fa_desc_names[x]);
    TRY(infini_check_live(handle, &infini_kind_handle, fn, "handle"))
    for (int x = 0; x < FA_TENSORS; x++)
        if (t[x])
            TRY(infini_check_live(t[x], &infini_kind_tensor, fn, infini_fa_desc_names[x]))
    if (!infini_device_supported(handle->device))
        return infini_fail(INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED, "%s: the handle's device type %d is not supported", fn,
                           handle->device);
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniopCreateFlashAttentionDescriptor(infiniopHandle_t handle, infiniopFlashAttentionDescriptor_t *desc_ptr,
                                                      infiniopTensorDescriptor_t out_desc, infiniopTensorDescriptor_t q_desc,
                                                      infiniopTensorDescriptor_t k_desc, infiniopTensorDescriptor_t v_desc,
                                                      infiniopTensorDescriptor_t mask_desc)
{
    fc_clear_error();
    const struct InfiniopTensorDescriptor *const t[FA_TENSORS] = {out_desc, q_desc, k_desc, v_desc, mask_desc};
    infiniStatus_t st;
    if (desc_ptr)
        *desc_ptr = NULL;
    TRY(check_args(handle, desc_ptr, t))
    infini_fa *d = calloc(1, sizeof *d);
    if (!d)
        return infini_fail(INFINI_STATUS_INTERNAL_ERROR, "infiniopCreateFlashAttentionDescriptor: out of host memory");
    d->base.device = handle->device;
    d->base.device_id = handle->device_id;
    if ((st = infini_fa_check(t, &d->g)) || (st = infini_fa_plan(&d->g, handle->device, false, &d->plan)) ||
        (d->g.has_mask && (st = infini_fa_plan(&d->g, handle->device, true, &d->masked))) ||
        (st = infini_register(d, &infini_kind_flash_attention, "infiniopCreateFlashAttentionDescriptor"))) {
        fc_plan_free(d->plan);
        fc_plan_free(d->masked);
        free(d);
        return st;
    }
    d->plan_bytes = d->plan->workspace;
    if (d->masked && d->masked->workspace > d->plan_bytes)
        d->plan_bytes = d->masked->workspace;
    d->workspace = d->plan_bytes + infini_mask_scratch_bytes(&d->g);
    *desc_ptr = &d->base;
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniopGetFlashAttentionWorkspaceSize(infiniopFlashAttentionDescriptor_t desc, size_t *size)
{
    static const char fn[] = "infiniopGetFlashAttentionWorkspaceSize";
    fc_clear_error();
    infiniStatus_t st;
    if (desc && !size)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: size is NULL", fn);
    TRY(infini_check_live(desc, &infini_kind_flash_attention, fn, "desc"))
    *size = ((const infini_fa *)desc)->workspace;
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniopFlashAttention(infiniopFlashAttentionDescriptor_t desc, void *workspace, size_t workspace_size,
                                      void *out, const void *q, const void *k, const void *v, const void *mask,
                                      void *stream)
{
    static const char fn[] = "infiniopFlashAttention";
    fc_clear_error();
    const void *const ptr[FA_TENSORS] = {out, q, k, v, mask};
    infiniStatus_t st;
    if (!desc)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: desc is NULL", fn);
    for (int x = FA_OUT; x <= FA_V; x++)
        if (!ptr[x])
            return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: %s is NULL", fn, infini_fa_data_names[x]);
    TRY(infini_check_live(desc, &infini_kind_flash_attention, fn, "desc"))
    const infini_fa *d = (const infini_fa *)desc;
    if (workspace_size < d->workspace)
        return infini_fail(INFINI_STATUS_INSUFFICIENT_WORKSPACE, "%s: workspace_size is %zu, the descriptor needs %zu", fn,
                           workspace_size, d->workspace);
    if (!infini_workspace_fits(workspace, d->workspace))
        return infini_fail(INFINI_STATUS_INSUFFICIENT_WORKSPACE,
                           "%s: workspace lies in a runtime allocation with fewer than the %zu bytes needed", fn, d->workspace);
    if (d->workspace > 0 && !workspace)
        return infini_fail(INFINI_STATUS_NULL_POINTER, "%s: workspace is NULL, the descriptor needs %zu bytes", fn,
                           d->workspace);
    /* a NULL mask means no mask; a mask without a mask descriptor is ignored */
    const void *const used[FA_TENSORS] = {out, q, k, v, d->g.has_mask ? mask : NULL};
    TRY(infini_fa_check_operands(d, used))
    void *native = NULL; /* the CPU's work completes before the call returns: its stream is not examined */
    if (d->base.device == INFINI_DEVICE_NVIDIA && fc_rt_stream_native(stream, &native) != FC_RT_OK)
        return infini_fail(INFINI_STATUS_BAD_PARAM, "%s: stream: %s (use an infinirtStreamCreate stream or NULL)", fn,
                           fc_rt_message());

    fc_bindings run = {.out = out, .q = (char *)q, .k = (char *)k, .v = (char *)v};
    if (used[FA_MASK])
        run.mask = infini_mask_bytes(&d->g, mask, (uint8_t *)workspace + d->plan_bytes);
    if (fc_plan_execute_on(used[FA_MASK] ? d->masked : d->plan, &run, workspace, d->plan_bytes, native) != FC_OK)
        return infini_fail(INFINI_STATUS_INTERNAL_ERROR, "%s: %s", fn, fc_error_message());
    return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniopDestroyFlashAttentionDescriptor(infiniopFlashAttentionDescriptor_t desc)
{
    const infiniStatus_t st =
        infini_unregister(desc, &infini_kind_flash_attention, "infiniopDestroyFlashAttentionDescriptor", "desc");
    if (st == INFINI_STATUS_SUCCESS) {
        fc_plan_free(((infini_fa *)desc)->plan);
        fc_plan_free(((infini_fa *)desc)->masked);
        free(desc);
    }
    return st;
}

infiniStatus_t infiniopDestoryFlashAttentionDescriptor(infiniopFlashAttentionDescriptor_t desc)
{
    return infiniopDestroyFlashAttentionDescriptor(desc);
}
