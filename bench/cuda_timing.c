/* The CUDA bench cases' timing (cuda.h): CUDA events around each call on the default stream. */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "cuda.h"

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

float bench_cuda_median_ms(int warmup, int repeat, int (*run)(void *), void *ctx)
{
    float *t = calloc((size_t)repeat, sizeof *t), ms = -1.0f;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    int rc = 0;
    for (int r = -warmup; r < repeat && t && rc == 0; r++) {
        cudaEventRecord(e0, 0);
        rc = run(ctx);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        if (r >= 0)
            cudaEventElapsedTime(&t[r], e0, e1);
    }
    const cudaError_t err = cudaDeviceSynchronize(); /* a kernel's fault surfaces here */
    if (err != cudaSuccess)
        fprintf(stderr, "flashc-bench: %s\n", cudaGetErrorString(err));
    else if (rc == 0 && t) {
        qsort(t, (size_t)repeat, sizeof *t, cmp_float);
        ms = t[repeat / 2];
    }
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    free(t);
    return ms;
}
