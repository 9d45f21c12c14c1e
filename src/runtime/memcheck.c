#include "memcheck.h"

#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "devmem.h"

static fc_rt_side classify(const void *p, fc_rt_side side)
{
    fc_rt_alloc a;
    if (side != FC_RT_SIDE_AUTO)
        return side;
    return fc_rt_alloc_find(p, &a) && a.kind == FC_RT_MEM_DEVICE ? FC_RT_SIDE_DEVICE : FC_RT_SIDE_HOST;
}

static fc_rt_status outside(const char *what, const void *p, size_t count, const fc_rt_alloc *a)
{
    return fc_rt_fail(FC_RT_INVALID, "%s range [%p, +%zu) leaves the %zu-byte %s allocation at %p (%zu bytes available)",
                      what, p, count, a->size, fc_rt_mem_name(a->kind), (void *)a->base,
                      a->size - (size_t)((uintptr_t)p - a->base));
}

static fc_rt_status check_device(const char *what, const void *p, size_t count)
{
    fc_rt_alloc a;
    if (!fc_rt_alloc_find(p, &a) || a.kind != FC_RT_MEM_DEVICE)
        return fc_rt_fail(FC_RT_INVALID, "%s %p (range of %zu bytes) is device-side but lies in no live device allocation",
                          what, p, count);
    if (count > a.size - ((uintptr_t)p - a.base))
        return outside(what, p, count, &a);
    return FC_RT_OK;
}

bool fc_rt_in_device_memory(const void *p)
{
    const fc_rt_devmem *dm = fc_rt_devmem_active();
    fc_rt_alloc a;
    if (!dm)
        return false;
    return fc_rt_alloc_find(p, &a) ? a.on_device : dm->is_device(p) == 1;
}

static fc_rt_status check_host(const char *what, const void *p, size_t count)
{
    fc_rt_alloc a;
    if (!fc_rt_alloc_find(p, &a)) {
        if (fc_rt_in_device_memory(p)) /* e.g. the caller's own cudaMalloc: not the host's to touch */
            return fc_rt_fail(FC_RT_INVALID, "%s %p is host-side but is %s device memory that the runtime did not allocate",
                              what, p, fc_rt_devmem_name());
        return FC_RT_OK; /* untracked host memory cannot be checked */
    }
    if (a.kind == FC_RT_MEM_DEVICE)
        return fc_rt_fail(FC_RT_INVALID, "%s %p is host-side but lies in the %zu-byte device allocation at %p", what, p,
                          a.size, (void *)a.base);
    if (count > a.size - ((uintptr_t)p - a.base))
        return outside(what, p, count, &a);
    return FC_RT_OK;
}

/* The checked copy itself, by where each side really lies (a device allocation made for the CPU
 * is host memory). */
static fc_rt_status move(void *dst, const void *src, size_t count)
{
    const fc_rt_devmem *dm = fc_rt_devmem_active();
    const bool dst_device = fc_rt_in_device_memory(dst), src_device = fc_rt_in_device_memory(src);
    if (!dst_device && !src_device) {
        memmove(dst, src, count);
        return FC_RT_OK;
    }
    const char *err = dm->copy(dst, dst_device, src, src_device, count);
    if (err)
        return fc_rt_fail(FC_RT_DEVICE, "the %s copy of %zu bytes from %p to %p failed: %s", dm->name, count, src, dst, err);
    return FC_RT_OK;
}

fc_rt_status fc_rt_copy(void *dst, fc_rt_side dst_side, const void *src, fc_rt_side src_side, size_t count)
{
    const fc_rt_side ds = classify(dst, dst_side), ss = classify(src, src_side);
    fc_rt_status st;
    if ((ds == FC_RT_SIDE_DEVICE && (st = check_device("dst", dst, count))) ||
        (ss == FC_RT_SIDE_DEVICE && (st = check_device("src", src, count))) ||
        (ds == FC_RT_SIDE_HOST && (st = check_host("dst", dst, count))) ||
        (ss == FC_RT_SIDE_HOST && (st = check_host("src", src, count))))
        return st;
    return move(dst, src, count);
}

fc_rt_status fc_rt_fill(void *p, int value, size_t count)
{
    fc_rt_alloc a;
    if (!fc_rt_alloc_find(p, &a))
        return fc_rt_fail(FC_RT_INVALID, "%p (range of %zu bytes) lies in no live allocation", p, count);
    if (count > a.size - ((uintptr_t)p - a.base))
        return outside("the", p, count, &a);
    if (!a.on_device) {
        memset(p, value, count);
        return FC_RT_OK;
    }
    const fc_rt_devmem *dm = fc_rt_devmem_active();
    const char *err = dm->fill(p, value, count);
    if (err)
        return fc_rt_fail(FC_RT_DEVICE, "the %s fill of %zu bytes at %p failed: %s", dm->name, count, p, err);
    return FC_RT_OK;
}

fc_rt_status fc_rt_read(void *dst, const void *src, size_t count, void *stream)
{
    const fc_rt_devmem *dm = fc_rt_devmem_active();
    if (!fc_rt_in_device_memory(src)) {
        memcpy(dst, src, count);
        return FC_RT_OK;
    }
    const char *err = dm->stream_sync(stream);
    if (!err)
        err = dm->copy(dst, false, src, true, count);
    if (err)
        return fc_rt_fail(FC_RT_DEVICE, "reading %zu bytes of %s device memory at %p failed: %s", count, dm->name, src, err);
    return FC_RT_OK;
}

fc_rt_status fc_rt_check_view(const void *base, uintptr_t lo, size_t bytes, int *tracked)
{
    fc_rt_alloc a;
    *tracked = fc_rt_alloc_find(base, &a);
    if (bytes == 0)
        return FC_RT_OK;
    if (lo + (bytes - 1) < lo)
        return fc_rt_fail(FC_RT_INVALID, "range [%p, +%zu) of data at %p wraps around the address space", (void *)lo,
                          bytes, base);
    if (*tracked) {
        if (lo < a.base || lo - a.base > a.size || bytes > a.size - (lo - a.base))
            return fc_rt_fail(FC_RT_INVALID,
                              "range [%p, +%zu) of data at %p leaves the %zu-byte %s allocation at %p that holds it",
                              (void *)lo, bytes, base, a.size, fc_rt_mem_name(a.kind), (void *)a.base);
        return FC_RT_OK;
    }
    if (fc_rt_alloc_overlap(lo, bytes, &a))
        return fc_rt_fail(FC_RT_INVALID,
                          "range [%p, +%zu) of untracked data at %p reaches into the %zu-byte %s allocation at %p",
                          (void *)lo, bytes, base, a.size, fc_rt_mem_name(a.kind), (void *)a.base);
    return FC_RT_OK;
}
