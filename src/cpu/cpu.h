/* The CPU backend: instruction-set dispatch, plans and the threaded item loop. */
#ifndef FC_CPU_CPU_H
#define FC_CPU_CPU_H

#include "../core/backend.h"
#include "work.h"

const fc_cpu_kernels *fc_cpu_active(void);
const char *fc_cpu_isa_name(void);
bool fc_cpu_pin_isa(const char *name);
/* FC_OK, or FC_ERR_BACKEND with a message when FLASHC_ISA names no usable kernel path. */
fc_status fc_cpu_check_env(const char *fn);

/* A CPU plan's variant: everything chosen once at planning that its runs read. */
typedef struct fc_cpu_variant {
    const fc_cpu_kernels *k; /* the kernel set */
    fc_kinds kinds;          /* the kernels its items take (k->kinds) */
    fc_tiles tiles;          /* item rows, kv tile columns, kv item rows; the fused backward (tiles.c) */
    int threads;
    /* the workspace: threads × ws_thread bytes of kernel buffers, then the kv slices' partial
     * slots (slot_floats each) at partial_at, then a run's own item counts at counts_at */
    size_t ws_thread, partial_at, slot_floats, counts_at, bytes;
} fc_cpu_variant;

/* The items of one set of per-batch facts: the planned ones, or a run's own (bound lengths). */
typedef struct fc_cpu_items {
    int64_t *q_start;  /* B + 1 prefix sums of query items per batch */
    int64_t *kv_start; /* B + 1 prefix sums of kv items per batch (backward) */
    int64_t nsplit;    /* forward: kv slices per query item (flash-decoding), 1 = none */
} fc_cpu_items;

typedef struct fc_cpu_plan {
    fc_cpu_variant v;
    fc_cpu_items items; /* of the planned facts */
} fc_cpu_plan;

fc_status fc_cpu_plan_create(fc_plan *plan, const fc_options *options);
size_t fc_cpu_workspace_size(const fc_plan *plan);
void fc_cpu_plan_destroy(void *state);
/* Runs the plan on a run's problem; a run with its own lengths counts its own work items in the
 * workspace. */
fc_status fc_cpu_run(const fc_plan *plan, const fc_problem *run, const fc_bindings *bind, void *workspace, void *stream);
/* The plan's variant as text (describe.c; snprintf's contract). */
int fc_cpu_describe(const fc_plan *plan, char *buf, size_t len);

#endif /* FC_CPU_CPU_H */
