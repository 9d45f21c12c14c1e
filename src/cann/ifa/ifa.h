/*
 * IncreFlashAttentionV4 (semantics §4), private to the face: what one first-phase call carries,
 * what its validation learns, and the steps from validation to a published executor.
 *
 *   ifa_params.h     the parameter list: ids and the typed call
 *   ifa_rules.c      the validation rules in the order of §0.5
 *   ifa_kv.c         key/value tensor lists, the kv geometry and the paged cache (§4.2, §4.3)
 *   ifa_quant.c      antiquant (§4.5) and output quantisation (§4.6) parameters
 *   ifa_lower.c      lowering into fc_problem; which kv positions a batch sees (§4.3)
 *   ifa_exec.c       the executor payload: phase-2 device data (kvPaddingSize, block table) bound to a run
 */
#ifndef FC_CANN_IFA_H
#define FC_CANN_IFA_H

#include <stdbool.h>
#include <stdint.h>

#include "aclnn/aclnn_base.h"
#include "core/batch.h"
#include "core/problem.h"
#include "cann/fa/fa_layout.h"
#include "ifa_params.h"
#include "cann/common/operand.h"
#include "cann/common/signature.h"

#define IFA_MAX_BATCH 65536 /* §1.6 */
#define IFA_MAX_LIST 256    /* per-batch tensor lists */
#define IFA_MAX_GROUP 64    /* N1 / N2 */
#define IFA_MAX_BLOCK 512   /* blockSize */

/* A key or value tensor list: snapshots of its elements, named "key[k]". */
typedef struct ifa_list {
    uint64_t count;
    cann_operand el[IFA_MAX_LIST];
    char names[IFA_MAX_LIST][24];
} ifa_list;

/* Sizes and kv storage form. */
typedef struct ifa_geom {
    fa_layout layout;
    int64_t B, N1, N2, D;
    bool per_batch;      /* a list of B tensors with batch size 1 */
    bool paged;          /* a block table was given: the list holds one cache */
    bool cache4d;        /* paged cache (blockNum, N2, blockSize, D); else (blockNum, blockSize, N2·D) */
    int64_t blocks, W;   /* paged: blockNum and the block table's width */
    int64_t block_size;
    int64_t s_max;       /* Smax of §4.2 */
} ifa_geom;

typedef struct ifa_state {
    const ifa_call *c;
    const char *fn;
    cann_operand t[IFA_NPARAMS]; /* tensor snapshots by id (absent: present = false) */
    ifa_list kv[2];              /* key, value */
    cann_ints act;
    ifa_geom g;
    int64_t *len;                /* L_b per batch (owned; NULL until the lengths are checked) */
} ifa_state;

static inline const char *ifa_name(const ifa_state *s, ifa_param id) { return cann_sig_name(s->c->sig, id); }

/* ---- ifa_rules.c ----------------------------------------------------------------------------- */
aclnnStatus ifa_validate(ifa_state *s);

/* ---- ifa_kv.c -------------------------------------------------------------------------------- */
/* Live list, live elements (still the tensors the list was made with), snapshots, dtype. */
aclnnStatus ifa_kv_capture(ifa_state *s, int which);
/* value mirrors key: same count, element k of both with identical shape, same dtype. */
aclnnStatus ifa_kv_match(ifa_state *s);
/* Query sizes (§4.2): rank, S = 1, B, N1, D. */
aclnnStatus ifa_query_geom(ifa_state *s);
/* Key/value sizes: element count and form, N2, D, S, GQA limits, the paged cache forms. */
aclnnStatus ifa_kv_geom(ifa_state *s);
/* Paged: blockSize against the cache; the block table's shape; Smax. */
aclnnStatus ifa_paged_geom(ifa_state *s);
/* S_b of batch b (the paged form: W·blockSize). */
int64_t ifa_seq_len(const ifa_state *s, int64_t b);
/* The strided view of list `which` (key 0, value 1); per-batch lists share their element strides. */
fc_view ifa_kv_view(const ifa_state *s, int which);

/* ---- ifa_quant.c ----------------------------------------------------------------------------- */
aclnnStatus ifa_antiquant_check(ifa_state *s);        /* antiquantScale: present iff INT8 key/value, dtype */
aclnnStatus ifa_antiquant_offset_check(ifa_state *s); /* antiquantOffset: like the scale */
aclnnStatus ifa_antiquant_shape(ifa_state *s);        /* per tensor / per channel shapes */
aclnnStatus ifa_out_quant_check(ifa_state *s);        /* quantScale2 dtype */
aclnnStatus ifa_out_offset_check(ifa_state *s);       /* quantOffset2: like the scale */
aclnnStatus ifa_out_quant_shape(ifa_state *s);        /* one or N1·D elements, read as (head, feature) */
/* The dequantisation map of list `which` (key: index 0, value: index 1). */
fc_affine_view ifa_antiquant_view(const ifa_state *s, int which);
fc_affine_view ifa_out_quant_view(const ifa_state *s);

/* ---- ifa_lower.c ----------------------------------------------------------------------------- */
/* The kv window of every batch (§4.3) for left padding `pad` (ignored without padding). */
typedef struct ifa_lens {
    int64_t B;
    const int64_t *seq, *len; /* S_b, L_b */
    bool left_padding;
} ifa_lens;
/* Each batch's kv length skv[b] and column floor kv_lo[b] (the run's lengths, core/batch.h). */
void ifa_kv_window(const ifa_lens *l, int64_t pad, int64_t *skv, int64_t *kv_lo);
/* How the kv windows become per-batch facts: one query row, mask and pse batch strides. */
fc_batch_rule ifa_batch_rule(const ifa_state *s);

/* seq[B] receives S_b, kv_window[2·B] the planned (unpadded) windows: lengths, then floors. */
aclnnStatus ifa_lower(const ifa_state *s, char **batch_data, int64_t *seq, int64_t *kv_window, fc_problem *p);

/* ---- ifa_exec.c ------------------------------------------------------------------------------ */
aclnnStatus ifa_make_executor(const ifa_state *s, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus ifa_prepare(const ifa_call *call, uint64_t *workspaceSize, aclOpExecutor **executor);

#endif /* FC_CANN_IFA_H */
