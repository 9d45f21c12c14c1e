// An installed flashc used from C++ the way an Ascend port does: the CANN headers compile and the
// aclnn entry points link and answer; the run-time version is the one installed (argv[1]).
#include <cstdio>
#include <cstring>
#include <string>

#include <flashc.h>
#include "acl/acl.h"
#include "aclnnop/aclnn_flash_attention_score.h"

int main(int argc, char **argv)
{
    if (aclnnFlashAttentionScoreV2(nullptr, 0, nullptr, nullptr) != ACLNN_ERR_PARAM_NULLPTR ||
        std::strstr(aclGetRecentErrMsg(), "executor") == nullptr) {
        std::fprintf(stderr, "consumer: the aclnn face did not refuse a NULL executor\n");
        return 1;
    }
    if (fc_f16_to_f32(fc_f32_to_f16(1.5f)) != 1.5f || aclFloat16ToFloat(aclFloatToFloat16(-2.0f)) != -2.0f) {
        std::fprintf(stderr, "consumer: fp16 conversions\n");
        return 1;
    }
    if (argc > 1 && std::string(fc_version_string()) != argv[1]) {
        std::fprintf(stderr, "consumer: loaded flashc %s, installed %s\n", fc_version_string(), argv[1]);
        return 1;
    }
    std::printf("consumer (C++): flashc %s on %s\n", fc_version_string(), fc_cpu_isa());
    return 0;
}
