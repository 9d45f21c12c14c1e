/*
 * A CUDA run's own per-batch facts (src/cuda/plan_facts.h), derived from its lengths a fixed
 * chunk at a time on the host — over 150 packed (varlen) batches, three chunks:
 *   - refused before anything is queued, naming the batch, when a record in the last chunk breaks
 *     the plan's rule or a length is out of range (no GPU needed: a queued copy would have failed
 *     with the driver's error instead; with one, the workspace keeps its bytes);
 *   - with a GPU: copied into the workspace bit for bit as fc_batch_facts makes them at once, with
 *     the reach (largest token offset + length per side) the sm_90a forward maps;
 *   - the planned facts need neither;
 * and none of it allocates host memory (common/alloc_count.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "common/alloc_count.h"
extern "C" {
#include "common/check.h"
#include "common/rng.h"
#include "core/batch.h"
#include "core/error.h"
}
#include "cuda/plan_facts.h"

enum { B = 150 };

/* The forward's rule: the planned query rows and lengths, kv lengths free. */
static fc_status same_queries(const void *, int64_t b, const fc_batch &planned, const fc_batch &own)
{
    if (own.q_rows != planned.q_rows || own.sq != planned.sq)
        return fc_fail(FC_ERR_INVALID_ARG, "batch %lld: query rows differ from the plan's", (long long)b);
    return FC_OK;
}

struct Case {
    fc_batch_rule rule;
    int64_t sq[B], skv[B];
    fc_batch planned[B];
    fc_cuda_facts facts;
};

static void make_case(Case *c, tc_rng *r)
{
    memset(c, 0, sizeof *c);
    c->rule.B = B;
    c->rule.q.packed = c->rule.kv.packed = true;
    c->rule.window.enabled = true, c->rule.window.left = 40, c->rule.window.align = FC_ALIGN_BOTTOM_RIGHT;
    for (int b = 0; b < B; b++)
        c->sq[b] = tc_rng_int(r, 0, 90), c->skv[b] = tc_rng_int(r, 0, 120);
    const fc_lengths planned = {c->sq, c->skv, NULL};
    fc_batch_totals tot;
    fc_batch_facts(&c->rule, &planned, c->planned, &tot);
    c->facts.planned = c->planned;
}

/* A run's status, its allocations and the error text. */
static fc_status run_own(const Case &c, const fc_lengths *len, void *ws, fc_batch **out, fc_cuda_reach *reach, long *allocs)
{
    fc_problem run;
    memset(&run, 0, sizeof run);
    run.B = B;
    run.batch = (fc_batch *)c.planned;
    const fc_cuda_lengths lens = {&c.rule, len};
    const long at = tc_allocations();
    const fc_status st = fc_cuda_facts_for_run(&c.facts, &run, lens, NULL, same_queries, ws, 0, "test", out, reach);
    *allocs = tc_allocations() - at;
    return st;
}

/* Runs refused in the last chunk: nothing queued, nothing allocated. */
static void refusals(const Case &c, void *ws, bool gpu)
{
    int64_t sq[B], skv[B];
    memcpy(sq, c.sq, sizeof sq), memcpy(skv, c.skv, sizeof skv);
    sq[140] += 1; /* query rows the plan's tile list was not made for */
    const fc_lengths bad_rows = {sq, skv, NULL};
    fc_batch *out = NULL;
    fc_cuda_reach reach;
    long allocs = 0;
    if (gpu)
        cudaMemset(ws, 0xAB, B * sizeof(fc_batch));
    fc_status st = run_own(c, &bad_rows, ws, &out, &reach, &allocs);
    TC_CHECK(st == FC_ERR_INVALID_ARG && strstr(fc_error_message(), "batch 140") && allocs == 0,
             "query rows the plan refuses in batch 140: %s (%s), %ld allocations", fc_status_name(st), fc_error_message(),
             allocs);
    sq[140] -= 1;
    skv[130] = -1;
    const fc_lengths bad_len = {sq, skv, NULL};
    st = run_own(c, &bad_len, ws, &out, &reach, &allocs);
    TC_CHECK(st == FC_ERR_INVALID_ARG && strstr(fc_error_message(), "batch 130") && allocs == 0,
             "a negative kv length in batch 130: %s (%s), %ld allocations", fc_status_name(st), fc_error_message(), allocs);
    st = run_own(c, &bad_len, NULL, &out, &reach, &allocs);
    TC_CHECK(st == FC_ERR_WORKSPACE, "own lengths without a workspace: %s", fc_status_name(st));
    if (gpu) {
        unsigned char host[B * sizeof(fc_batch)];
        TC_CHECK(cudaMemcpy(host, ws, sizeof host, cudaMemcpyDeviceToHost) == cudaSuccess, "the workspace reads back");
        size_t touched = 0;
        for (size_t i = 0; i < sizeof host; i++)
            touched += host[i] != 0xAB;
        TC_CHECK(touched == 0, "a refused run leaves the workspace alone (%zu bytes changed)", touched);
    }
}

