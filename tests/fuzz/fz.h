/*
 * Shared pieces of the libFuzzer harnesses (tests/fuzz/README.md): a reader that turns the input
 * bytes into sizes, strides, offsets, attributes and data, and — for the CANN faces — tensors whose
 * storage is allocated exactly to the size their view reaches, so that any access outside it is a
 * real AddressSanitizer report.  Every object a harness makes is released by fz_finish.
 *
 * The decoding is structure-aware: a harness first draws a consistent problem (small sizes, a
 * layout, the options), then every tensor may be mutated (a dim off by one, an edge stride, a view
 * offset, a short or misplaced allocation, untracked host memory, a NULL address, a wrong dtype).
 * Exhausted input reads as zeros, which give the plain, valid choice everywhere.
 */
#ifndef FLASHC_TESTS_FUZZ_FZ_H
#define FLASHC_TESTS_FUZZ_FZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnn/aclnn_base.h"

typedef struct fz {
    const uint8_t *p;
    size_t n, at;
    uint64_t rng; /* data values: a PRNG seeded from the input, so data does not eat the bytes */
} fz;

void fz_init(fz *f, const uint8_t *data, size_t size);
uint8_t fz_u8(fz *f);
/* An integer in [lo, hi] (lo for exhausted input). */
int64_t fz_range(fz *f, int64_t lo, int64_t hi);
/* True with about percent% probability (false for exhausted input). */
bool fz_chance(fz *f, int percent);
/* An int64 that is usually `plain`, sometimes an edge value (0, ±1, INT32/INT64 limits, ...) or
 * eight raw bytes. */
int64_t fz_int(fz *f, int64_t plain);
/* A double: usually `plain`, sometimes 0, negative, NaN, ±inf, tiny or huge. */
double fz_real(fz *f, double plain);
/* One of n strings (layout names and the like), or a string made from the input bytes. */
char *fz_pick_str(fz *f, const char *const *names, int n, char buf[16]);
/* Data values (PRNG): uniform in [-1, 1). */
float fz_value(fz *f);

/* ---- the CANN runtime ------------------------------------------------------------------------- */

#define FZ_MAX_OBJ 96

typedef struct fz_cann {
    aclTensor *tensor[FZ_MAX_OBJ];
    bool listed[FZ_MAX_OBJ]; /* owned by a tensor list, destroyed with it */
    int ntensor;
    void *dev[FZ_MAX_OBJ], *host[FZ_MAX_OBJ];
    int ndev, nhost;
    aclTensorList *list[8];
    int nlist;
    aclIntArray *ints[8];
    int nints;
} fz_cann;

/* What the values of a tensor are: floats in [-1, 1) (with a few NaN/inf when the input asks),
 * or integers given by a callback (lengths, indices, block-table entries) that the input may
 * still perturb. */
typedef int64_t (*fz_int_fn)(void *ctx, int64_t element);

typedef struct fz_spec {
    aclDataType dtype;
    int rank;
    int64_t dims[8];
    fz_int_fn ints; /* integer dtypes: the plain value of element e (row-major); NULL = 0 */
    void *ctx;
    bool output;    /* outputs get no NaN fill and are never given overlapping strides on purpose */
} fz_spec;

/* Integer values from a list, element e taking v[e mod n] (lengths, one padding size, ...). */
typedef struct fz_ints {
    const int64_t *v;
    int64_t n;
} fz_ints;
int64_t fz_ints_at(void *ctx, int64_t e);

void fz_cann_init(void);
/* LLVMFuzzerInitialize of the CANN harnesses: one thread (OMP_NUM_THREADS unless set), aclInit. */
#define FZ_CANN_INITIALIZE                                                                                             \
    int LLVMFuzzerInitialize(int *argc, char ***argv)                                                                  \
    {                                                                                                                  \
        (void)argc, (void)argv;                                                                                        \
        setenv("OMP_NUM_THREADS", "1", 0);                                                                             \
        fz_cann_init();                                                                                                \
        return 0;                                                                                                      \
    }
/* A tensor for spec, possibly mutated by the input; NULL is possible (a missing argument). */
aclTensor *fz_tensor(fz *f, fz_cann *c, const fz_spec *s);
/* The same without any mutation (the second of a pair that must stay consistent, e.g. lists). */
aclTensor *fz_tensor_plain(fz *f, fz_cann *c, const fz_spec *s);
aclIntArray *fz_int_array(fz *f, fz_cann *c, const int64_t *values, int n);
aclTensorList *fz_tensor_list(fz_cann *c, aclTensor *const *t, int n);
/* A CANN operator call: its first phase's status, workspace size and executor, and its second phase. */
typedef struct fz_call {
    aclnnStatus st;
    uint64_t ws;
    aclOpExecutor *ex;
    aclnnStatus (*run)(void *, uint64_t, aclOpExecutor *, aclrtStream);
} fz_call;
/* Ends a CANN harness's input: when the first phase succeeded, sometimes frees one device allocation
 * (the second phase must then refuse) and runs the second phase with a workspace of exactly the size
 * asked for; then releases every object.  Returns 0 (LLVMFuzzerTestOneInput's value). */
int fz_finish(fz *f, fz_cann *c, const fz_call *call);

/* Shorthand for a spec. */
fz_spec fz_sp(aclDataType dt, int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3);

#endif
