// The public CANN headers compile warning-free as C++ (built with -Werror): unscoped enums usable
// with their type as scope, C linkage, exact values checked at compile time.
#include "acl/acl.h"
#include "aclnnop/aclnn_flash_attention_score.h"

#include <cstdio>

static_assert(aclDataType::ACL_FLOAT16 == 1 && aclDataType::ACL_BF16 == 27, "aclDataType values");
static_assert(aclFormat::ACL_FORMAT_ND == 2 && aclFormat::ACL_FORMAT_FRACTAL_NZ == 29, "aclFormat values");
static_assert(aclrtMemcpyKind::ACL_MEMCPY_DEVICE_TO_HOST == 2, "aclrtMemcpyKind values");
static_assert(aclrtMemMallocPolicy::ACL_MEM_MALLOC_HUGE1G_ONLY_P2P == 7, "aclrtMemMallocPolicy values");
static_assert(aclSysParamOpt::ACL_OPT_ENABLE_KERNEL_EARLY_START == 3, "aclSysParamOpt values");
static_assert(ACLNN_ERR_PARAM_INVALID == 161002, "aclnn codes");

int main()
{
    aclDataType dt = aclDataType::ACL_FLOAT;
    aclFormat fmt = aclFormat::ACL_FORMAT_ND;
    int failures = 0;
    if (aclDataTypeSize(dt) != 4 || fmt != ACL_FORMAT_ND || ACL_ERROR_INVALID_PARAM != 100000)
        failures++;
    // C linkage: the symbols resolve under their C names
    aclnnStatus (*run)(void *, uint64_t, aclOpExecutor *, const aclrtStream) = &aclnnFlashAttentionScoreV2;
    if (run(nullptr, 0, nullptr, nullptr) != ACLNN_ERR_PARAM_NULLPTR || aclGetRecentErrMsg() == nullptr)
        failures++;
    std::printf("cann_headers_cpp: %d failures\n", failures);
    return failures;
}
