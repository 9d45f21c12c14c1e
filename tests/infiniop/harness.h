/*
 * The infiniop test harness.  A stored tensor is a host image laid out with chosen strides (and,
 * optionally, uploaded into an infinirt allocation); ifa_run_case describes one FlashAttention
 * call, makes seeded data, runs the face, runs tests/reference on the same logical values and
 * checks every output element:
 *   - within the §0.4 tolerance of the output dtype;
 *   - rows whose keys are all hidden exactly 0;
 *   - bytes of the output allocation outside the view untouched; input gaps hold NaN (0xFF), so
 *     a wrong stride poisons the result.
 */
#ifndef FLASHC_TESTS_INFINIOP_HARNESS_H
#define FLASHC_TESTS_INFINIOP_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/check.h"
#include "common/halfconv.h"
#include "flashc.h"
#include "infiniop.h"
#include "infinirt.h"

/* How a tensor is laid out in its buffer.  The last dim always has stride 1. */
typedef enum ifa_layout {
    LAY_CONTIG = 0,    /* row-major */
    LAY_GAPS = 1,      /* row-major over padded dims, plus a leading gap */
    LAY_NEGATIVE = 2,  /* row-major magnitudes, every dim but the last walked backwards */
    LAY_PERMUTED = 3,  /* heads and seq swapped in storage ((b, s, n, e) memory for (b, n, s, e)) */
    LAY_BROADCAST = 4  /* inputs: the first dim has stride 0 (one copy for every batch / head) */
} ifa_layout;

typedef struct st_tensor {
    int rank;
    size_t shape[4];
    ptrdiff_t strides[4]; /* elements */
    int64_t base;         /* element offset of index (0, ..., 0) in the image */
    size_t esize, bytes;
    unsigned char *host;  /* the image */
    unsigned char *alloc; /* infinirt allocation holding the image, or NULL (host memory is used) */
    void *data;           /* the address the call gets */
} st_tensor;

/* Lays out a tensor (image filled with fill). */
void st_layout(st_tensor *t, int rank, const size_t *shape, size_t esize, ifa_layout lay, unsigned char fill);
int64_t st_offset(const st_tensor *t, const int64_t *idx);
/* Makes data point at the image: in place, or in a new infinirt allocation (runtime = true). */
void st_place(st_tensor *t, bool runtime);
/* Refreshes the image from the allocation (no-op for host tensors). */
void st_fetch(st_tensor *t);
void st_free(st_tensor *t);
/* A tensor descriptor of the view (the test owns it). */
infiniopTensorDescriptor_t st_desc(const st_tensor *t, infiniDtype_t dt);

/* Element helpers for float data of a tc_dtype and for integer masks of any infiniDtype_t. */
infiniDtype_t ifa_dtype(tc_dtype t);
void mask_store(infiniDtype_t dt, void *base, int64_t k, int64_t v);
int64_t mask_load(infiniDtype_t dt, const void *base, int64_t k);
size_t mask_esize(infiniDtype_t dt);
/* A nonzero value of dt whose lowest byte is zero where the type allows (2^8, 2^16, 2^40, −2^8),
 * chosen by k: a face that reads wide masks as bytes would see these as visible. */
int64_t mask_hidden_value(infiniDtype_t dt, int k);

/* A non-finite value (semantics §0.3) put into logical element (b, n, s, e) of q, k or v after the
 * harness made them (n a kv head for k and v); the reference reads it too. */
typedef enum { IFA_AT_Q = 1, IFA_AT_K = 2, IFA_AT_V = 3 } ifa_at;
typedef struct ifa_poison {
    ifa_at at;
    int b, n, s, e;
    double value;
} ifa_poison;

typedef struct ifa_case {
    tc_dtype dtype;
    int rank;                     /* 3 or 4; rank 3 needs B = 1 */
    int B, Nq, Nkv, Sq, Skv, D, Dv; /* Nkv 0 = Nq, Skv 0 = Sq, Dv 0 = D */
    ifa_layout layout;            /* of q, k, v (out: GAPS when this is BROADCAST) */
    int mask_rank;                /* 0 none, 1 (Skv), 2 (B, Skv) */
    infiniDtype_t mask_dtype;
    ifa_layout mask_layout;       /* CONTIG, GAPS, NEGATIVE or BROADCAST (rank 2: rows stride 0) */
    double mask_density;          /* share of hidden keys */
    bool hide_batch0;             /* every key of batch 0 hidden: its rows must be exactly 0 */
    bool mask_null_at_run;        /* the descriptor has a mask, the call passes NULL: no mask */
    bool mask_without_desc;       /* the call passes a mask the descriptor does not have: ignored */
    bool runtime;                 /* operands and workspace in infinirt allocations */
    bool repeat;                  /* run twice: bit-identical outputs */
    uint64_t seed;
    ifa_poison poison[4];         /* the first npoison are put into the inputs */
    int npoison;
    int64_t *ref_nonfinite, *ref_finite; /* when set: += the reference outputs of each kind */
} ifa_case;

ifa_case ifa_case_default(void); /* 4-D F32, B 2, heads 2, Sq = Skv = 8, D 16, no mask */

/* Runs and checks the case (TC checks under the given name).  False when a library call failed. */
bool ifa_run_case(const char *name, const ifa_case *c);

/* One TC check that a call returned the wanted status; the message carries fc_last_error(). */
#define EXPECT(call, want)                                                                                             \
    do {                                                                                                               \
        const infiniStatus_t got_ = (call);                                                                            \
        TC_CHECK(got_ == (want), "%s returned %d, want %d (%s)", #call, (int)got_, (int)(want), fc_last_error());   \
    } while (0)

/* The process-wide handle the tests share. */
infiniopHandle_t ifa_handle(void);

#endif /* FLASHC_TESTS_INFINIOP_HARNESS_H */
