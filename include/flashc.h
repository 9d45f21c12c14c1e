/*
 * flashc — FlashAttention operators in C.  The native API.
 *
 * One call describes a whole attention problem without layout strings: every operand is a strided
 * view over (batch, head, position, feature), lengths may vary per batch, and visibility (causal,
 * bands, prefixes, explicit masks) is stated on positions, not on mask tensors.
 *
 *   fc_attention_desc d = fc_attention_desc_init();   // sizes, views, options
 *   fc_plan *plan;  size_t ws;
 *   fc_plan_create(&d, NULL, &plan);                   // validate + lower, reusable
 *   fc_plan_workspace_size(plan, &ws);
 *   fc_plan_run(plan, NULL, workspace, ws);            // any number of times
 *   fc_plan_destroy(plan);
 *
 * or simply fc_attention(&d), which plans, allocates the workspace and runs.
 *
 * Every function returns an fc_status; on failure fc_last_error() names the argument at fault.
 * Reference: docs/semantics.md (§10 for this API), installed under share/doc/flashc.
 */
#ifndef FLASHC_H
#define FLASHC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLASHC_VERSION_MAJOR 0
#define FLASHC_VERSION_MINOR 1
#define FLASHC_VERSION_PATCH 0
/* The header's version as one number (major·10000 + minor·100 + patch), comparable with fc_version(). */
#define FLASHC_VERSION (FLASHC_VERSION_MAJOR * 10000 + FLASHC_VERSION_MINOR * 100 + FLASHC_VERSION_PATCH)

#if defined(_WIN32)
#define FC_API __declspec(dllexport)
#else
#define FC_API __attribute__((visibility("default")))
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Status and errors                                                                              */

typedef enum fc_status {
    FC_OK = 0,
    FC_ERR_NULL_ARG = 1,     /* a required pointer is NULL */
    FC_ERR_INVALID_ARG = 2,  /* a size, stride, dtype, value or combination is not supported */
    FC_ERR_WORKSPACE = 3,    /* workspace missing or smaller than fc_plan_workspace_size() */
    FC_ERR_NO_MEMORY = 4,    /* host memory exhausted */
    FC_ERR_BACKEND = 5,      /* the selected backend is unavailable or failed */
    FC_ERR_INTERNAL = 6
} fc_status;

/* Text of the most recent failure in the calling thread ("" when none). Valid until the next
 * flashc call in that thread. */
FC_API const char *fc_last_error(void);
FC_API const char *fc_status_name(fc_status status);

/* The version of the library loaded at run time (FLASHC_VERSION and "major.minor.patch" of the
 * build), which may differ from the header's when an application meets another installation. */
FC_API int fc_version(void);
FC_API const char *fc_version_string(void);

/* ---------------------------------------------------------------------------------------------- */
/* Data                                                                                           */

typedef enum fc_dtype {
    FC_F32 = 0,
    FC_F16 = 1,
    FC_BF16 = 2,
    FC_I8 = 3,
    FC_U8 = 4,
    FC_BOOL = 5, /* one byte, nonzero = true */
    FC_I32 = 6,
    FC_I64 = 7
} fc_dtype;

FC_API size_t fc_dtype_size(fc_dtype dtype); /* 0 for an unknown dtype */

/* fp16 (IEEE binary16) and bf16 storage conversions, as the kernels do them: fp32 → 16 bits rounds
 * to nearest, ties to even (overflow gives ±inf, subnormals are kept); infinities stay infinite
 * and a NaN stays a (quiet) NaN.  16 bits → fp32 is exact. */
FC_API float fc_f16_to_f32(uint16_t h);
FC_API uint16_t fc_f32_to_f16(float f);
FC_API float fc_bf16_to_f32(uint16_t h);
FC_API uint16_t fc_f32_to_bf16(float f);

