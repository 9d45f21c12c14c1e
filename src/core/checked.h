/*
 * Integer helpers for sizes and offsets computed from untrusted numbers (docs/ARCHITECTURE.md,
 * "Untrusted numbers"): forms that cannot overflow for any int64 operands in their domain.
 * Products and sums use __builtin_{mul,add}_overflow at the call site; these cover the rest.
 */
#ifndef FC_CORE_CHECKED_H
#define FC_CORE_CHECKED_H

#include <stdint.h>

#include "hd.h"

/* ceil(a / b) for a >= 0 and b >= 1, without forming a + b − 1 (which overflows when b is near
 * INT64_MAX, a block size the rules allow). */
static inline FC_HD int64_t fc_ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

#endif /* FC_CORE_CHECKED_H */
