/*
 * The InfiniCore face end to end on INFINI_DEVICE_NVIDIA: infinirtMalloc gives CUDA memory while
 * NVIDIA is the current device type (host memory while the CPU is: the CPU stays the CPU), the
 * handle's descriptors run on the CUDA backend, streams are infinirt streams.
 *   - tests/infiniop's harness on the GPU: every element against the independent reference, gaps
 *     of strided outputs untouched, fully hidden batches exactly 0, repeated runs bit-identical;
 *   - one problem on an NVIDIA handle and on a CPU handle in the same process: within twice the
 *     §0.4 tolerance of each other;
 *   - refusals: a wide mask dtype (narrowed on the host) at Create, host operands for an NVIDIA
 *     descriptor and device operands for a CPU one at the call, a foreign stream.
 * Skips (77) without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "common/rng.h"
#include "gpu_case.h"
#include "harness.h"

static void harness_cases(void)
{
    const tc_dtype dts[2] = {TC_F16, TC_BF16};
    const ifa_layout lays[4] = {LAY_CONTIG, LAY_GAPS, LAY_PERMUTED, LAY_NEGATIVE};
    for (int k = 0; k < 8; k++) {
        ifa_case c = ifa_case_default();
        c.dtype = dts[k % 2], c.layout = lays[k / 2];
        c.B = 2, c.Nq = 4, c.Nkv = k % 3 ? 2 : 4, c.Sq = 33 + 7 * k, c.Skv = 70 + 9 * k, c.D = k < 4 ? 64 : 128;
        c.Dv = k == 3 ? 32 : 0;
        c.mask_rank = k % 3, c.mask_dtype = k % 2 ? INFINI_DTYPE_U8 : INFINI_DTYPE_BOOL, c.hide_batch0 = k == 5;
        c.runtime = true, c.repeat = true;
        c.seed = 900 + (uint64_t)k;
        char name[96];
        snprintf(name, sizeof name, "NVIDIA %s layout %d Nkv %d D %d mask rank %d", tc_dtype_name(c.dtype), (int)c.layout,
                 c.Nkv, c.D, c.mask_rank);
        ifa_run_case(name, &c);
    }
}

/* One (B, N, S, D) fp16 problem with a (B, Skv) BOOL mask on one handle's device. */
typedef struct problem {
    infiniopHandle_t h;
    infiniopTensorDescriptor_t d[5];
    void *buf[5];
    size_t bytes[5];
} problem;

enum { B = 2, NH = 4, SQ = 50, SKV = 77, D = 64 };

static void problem_make(problem *p, infiniDevice_t dev, const void *const host[5], infiniDtype_t mask_dtype)
{
    memset(p, 0, sizeof *p);
    const bool set = infinirtSetDevice(dev, 0) == INFINI_STATUS_SUCCESS;
    TC_CHECK(set, "infinirtSetDevice(%d): %s", (int)dev, set ? "" : fc_last_error());
    const bool made = infiniopCreateHandle(&p->h) == INFINI_STATUS_SUCCESS;
    TC_CHECK(made, "infiniopCreateHandle: %s", made ? "" : fc_last_error());
    const size_t sq[4] = {B, NH, SQ, D}, skv[4] = {B, NH, SKV, D}, m[2] = {B, SKV};
    const size_t *shape[5] = {sq, sq, skv, skv, m};
    for (int x = 0; x < 5; x++) {
        const int rank = x == 4 ? 2 : 4;
        ptrdiff_t st[4];
        size_t n = 1;
        for (int k = rank - 1; k >= 0; k--)
            st[k] = (ptrdiff_t)n, n *= shape[x][k];
        infiniopCreateTensorDescriptor(&p->d[x], (size_t)rank, shape[x], st, x == 4 ? mask_dtype : INFINI_DTYPE_F16);
        p->bytes[x] = n * (x == 4 ? (mask_dtype == INFINI_DTYPE_BOOL ? 1 : 4) : 2);
        infinirtMalloc(&p->buf[x], p->bytes[x]);
        infinirtMemcpy(p->buf[x], host[x], p->bytes[x], INFINIRT_MEMCPY_H2D);
    }
    TC_CHECK(gc_is_device_memory(p->buf[1]) == (dev == INFINI_DEVICE_NVIDIA), "infinirtMalloc on device type %d gives %s memory",
             (int)dev, dev == INFINI_DEVICE_NVIDIA ? "CUDA device" : "host");
}

static void problem_free(problem *p)
{
    for (int x = 0; x < 5; x++) {
        infinirtFree(p->buf[x]);
        infiniopDestroyTensorDescriptor(p->d[x]);
    }
    infiniopDestroyHandle(p->h);
}

static char run_msg[512]; /* the message of problem_run's failing call */