/* A per-head sequence operand (query, key, value, rope parts, output).
 * Element (b, n, s, e) — batch b, head n, position s of that batch, feature e — lives at
 *     data + (base(b) + n*stride_head + s*stride_seq + e*stride_dim) elements,
 * base(b) = b*stride_batch for padded batches, or tokens_before(b)*stride_seq for packed
 * (varlen) batches, where stride_batch is ignored.  Strides are in elements and may be 0 for inputs
 * (broadcast); outputs must not overlap themselves.
 * Every operand has its own dtype: FC_F32, FC_F16 and FC_BF16 mix freely (fp32 queries over an fp16
 * or bf16 KV cache, an fp16 output of fp32 inputs, ...); the arithmetic is fp32 whatever the storage. */
typedef struct fc_tensor {
    void *data;
    fc_dtype dtype;
    int64_t stride_batch, stride_head, stride_seq, stride_dim;
} fc_tensor;

/* Contiguous row-major helpers for the common layouts (n = heads, e = features per head). */
FC_API fc_tensor fc_tensor_bnsd(void *data, fc_dtype dtype, int64_t n, int64_t s, int64_t e);
FC_API fc_tensor fc_tensor_bsnd(void *data, fc_dtype dtype, int64_t n, int64_t s, int64_t e);
FC_API fc_tensor fc_tensor_sbnd(void *data, fc_dtype dtype, int64_t b, int64_t n, int64_t e);
FC_API fc_tensor fc_tensor_tnd(void *data, fc_dtype dtype, int64_t n, int64_t e); /* packed */

/* ---------------------------------------------------------------------------------------------- */
/* Score modifiers: x = modify(q·k)                                                               */

typedef enum fc_bias_order {
    FC_BIAS_AFTER_SCALE = 0,  /* x = s·scale + bias      (CANN pseType 0) */
    FC_BIAS_BEFORE_SCALE = 1  /* x = (s + bias)·scale    (CANN pseType 1) */
} fc_bias_order;

/* An additive bias over (batch, query head, row, column), any float dtype.
 * Row i and column j of batch b read element (b, n, i + row_shift, j + col_shift) where, with
 * bottom_right set, row_shift = rows − Sq_b and col_shift = cols − Skv_b (the bias is aligned to
 * the bottom-right corner of a rows × cols block); otherwise both are 0.  A row stride of 0
 * broadcasts one row to all rows.  With compressed set (a Toeplitz bias stored as its last `rows`
 * rows, the CANN "ALiBi 1024-row" form) rows whose shifted index is negative are recovered from the
 * stored rows, and every batch with Sq_b > rows sees only columns j ≤ i. */
typedef struct fc_bias {
    const void *data; /* NULL = no bias */
    fc_dtype dtype;
    fc_bias_order order;
    int64_t rows, cols; /* extents of the per-head block */
    int64_t stride_batch, stride_head, stride_row, stride_col;
    bool bottom_right;
    bool compressed;
} fc_bias;

/* Generated ALiBi: x −= slope[b][n]·|Δ| (or ·sqrt|Δ|), Δ = global column − global row, less
 * Skv_b − Sq_b with bottom_right (FlashAttention's −slope·|i + Skv_b − Sq_b − j|, per batch its own
 * lengths).  The fc_align of fc_window would read the same; it is declared below. */
typedef struct fc_alibi {
    const float *slopes; /* NULL = none */
    int64_t stride_batch, stride_head; /* stride_batch 0: one slope per head for all batches */
    bool sqrt_distance;
    bool bottom_right;
} fc_alibi;

/* ---------------------------------------------------------------------------------------------- */
/* Visibility                                                                                     */

typedef enum fc_align {
    FC_ALIGN_TOP_LEFT = 0,     /* the diagonal is j = i */
    FC_ALIGN_BOTTOM_RIGHT = 1  /* the diagonal is j = i + (Skv_b − Sq_b) (last row sees last column) */
} fc_align;

#define FC_UNBOUNDED INT64_MAX

