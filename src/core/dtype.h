/* Element sizes of fc_dtype, inline for the kernels (host and device). */
#ifndef FC_CORE_DTYPE_H
#define FC_CORE_DTYPE_H

#include <stdint.h>

#include "flashc.h"
#include "hd.h"

static inline FC_HD int64_t fc_dtype_bytes(fc_dtype dt)
{
    switch (dt) {
    case FC_F32: case FC_I32: return 4;
    case FC_F16: case FC_BF16: return 2;
    case FC_I8: case FC_U8: case FC_BOOL: return 1;
    case FC_I64: return 8;
    default: return 0;
    }
}

static inline FC_HD bool fc_dtype_is_float(fc_dtype dt) { return dt == FC_F32 || dt == FC_F16 || dt == FC_BF16; }

#endif /* FC_CORE_DTYPE_H */
