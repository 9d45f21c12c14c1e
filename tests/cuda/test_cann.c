/*
 * The CANN face end to end on the GPU: tensors in aclrtMalloc'ed CUDA memory, the FlashAttention
 * operators' two phases on an aclrtStream, results read back with aclrtMemcpy — the harness of
 * tests/cann unchanged.  Every case runs
 *   - on the CPU runtime (FLASHC_DEVICE=cpu) in a child process forked before CUDA starts;
 *   - on the GPU twice: bit-identical, and within twice the §0.4 tolerance of the CPU runtime's
 *     result (gaps of strided outputs included: equal bits);
 *   - on the GPU through fa_run_case: against the independent reference, every element.
 * A case the GPU does not cover (fp32 operands) must either be refused in the first phase with
 * 561000 and a message naming the CUDA backend, or match the CPU.  IncreFlashAttention with
 * kvPaddingSize (a device tensor written after the first phase, read by the face in the second)
 * on the GPU against the reference: the read waits for the stream, and the per-batch windows it
 * gives reach the kernel.  IncreFlashAttention over a paged cache with a bad block-table entry,
 * which the GPU finds after the second phase is queued: 161002 from the call that queued it
 * (single-use), from the next run or from aclDestroyAclOpExecutor (repeatable).
 * SparseFlashAttention and its grad (the sparse forward and backward) against the reference.
 * Skips (77) without a GPU.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "fa/harness_case.h"
#include "ifa/ifa_harness.h"
#include "ifa/ifa_run.h"
#include "sfa/sfa_harness.h"
#include "gpu_case.h"

enum { MAX_CASES = 16, SLOT = 8 << 20 };

typedef struct fa_gpu_case {
    const char *name;
    fa_case c;
    bool may_refuse; /* a feature the GPU may not cover yet */
} fa_gpu_case;

static int make_cases(fa_gpu_case *out)
{
    int n = 0;
    fa_case c = fa_case_default();
    c.layout = "BSND", c.dtype = TC_F16, c.B = 2, c.N1 = 4, c.N2 = 2, c.D = 64, c.S1 = 37, c.S2 = 45, c.seed = 11;
    out[n++] = (fa_gpu_case){"V2 BSND fp16 GQA D=64", c, false};
    c = fa_case_default();
    c.layout = "BNSD", c.dtype = TC_BF16, c.strides = ST_GAPS, c.B = 1, c.N1 = 2, c.N2 = 2, c.D = 128, c.S1 = 65,
    c.S2 = 80, c.seed = 12;
    out[n++] = (fa_gpu_case){"V2 BNSD bf16 strided views D=128", c, false};
    c = fa_case_default();
    c.fn = FA_V1, c.layout = "SBH", c.dtype = TC_F16, c.B = 1, c.N1 = 1, c.N2 = 1, c.D = 128, c.S1 = 256, c.S2 = 256;
    c.scale = 0.088388, c.mask_rank = 2, c.mask_dims[0] = 256, c.mask_dims[1] = 256, c.mask_u8 = true;
    c.mask_density = 0.1, c.band = true, c.pre = 65536, c.next = 65536, c.seed = 13;
    out[n++] = (fa_gpu_case){"V1 the seed sample's shape, SBH fp16 with an element mask", c, false};
    c = fa_case_default();
    c.fn = FA_V3, c.layout = "BSH", c.dtype = TC_BF16, c.B = 2, c.N1 = 2, c.N2 = 1, c.D = 64, c.S1 = 100, c.S2 = 100;
    fa_mask_compressed(&c, false);
    c.sparse_mode = 3, c.seed = 14;
    out[n++] = (fa_gpu_case){"V3 BSH bf16 causal (mode 3) MQA", c, false};
    c = fa_case_default();
    const int s1[] = {3, 0, 5, 2, 17}, s2[] = {4, 2, 5, 0, 33};
    c.fn = FA_VARLEN, c.layout = "TND", c.dtype = TC_F16, c.B = 5, c.N1 = 4, c.N2 = 2, c.D = 64, c.Dv = 32, c.seed = 15;
    memcpy(c.s1, s1, sizeof s1), memcpy(c.s2, s2, sizeof s2);
    out[n++] = (fa_gpu_case){"VarLen TND fp16 Dv != D, empty batches", c, false};
    c.fn = FA_V5, c.dtype = TC_BF16, c.Dv = 0, c.same_as_input = true, c.sink = 1, c.seed = 16;
    fa_mask_compressed(&c, true);
    c.sparse_mode = 4, c.band = true, c.pre = 3, c.next = 2;
    out[n++] = (fa_gpu_case){"V5 TND bf16 band (mode 4) with a sink", c, false};
    c = fa_case_default();
    c.dtype = TC_F16, c.B = 2, c.N1 = 2, c.N2 = 2, c.D = 32, c.S1 = 24, c.S2 = 40, c.keep_prob = 0.8, c.seed = 17;
    c.pse_rank = 4, c.pse_dims[0] = 2, c.pse_dims[1] = 2, c.pse_dims[2] = 24, c.pse_dims[3] = 40;
    out[n++] = (fa_gpu_case){"V2 BNSD fp16 pse and dropout", c, false};
    c = fa_case_default();
    c.layout = "BSND", c.dtype = TC_F16, c.strides = ST_REVERSED, c.B = 1, c.N1 = 2, c.N2 = 1, c.D = 256, c.S1 = 130,
    c.S2 = 70, c.seed = 18;
    fa_mask_shape(&c, 4, 1, 1, 130, 70);
    out[n++] = (fa_gpu_case){"V2 BSND fp16 D=256 reversed strides, [1,1,S1,S2] mask", c, false};
    c = fa_case_default();
    c.B = 1, c.N1 = 2, c.N2 = 2, c.D = 32, c.S1 = 16, c.S2 = 16, c.seed = 19; /* FLOAT32 */
    out[n++] = (fa_gpu_case){"V2 BNSD fp32", c, true};
    const int r1[] = {5, 2, 0, 7}, r2[] = {5, 9, 3, 4};
    c = fa_case_default();
    c.fn = FA_V5, c.layout = "TND", c.dtype = TC_F16, c.B = 4, c.N1 = 4, c.N2 = 2, c.D = 16, c.Dr = 16, c.seed = 20;
    memcpy(c.s1, r1, sizeof r1), memcpy(c.s2, r2, sizeof r2);
    out[n++] = (fa_gpu_case){"V5 TND fp16 with rope", c, false};
    return n;
}

