/*
 * The SparseFlashAttention test harness.  One sfa_case describes a call in CANN terms (layouts of
 * both sides, dtype, sizes, per-batch lengths, index dtype and pattern, block size, sparse mode,
 * paging, rope, strided views, returnSoftmaxLse); sfa_run_case makes seeded random data, uploads
 * it through aclrtMalloc / aclrtMemcpy into aclTensors, runs the forward's two phases and checks
 * every output element against tests/reference (ref_sparse) — and, with backward set, runs the
 * grad on the forward's own out and statistics and checks every gradient element:
 *   - within the §0.4 tolerance; empty and padding rows exactly 0 with statistics −FLT_MAX /
 *     +FLT_MAX (bits); BSND kv padding rows of gradients exactly 0;
 *   - output gaps of strided views untouched; input gaps and padding positions are NaN, so a
 *     wrong stride, length or selection poisons results.
 * With dense set the forward (and grad) are compared with the dense reference instead (ref_forward
 * / ref_backward over [0, S2_b)): the identity of semantics §9 f for an index list of every block.
 */
#ifndef FLASHC_TESTS_CANN_SFA_HARNESS_H
#define FLASHC_TESTS_CANN_SFA_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/harness.h"
#include "common/rng.h"

#define SFA_MAXB 8

typedef enum sfa_fill {
    SFA_FILL_RANDOM = 0, /* random blocks (duplicates, blocks past the end), −1 after a random count */
    SFA_FILL_ALL = 1,    /* every block of the batch once, in order, −1 after */
    SFA_FILL_REVERSED = 2 /* every block once, last first */
} sfa_fill;

typedef struct sfa_case {
    const char *lq, *lkv;        /* "BSND" / "TND"; lkv also "PA_BSND" */
    tc_dtype dtype;              /* TC_F16 or TC_BF16 */
    int B, N1, N2, D, Dv, Dr;    /* Dv 0 = D */
    int S1, S2;                  /* BSND tensor lengths; 0 = the largest batch length */
    int s1[SFA_MAXB], s2[SFA_MAXB];
    bool lens_q, lens_kv;        /* BSND side: pass its per-batch lengths (TND and PA always do) */
    bool len64, idx64;           /* INT64 lengths / indices (else INT32) */
    int K, bs, mode;             /* index count, sparseBlockSize, sparseMode */
    sfa_fill fill;
    int page;                    /* PA_BSND: key blockSize */
    fa_strides strides;          /* layout of every tensor in its allocation (grad statistics stay contiguous) */
    bool no_lse;                 /* forward: returnSoftmaxLse = false */
    bool backward;               /* also run and check the grad */
    bool dense;                  /* compare with dense attention (requires SFA_FILL_ALL/REVERSED, mode 0) */
    int attention_mode;          /* 0 or 2 */
    double scale;                /* 0 = 1/sqrt(D + Dr) */
    uint64_t seed;
    fa_poison poison[FA_MAX_POISON]; /* the first npoison are put into q, k, v, dOut (not paged keys) */
    int npoison;
    fa_tally *tally;             /* when set: += the reference outputs and gradients compared */
} sfa_case;

/* BSND both sides, FLOAT16, B 2, N1 4, N2 2, D 16, lengths q {5, 3} kv {20, 13}, K 6, block 4,
 * mode 0, random indices, seed 1. */
sfa_case sfa_case_default(void);

/* The random part of a sweep case after its layouts, drawn from g: dtype, B, heads, D, Dv, Dr,
 * per-batch lengths (batch 0 at least one of each), lengths passed or not and their width, index
 * width, K, block size and mode. */
void sfa_draw_case(sfa_case *c, tc_rng *g);

/* Runs the case and checks it (TC checks, context set from name).  False when a library call
 * itself failed. */
bool sfa_run_case(const char *name, const sfa_case *c);

#endif /* FLASHC_TESTS_CANN_SFA_HARNESS_H */
