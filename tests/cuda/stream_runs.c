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

static size_t total_bytes(const sr_outputs *o)
{
    size_t n = 0;
    for (int i = 0; i < o->n; i++)
        n += o->bytes[i];
    return n;
}

static void poison(const sr_outputs *o)
{
    for (int i = 0; i < o->n; i++)
        cudaMemset(o->at[i], 0xFF, o->bytes[i]);
}

/* The outputs' bytes on the host, one after another (zeros where a copy fails). */
static void *host_copies(const sr_outputs *o)
{
    unsigned char *h = malloc(total_bytes(o));
    for (size_t i = 0, at = 0; h && i < (size_t)o->n; at += o->bytes[i++])
        if (cudaMemcpy(h + at, o->at[i], o->bytes[i], cudaMemcpyDeviceToHost) != cudaSuccess)
            memset(h + at, 0, o->bytes[i]);
    return h;
}

static sr_outputs forward_output(const fc_bindings *b, size_t out_bytes)
{
    return (sr_outputs){.at = {b->out}, .bytes = {out_bytes}, .n = 1};
}

void *sr_run_alone_into(const fc_plan *plan, const fc_bindings *b, const sr_outputs *o, void *ws, size_t ws_bytes,
                        cudaStream_t s)
{
    poison(o);
    const fc_status st = fc_plan_execute_on(plan, b, ws, ws_bytes, s);
    TC_CHECK(st == FC_OK, "a run alone: %s (%s)", fc_status_name(st), fc_last_error());
    TC_CHECK(cudaStreamSynchronize(s) == cudaSuccess, "a run alone completes");
    return host_copies(o);
}

void *sr_run_alone(const fc_plan *plan, const fc_bindings *b, void *ws, size_t ws_bytes, size_t out_bytes, cudaStream_t s)
{
    const sr_outputs o = forward_output(b, out_bytes);
    return sr_run_alone_into(plan, b, &o, ws, ws_bytes, s);
}

void sr_two_streams_into(const fc_plan *plan, const fc_bindings *ba, const fc_bindings *bb, const sr_outputs *oa,
                         const sr_outputs *ob, void *ws[2], size_t ws_bytes, int rounds, bool outputs_differ,
                         cudaStream_t s[2])
{
    const size_t bytes = total_bytes(oa);
    void *ra = sr_run_alone_into(plan, ba, oa, ws[0], ws_bytes, s[0]);
    void *rb = sr_run_alone_into(plan, bb, ob, ws[1], ws_bytes, s[0]);
    TC_CHECK(total_bytes(ob) == bytes, "both runs write outputs of the same sizes");
    if (outputs_differ)
        TC_CHECK(ra && rb && memcmp(ra, rb, bytes) != 0, "the two runs' outputs differ (their data does)");
    poison(oa), poison(ob);
    cudaDeviceSynchronize();
    fc_status st = FC_OK;
    for (int rep = 0; rep < rounds && st == FC_OK; rep++) { /* interleaved, never waiting in between */
        st = fc_plan_execute_on(plan, ba, ws[0], ws_bytes, s[0]);
        if (st == FC_OK)
            st = fc_plan_execute_on(plan, bb, ws[1], ws_bytes, s[1]);
    }
    TC_CHECK(st == FC_OK, "concurrent runs queued: %s (%s)", fc_status_name(st), fc_last_error());
    TC_CHECK(cudaDeviceSynchronize() == cudaSuccess, "concurrent runs complete");
    void *ga = host_copies(oa), *gb = host_copies(ob);
    TC_CHECK(ra && ga && memcmp(ra, ga, bytes) == 0, "stream 1's outputs equal its run alone, bit for bit");
    TC_CHECK(rb && gb && memcmp(rb, gb, bytes) == 0, "stream 2's outputs equal its run alone, bit for bit");
    free(ra), free(rb), free(ga), free(gb);
}

void sr_two_streams(const fc_plan *plan, const fc_bindings *ba, const fc_bindings *bb, void *ws[2], size_t ws_bytes,
                    size_t out_bytes, int rounds, bool outputs_differ, cudaStream_t s[2])
{
    const sr_outputs oa = forward_output(ba, out_bytes), ob = forward_output(bb, out_bytes);
    sr_two_streams_into(plan, ba, bb, &oa, &ob, ws, ws_bytes, rounds, outputs_differ, s);
}
