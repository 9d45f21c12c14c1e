/*
 * The device data SparseFlashAttention reads in the second phase (semantics §0.6, §5.2, §5.3):
 * actual lengths (INT32 or INT64, any stride; cumulative for a TND side, per batch otherwise) and
 * the block table of a paged key.  Every content error gives 161002 naming the element
 * (`actualSeqLengthsKv[3]`), before anything is written.
 */
#ifndef FC_CANN_SFA_LENGTHS_H
#define FC_CANN_SFA_LENGTHS_H

#include <stdint.h>

#include "cann/common/operand.h"
#include "sfa_geom.h"

/* Per-batch lengths of one side into len[0..B).  t absent (a BSND side): every batch has `cap`.
 * TND: t holds cumulative ends (≥ 0, non-decreasing, last = total).  BSND: 0 ≤ len ≤ cap.
 * PA_BSND: 0 ≤ len ≤ cap, the block table's reach (its message names blockTable's width). */
aclnnStatus sfa_read_lengths(const char *fn, const cann_operand *t, sfa_layout layout, int64_t B, int64_t cap,
                             int64_t total, int64_t *len);

/* Copies the B × W block table into out (row-major) and checks every entry batch b uses
 * (⌈skv[b] / slots⌉ of them) lies in [0, blocks). */
aclnnStatus sfa_read_block_table(const char *fn, const cann_operand *t, const int64_t *skv, const sfa_geom *g,
                                 int32_t *out);

#endif /* FC_CANN_SFA_LENGTHS_H */
