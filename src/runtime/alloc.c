/* A sorted array of live allocations; lookups by binary search under one lock. */
#include "alloc.h"

#include "devmem.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Requests beyond this are refused as exhaustion without asking the allocator (sanitizer
 * allocators abort on absurd sizes instead of returning NULL). */
#define FC_RT_MAX_ALLOC ((size_t)1 << 40)

static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;
static fc_rt_alloc *tab;
static size_t tab_len, tab_cap;

/* Number of entries with base <= p. */
static size_t tab_upper(uintptr_t p)
{
    size_t lo = 0, hi = tab_len;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (tab[mid].base <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const char *fc_rt_mem_name(fc_rt_mem kind) { return kind == FC_RT_MEM_HOST ? "host" : "device"; }

/* The memory itself: the provider's for device memory when there is one, else the host's. */
static fc_rt_status obtain(void **p, size_t size, fc_rt_mem kind, int device, bool *on_device)
{
    const bool wanted = kind == FC_RT_MEM_DEVICE && device != FC_RT_CPU_DEVICE;
    const fc_rt_devmem *dm = wanted ? fc_rt_devmem_active() : NULL;
    const char *err = wanted ? fc_rt_devmem_error() : NULL;
    *on_device = dm != NULL;
    *p = NULL;
    if (err)
        return fc_rt_fail(FC_RT_NO_MEMORY, "cannot allocate device memory: %s", err);
    if (size > FC_RT_MAX_ALLOC)
        return fc_rt_fail(FC_RT_NO_MEMORY, "cannot allocate %zu bytes of %s memory", size, fc_rt_mem_name(kind));
    if (dm && (err = dm->alloc(p, size)) != NULL)
        return fc_rt_fail(FC_RT_NO_MEMORY, "cannot allocate %zu bytes of %s device memory: %s", size, dm->name, err);
    if (!dm && (posix_memalign(p, 64, size) != 0 || !*p))
        return fc_rt_fail(FC_RT_NO_MEMORY, "cannot allocate %zu bytes of %s memory", size, fc_rt_mem_name(kind));
    return FC_RT_OK;
}

static void give_back(void *p, bool on_device)
{
    if (on_device)
        fc_rt_devmem_active()->release(p);
    else
        free(p);
}

fc_rt_status fc_rt_malloc(void **out, size_t size, fc_rt_mem kind, int device)
{
    void *p;
    bool on_device;
    const fc_rt_status st = obtain(&p, size, kind, device, &on_device);
    if (st != FC_RT_OK)
        return st;
    pthread_mutex_lock(&tab_lock);
    if (tab_len == tab_cap) {
        const size_t cap = tab_cap ? tab_cap * 2 : 64;
        fc_rt_alloc *grown = realloc(tab, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&tab_lock);
            give_back(p, on_device);
            return fc_rt_fail(FC_RT_NO_MEMORY, "out of host memory for the allocation table");
        }
        tab = grown;
        tab_cap = cap;
    }
    const size_t at = tab_upper((uintptr_t)p);
    memmove(tab + at + 1, tab + at, (tab_len - at) * sizeof *tab);
    tab[at] = (fc_rt_alloc){(uintptr_t)p, size, kind, device, on_device};
    tab_len++;
    pthread_mutex_unlock(&tab_lock);
    *out = p;
    return FC_RT_OK;
}

fc_rt_status fc_rt_free(void *base, fc_rt_mem kind)
{
    const char *want = fc_rt_mem_name(kind);
    if (!base)
        return fc_rt_fail(FC_RT_INVALID, "the pointer is NULL, expected the base of a live %s allocation", want);
    pthread_mutex_lock(&tab_lock);
    const size_t n = tab_upper((uintptr_t)base);
    const fc_rt_alloc *a = n ? &tab[n - 1] : NULL;
    const bool inside = a && (uintptr_t)base - a->base < a->size;
    if (!inside || a->base != (uintptr_t)base || a->kind != kind) {
        const fc_rt_alloc found = inside ? *a : (fc_rt_alloc){0};
        pthread_mutex_unlock(&tab_lock);
        if (!inside)
            return fc_rt_fail(FC_RT_INVALID, "%p is not a live %s allocation (foreign or already freed)", base, want);
        if (found.base != (uintptr_t)base)
            return fc_rt_fail(FC_RT_INVALID, "%p lies %zu bytes inside the %zu-byte %s allocation at %p, expected its base",
                              base, (size_t)((uintptr_t)base - found.base), found.size, fc_rt_mem_name(found.kind),
                              (void *)found.base);
        return fc_rt_fail(FC_RT_INVALID, "%p is a %s allocation, expected a %s allocation", base,
                          fc_rt_mem_name(found.kind), want);
    }
    const bool on_device = a->on_device;
    memmove(tab + n - 1, tab + n, (tab_len - n) * sizeof *tab);
    tab_len--;
    pthread_mutex_unlock(&tab_lock);
    give_back(base, on_device);
    return FC_RT_OK;
}

bool fc_rt_alloc_find(const void *p, fc_rt_alloc *out)
{
    bool found = false;
    pthread_mutex_lock(&tab_lock);
    const size_t n = tab_upper((uintptr_t)p);
    if (n && (uintptr_t)p - tab[n - 1].base < tab[n - 1].size) {
        *out = tab[n - 1];
        found = true;
    }
    pthread_mutex_unlock(&tab_lock);
    return found;
}

bool fc_rt_alloc_overlap(uintptr_t p, size_t bytes, fc_rt_alloc *out)
{
    bool found = false;
    pthread_mutex_lock(&tab_lock);
    /* allocations are disjoint and sorted: the last one starting at or before the range's last
     * byte is the only candidate that can still reach the range */
    const size_t n = tab_upper(p + (bytes - 1));
    if (n && tab[n - 1].size > 0 && tab[n - 1].base + (tab[n - 1].size - 1) >= p) {
        *out = tab[n - 1];
        found = true;
    }
    pthread_mutex_unlock(&tab_lock);
    return found;
}
