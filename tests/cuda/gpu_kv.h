/*
 * The decode storage forms of a gpu_case (gc_kv): int8 key/value with dequantisation, left
 * padding, per-batch tensor lists and paged caches in both layouts, built on the host from the
 * case's contiguous K/V and copied to the device, for the CPU and the GPU description alike.
 */
#ifndef FLASHC_TESTS_CUDA_GPU_KV_H
#define FLASHC_TESTS_CUDA_GPU_KV_H

#include "common/rng.h"
#include "gpu_case.h"

enum { GC_KV_BUFS = 8, GC_KV_MAX_B = 64 };

typedef struct gc_kv_state {
    void *h[GC_KV_BUFS], *d[GC_KV_BUFS];                      /* host buffers and device twins */
    int n;
    const void *k_list_h[GC_KV_MAX_B], *v_list_h[GC_KV_MAX_B]; /* tensor lists: host / device bases */
    const void *k_list_d[GC_KV_MAX_B], *v_list_d[GC_KV_MAX_B];
    void *list_bufs[2 * GC_KV_MAX_B][2];                      /* their buffers (host, device) */
    int n_list;
    int64_t kv_lens[GC_KV_MAX_B], kv_starts[GC_KV_MAX_B];
    int32_t *table_h;  /* paged: the host block table (tests corrupt it) */
    int64_t table_entries, blocks;
} gc_kv_state;

/* Replaces the key/value storage of cpu (host) and gpu (device) by the case's form; kvlen are the
 * batches' kv lengths.  False when a buffer could not be made. */
bool gc_kv_apply(const gc_case *c, tc_rng *r, const int64_t *kvlen, fc_attention_desc *cpu, fc_attention_desc *gpu,
                 gc_kv_state *st);
/* Uploads the host block table again (after a test changed it). */
void gc_kv_upload_table(gc_kv_state *st);
void gc_kv_free(gc_kv_state *st);

#endif
