// The backward header compiles warning-free as C++ (built with -Werror) together with acl/acl.h,
// as the seed's sample includes them, and its functions resolve under their C names.
#include "acl/acl.h"
#include "aclnnop/aclnn_flash_attention_score_grad.h"

#include <cstdio>

extern "C" aclnnStatus aclnnFlashAttentionUnpaddingScoreGradV5(void *, uint64_t, aclOpExecutor *, const aclrtStream);

int main()
{
    int failures = 0;
    aclnnStatus (*run)(void *, uint64_t, aclOpExecutor *, const aclrtStream) = &aclnnFlashAttentionUnpaddingScoreGradV5;
    uint64_t ws = 7;
    aclOpExecutor *ex = nullptr;
    char layout[] = "TND";
    if (run(nullptr, 0, nullptr, nullptr) != ACLNN_ERR_PARAM_NULLPTR || aclGetRecentErrMsg() == nullptr)
        failures++;
    // every required operand NULL: the first one (query) is named, and the outputs are cleared
    if (aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 1.0, 1.0, 0, 0, 1, layout, 0, 0, 1,
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &ws, &ex) != ACLNN_ERR_PARAM_NULLPTR ||
        ws != 0 || ex != nullptr)
        failures++;
    aclGetRecentErrMsg();
    std::printf("cann_grad_headers_cpp: %d failures\n", failures);
    return failures;
}
