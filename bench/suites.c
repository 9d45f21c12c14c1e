/*
 * The named suites.  A suite is a list of cases; a case is an operator kind + shape + options.
 * To add an operator: a bench_op_kind, its measure function in the op table (ops.c), and rows
 * here.  Sizes are chosen for a 2-core machine: the large suites take a few minutes, `demo`
 * under one.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

/* A case is CASE(shape, options...): the shape macros below give the designators, and optional
 * designators follow (e.g. .repeat = 3 to keep a demo case short). */
#define CASE(...) {__VA_ARGS__}
/* Forward, dense: dtype, batch, query heads, kv heads, length (Sq = Skv), head dim, causal. */
#define FWD(dt, b, n, nkv, s, d, causal_)                                                                 \
    .op = BENCH_OP_FORWARD, .dtype = dt, .batch = b, .q_heads = n, .kv_heads = nkv, .q_len = s, .kv_len = s, \
    .head_dim = d, .causal = causal_
/* Forward, packed varlen (TND): the per-batch lengths (query = key) follow as the last arguments. */
#define FWD_VARLEN(dt, n, nkv, d, causal_, ...)                                                         \
    .op = BENCH_OP_FORWARD, .dtype = dt, .q_heads = n, .kv_heads = nkv, .head_dim = d, .causal = causal_, \
    .lens = {__VA_ARGS__}

/* Backward: the forward's shapes (forward rows beside them in the suite). */
#define BWD(dt, b, n, nkv, s, d, causal_)                                                                 \
    .op = BENCH_OP_BACKWARD, .dtype = dt, .batch = b, .q_heads = n, .kv_heads = nkv, .q_len = s, .kv_len = s, \
    .head_dim = d, .causal = causal_
/* Decode: batch, query heads, kv heads, cache length, head dim, query dtype, cache dtype. */
#define DECODE(b, n, nkv, skv, d, dt, kvdt)                                                               \
    .op = BENCH_OP_DECODE, .dtype = dt, .kv_dtype = kvdt, .batch = b, .q_heads = n, .kv_heads = nkv, .q_len = 1, \
    .kv_len = skv, .head_dim = d
/* Sparse (MLA-style): op, dtype, query tokens Sq = Skv, query heads, kv heads, D, rope, Dv, top-k
 * blocks, block size; causal threshold on. */
#define SPARSE(op_, dt, s, n, nkv, d, dr, dv, k, bs)                                                      \
    .op = op_, .dtype = dt, .batch = 1, .q_heads = n, .kv_heads = nkv, .q_len = s, .kv_len = s, .head_dim = d, \
    .rope_dim = dr, .v_head_dim = dv, .topk = k, .block = bs, .causal = true

/* Ring attention (run under mpirun): dtype, heads, length, head dim, causal, zig-zag. */
#define RING(dt, n, s, d, causal_, zz)                                                                    \
    .op = BENCH_OP_RING, .dtype = dt, .batch = 1, .q_heads = n, .kv_heads = n, .q_len = s, .kv_len = s,     \
    .head_dim = d, .causal = causal_, .zigzag = zz, .repeat = 3

#define MIXED_8 512, 1536, 256, 3072, 1024, 768, 2048, 128 /* 9344 tokens, 128..3072 */
#define MIXED_4 256, 1024, 512, 128                        /* 1920 tokens */

static const bench_case prefill_fp32[] = {
    CASE(FWD(FC_F32, 1, 8, 8, 1024, 128, false)),
    CASE(FWD(FC_F32, 1, 8, 8, 2048, 128, false)),
    CASE(FWD(FC_F32, 1, 8, 8, 4096, 128, false)),
    CASE(FWD(FC_F32, 1, 8, 8, 4096, 128, true)),
    CASE(FWD(FC_F32, 1, 8, 8, 4096, 128, false), .bsnd = true), /* the layout of flash_attn_func */
    CASE(FWD(FC_F32, 1, 8, 8, 4096, 64, false)),
    CASE(FWD(FC_F32, 1, 8, 8, 4096, 64, true)),
    CASE(FWD(FC_F32, 4, 16, 16, 512, 128, false)),
};

static const bench_case prefill_fp16[] = {
    CASE(FWD(FC_F16, 1, 8, 8, 1024, 128, false)),
    CASE(FWD(FC_F16, 1, 8, 8, 4096, 128, false)),
    CASE(FWD(FC_F16, 1, 8, 8, 4096, 128, true)),
    CASE(FWD(FC_F16, 1, 8, 8, 4096, 64, false)),
};

static const bench_case prefill_bf16[] = {
    CASE(FWD(FC_BF16, 1, 8, 8, 1024, 128, false)),
    CASE(FWD(FC_BF16, 1, 8, 8, 4096, 128, false)),
    CASE(FWD(FC_BF16, 1, 8, 8, 4096, 128, true)),
    CASE(FWD(FC_BF16, 1, 8, 8, 4096, 64, false)),
};

