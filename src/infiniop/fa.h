/*
 * The infiniop FlashAttention descriptor (semantics §7.3–§7.5): what Create checks and captures,
 * and the pieces each step uses.  The face validates and lowers; the attention itself is the
 * core's plan.
 */
#ifndef FC_INFINIOP_FA_H
#define FC_INFINIOP_FA_H

#include <stdbool.h>
#include <stdint.h>

#include "core/plan.h"
#include "objects.h"

/* The operands of the call, in declaration order. */
enum { FA_OUT, FA_Q, FA_K, FA_V, FA_MASK, FA_TENSORS };

/* Parameter names as declared: of the descriptors ("out_desc", ...) and of the data ("out", ...). */
extern const char *const infini_fa_desc_names[FA_TENSORS];
extern const char *const infini_fa_data_names[FA_TENSORS];

/* Everything Create learns from the tensor descriptors. */
typedef struct infini_fa_geom {
    int rank;                        /* 3 or 4 */
    int64_t B, Nq, Nkv, Sq, Skv, D, Dv;
    infiniDtype_t dtype;             /* of out, q, k and v */
    fc_dtype fc;                     /* the same, as the core names it */
    int64_t stride[FA_MASK][4];      /* out, q, k, v: (batch, head, seq, dim) in elements; batch 0 for 3-D */
    bool has_mask;
    int64_t mask_rows;               /* 1 (one row for every batch) or B */
    int64_t mask_stride;             /* elements between mask rows */
    int64_t esize[FA_TENSORS];       /* bytes per element */
    int64_t lo[FA_TENSORS], hi[FA_TENSORS]; /* bytes each view touches, relative to its base: [lo, hi) */
} infini_fa_geom;

typedef struct infini_fa {
    struct InfiniopDescriptor base;  /* first: (device, device_id) */
    infini_fa_geom g;
    /* data addresses are bound at every run; a plan's kernels are chosen for the score terms it
     * has, so a descriptor with a mask plans the runs that bring one apart from those that don't */
    fc_plan *plan, *masked;
    size_t plan_bytes;               /* the larger plan's workspace */
    size_t workspace;                /* reported size: plan_bytes, then the mask bytes */
} infini_fa;

/* Create's checks after the liveness checks: BAD_TENSOR_DTYPE, then _SHAPE, then _STRIDES.
 * t[FA_MASK] may be NULL. */
infiniStatus_t infini_fa_check(const struct InfiniopTensorDescriptor *const t[FA_TENSORS], infini_fa_geom *g);

/* Lowers the geometry into the canonical problem and plans it for the handle's device type (the
 * CPU, or CUDA for INFINI_DEVICE_NVIDIA), for runs with the key-padding mask (masked) or without. */
infiniStatus_t infini_fa_plan(const infini_fa_geom *g, int device, bool masked, fc_plan **plan);

/* The key-padding mask as the core reads it: one byte per key, nonzero = hidden.  Byte-sized
 * dtypes are read in place; wider ones are narrowed at run time into mask scratch bytes at the end
 * of the workspace (so the core never reads a wide element as bytes). */
size_t infini_mask_scratch_bytes(const infini_fa_geom *g);
int64_t infini_mask_batch_stride(const infini_fa_geom *g); /* of the byte view; 0 = shared row */
const uint8_t *infini_mask_bytes(const infini_fa_geom *g, const void *mask, uint8_t *scratch);

/* Run-time checks of the data addresses (semantics §8.18): every operand aligned to its element,
 * when it starts in a live runtime allocation inside it, and in the memory of the descriptor's
 * device type (device memory for NVIDIA, host memory for the CPU); ptr[FA_MASK] may be NULL. */
infiniStatus_t infini_fa_check_operands(const infini_fa *d, const void *const ptr[FA_TENSORS]);
/* A workspace in a live runtime allocation must have `need` bytes before that allocation ends. */
bool infini_workspace_fits(const void *workspace, size_t need);

#endif /* FC_INFINIOP_FA_H */
