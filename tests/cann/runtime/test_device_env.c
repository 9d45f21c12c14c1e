/*
 * FLASHC_DEVICE asking for a device the process cannot have: a name flashc does not know (any
 * machine), or "cuda" where no GPU is usable (a CPU-only build, or no driver or device — how CI
 * sees it; where a GPU is usable the "cuda" run is skipped: tests/cuda covers that machine).
 * Setting a device and allocating device memory then fail with a message that says why, the
 * device count is 0, and nothing falls back to the CPU silently; host memory still works.
 * Usage: test_cann_device_env NAME (the value FLASHC_DEVICE holds).
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "common/check.h"
#include "flashc.h"

/* Whether a plan on the CUDA backend gets past the device check (a usable GPU). */
static bool gpu_usable(void)
{
    static float q[16 * 16], o[16 * 16];
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = d.kv_heads = 1, d.head_dim = 16, d.q_len = d.kv_len = 16;
    d.q = fc_tensor_bnsd(q, FC_F32, 1, 16, 16);
    d.k = d.v = d.q;
    d.out = fc_tensor_bnsd(o, FC_F32, 1, 16, 16);
    fc_options opt = {.backend = FC_BACKEND_CUDA, .threads = 1};
    fc_plan *plan = NULL;
    const fc_status st = fc_plan_create(&d, &opt, &plan);
    fc_plan_destroy(plan);
    const char *msg = fc_last_error();
    return st == FC_OK || !(strstr(msg, "not built") || strstr(msg, "no CUDA device") || strstr(msg, "driver"));
}

static void expect(aclError got, aclError want, const char *needle, const char *what)
{
    const char *msg = aclGetRecentErrMsg();
    TC_CHECK(got == want, "%s: expected %d, got %d (%s)", what, want, got, msg ? msg : "no message");
    TC_CHECK(msg && strstr(msg, needle), "%s: the message names \"%s\": %s", what, needle, msg ? msg : "(none)");
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "";
    if (strcmp(name, "cuda") == 0 && gpu_usable()) {
        printf("test_cann_device_env: a GPU is usable; skipped (tests/cuda runs it)\n");
        return TC_SKIP;
    }
    char want[64];
    snprintf(want, sizeof want, "FLASHC_DEVICE=%s", name);
    expect(aclrtSetDevice(0), ACL_ERROR_RT_INVALID_DEVICEID, want, "aclrtSetDevice(0)");
    void *p = NULL;
    expect(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION, want, "aclrtMalloc");
    TC_CHECK(p == NULL, "aclrtMalloc left *devPtr NULL");
    uint32_t n = 7;
    TC_CHECK(aclrtGetDeviceCount(&n) == ACL_SUCCESS && n == 0, "aclrtGetDeviceCount: %u, want 0", n);
    TC_CHECK(aclrtMallocHost(&p, 64) == ACL_SUCCESS && p, "aclrtMallocHost still gives host memory");
    if (p) {
        memset(p, 1, 64);
        aclrtFreeHost(p);
    }
    return tc_summary("test_cann_device_env");
}