static const bench_case causal[] = {
    CASE(FWD(FC_F32, 1, 8, 8, 1024, 128, true)),
    CASE(FWD(FC_F32, 1, 8, 8, 2048, 128, true)),
    CASE(FWD(FC_F32, 1, 8, 8, 4096, 128, true)),
    CASE(FWD(FC_F32, 1, 8, 8, 8192, 128, true), .repeat = 3),
    CASE(FWD(FC_F32, 1, 8, 8, 4096, 64, true)),
    CASE(FWD(FC_BF16, 1, 8, 8, 4096, 128, true)),
};

static const bench_case gqa[] = {
    CASE(FWD(FC_F32, 1, 32, 8, 2048, 128, false)),
    CASE(FWD(FC_F32, 1, 32, 8, 2048, 128, true)),
    CASE(FWD(FC_F32, 1, 32, 4, 2048, 128, false)),
    CASE(FWD(FC_F32, 1, 16, 1, 2048, 128, false)), /* multi-query */
    CASE(FWD(FC_BF16, 1, 32, 8, 2048, 128, true)),
};

static const bench_case varlen[] = {
    CASE(FWD_VARLEN(FC_F32, 8, 8, 128, false, MIXED_8)),
    CASE(FWD_VARLEN(FC_F32, 8, 8, 128, true, MIXED_8)),
    CASE(FWD_VARLEN(FC_BF16, 8, 8, 128, true, MIXED_8)),
    CASE(FWD_VARLEN(FC_F32, 32, 8, 128, true, MIXED_8)),
    CASE(FWD_VARLEN(FC_F32, 16, 16, 64, false, MIXED_4, 64, 2048, 32, 896)),
};

static const bench_case headdim[] = {
    CASE(FWD(FC_F32, 1, 8, 8, 2048, 64, false)),
    CASE(FWD(FC_F32, 1, 8, 8, 2048, 128, false)),
    CASE(FWD(FC_F32, 1, 8, 8, 2048, 256, false)),
    CASE(FWD(FC_F32, 1, 8, 8, 2048, 64, true)),
    CASE(FWD(FC_F32, 1, 8, 8, 2048, 128, true)),
    CASE(FWD(FC_F32, 1, 8, 8, 2048, 256, true)),
};

static const bench_case backward[] = {
    CASE(FWD(FC_F32, 1, 8, 8, 2048, 128, false)),
    CASE(BWD(FC_F32, 1, 8, 8, 2048, 128, false)),
    CASE(FWD(FC_F32, 1, 8, 8, 4096, 128, false), .repeat = 3),
    CASE(BWD(FC_F32, 1, 8, 8, 4096, 128, false), .repeat = 2),
    CASE(FWD(FC_F32, 1, 8, 8, 4096, 128, true), .repeat = 3),
    CASE(BWD(FC_F32, 1, 8, 8, 4096, 128, true), .repeat = 2),
    CASE(BWD(FC_F32, 1, 8, 8, 4096, 128, false), .repeat = 2, .bsnd = true),
    CASE(FWD(FC_BF16, 1, 8, 8, 2048, 128, true)),
    CASE(BWD(FC_BF16, 1, 8, 8, 2048, 128, true)),
    CASE(BWD(FC_F32, 1, 32, 8, 1024, 128, true)),
};

/* The decode shapes of the anchors: 32 query / 8 kv heads, D = 128. */
static const bench_case decode[] = {
    CASE(DECODE(1, 32, 8, 4096, 128, FC_F16, FC_F16)),
    CASE(DECODE(1, 32, 8, 4096, 128, FC_F16, FC_I8)),
    CASE(DECODE(1, 32, 8, 32768, 128, FC_F16, FC_F16)),
    CASE(DECODE(1, 32, 8, 131072, 128, FC_F16, FC_F16), .repeat = 3),
    CASE(DECODE(1, 32, 8, 32768, 128, FC_F16, FC_I8)),
    CASE(DECODE(16, 32, 8, 32768, 128, FC_F16, FC_F16), .repeat = 3),
    CASE(DECODE(64, 32, 8, 4096, 128, FC_F16, FC_F16), .repeat = 3),
    CASE(DECODE(16, 32, 8, 32768, 128, FC_F16, FC_I8), .repeat = 3),
    CASE(DECODE(16, 32, 8, 32768, 128, FC_BF16, FC_BF16), .repeat = 3),
    CASE(DECODE(4, 32, 8, 32768, 128, FC_F32, FC_F32), .repeat = 3), /* fp32 golden runs: 1 KB a key */
};

/* The SparseFlashAttentionGrad seed's shape (16 heads, one kv head, D = 512 + 64 rope, top-k 2048
 * positions in blocks) at a token count this machine finishes in minutes. */
