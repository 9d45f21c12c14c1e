/* Running a described call: a plan per problem shape, kept in a small cache and run with each
 * call's addresses (fc_plan_run's io), on the CPU or on the operands' CUDA device and the
 * caller's stream. */
#ifndef FLASHC_PY_PLANS_H
#define FLASHC_PY_PLANS_H

#include "desc.h"

/* What a run needs beyond the description (from the call's dict). */
typedef struct fcpy_launch {
    int threads;          /* CPU threads (0: OpenMP's default) */
    void *stream;         /* CUDA stream (NULL: the default stream) */
    PyObject *workspace;  /* device problems: callable(bytes) -> a device byte array (borrowed) */
} fcpy_launch;

/* Reads "stream" and "workspace" from the call's dict. */
int fcpy_launch_from_dict(fcpy_launch *launch, PyObject *dict, int threads);

/* Plans (or reuses a kept plan), runs, and keeps the plan.  Called with the GIL held; releases it
 * while planning and running.  Returns 0, or -1 with a Python exception set. */
int fcpy_run(fcpy_call *call, bool backward, const fcpy_launch *launch);

/* A failed status as the Python exception carrying the library's message: ValueError (invalid or
 * missing argument), MemoryError, or RuntimeError; returns NULL. */
PyObject *fcpy_status_error(fc_status st, const char *msg);

/* How many plans are kept (0: none, every call plans anew); returns the previous count. */
int fcpy_plan_cache_size(int slots);

/* How many calls found a kept plan (hits) and how many planned (misses), since the module loaded. */
void fcpy_plan_cache_counts(uint64_t *hits, uint64_t *misses);

/* The CUDA runtime linked into this build: its version (0 without the CUDA backend) and the
 * devices it sees (0 with a reason in *why when none). */
int fcpy_cuda_runtime_version(void);
int fcpy_cuda_device_count(const char **why);

#endif
