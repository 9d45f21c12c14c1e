/*
 * FlashAttention-family layouts (semantics §1): layout strings, the sizes a call's query, key and
 * value imply, TND actual lengths, and the strided view of a sequence operand in a layout.
 * Shared by the forward and backward operators.
 */
#ifndef FC_CANN_FA_LAYOUT_H
#define FC_CANN_FA_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/problem.h"
#include "cann/common/operand.h"

typedef enum fa_layout { FA_LAYOUT_BSH, FA_LAYOUT_SBH, FA_LAYOUT_BSND, FA_LAYOUT_BNSD, FA_LAYOUT_TND } fa_layout;

#define FA_MAX_BATCH 2097152
#define FA_MAX_HEADS 256
#define FA_MAX_LEN 1048576
#define FA_MAX_DIM 1024

typedef struct fa_geom {
    fa_layout layout;
    int64_t B, N1, N2, D, Dv, Dr;
    int64_t S1, S2;          /* dense: the sequence lengths; TND: the largest batch lengths */
    int64_t T1, T2;          /* TND: token totals (dense: B·S1, B·S2) */
    int64_t *cum_q, *cum_kv; /* TND: cumulative ends per batch (owned, see fa_geom_free); NULL dense */
} fa_geom;

void fa_geom_free(fa_geom *g);

/* Reads at most 64 bytes of s; false for NULL or an unknown string. */
bool fa_layout_parse(const char *s, fa_layout *out);
const char *fa_layout_name(fa_layout layout);
/* Rank of a sequence tensor in the layout (3 or 4). */
int fa_layout_rank(fa_layout layout);

/* Sizes from query, key and value (§1.2, §1.6).  TND leaves B and the per-batch lengths to
 * fa_geom_lengths.  Messages name the tensors and headNum as spelled in fn's declaration. */
aclnnStatus fa_geom_derive(fa_geom *g, fa_layout layout, const cann_operand *q, const cann_operand *k,
                           const cann_operand *v, int64_t head_num, const char *head_num_name);

/* TND actual lengths (§1.3): both present, same length B >= 1, entries >= 0 and non-decreasing,
 * last entries T1 and T2.  Copies them into g. */
aclnnStatus fa_geom_lengths(fa_geom *g, const char *fn, const cann_ints *aq, const char *aq_name, const cann_ints *akv,
                            const char *akv_name);

static inline int64_t fa_tok_q(const fa_geom *g, int64_t b) { return g->cum_q ? (b ? g->cum_q[b - 1] : 0) : 0; }
static inline int64_t fa_tok_kv(const fa_geom *g, int64_t b) { return g->cum_kv ? (b ? g->cum_kv[b - 1] : 0) : 0; }
static inline int64_t fa_len_q(const fa_geom *g, int64_t b) { return g->cum_q ? g->cum_q[b] - fa_tok_q(g, b) : g->S1; }
static inline int64_t fa_len_kv(const fa_geom *g, int64_t b) { return g->cum_kv ? g->cum_kv[b] - fa_tok_kv(g, b) : g->S2; }

/* The expected shape of a sequence tensor of the call (query side: B, S1/T1; kv side: B, S2/T2)
 * with `heads` heads of `feat` features.  Returns the rank. */
int fa_seq_shape(const fa_geom *g, bool q_side, int64_t heads, int64_t feat, int64_t dims[4]);

/* t must have that shape (used for attentionOut and the backward's dy, dq, dk, dv, …). */
aclnnStatus fa_check_seq_shape(const fa_geom *g, const cann_operand *t, bool q_side, int64_t heads, int64_t feat);

/* The strided view of a sequence operand with `feat` features per head (§1.1). */
fc_view fa_seq_view(const fa_geom *g, const cann_operand *t, int64_t feat);

#endif /* FC_CANN_FA_LAYOUT_H */
