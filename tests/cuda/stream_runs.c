#include "stream_runs.h"

#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "flashc.h"

void *sr_device_random(size_t bytes, fc_dtype t, tc_rng *r)
{
    uint16_t *h = malloc(bytes);
    void *d = NULL;
    for (size_t i = 0; h && i < bytes / 2; i++) {
        const float x = (float)tc_rng_uniform(r, -2, 2);
        h[i] = t == FC_BF16 ? fc_f32_to_bf16(x) : fc_f32_to_f16(x);
    }
    if (!h || cudaMalloc(&d, bytes) != cudaSuccess || cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
        d = NULL;
    free(h);
    return d;
}

void *sr_host_copy(const void *d, size_t bytes)
{
    void *h = malloc(bytes);
    if (h && cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
        memset(h, 0, bytes);
    return h;
}

void *sr_run_alone(const fc_plan *plan, const fc_bindings *b, void *ws, size_t ws_bytes, size_t out_bytes, cudaStream_t s)
{
    cudaMemset(b->out, 0xFF, out_bytes);
    const fc_status st = fc_plan_execute_on(plan, b, ws, ws_bytes, s);
    TC_CHECK(st == FC_OK, "a run alone: %s (%s)", fc_status_name(st), fc_last_error());
    TC_CHECK(cudaStreamSynchronize(s) == cudaSuccess, "a run alone completes");
    return sr_host_copy(b->out, out_bytes);
}

void sr_two_streams(const fc_plan *plan, const fc_bindings *ba, const fc_bindings *bb, void *ws[2], size_t ws_bytes,
                    size_t out_bytes, int rounds, bool outputs_differ, cudaStream_t s[2])
{
    void *ra = sr_run_alone(plan, ba, ws[0], ws_bytes, out_bytes, s[0]);
    void *rb = sr_run_alone(plan, bb, ws[1], ws_bytes, out_bytes, s[0]);
    if (outputs_differ)
        TC_CHECK(ra && rb && memcmp(ra, rb, out_bytes) != 0, "the two runs' outputs differ (their data does)");
    cudaMemset(ba->out, 0xFF, out_bytes), cudaMemset(bb->out, 0xFF, out_bytes);
    cudaDeviceSynchronize();
    fc_status st = FC_OK;
    for (int rep = 0; rep < rounds && st == FC_OK; rep++) { /* interleaved, never waiting in between */
        st = fc_plan_execute_on(plan, ba, ws[0], ws_bytes, s[0]);
        if (st == FC_OK)
            st = fc_plan_execute_on(plan, bb, ws[1], ws_bytes, s[1]);
    }
    TC_CHECK(st == FC_OK, "concurrent runs queued: %s (%s)", fc_status_name(st), fc_last_error());
    TC_CHECK(cudaDeviceSynchronize() == cudaSuccess, "concurrent runs complete");
    void *ga = sr_host_copy(ba->out, out_bytes), *gb = sr_host_copy(bb->out, out_bytes);
    TC_CHECK(ra && ga && memcmp(ra, ga, out_bytes) == 0, "stream 1's output equals its run alone, bit for bit");
    TC_CHECK(rb && gb && memcmp(rb, gb, out_bytes) == 0, "stream 2's output equals its run alone, bit for bit");
    free(ra), free(rb), free(ga), free(gb);
}
