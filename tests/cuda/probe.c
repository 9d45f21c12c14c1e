/* Exit 0 where a CUDA device is usable, 77 (skip) where not: for test scripts that run other binaries. */
#include <stdio.h>

#include "common/check.h"
#include "gpu_case.h"

int main(void)
{
    if (gc_have_gpu())
        return 0;
    printf("no CUDA device; skipped\n");
    return TC_SKIP;
}