/* The planned facts: the plan's device copy and reach, no work. */
static void planned(const Case &c)
{
    fc_batch *out = NULL;
    fc_cuda_reach reach = {};
    long allocs = 0;
    const fc_status st = run_own(c, NULL, NULL, &out, &reach, &allocs);
    TC_CHECK(st == FC_OK && out == c.facts.dev && reach.q == c.facts.reach.q && reach.kv == c.facts.reach.kv && allocs == 0,
             "the planned facts: %s, %ld allocations", fc_status_name(st), allocs);
}

/* A run with new kv lengths (the planned query lengths): the workspace holds fc_batch_facts' records. */
static void own_lengths(const Case &c, void *ws, tc_rng *r)
{
    int64_t skv[B], kv_sum = 0, q_sum = 0;
    for (int b = 0; b < B; b++)
        skv[b] = tc_rng_int(r, 0, 200), kv_sum += skv[b], q_sum += c.sq[b];
    const fc_lengths len = {c.sq, skv, NULL};
    fc_batch *out = NULL;
    fc_cuda_reach reach;
    long allocs = 0;
    (void)run_own(c, &len, ws, &out, &reach, &allocs); /* the runtime's first copy may set itself up */
    fc_status st = run_own(c, &len, ws, &out, &reach, &allocs);
    TC_CHECK(st == FC_OK && out == ws && allocs == 0, "a run's own lengths: %s (%s), %ld allocations", fc_status_name(st),
             fc_error_message(), allocs);
    TC_CHECK(reach.q == (q_sum > 1 ? q_sum : 1) && reach.kv == (kv_sum > 1 ? kv_sum : 1),
             "reach %lld/%lld, want %lld/%lld", (long long)reach.q, (long long)reach.kv, (long long)q_sum, (long long)kv_sum);
    static fc_batch want[B], got[B];
    fc_batch_totals tot;
    fc_batch_facts(&c.rule, &len, want, &tot);
    TC_CHECK(cudaDeviceSynchronize() == cudaSuccess && cudaMemcpy(got, ws, sizeof got, cudaMemcpyDeviceToHost) == cudaSuccess,
             "the workspace reads back");
    TC_CHECK(memcmp(got, want, sizeof got) == 0, "the workspace's records equal fc_batch_facts', bit for bit");
}

int main(void)
{
    static Case c;
    tc_rng r = tc_rng_seed(20261128u);
    make_case(&c, &r);
    int n = 0;
    const bool gpu = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    (void)cudaGetLastError();
    void *ws = NULL;
    if (gpu) {
        fc_problem p;
        memset(&p, 0, sizeof p);
        p.B = B, p.batch = c.planned;
        TC_CHECK(fc_cuda_facts_plan(&c.facts, &p, "test") == FC_OK, "the planned facts' device copy: %s", fc_error_message());
        TC_CHECK(cudaMalloc(&ws, fc_cuda_facts_bytes(&p)) == cudaSuccess, "a workspace");
    } else {
        static fc_batch device_stand_in; /* never read: no copy is queued without a GPU */
        c.facts.dev = &device_stand_in, c.facts.reach = kReachNothing;
        ws = &device_stand_in;
    }
    planned(c);
    refusals(c, ws, gpu);
    if (gpu) {
        own_lengths(c, ws, &r);
        cudaFree(ws);
        fc_cuda_facts_free(&c.facts);
    } else {
        printf("test_cuda_run_facts: no CUDA device; the refusals checked, the copies not\n");
    }
    return tc_summary("test_cuda_run_facts");
}
