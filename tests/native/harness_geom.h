/* Buffer geometry of the harness: element strides of every operand for a case (internal). */
#ifndef FLASHC_TESTS_NATIVE_HARNESS_GEOM_H
#define FLASHC_TESTS_NATIVE_HARNESS_GEOM_H

#include "common/halfconv.h"
#include "harness.h"

typedef struct nt_geom {
    int64_t sb, sh, ss, sd; /* element strides; packed: sb is a bogus value the library must ignore */
    int64_t count;          /* elements of the buffer */
} nt_geom;

typedef enum { NT_Q, NT_K, NT_V, NT_QR, NT_KR, NT_OUT } nt_operand;

/* Strides of one sequence operand of the case (layout, padding, feature stride, broadcasts). */
nt_geom nt_operand_geom(const nt_case *c, const nt_data *d, nt_operand which);
/* Element offset of logical (b, n, s, e) of an operand. */
int64_t nt_offset(const nt_case *c, const nt_data *d, const nt_geom *g, nt_operand which, int b, int n, int s, int e);
/* Tokens of batches before b on the query / kv side (packed base offsets). */
int64_t nt_tokens_before(const int *lens, int b);
int nt_total(const int *lens, int B);

tc_dtype nt_tc(fc_dtype t);
/* Statistics: element offset of (b, n1, i, replica 0) and the total element count. */
int64_t nt_stat_offset(const nt_case *c, const nt_data *d, int b, int n1, int i);
int64_t nt_stat_count(const nt_case *c, const nt_data *d);
int nt_replicas(const nt_case *c);
/* Rows of batch b in the output (padded: Sq incl. padding rows; packed: its length). */
int nt_q_rows(const nt_case *c, const nt_data *d, int b);

#endif
