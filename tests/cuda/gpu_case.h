/*
 * One forward problem run on both backends: seeded random inputs laid out in host buffers (the
 * CPU backend, the oracle) and copied to device buffers (the CUDA backend, chosen by
 * FC_BACKEND_DEFAULT from the device pointers); both outputs start poisoned with the same NaN
 * bytes, so an element the GPU fails to write (or writes where the CPU does not) fails the
 * comparison.  Outputs are compared within twice the semantics §0.4 tolerance (both backends
 * round), statistics likewise, and elements with equal bits always pass (gaps, exact zeros,
 * −FLT_MAX/+FLT_MAX), as do NaN on both sides (the payload aside).  The GPU run is repeated and must be bit-identical.
 *
 * Backward mode: the CPU forward's output and statistics and a random output gradient feed the
 * backward on both backends; gradients (poisoned likewise) are compared within twice the §0.4
 * gradient tolerance (atol scaled by M = max(1, max|r|)) and the GPU's two runs bit for bit.
 */
#ifndef FLASHC_TESTS_CUDA_GPU_CASE_H
#define FLASHC_TESTS_CUDA_GPU_CASE_H

#include <stdbool.h>

#include <stdint.h>

#include "common/tolerance.h"
#include "flashc.h"

typedef enum { GC_BNSD, GC_BSND, GC_GAPS, GC_ODD_STRIDES } gc_layout;
typedef enum { GC_FULL, GC_CAUSAL, GC_BAND, GC_PREFIX } gc_window;

/* Decode storage of the key/value cache (gpu_kv.c), built from the case's contiguous K/V so that
 * the same values are read through every form.  Padded batches (not packed) only. */
typedef struct gc_kv {
    int page;         /* > 0: paged, blocks of this many positions, shuffled, unused slots NaN */
    bool heads_major; /* paged: cache (blocks, N2, page, D) instead of (blocks, page, N2·D) */
    bool list;        /* one tensor per batch (k_batches / v_batches) */
    int left_pad;     /* > 0: that many NaN positions before each batch's cache (kv_starts) */
    bool i8;          /* int8 key/value dequantised by per-channel scale (and offset) */
    bool i8_per_tensor, i8_offset;
    bool out_i8;      /* int8 output quantised per channel */
    bool out_f32;     /* fp32 output of 16-bit operands (checked at fp32's tolerance) */
    bool bad_entry;   /* paged: one used block-table entry out of range; both backends must refuse and
                         the GPU must write nothing */
} gc_kv;

typedef struct gc_case {
    int B, Nq, Nkv, Sq, Skv, D, Dv;
    int Dr;               /* > 0: rope-split heads (q_rope, k_rope of Dr features in the case's layout; the
                             backward's dq_rope, dk_rope) */
    fc_dtype dt;
    gc_layout layout;
    bool packed;          /* varlen, tokens back to back (else padded batches) */
    bool varlen;          /* per-batch lengths below the maxima */
    gc_window window;
    fc_align align;
    int q_start, kv_start;
    bool mask, bias, bias_before, alibi, sink, dropout, stats;
    bool philox;          /* dropout generated from a seed and offset (fc_dropout.generate) on both backends:
                             the GPU's bits must be the CPU's */
    bool nan_tail;        /* padded batches: value feature 0 of each batch's last kv position is NaN
                             (rows that do not see it must stay finite, semantics §0.3) */
    bool nan_key_tail;    /* the same in the keys: key feature 0 of each batch's last kv position */
    bool nan_query_head;  /* padded batches: query feature 0 of each batch's first row (head 0) is NaN and,
                             backward, d_out feature 0 of its second row +inf (keys that do not see them,
                             causal or masked, must keep finite dK and dV) */
    bool near_max;        /* fp32, padded batches: finite operands whose tf32 rounding overflows — query
                             feature 0 of rows 0–2 (head 0) ±FLT_MAX against key feature 0 of
                             ±(1 + j/64)·2⁻¹²⁵ (logit terms of 8–16), value feature 0 of position 5
                             −FLT_MAX (outputs of p·FLT_MAX, finite) */
    float softcap;
    bool pad_nan;         /* padded varlen: the rows past each batch's lengths (query, key, value) hold
                             NaN, which no output may see (semantics §0.3: they are no positions) */
    bool backward;        /* the backward of the case (statistics on), else the forward */
    bool grad_f32;        /* backward: fp32 gradients (with rope features, or under FLASHC_CUDA_BWD=fused, the
                             GPU refuses them by name: checked) */
    gc_kv kv;
    unsigned seed;
} gc_case;

