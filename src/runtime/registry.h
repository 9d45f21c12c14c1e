/*
 * The registry of live handles.  Every object a face hands out (tensors, arrays, executors,
 * streams, contexts, descriptors) is registered under a kind while it is live, so that a destroyed,
 * foreign or garbage pointer can be recognised without ever being dereferenced.  Thread-safe.
 *
 * A kind is the address of a static fc_rt_kind owned by the module that creates such objects;
 * its name is used in messages.
 */
#ifndef FC_RUNTIME_REGISTRY_H
#define FC_RUNTIME_REGISTRY_H

#include <stdbool.h>

typedef struct fc_rt_kind {
    const char *name;
} fc_rt_kind;

/* Registers p (non-NULL) as a live object of kind; false when out of memory. */
bool fc_rt_registry_add(const void *p, const fc_rt_kind *kind);

/* Whether p is a live object of kind. */
bool fc_rt_registry_has(const void *p, const fc_rt_kind *kind);

/* The registration serial of a live object (unique over the process lifetime), 0 when p is not a
 * live object of kind.  Lets a holder of p tell its object from a later one at the same address. */
unsigned long long fc_rt_registry_serial(const void *p, const fc_rt_kind *kind);

/* Unregisters p if it is a live object of kind (and, when serial is not 0, still carries that
 * serial); returns whether it did. */
bool fc_rt_registry_remove_serial(const void *p, const fc_rt_kind *kind, unsigned long long serial);

/* Unregisters p if it is a live object of kind; returns whether it was.  Exactly one of several
 * concurrent callers for the same object gets true, so it doubles as "take ownership". */
bool fc_rt_registry_remove(const void *p, const fc_rt_kind *kind);

#endif /* FC_RUNTIME_REGISTRY_H */