/* A band around the diagonal: column j is visible from row i iff
 *     −left ≤ (j + kv_start) − (i + q_start) − diagonal ≤ right
 * Causal is {left = FC_UNBOUNDED, right = 0}.  left/right may be negative (a band that excludes the
 * diagonal).  enabled = false: every column is visible. */
typedef struct fc_window {
    bool enabled;
    int64_t left, right;
    fc_align align;
} fc_window;

FC_API fc_window fc_window_causal(fc_align align);
FC_API fc_window fc_window_band(int64_t left, int64_t right, fc_align align);

/* An explicit boolean mask over (batch, head, row, column); nonzero = hidden.  Strides may be 0
 * (broadcast).  With packed batches and by_tokens set, batch b reads the block starting at
 * (tokens_before_q(b), tokens_before_kv(b)) — the diagonal blocks of a [Tq, Tkv] mask. */
typedef struct fc_mask {
    const void *data; /* NULL = none */
    fc_dtype dtype;   /* FC_BOOL, FC_U8 or FC_I8 */
    int64_t stride_batch, stride_head, stride_row, stride_col;
    bool by_tokens;
} fc_mask;

typedef struct fc_visibility {
    fc_window window;              /* for every batch ... */
    const fc_window *batch_window; /* ... or one per batch (NULL = use window) */
    const int64_t *prefix;         /* optional, per batch: columns j < prefix[b] are always visible */
    int64_t q_start, kv_start;     /* global position of row 0 and column 0 (context parallelism);
                                      also the positions ALiBi measures */
    fc_mask mask;                  /* hidden positions on top of the window */
} fc_visibility;

/* ---------------------------------------------------------------------------------------------- */
/* Softmax statistics                                                                             */

typedef enum fc_stats_order {
    FC_STATS_HEAD_MAJOR = 0,  /* per batch a [heads, Sq_b, replicas] block (dense: [B, N, S, r]) */
    FC_STATS_TOKEN_MAJOR = 1, /* [tokens, heads, replicas] over all batches' rows */
    FC_STATS_KV_GROUP = 2,    /* per batch [kv_heads, Sq_b, group] (replicas must be 1) */
    FC_STATS_KV_TOKEN_GROUP = 3 /* [kv_heads, tokens, group] over all batches' rows (replicas 1) */
} fc_stats_order;

/* Row maximum and sum of exp(x − max) (sink included), fp32.  Each value is written `replicas`
 * times (1 or more; CANN uses 8).  A row that sees nothing gets max = −FLT_MAX, sum = +FLT_MAX. */
typedef struct fc_stats {
    float *max, *sum; /* both NULL = not wanted; both set = written */
    fc_stats_order order;
    int64_t replicas; /* 0 means 1 */
} fc_stats;

/* ---------------------------------------------------------------------------------------------- */
/* Dropout from a caller-supplied keep mask                                                       */

/* Bit e of the mask, bit (e mod 8) of byte e/8 (least significant first), 1 = keep.
 * e enumerates (b, n, i, j) as per-batch [q_heads, Sq_b, Skv_b] blocks in batch order — for equal
 * lengths the flat index of a [B, N, Sq, Skv] tensor.
 * Or generated (keep_bits NULL, generate set): element e is kept iff word (e mod 4) of
 * Philox-4x32-10 with counter (c mod 2^32, c / 2^32, 0, 0), c = offset + e/4 (mod 2^64), and key
 * (seed mod 2^32, seed / 2^32) is below keep_prob·2^32 — the same bits for any thread count, and a
 * backward given the same seed and offset regenerates the forward's mask. */
typedef struct fc_dropout {
    const uint8_t *keep_bits; /* required when keep_prob < 1 (unless generate); not read when keep_prob == 1 */
    size_t keep_bits_bytes;   /* size of the mask buffer, checked against what is needed */
    double keep_prob;         /* (0, 1]; 0 is read as 1 */
    bool generate;            /* keep bits from Philox(seed, offset) instead of keep_bits */
    uint64_t seed, offset;
} fc_dropout;

