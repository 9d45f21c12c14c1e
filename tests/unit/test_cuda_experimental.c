/*
 * FLASHC_CUDA_EXPERIMENTAL's reading (src/cuda/experimental.c, plain C, so checked on any machine):
 * which names turn a feature on, and which name a plan reports as unknown.
 */
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "cuda/experimental.h"

static void expect(const char *value, bool philox, bool sparse, const char *unknown)
{
    if (value)
        setenv("FLASHC_CUDA_EXPERIMENTAL", value, 1);
    else
        unsetenv("FLASHC_CUDA_EXPERIMENTAL");
    const char *u = fc_cuda_experimental_unknown();
    TC_CHECK(fc_cuda_experimental("philox") == philox, "\"%s\": philox %s", value ? value : "(unset)", philox ? "on" : "off");
    TC_CHECK(fc_cuda_experimental("sparse") == sparse, "\"%s\": sparse %s", value ? value : "(unset)", sparse ? "on" : "off");
    TC_CHECK(unknown ? u && strncmp(u, unknown, strlen(unknown)) == 0 && (u[strlen(unknown)] == ',' || !u[strlen(unknown)]) : !u,
             "\"%s\": unknown name %s, got %s", value ? value : "(unset)", unknown ? unknown : "none", u ? u : "none");
}

int main(void)
{
    expect(NULL, false, false, NULL);
    expect("", false, false, NULL);
    expect("philox", true, false, NULL);
    expect("all", true, true, NULL);
    expect(",,philox,", true, false, NULL);
    expect("all,philox", true, true, NULL);
    expect("philo", false, false, "philo");
    expect("philoxx", false, false, "philoxx");
    expect("PHILOX", false, false, "PHILOX");
    expect("x,philox", true, false, "x");
    expect("philox,sparse", true, true, NULL);
    expect("sparse", false, true, NULL);
    expect(",sparse,", false, true, NULL);
    expect("sparsee", false, false, "sparsee");
    expect("spars", false, false, "spars");
    expect("SPARSE", false, false, "SPARSE");
    expect("philox,sparse,bogus", true, true, "bogus");
    /* rope-split heads: by name or all, beside the others */
    expect("rope", false, false, NULL);
    TC_CHECK(fc_cuda_experimental("rope"), "\"rope\": rope on");
    expect("philox,rope,sparse", true, true, NULL);
    TC_CHECK(fc_cuda_experimental("rope"), "\"philox,rope,sparse\": rope on");
    expect("all", true, true, NULL);
    TC_CHECK(fc_cuda_experimental("rope"), "\"all\": rope on");
    expect("philox,ropes", true, false, "ropes");
    TC_CHECK(!fc_cuda_experimental("rope"), "\"philox,ropes\": rope off");
    expect("sparse", false, true, NULL);
    TC_CHECK(!fc_cuda_experimental("rope"), "\"sparse\": rope off");
    return tc_summary("unit_cuda_experimental");
}