/* Whether a CUDA device is usable; gc_require_gpu also prints that `test` is skipped when not. */
bool gc_have_gpu(void);
bool gc_require_gpu(const char *test);

/* main() of a GPU-against-CPU test: TC_SKIP where no GPU is present; else `checks`, then a seeded
 * sweep of argv[1] (default 60) random cases, forward or backward; tc_summary(test). */
int gc_main(const char *test, int argc, char **argv, void (*checks)(void), unsigned seed, bool backward);

/* A plan the GPU must refuse: st is FC_ERR_BACKEND and the message names `needle`; *plan is
 * destroyed and cleared. */
void gc_expect_refusal(fc_status st, fc_plan **plan, const char *needle);
/* Sets an environment variable (value NULL: unsets it) and returns its former value (malloc'd or
 * NULL) for gc_env_restore, which puts it back and frees it. */
char *gc_env_swap(const char *name, const char *value);
void gc_env_restore(const char *name, char *old);

/* The case in four layouts and visibility forms: as given; BNSD causal bottom-right; strides with
 * gaps, a band, statistics on; odd strides (element loads), a prefix, MQA. */
void gc_layouts(gc_case c);

/* `cases` random cases mixing every feature at odd sizes (seeded), forward or backward, each run
 * with gc_run. */
void gc_sweep(unsigned seed, int cases, bool backward);

/* `cases` random rope cases (Dr > 0, Dqk + Dr ≤ 256) mixing the features at odd sizes, forward or
 * backward: the sweep's cases with rope parts. */
void gc_sweep_rope(unsigned seed, int cases, bool backward);

/* `cases` random cases with fp32 operands (and output, and gradients) mixing the features at odd
 * sizes, generated dropout included, forward or backward. */
void gc_sweep_f32(unsigned seed, int cases, bool backward);

/* `cases` random forward cases over what the sm_90a kernel takes (no score terms, sink or dropout;
 * head dims and strides in multiples of 16 bytes): every visibility form, GQA, packed and padded
 * varlen, Dv ≠ Dqk, odd lengths, several tiles per row. */
void gc_sweep_plain(unsigned seed, int cases);

/* The sm_90a kernels' cases of one head-dim class and dtype (c: the base case): Sq × Skv with
 * several tiles per row and query heads of a group; causal bottom-right with statistics (BNSD);
 * packed banded varlen (past a batch's last row: the next batch's rows); padded varlen with NaN
 * padding (GAPS). */
void gc_sm90_class_cases(gc_case c, int sq, int skv);

/* The same over what the sm_90a backward takes (head dims ≤ 128), backward. */
void gc_sweep_plain_backward(unsigned seed, int cases);

/* Whether p is CUDA device memory (cudaPointerGetAttributes). */
bool gc_is_device_memory(const void *p);

/* Compares n elements of dtype t (GPU against CPU): equal bits, or both finite and within twice
 * tol with atol scaled by M (1 for outputs; semantics §0.4's max(1, max|r|) for gradients); one
 * check per failing element (the first few) and one for the array.  Returns the failures. */
int64_t gc_compare(const char *what, tc_dtype t, const void *gpu, const void *cpu, int64_t n, tc_tol tol, double M);

/* Runs the case on both backends and checks it; returns false when a check failed. */
bool gc_run(const gc_case *c);
/* gc_run that also hands back the GPU output bytes (malloc'd; *out NULL when the run failed);
 * backward: the gradients dq, dk, dv and dsink back to back. */
bool gc_run_out(const gc_case *c, void **out, size_t *bytes);

#endif