/* ---------------------------------------------------------------------------------------------- */
/* Top-k block-sparse selection (DeepSeek-style sparse attention)                                 */

/* Each query row (b, i) of kv head n2 sees only the kv blocks listed in its index row
 * indices[b][i][n2][0..count): block numbers in units of block_size, relative to the batch's kv
 * start; the list ends at the first negative entry; a block listed twice counts twice.  With
 * causal set, positions at or after Skv_b − Sq_b + i + 1 are dropped (blocks starting there are
 * skipped, the block across it is cut).  Packed batches address rows by token:
 * indices + (tokens_before(b) + i)·stride_seq + n2·stride_head + k·stride_entry. */
typedef struct fc_sparse {
    const void *indices; /* NULL = dense attention */
    fc_dtype dtype;      /* FC_I32 or FC_I64 */
    int64_t count, block_size;
    int64_t stride_batch, stride_seq, stride_head, stride_entry;
    bool causal;
} fc_sparse;

/* ---------------------------------------------------------------------------------------------- */
/* KV-cache storage (decode) and int8 data                                                        */

/* A per-channel affine map over (head, feature); strides 0 give one value for all.
 * Dequantising int8 key/value data: x → (x + offset)·scale.  Quantising an int8 output:
 * y = saturate(round_half_even(fp16(x·scale + offset))).  offset NULL = 0. */
typedef struct fc_affine {
    const void *scale, *offset; /* scale NULL = not used */
    fc_dtype dtype;             /* FC_F32, FC_F16 or FC_BF16 */
    int64_t stride_head, stride_dim;
} fc_affine;

/* How key/value (and k_rope) rows are stored when not in one strided tensor.
 *  - per-batch tensors: k_batches[b] / v_batches[b] replace k.data + b·stride_batch;
 *  - pages: position s of batch b lives in block block_table[b·table_stride + s / block_size]
 *    at slot s mod block_size; k.stride_batch is then the distance between blocks and
 *    stride_seq the distance between slots (same for v and k_rope). */
typedef struct fc_kv_storage {
    const void *const *k_batches, *const *v_batches;
    const int32_t *block_table;
    int64_t table_stride, block_size;
    int64_t num_blocks;             /* block-table entries must lie in [0, num_blocks) */
    fc_affine k_dequant, v_dequant; /* for FC_I8 key / value data */
} fc_kv_storage;

/* ---------------------------------------------------------------------------------------------- */
/* The problem                                                                                    */

typedef struct fc_attention_desc {
    /* sizes */
    int64_t batch;
    int64_t q_heads, kv_heads; /* kv_heads divides q_heads: query head n uses kv head n / (q/kv) */
    int64_t head_dim;          /* query/key feature size (without rope) */
    int64_t v_head_dim;        /* value/output feature size; 0 means head_dim */
    int64_t rope_dim;          /* extra query/key features in q_rope/k_rope; 0 = none */
    int64_t q_len, kv_len;     /* padded batches: positions per batch (ignored when packed) */
    const int64_t *q_lens;     /* optional per-batch lengths (padded: each ≤ q_len) */
    const int64_t *kv_lens;
    const int64_t *kv_starts;  /* optional per batch: columns before it are hidden (left padding) */
    bool packed;               /* batches stored back to back along the position axis */

    /* operands */
    fc_tensor q, k, v;
    fc_tensor q_rope, k_rope; /* when rope_dim > 0: q·k = q·k + q_rope·k_rope */
    fc_tensor out;            /* [.., q_heads, .., v_head_dim]; any float dtype, or FC_I8 with out_quant */
    fc_affine out_quant;      /* quantisation of an FC_I8 output */
    fc_kv_storage kv;         /* paged / per-batch / int8 key-value storage */

    /* score: x = softcap(scale·(q·k + bias_before)) + bias_after − alibi, then visibility,
     * softmax (with the sink), dropout of the probabilities */
    double scale;             /* 0 means 1/sqrt(head_dim + rope_dim); finite, |scale| <= FLT_MAX */
    fc_bias bias;
    fc_alibi alibi;
    float softcap;            /* > 0: y → softcap·tanh(y / softcap) on the scaled score */
    const float *sink;        /* optional per query head: an extra logit in every row's softmax */
    fc_visibility vis;
    fc_sparse sparse;         /* replaces vis when set (it cannot be combined with windows, masks,
                                 biases, ALiBi, dropout or sinks) */
    fc_dropout dropout;
    fc_stats stats;
} fc_attention_desc;