/* One case's outputs as the library left them (whole allocations, gaps included). */
typedef struct images {
    aclnnStatus st;
    char msg[256];
    size_t bytes[3];
    unsigned char img[]; /* out, softmax max, softmax sum back to back */
} images;

static void run_images(const fa_case *c, images *im)
{
    fa_run r;
    fa_setup(&r, c);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    void *wsp = NULL;
    im->st = fa_case_prepare(&r, &ws, &ex);
    if (im->st == ACLNN_SUCCESS && ws > 0 && aclrtMalloc(&wsp, ws, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        abort();
    if (im->st == ACLNN_SUCCESS) {
        aclrtStream s = NULL;
        aclrtCreateStream(&s);
        im->st = fa_case_execute(&r, wsp, ws, ex, s);
        if (aclrtSynchronizeStream(s) != ACL_SUCCESS && im->st == ACLNN_SUCCESS)
            im->st = -1;
        aclrtDestroyStream(s);
    }
    snprintf(im->msg, sizeof im->msg, "%s", im->st ? aclGetRecentErrMsg() : "");
    if (wsp)
        aclrtFree(wsp);
    const dev_tensor *outs[3] = {&r.tout, &r.tmax, &r.tsum};
    size_t at = 0;
    for (int k = 0; k < 3; k++) {
        unsigned char *img = outs[k]->dev ? dt_download(outs[k]) : NULL;
        im->bytes[k] = img && at + outs[k]->bytes <= SLOT - sizeof *im ? outs[k]->bytes : 0;
        memcpy(im->img + at, img, im->bytes[k]);
        at += im->bytes[k];
        free(img);
    }
    fa_teardown(&r);
}

/* The CPU runtime's images of every case, computed in a child that never starts CUDA. */
static bool cpu_images(const fa_gpu_case *cases, int n, unsigned char *shared)
{
    const pid_t pid = fork();
    if (pid == 0) {
        setenv("FLASHC_DEVICE", "cpu", 1);
        aclInit(NULL);
        aclrtSetDevice(0);
        for (int k = 0; k < n; k++)
            run_images(&cases[k].c, (images *)(shared + (size_t)k * SLOT));
        _exit(0);
    }
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void compare(const char *what, const fa_case *c, const images *gpu, const images *cpu)
{
    const tc_dtype t[3] = {c->dtype, TC_F32, TC_F32};
    const tc_tol tol[3] = {tc_tol_out(c->dtype), tc_tol_max(), tc_tol_sum()};
    static const char *const names[3] = {"out", "softmax max", "softmax sum"};
    size_t at = 0;
    for (int k = 0; k < 3; k++) {
        char label[64];
        snprintf(label, sizeof label, "%s %s", what, names[k]);
        if (TC_CHECK(gpu->bytes[k] == cpu->bytes[k], "%s: %zu bytes, CPU %zu", label, gpu->bytes[k], cpu->bytes[k]))
            gc_compare(label, t[k], gpu->img + at, cpu->img + at, (int64_t)(gpu->bytes[k] / tc_dtype_size(t[k])), tol[k], 1.0);
        at += gpu->bytes[k];
    }
}

static void run_case(const fa_gpu_case *g, const images *cpu, images *a, images *b)
{
    tc_context("%s", g->name);
    TC_CHECK(cpu->st == ACLNN_SUCCESS, "the CPU runtime failed: %d %s", cpu->st, cpu->msg);
    run_images(&g->c, a);
    if (g->may_refuse && a->st == ACLNN_ERR_INNER) {
        TC_CHECK(strstr(a->msg, "CUDA") != NULL, "the refusal names the CUDA backend: %s", a->msg);
        printf("  %s: refused on the GPU: %s\n", g->name, a->msg);
        return;
    }
    if (!TC_CHECK(a->st == ACLNN_SUCCESS, "the GPU run returned %d: %s", a->st, a->msg))
        return;
    compare("GPU vs CPU runtime", &g->c, a, cpu);
    run_images(&g->c, b);
    size_t total = a->bytes[0] + a->bytes[1] + a->bytes[2];
    TC_CHECK(b->st == ACLNN_SUCCESS && memcmp(a->img, b->img, total) == 0, "a second GPU run is bit-identical");
    fa_run_case(g->name, &g->c); /* against the reference, every element */
}

static void decode_left_padding(void)
{
    const tc_dtype dts[2] = {TC_F16, TC_BF16};
    for (int k = 0; k < 2; k++) {
        ifa_case c = ifa_case_default();
        c.dtype = dts[k], c.B = 3, c.D = 64, c.S[0] = 40, c.act_count = 3, c.L[0] = 6, c.L[1] = 33, c.L[2] = 0;
        c.left_pad = true, c.pad = k ? 7 : 3, c.mask_rank = 2, c.pse = k == 1, c.seed = 30 + (uint64_t)k;
        ifa_run_case(k ? "IFA bf16 kvPaddingSize 7, mask, pse" : "IFA fp16 kvPaddingSize 3, mask", &c, NULL);
    }
}

static void expect_blocktable(aclnnStatus st, const char *fn, const char *what)
{
    const char *msg = aclGetRecentErrMsg();
    TC_CHECK(st == ACLNN_ERR_PARAM_INVALID && msg && strstr(msg, fn) == msg && strstr(msg, "blocktable") &&
                 strstr(msg, "[1][1]"),
             "%s: expected 161002 from %s naming blocktable [1][1], got %d: %s", what, fn, st, msg ? msg : "(none)");
}

/* A used entry of batch 1 out of range: the decode kernel finds it on the GPU. */
static void decode_bad_block_table(void)
{
    ifa_case c = ifa_case_default();
    c.form = IFA_PAGED4, c.block_size = 4, c.W = 3, c.act_count = 2, c.L[0] = 12, c.L[1] = 5;
    static const char run_fn[] = "aclnnIncreFlashAttentionV4";
    for (int repeatable = 0; repeatable < 2; repeatable++) {
        tc_context("IFA paged, a bad block-table entry, %s executor", repeatable ? "a repeatable" : "a single-use");
        ifa_run r;
        ifa_build(&r, &c);
        aclOpExecutor *ex = NULL;
        uint64_t ws = 0;
        void *w = NULL;
        const int32_t bad = r.blocks + 3;
        bool ok = TC_CHECK(ifa_first_phase(&r, &ws, &ex) == ACLNN_SUCCESS, "first phase: %s", aclGetRecentErrMsg()) &&
                  TC_CHECK(aclrtMemcpy((int32_t *)r.tbt.dev + c.W + 1, sizeof bad, &bad, sizeof bad,
                                       ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS, "writing the entry") &&
                  TC_CHECK(!ws || aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "workspace");
        if (ok && !repeatable) {
            expect_blocktable(aclnnIncreFlashAttentionV4(w, ws, ex, NULL), run_fn, "the call that queued the run");
        } else if (ok) {
            aclSetAclOpExecutorRepeatable(ex);
            aclnnStatus st = aclnnIncreFlashAttentionV4(w, ws, ex, NULL);
            TC_CHECK(st == ACLNN_SUCCESS, "a repeatable executor's run is queued: %s", aclGetRecentErrMsg());
            aclrtSynchronizeDevice();
            expect_blocktable(aclnnIncreFlashAttentionV4(w, ws, ex, NULL), run_fn, "the next run");
            st = aclnnIncreFlashAttentionV4(w, ws, ex, NULL);
            TC_CHECK(st == ACLNN_SUCCESS, "reported once, then queued again: %s", aclGetRecentErrMsg());
            expect_blocktable(aclDestroyAclOpExecutor(ex), "aclDestroyAclOpExecutor", "the destroyed executor's last run");
        }
        aclrtFree(w);
        ifa_free(&r);
    }
}

/* SparseFlashAttention (and its grad) through the face on the GPU against the reference: BSND and TND, whose
 * runs bind the actual lengths the face reads (the run's own facts), causal mode 3, rope, MQA,
 * both index widths.  (PA_BSND is not among them: the face binds its host copy of the block
 * table, which the CUDA backend refuses as host memory.) */
static void sparse_face(void)
{
    sfa_case c = sfa_case_default();
    c.D = 64, c.seed = 40;
    sfa_run_case("SFA BSND fp16 on the GPU", &c);
    c = sfa_case_default();
    c.lq = c.lkv = "TND", c.dtype = TC_BF16, c.mode = 3, c.Dr = 16, c.idx64 = true, c.seed = 41;
    sfa_run_case("SFA TND bf16 causal, rope, INT64 indices", &c);
    c = sfa_case_default();
    c.lq = "BSND", c.lkv = "TND", c.lens_q = true, c.N1 = 8, c.N2 = 1, c.K = 9, c.bs = 5, c.Dv = 32, c.seed = 42;
    sfa_run_case("SFA BSND query over TND keys, MQA 8, Dv 32", &c);
    /* SparseFlashAttentionGrad on the forward's own output and statistics */
    c = sfa_case_default();
    c.D = 64, c.backward = true, c.seed = 43;
    sfa_run_case("SFAG BSND fp16 on the GPU", &c);
    c = sfa_case_default();
    c.lq = c.lkv = "TND", c.dtype = TC_BF16, c.mode = 3, c.Dr = 16, c.idx64 = true, c.backward = true, c.seed = 44;
    sfa_run_case("SFAG TND bf16 causal, rope, INT64 indices", &c);
    c = sfa_case_default();
    c.lens_q = c.lens_kv = true, c.N1 = 16, c.N2 = 1, c.D = 512, c.Dr = 64, c.Dv = 512, c.K = 4, c.bs = 8,
    c.dtype = TC_BF16, c.mode = 3, c.backward = true, c.seed = 45;
    sfa_run_case("SFAG MLA 512 + 64, Dv 512, MQA 16, causal", &c);
}

int main(void)
{
    static fa_gpu_case cases[MAX_CASES];
    const int n = make_cases(cases);
    unsigned char *shared = mmap(NULL, (size_t)n * SLOT, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED || !cpu_images(cases, n, shared)) {
        fprintf(stderr, "test_cuda_cann: the CPU runtime's child failed\n");
        return 1;
    }
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("test_cuda_cann: no CUDA device; skipped\n");
        return TC_SKIP;
    }
    setenv("FLASHC_DEVICE", "cuda", 1);
    const bool ready = aclInit(NULL) == ACL_SUCCESS && aclrtSetDevice(0) == ACL_SUCCESS;
    TC_CHECK(ready, "aclrtSetDevice(0): %s", ready ? "" : aclGetRecentErrMsg());
    images *a = malloc(SLOT), *b = malloc(SLOT);
    for (int k = 0; k < n; k++)
        run_case(&cases[k], (const images *)(shared + (size_t)k * SLOT), a, b);
    decode_left_padding();
    decode_bad_block_table();
    sparse_face();
    free(a), free(b);
    aclrtResetDevice(0);
    aclFinalize();
    return tc_summary("test_cuda_cann");
}