static infiniStatus_t problem_run(problem *p, void *stream, void *const ops[5])
{
    infiniopFlashAttentionDescriptor_t fa = NULL;
    infiniStatus_t st = infiniopCreateFlashAttentionDescriptor(p->h, &fa, p->d[0], p->d[1], p->d[2], p->d[3], p->d[4]);
    size_t ws = 0;
    void *w = NULL;
    if (st == INFINI_STATUS_SUCCESS)
        infiniopGetFlashAttentionWorkspaceSize(fa, &ws);
    if (st == INFINI_STATUS_SUCCESS && ws)
        infinirtMalloc(&w, ws);
    if (st == INFINI_STATUS_SUCCESS)
        st = infiniopFlashAttention(fa, w, ws, ops[0], ops[1], ops[2], ops[3], ops[4], stream);
    if (st == INFINI_STATUS_SUCCESS)
        st = infinirtStreamSynchronize(stream);
    snprintf(run_msg, sizeof run_msg, "%s", st == INFINI_STATUS_SUCCESS ? "" : fc_last_error());
    if (w)
        infinirtFree(w);
    if (fa)
        infiniopDestroyFlashAttentionDescriptor(fa);
    return st;
}

static void gpu_against_cpu(void)
{
    tc_context("one problem on NVIDIA and on the CPU");
    unsigned char *host[5], *res[2];
    const size_t nq = (size_t)B * NH * SQ * D, nkv = (size_t)B * NH * SKV * D;
    const size_t n[5] = {nq, nq, nkv, nkv, (size_t)B * SKV};
    tc_rng rng = tc_rng_seed(77);
    for (int x = 0; x < 5; x++) {
        host[x] = malloc(n[x] * 2);
        for (size_t i = 0; i < n[x]; i++) {
            if (x == 4)
                host[x][i] = (unsigned char)tc_rng_bool(&rng, 0.3);
            else
                tc_store(TC_F16, host[x], (int64_t)i, tc_rng_uniform(&rng, -1, 1));
        }
    }
    problem p[2];
    const infiniDevice_t devs[2] = {INFINI_DEVICE_NVIDIA, INFINI_DEVICE_CPU};
    for (int k = 0; k < 2; k++) {
        problem_make(&p[k], devs[k], (const void *const *)host, INFINI_DTYPE_BOOL);
        infinirtStream_t s = NULL;
        infinirtStreamCreate(&s);
        const infiniStatus_t st = problem_run(&p[k], s, p[k].buf);
        TC_CHECK(st == INFINI_STATUS_SUCCESS, "device %d: status %d: %s", (int)devs[k], (int)st, run_msg);
        infinirtStreamDestroy(s);
        res[k] = malloc(p[k].bytes[0]);
        infinirtMemcpy(res[k], p[k].buf[0], p[k].bytes[0], INFINIRT_MEMCPY_D2H);
    }
    gc_compare("out", TC_F16, res[0], res[1], (int64_t)nq, tc_tol_out(TC_F16), 1.0);

    /* refusals: operands in the other device's memory, a foreign stream, a wide mask */
    void *swapped[5] = {p[1].buf[0], p[0].buf[1], p[0].buf[2], p[0].buf[3], p[0].buf[4]};
    infinirtSetDevice(INFINI_DEVICE_NVIDIA, 0);
    infiniStatus_t st = problem_run(&p[0], NULL, swapped);
    TC_CHECK(st == INFINI_STATUS_BAD_PARAM && strstr(run_msg, "host memory"),
             "host memory for an NVIDIA descriptor: %s", run_msg);
    int not_a_stream;
    st = problem_run(&p[0], &not_a_stream, p[0].buf);
    TC_CHECK(st == INFINI_STATUS_BAD_PARAM && strstr(run_msg, "stream"),
             "a foreign stream for an NVIDIA descriptor: %s", run_msg);
    void *swapped_cpu[5] = {p[1].buf[0], p[0].buf[1], p[1].buf[2], p[1].buf[3], p[1].buf[4]};
    infinirtSetDevice(INFINI_DEVICE_CPU, 0);
    st = problem_run(&p[1], NULL, swapped_cpu);
    TC_CHECK(st == INFINI_STATUS_BAD_PARAM && strstr(run_msg, "device memory"),
             "device memory for a CPU descriptor: %s", run_msg);
    for (int k = 0; k < 2; k++) {
        infinirtSetDevice(devs[k], 0);
        problem_free(&p[k]);
        free(res[k]);
    }
    unsigned char *wide = calloc(n[4], 4);
    const void *with_wide[5] = {host[0], host[1], host[2], host[3], wide};
    problem w;
    problem_make(&w, INFINI_DEVICE_NVIDIA, with_wide, INFINI_DTYPE_I32);
    st = problem_run(&w, NULL, w.buf);
    TC_CHECK(st == INFINI_STATUS_BAD_TENSOR_DTYPE && strstr(run_msg, "NVIDIA"),
             "an I32 mask on NVIDIA: %s", run_msg);
    problem_free(&w);
    free(wide);
    for (int x = 0; x < 5; x++)
        free(host[x]);
}

int main(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("test_cuda_infiniop: no CUDA device; skipped\n");
        return TC_SKIP;
    }
    int counts[INFINI_DEVICE_TYPE_COUNT] = {0};
    infinirtGetAllDeviceCount(counts);
    TC_CHECK(counts[INFINI_DEVICE_NVIDIA] == count && counts[INFINI_DEVICE_CPU] == 1,
             "device counts: NVIDIA %d (want %d), CPU %d", counts[INFINI_DEVICE_NVIDIA], count, counts[INFINI_DEVICE_CPU]);
    gpu_against_cpu();
    infinirtSetDevice(INFINI_DEVICE_NVIDIA, 0); /* the harness's handle is made on first use */
    harness_cases();
    return tc_summary("test_cuda_infiniop");
}
