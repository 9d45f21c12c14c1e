/* Open-addressing hash set of (pointer, kind), linear probing with backward-shift deletion. */
#include "registry.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct slot {
    uintptr_t key; /* 0 = empty */
    const fc_rt_kind *kind;
    unsigned long long serial;
} slot;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static slot *reg_slots;
static size_t reg_cap, reg_count; /* cap is 0 or a power of two */
static unsigned long long reg_next_serial = 1;

static size_t reg_hash(uintptr_t k)
{
    uint64_t x = (uint64_t)k;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

/* Index of key's slot, or of the empty slot where it would go. */
static size_t reg_find(uintptr_t key)
{
    size_t i = reg_hash(key) & (reg_cap - 1);
    while (reg_slots[i].key != 0 && reg_slots[i].key != key)
        i = (i + 1) & (reg_cap - 1);
    return i;
}

static bool reg_grow(void)
{
    const size_t cap = reg_cap ? reg_cap * 2 : 256;
    slot *fresh = calloc(cap, sizeof *fresh);
    if (!fresh)
        return false;
    slot *old = reg_slots;
    const size_t old_cap = reg_cap;
    reg_slots = fresh;
    reg_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key)
            reg_slots[reg_find(old[i].key)] = old[i];
    free(old);
    return true;
}

bool fc_rt_registry_add(const void *p, const fc_rt_kind *kind)
{
    if (!p)
        return false;
    bool ok = true;
    pthread_mutex_lock(&reg_lock);
    if ((reg_count + 1) * 2 > reg_cap)
        ok = reg_grow();
    if (ok) {
        const size_t i = reg_find((uintptr_t)p);
        if (reg_slots[i].key == 0)
            reg_count++;
        reg_slots[i] = (slot){(uintptr_t)p, kind, reg_next_serial++};
    }
    pthread_mutex_unlock(&reg_lock);
    return ok;
}

bool fc_rt_registry_has(const void *p, const fc_rt_kind *kind)
{
    if (!p)
        return false;
    bool live = false;
    pthread_mutex_lock(&reg_lock);
    if (reg_cap) {
        const slot *s = &reg_slots[reg_find((uintptr_t)p)];
        live = s->key != 0 && s->kind == kind;
    }
    pthread_mutex_unlock(&reg_lock);
    return live;
}

unsigned long long fc_rt_registry_serial(const void *p, const fc_rt_kind *kind)
{
    unsigned long long serial = 0;
    if (!p)
        return 0;
    pthread_mutex_lock(&reg_lock);
    if (reg_cap) {
        const slot *s = &reg_slots[reg_find((uintptr_t)p)];
        if (s->key != 0 && s->kind == kind)
            serial = s->serial;
    }
    pthread_mutex_unlock(&reg_lock);
    return serial;
}

bool fc_rt_registry_remove(const void *p, const fc_rt_kind *kind) { return fc_rt_registry_remove_serial(p, kind, 0); }

bool fc_rt_registry_remove_serial(const void *p, const fc_rt_kind *kind, unsigned long long serial)
{
    if (!p)
        return false;
    bool found = false;
    pthread_mutex_lock(&reg_lock);
    if (reg_cap) {
        size_t i = reg_find((uintptr_t)p);
        if (reg_slots[i].key && reg_slots[i].kind == kind && (serial == 0 || reg_slots[i].serial == serial)) {
            found = true;
            reg_count--;
            /* backward shift: pull later members of the probe run into the hole */
            size_t hole = i, j = i;
            for (;;) {
                j = (j + 1) & (reg_cap - 1);
                if (reg_slots[j].key == 0)
                    break;
                const size_t home = reg_hash(reg_slots[j].key) & (reg_cap - 1);
                const bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
                if (movable) {
                    reg_slots[hole] = reg_slots[j];
                    hole = j;
                }
            }
            reg_slots[hole] = (slot){0, NULL, 0};
        }
    }
    pthread_mutex_unlock(&reg_lock);
    return found;
}