/* A description with every option off and the scale defaulted; fill in sizes and operands. */
FC_API fc_attention_desc fc_attention_desc_init(void);

/* ---------------------------------------------------------------------------------------------- */
/* Backward                                                                                       */

/* The gradients of an attention call.  The backward takes the forward's description: desc.out
 * then holds the forward output and desc.stats its statistics (both read; the statistics are used
 * exactly as given).  Gradients have the shapes of their operands and any float dtype; key and
 * value gradients are summed over the query heads sharing a kv head.  dsink (per query head) is
 * written when desc.sink is set. */
typedef struct fc_attention_grads {
    fc_tensor d_out;          /* gradient of the output, shaped like desc.out */
    fc_tensor dq, dk, dv;
    fc_tensor dq_rope, dk_rope; /* when desc.rope_dim > 0 */
    float *dsink;
} fc_attention_grads;

/* New data addresses for a planned problem (same shapes and strides).  NULL fields keep the
 * planned address.  A run may not add a score term its plan was made without (bias, mask, slopes,
 * sink, keep_bits: FC_ERR_INVALID_ARG): the plan's kernels were chosen for the terms it has. */
typedef struct fc_attention_io {
    const void *q, *k, *v, *q_rope, *k_rope;
    void *out;
    const void *bias, *mask;
    const float *slopes, *sink;
    const uint8_t *keep_bits;
    float *stats_max, *stats_sum;
    /* backward */
    const void *d_out;
    void *dq, *dk, *dv, *dq_rope, *dk_rope;
    float *dsink;
    /* The run's per-batch key/value lengths, in the memory of the plan's operands (on CUDA device
     * memory, read by the kernels when the run executes: a CUDA graph that captured the run replays
     * with what the array holds then).  Forward plans over padded batches without bias or dropout
     * (fc_plan_run refuses others; on CUDA the decode kernels take them); each length within
     * [kv_starts[b], the planned length of batch b] — the plan's lengths bound its runs'.  A length
     * outside: the CPU refuses the run; CUDA leaves the batch's rows unwritten and the plan's next
     * run returns FC_ERR_INVALID_ARG naming it.  NULL: the planned lengths. */
    const int64_t *kv_lens;
} fc_attention_io;

/* ---------------------------------------------------------------------------------------------- */
/* Plans                                                                                          */

typedef enum fc_backend {
    FC_BACKEND_DEFAULT = 0, /* CUDA when the operands are CUDA device memory, else the CPU */
    FC_BACKEND_CPU = 1,
    FC_BACKEND_CUDA = 2
} fc_backend;

typedef struct fc_options {
    fc_backend backend;
    int threads; /* CPU: 0 = OpenMP's default; results are identical for every count */
    void *stream; /* where runs are queued (a cudaStream_t for CUDA); NULL = the default stream.
                     The CPU runs in the caller's thread and ignores it. */
    /* Forward: the dtype whose tolerance (semantics §0.4) the output needs, when looser than its
     * own dtype's: FC_BF16 or FC_F16 for an fp32 output the caller rounds to that dtype later
     * (partial results merged by log-sum-exp, as flashc_mpi's ring does).  The kernels may then
     * compute as for such an output (AMX: P·V on bf16 tiles).  FC_F32 (0) = the output's own. */
    fc_dtype out_tolerance;
} fc_options;