static const bench_case sparse[] = {
    CASE(SPARSE(BENCH_OP_SPARSE_FWD, FC_BF16, 4096, 16, 1, 512, 64, 512, 32, 64), .repeat = 2),
    CASE(SPARSE(BENCH_OP_SPARSE_BWD, FC_BF16, 4096, 16, 1, 512, 64, 512, 32, 64), .repeat = 1),
    CASE(SPARSE(BENCH_OP_SPARSE_FWD, FC_F16, 4096, 16, 1, 512, 64, 512, 128, 16), .repeat = 2),
};

/* A quick tour at moderate sizes: under a minute on the 2-core reference machine. */
static const bench_case demo[] = {
    CASE(FWD(FC_F32, 1, 8, 8, 2048, 128, false), .repeat = 3),
    CASE(FWD(FC_F32, 1, 8, 8, 2048, 128, true), .repeat = 3),
    CASE(FWD(FC_F16, 1, 8, 8, 2048, 128, false), .repeat = 3),
    CASE(FWD(FC_BF16, 1, 8, 8, 2048, 128, true), .repeat = 3),
    CASE(FWD(FC_F32, 1, 32, 8, 1024, 128, true), .repeat = 3),
    CASE(FWD_VARLEN(FC_F32, 8, 8, 128, true, MIXED_4), .repeat = 3),
    CASE(FWD(FC_F32, 1, 8, 8, 2048, 64, false), .repeat = 3),
    CASE(FWD(FC_F32, 1, 8, 8, 1024, 256, false), .repeat = 3),
    CASE(BWD(FC_F32, 1, 8, 8, 1024, 128, true), .repeat = 2),
    CASE(DECODE(4, 32, 8, 16384, 128, FC_F16, FC_F16), .repeat = 3),
    CASE(DECODE(4, 32, 8, 16384, 128, FC_F16, FC_I8), .repeat = 3),
    CASE(SPARSE(BENCH_OP_SPARSE_FWD, FC_BF16, 1024, 16, 1, 512, 64, 512, 8, 64), .repeat = 2),
};

/* Tiny shapes over every path (dtypes, causal, GQA, varlen, odd sizes), for CI: seconds. */
static const bench_case smoke[] = {
    CASE(FWD(FC_F32, 2, 4, 4, 128, 64, false)),
    CASE(FWD(FC_F32, 1, 4, 2, 200, 128, true)),
    CASE(FWD(FC_F16, 1, 4, 4, 128, 64, true)),
    CASE(FWD(FC_BF16, 1, 4, 1, 96, 256, false)),
    CASE(FWD_VARLEN(FC_F32, 4, 2, 64, true, 17, 130, 1, 64)),
    CASE(FWD_VARLEN(FC_BF16, 2, 2, 32, false, 33, 5)),
    CASE(BWD(FC_F32, 1, 4, 2, 100, 64, true)),
    CASE(DECODE(2, 8, 2, 1000, 64, FC_F16, FC_I8)),
    CASE(SPARSE(BENCH_OP_SPARSE_FWD, FC_BF16, 100, 4, 1, 64, 16, 32, 4, 8)),
    CASE(SPARSE(BENCH_OP_SPARSE_BWD, FC_BF16, 100, 4, 1, 64, 16, 32, 4, 8)),
};

/* Small shapes of each kind, for counting retired instructions under emulation (tools/arm-insns.sh:
 * qemu-user runs each kernel set; one run of a case, not its time, is what is measured). */
static const bench_case emulated[] = {
    CASE(FWD(FC_F32, 1, 2, 2, 512, 128, false)),
    CASE(FWD(FC_F32, 1, 2, 2, 512, 128, true)),
    CASE(FWD(FC_F32, 1, 2, 2, 512, 64, false)),
    CASE(FWD(FC_F16, 1, 2, 2, 512, 128, false)),
    CASE(FWD(FC_BF16, 1, 2, 2, 512, 128, false)),
    CASE(FWD(FC_BF16, 1, 2, 2, 512, 128, true)),
    CASE(BWD(FC_F32, 1, 2, 2, 256, 128, true)),
    CASE(DECODE(1, 8, 2, 4096, 128, FC_F32, FC_F32)),
    CASE(DECODE(1, 8, 2, 4096, 128, FC_F16, FC_F16)),
    CASE(DECODE(1, 8, 2, 4096, 128, FC_BF16, FC_BF16)),
    CASE(DECODE(1, 8, 2, 4096, 128, FC_F16, FC_I8)),
};

static const bench_case ring[] = {
    CASE(RING(FC_BF16, 2, 16384, 128, true, true)),
    CASE(RING(FC_BF16, 2, 16384, 128, true, false)),
    CASE(RING(FC_BF16, 2, 8192, 128, false, false)),
};

