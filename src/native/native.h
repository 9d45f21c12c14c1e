/* The native face's internals: validation (validate.c) and lowering (lower.c) of an
 * fc_attention_desc; the public plan functions live in plans.c.  `fn` is the API function named
 * in error messages. */
#ifndef FC_NATIVE_NATIVE_H
#define FC_NATIVE_NATIVE_H

#include "../core/problem.h"

#define FC_MAX_DIM 1024
#define FC_MAX_HEADS 256
#define FC_MAX_LEN 1048576
#define FC_MAX_BATCH 2097152

/* Everything about desc that does not depend on gradients; sets *plan = NULL first. */
fc_status fc_native_check_desc(const char *fn, const fc_attention_desc *desc, const fc_options *options, fc_plan **plan);
fc_status fc_native_check_tensor(const char *fn, const fc_tensor *t, const char *name, bool packed);
/* An output view must not overlap itself. */
fc_status fc_native_check_out_layout(const char *fn, const char *name, const fc_tensor *t, const fc_attention_desc *d,
                                     int64_t heads, int64_t rows, int64_t width);
/* Rows along the sequence axis of query-side and kv-side operands (totals when packed). */
void fc_native_seq_rows(const fc_attention_desc *d, int64_t *q_rows, int64_t *kv_rows);
/* The highest byte offset of one operand (kv: 0 query side, 1 key/value storage, 2 k_rope), and
 * of every operand of the description, must fit in int64. */
fc_status fc_native_check_extent(const char *fn, const char *name, const fc_tensor *t, const fc_attention_desc *d,
                                 int kv, int64_t heads, int64_t rows, int64_t width);
fc_status fc_native_check_extents(const char *fn, const fc_attention_desc *d, int64_t q_rows, int64_t kv_rows);

/* Lowers a checked desc; on success p->batch is allocated and owned by the caller. */
fc_status fc_native_lower(const char *fn, const fc_attention_desc *d, fc_problem *p);
fc_view fc_native_view(const fc_tensor *t, bool packed);

#endif /* FC_NATIVE_NATIVE_H */
