/* Element sizes and binary16 conversions of the acl base API. */
#include "acl/acl_base.h"
#include "core/half.h"

float aclFloat16ToFloat(aclFloat16 value) { return fc_f16_to_f32_inline(value); }

aclFloat16 aclFloatToFloat16(float value) { return fc_f32_to_f16_inline(value); }

size_t aclDataTypeSize(aclDataType dataType)
{
    switch ((int)dataType) {
    case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: case ACL_COMPLEX32: return 4;
    case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: case ACL_UINT16: return 2;
    case ACL_INT8: case ACL_UINT8: case ACL_BOOL: case ACL_HIFLOAT8: case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN: case ACL_FLOAT8_E8M0: return 1;
    case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: case ACL_COMPLEX64: return 8;
    case ACL_COMPLEX128: return 16;
    default: return 0; /* undefined, string and sub-byte types */
    }
}
