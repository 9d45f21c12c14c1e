/* The record every rank contributes to the agreement step (agree.c) and the per-element values of
 * its array-valued fields (values.c). */
#ifndef FC_MPI_AGREE_H
#define FC_MPI_AGREE_H

#include "ring.h"

/* Fields every rank must agree on, then this rank's rows.  F_OK holds the rank's own check:
 * FC_OK, a failure status, or RING_GAVE_UP. */
enum { F_OK, F_BATCH, F_QH, F_KVH, F_D, F_DV, F_QT, F_KT, F_VT, F_OT, F_SCALE, F_SOFTCAP, F_WINDOWS, F_PREFIX,
       F_SINK, F_ALIBI, F_STATS, F_SHARDING, F_OP, F_AGREED, F_QLEN = F_AGREED, F_KVLEN, F_QSTART, F_KVSTART,
       F_COUNT };

/* Sent in F_OK by a rank whose own call had already timed out when the others arrived. */
#define RING_GAVE_UP (-1)

typedef struct ring_record {
    int64_t f[F_COUNT];
    char msg[320];
} ring_record;

/* Whether field k is compared by a hash of an array (windows, prefix, sink, ALiBi slopes). */
static inline bool ring_field_is_array(int k) { return k >= F_WINDOWS && k <= F_ALIBI; }
/* Elements of array field k: the same count on every rank once batch and heads agree. */
int64_t ring_array_count(const ring_ctx *c, int k);
/* Array field k as int64 elements (floats by their bits). */
void ring_array_values(const ring_ctx *c, int k, int64_t *v);
/* A hash of them (what the record carries). */
int64_t ring_array_hash(const ring_ctx *c, int k);
/* The first element of field k that differs between rank 0 and rank r, gathered from every rank and
 * reported as a failure naming both values.  Collective: every rank calls it for the same k, r. */
fc_status ring_array_mismatch(ring_ctx *c, int k, int r);

#endif
