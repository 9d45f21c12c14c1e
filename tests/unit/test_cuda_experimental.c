/*
 * FLASHC_CUDA_EXPERIMENTAL's reading (src/cuda/experimental.c, plain C, so checked on any machine):
 * which names turn a feature on, and which name a plan reports as unknown.
 */
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "cuda/experimental.h"

static void expect(const char *value, bool philox, const char *unknown)
{
    if (value)
        setenv("FLASHC_CUDA_EXPERIMENTAL", value, 1);
    else
        unsetenv("FLASHC_CUDA_EXPERIMENTAL");
    const char *u = fc_cuda_experimental_unknown();
    TC_CHECK(fc_cuda_experimental("philox") == philox, "\"%s\": philox %s", value ? value : "(unset)", philox ? "on" : "off");
    TC_CHECK(unknown ? u && strncmp(u, unknown, strlen(unknown)) == 0 && (u[strlen(unknown)] == ',' || !u[strlen(unknown)]) : !u,
             "\"%s\": unknown name %s, got %s", value ? value : "(unset)", unknown ? unknown : "none", u ? u : "none");
}

int main(void)
{
    expect(NULL, false, NULL);
    expect("", false, NULL);
    expect("philox", true, NULL);
    expect("all", true, NULL);
    expect(",,philox,", true, NULL);
    expect("all,philox", true, NULL);
    expect("philo", false, "philo");
    expect("philoxx", false, "philoxx");
    expect("PHILOX", false, "PHILOX");
    expect("philox,sparse", true, "sparse");
    expect("x,philox", true, "x");
    /* rope-split heads: by name or all, beside the others */
    expect("rope", false, NULL);
    TC_CHECK(fc_cuda_experimental("rope"), "\"rope\": rope on");
    expect("philox,rope", true, NULL);
    TC_CHECK(fc_cuda_experimental("rope"), "\"philox,rope\": rope on");
    expect("all", true, NULL);
    TC_CHECK(fc_cuda_experimental("rope"), "\"all\": rope on");
    expect("philox,ropes", true, "ropes");
    TC_CHECK(!fc_cuda_experimental("rope"), "\"philox,ropes\": rope off");
    expect("philox", true, NULL);
    TC_CHECK(!fc_cuda_experimental("rope"), "\"philox\": rope off");
    return tc_summary("unit_cuda_experimental");
}
