// The public InfiniCore headers compile warning-free as C++ (built with -Wpedantic -Werror): C
// linkage, the upstream __C macro, exact values checked at compile time.
#include "infiniop.h"
#include "infinirt.h"

#include <cstdio>

static_assert(INFINI_STATUS_INSUFFICIENT_WORKSPACE == 13 && INFINI_STATUS_BAD_TENSOR_DTYPE == 10, "status values");
static_assert(INFINI_DEVICE_TYPE_COUNT == 11 && INFINI_DTYPE_BF16 == 19 && INFINI_DTYPE_F16 == 12, "enum values");
static_assert(INFINIRT_MEMCPY_D2D == 3, "memcpy kinds");

// Upstream code declares its own functions with __C __export.
__C __export int flashc_test_upstream_macros(void);
int flashc_test_upstream_macros(void) { return 0; }

int main()
{
    int failures = flashc_test_upstream_macros();
    infiniStatus_t (*destroy)(infiniopFlashAttentionDescriptor_t) = &infiniopDestoryFlashAttentionDescriptor;
    if (destroy(nullptr) != INFINI_STATUS_NULL_POINTER)
        failures++;
    infiniopHandle_t h = nullptr;
    if (infiniopCreateHandle(&h) != INFINI_STATUS_SUCCESS || infiniopDestroyHandle(h) != INFINI_STATUS_SUCCESS)
        failures++;
    infiniDevice_t d;
    int id;
    if (infinirtGetDevice(&d, &id) != INFINI_STATUS_SUCCESS || d != INFINI_DEVICE_CPU)
        failures++;
    std::printf("infiniop_headers_cpp: %d failures\n", failures);
    return failures;
}