#define SUITE(name, about, cases) {name, about, cases, sizeof cases / sizeof cases[0], true}
#define EXTRA_SUITE(name, about, cases) {name, about, cases, sizeof cases / sizeof cases[0], false}

static const bench_suite suites[] = {
    EXTRA_SUITE("demo", "a quick tour over the suites below at moderate sizes (under a minute)", demo),
    SUITE("prefill-fp32", "fp32 forward, dense, S = 512..4096, D = 64/128, causal and not", prefill_fp32),
    SUITE("prefill-fp16", "fp16 in and out (fp32 accumulation), dense", prefill_fp16),
    SUITE("prefill-bf16", "bf16 in and out (fp32 accumulation), dense", prefill_bf16),
    SUITE("causal", "top-left causal, S = 1K..8K: FLOPs count the visible half only", causal),
    SUITE("gqa", "grouped-query and multi-query attention (query heads / kv heads)", gqa),
    SUITE("varlen", "packed (TND) batches of mixed lengths", varlen),
    SUITE("headdim", "head dim 64, 128, 256 at S = 2048", headdim),
    SUITE("backward", "gradients (FLOPs = 2.5 × forward) beside the forward of the same shapes", backward),
    SUITE("decode", "one query row against a KV cache (GB/s of K and V; baseline: a plain read)", decode),
    SUITE("sparse", "top-k block-sparse MLA shapes, forward and gradient (baseline: dense)", sparse),
    EXTRA_SUITE("ring", "ring attention over MPI, S = 16K causal (run under mpirun; vs one process with all threads)",
                ring),
    EXTRA_SUITE("smoke", "tiny shapes over every path, a correctness check for CI (seconds)", smoke),
    EXTRA_SUITE("emulated", "small shapes of each kind for instruction counts under qemu (tools/arm-insns.sh)", emulated),
};

const bench_suite *bench_suites(size_t *count)
{
    *count = sizeof suites / sizeof suites[0];
    return suites;
}

const bench_suite *bench_suite_find(const char *name)
{
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
        if (strcmp(suites[i].name, name) == 0)
            return &suites[i];
    return NULL;
}

int64_t bench_case_batches(const bench_case *c)
{
    if (c->lens[0] == 0)
        return c->batch;
    int64_t b = 0;
    while (b < BENCH_MAX_BATCH && c->lens[b] > 0)
        b++;
    return b;
}

static const char *dtype_name(fc_dtype t)
{
    return t == FC_F16 ? "f16" : t == FC_BF16 ? "bf16" : t == FC_F32 ? "f32" : t == FC_I8 ? "i8" : "?";
}

void bench_case_describe(const bench_case *c, char *buf, size_t size)
{
    const bench_op *op = bench_op_get(c->op);
    char heads[32], shape[64];
    if (c->kv_heads == c->q_heads)
        snprintf(heads, sizeof heads, "N=%lld", (long long)c->q_heads);
    else
        snprintf(heads, sizeof heads, "N=%lld/%lld", (long long)c->q_heads, (long long)c->kv_heads);
    if (c->lens[0] == 0) {
        if (c->q_len == c->kv_len)
            snprintf(shape, sizeof shape, "B=%lld %s S=%lld", (long long)c->batch, heads, (long long)c->q_len);
        else
            snprintf(shape, sizeof shape, "B=%lld %s Sq=%lld Skv=%lld", (long long)c->batch, heads,
                     (long long)c->q_len, (long long)c->kv_len);
    } else {
        const int64_t nb = bench_case_batches(c);
        int64_t total = 0, lo = c->lens[0], hi = c->lens[0];
        for (int64_t b = 0; b < nb; b++) {
            total += c->lens[b];
            lo = c->lens[b] < lo ? c->lens[b] : lo;
            hi = c->lens[b] > hi ? c->lens[b] : hi;
        }
        snprintf(shape, sizeof shape, "varlen B=%lld %s T=%lld (%lld..%lld)", (long long)nb, heads,
                 (long long)total, (long long)lo, (long long)hi);
    }
    char extra[64] = "";
    if (c->kv_dtype && c->kv_dtype != c->dtype)
        snprintf(extra, sizeof extra, " kv=%s", dtype_name(c->kv_dtype));
    else if (c->op == BENCH_OP_RING)
        snprintf(extra, sizeof extra, " %s", c->zigzag ? "zig-zag" : "contiguous");
    else if (c->topk)
        snprintf(extra, sizeof extra, "+%lld top%lldx%lld", (long long)c->rope_dim, (long long)c->topk, (long long)c->block);
    snprintf(buf, size, "%s %s %s D=%lld%s%s%s", op ? op->name : "?", dtype_name(c->dtype), shape,
             (long long)c->head_dim, extra, c->bsnd ? " bsnd" : "", c->causal ? " causal" : "");
}
