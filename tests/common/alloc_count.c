/* Allocation counting through the linker's --wrap (alloc_count.h). */
#include "alloc_count.h"

#include <stdatomic.h>
#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static atomic_long allocations;

void *__wrap_malloc(size_t n)
{
    atomic_fetch_add(&allocations, 1);
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    atomic_fetch_add(&allocations, 1);
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    atomic_fetch_add(&allocations, 1);
    return __real_realloc(p, n);
}

long tc_allocations(void) { return atomic_load(&allocations); }
