/*
 * Bounds-checked copies and fills against the allocation table (semantics §6.5, §7.6, §8.18).
 * A pointer is declared device-side, host-side, or classified by lookup; a device-side range must
 * lie inside one live device allocation, a host-side range must not touch device memory and, when
 * it starts in a live host allocation, must lie inside it.  Untracked host memory is trusted.
 */
#ifndef FC_RUNTIME_MEMCHECK_H
#define FC_RUNTIME_MEMCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef enum fc_rt_side {
    FC_RT_SIDE_HOST = 0,
    FC_RT_SIDE_DEVICE = 1,
    FC_RT_SIDE_AUTO = 2 /* inside a device allocation = device, else host */
} fc_rt_side;

/* Checks [dst, dst+count) and [src, src+count) (both non-NULL, count > 0) for the given sides,
 * device-side rules first, then copies as if through a temporary buffer.  Nothing is written when
 * a check fails; the message names "dst" or "src", the pointer, the range and the allocation. */
fc_rt_status fc_rt_copy(void *dst, fc_rt_side dst_side, const void *src, fc_rt_side src_side, size_t count);

/* Whether p lies in the active provider's device memory (tracked, or the caller's own); false
 * without a provider, where "device" allocations are host memory. */
bool fc_rt_in_device_memory(const void *p);

/* Copies count bytes of operand data at src — device memory or host memory — into the host buffer
 * dst, after the work queued on stream (the provider's stream, NULL = the default one) has
 * finished: how a face reads host facts (lengths, offsets) from tensors that may live on a device,
 * never by dereferencing them.  The caller has bounds-checked [src, src+count). */
fc_rt_status fc_rt_read(void *dst, const void *src, size_t count, void *stream);

/* Writes count bytes of value when [p, p+count) lies inside one live allocation (device or host). */
fc_rt_status fc_rt_fill(void *p, int value, size_t count);

/* Whether [lo, lo+bytes) may be used as the memory of a view of the data at
 * `base`: judged from base, not from lo, since a view offset can move lo anywhere.  When base lies
 * in a live allocation the whole range must lie inside that allocation; when it lies in none (host
 * memory the runtime does not track), the range must not touch any allocation.  *tracked says
 * whether base lay in one. */
fc_rt_status fc_rt_check_view(const void *base, uintptr_t lo, size_t bytes, int *tracked);

#endif /* FC_RUNTIME_MEMCHECK_H */