/* Concurrent runs.  A plan is immutable once created: a run reads it and writes only its outputs
 * and the workspace it is given, so runs of one plan may go at once (several host threads) as long
 * as each has its own workspace and its own outputs (inputs may be shared), and each gives bit for
 * bit what it gives alone.  On CUDA the same holds for runs queued on several streams at once (a
 * run's per-batch facts, counters and partials live in its workspace).  A CPU run allocates no
 * memory. */
typedef struct fc_plan fc_plan;

FC_API fc_status fc_plan_create(const fc_attention_desc *desc, const fc_options *options,
                                fc_plan **plan);
FC_API fc_status fc_plan_workspace_size(const fc_plan *plan, size_t *bytes);
/* io may be NULL (use the planned addresses); workspace may be NULL when its size is 0. */
FC_API fc_status fc_plan_run(fc_plan *plan, const fc_attention_io *io, void *workspace,
                             size_t workspace_bytes);
FC_API void fc_plan_destroy(fc_plan *plan);

/* What the device found in a plan's earlier runs: a CUDA run checks its block-table entries (and
 * run-time kv lengths) on the GPU, leaves the rows they address unwritten when one is bad, and
 * returns nothing then, to stay asynchronous; the plan's next fc_plan_run reports it.  This reports
 * it without a run — FC_ERR_INVALID_ARG naming the entry and what was left unwritten, once — or
 * FC_OK.  wait: first wait for the runs queued on the plan's stream (without it, only runs the
 * device has finished are seen).  A CPU plan checks before it writes: always FC_OK.  For callers
 * that must know before they read a run's outputs, or before they destroy the plan (its report
 * goes with it); the one-call forms check this way before they return. */
FC_API fc_status fc_plan_check_runs(fc_plan *plan, bool wait);

/* A backward plan: run it like a forward plan. Deterministic: bit-identical for every thread
 * count. */
FC_API fc_status fc_plan_create_backward(const fc_attention_desc *desc, const fc_attention_grads *grads,
                                         const fc_options *options, fc_plan **plan);

/* Plan, allocate the workspace, run, free. */
FC_API fc_status fc_attention(const fc_attention_desc *desc);
FC_API fc_status fc_attention_backward(const fc_attention_desc *desc, const fc_attention_grads *grads);

/* FLOPs of the problem counted over visible positions only: 2·(Dqk+Dr)+2·Dv per visible score,
 * times 2.5 for a backward plan.  A sparse plan counts its selected positions from the index rows
 * (a CUDA plan copies them from the device): FC_ERR_BACKEND when they cannot be read. */
FC_API fc_status fc_plan_flops(const fc_plan *plan, double *flops);

/* What a plan runs, for debugging: one line of key=value text naming the backend, the operation
 * and what the backend chose once at planning (CPU: the kernel set, the kernel kind of the items
 * — gemm, dots, decode, tiles, fused; the backward's products and schedule — item rows, kv tile
 * columns, item counts, kv slices, threads and the workspace layout).  The format may change
 * between versions.  Truncated to len − 1 characters (always terminated when len > 0; 512 bytes
 * hold it). */
FC_API fc_status fc_plan_describe(const fc_plan *plan, char *buf, size_t len);

/* The environment variables the library reads while it makes a plan (a NULL-terminated list).
 * Two plans of one problem made under different values may run different kernels, so a caller
 * that keeps plans across calls should key them on these values too. */
FC_API const char *const *fc_plan_switches(void);

/* The CPU kernel path in use ("avx512", "avx2", "scalar") and a way to force one (tests/bench);
 * returns false when the path is not available on this machine.  Unless one is forced, a
 * FLASHC_ISA naming no available path makes fc_plan_create fail with FC_ERR_BACKEND. */
FC_API const char *fc_cpu_isa(void);
FC_API bool fc_cpu_force_isa(const char *name);

#ifdef __cplusplus
}
#endif
#endif /* FLASHC_H */
