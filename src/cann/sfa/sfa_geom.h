/*
 * SparseFlashAttention layouts and sizes (semantics §5.2): the layout strings, the sizes query,
 * key and value imply under layoutQuery / layoutKv (which may differ), the batch count each side
 * implies and their agreement, the expected shapes of the other operands, and the strided view of
 * an operand.  Per-batch lengths are device data and are not known here (see sfa_lengths.h).
 */
#ifndef FC_CANN_SFA_GEOM_H
#define FC_CANN_SFA_GEOM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/problem.h"
#include "cann/common/operand.h"

typedef enum sfa_layout { SFA_BSND, SFA_TND, SFA_PA_BSND } sfa_layout;

typedef struct sfa_geom {
    sfa_layout lq, lkv;
    int64_t B;                 /* batches (a TND side: entries of its actual-length tensor) */
    int64_t N1, N2, G, D, Dv, Dr, K;
    int64_t S1, S2;            /* BSND sides: the padded lengths (0 for other layouts) */
    int64_t T1, T2;            /* TND sides: token totals (0 for other layouts) */
    int64_t blocks, slots;     /* PA_BSND: blockNum and blockSize of key */
    int64_t width;             /* PA_BSND: block-table entries per batch */
    int64_t kv_cap;            /* the largest S2_b the shapes allow */
} sfa_geom;

/* "BSND", "TND" and (allow_pa) "PA_BSND"; reads at most 64 bytes; false for NULL or others. */
bool sfa_layout_parse(const char *s, bool allow_pa, sfa_layout *out);

/* Ranks, head counts, head dims and lengths of query, key and value (lq, lkv set), with the
 * limits of §1.6.  B is set when a side is BSND (both BSND: they must agree). */
aclnnStatus sfa_geom_derive(sfa_geom *g, const cann_operand *q, const cann_operand *k, const cann_operand *v);

/* The batch count of each side and their agreement: a TND side needs its actual lengths and takes
 * B from them; a BSND side's lengths, when given, have B entries; PA_BSND needs actual kv lengths
 * and a block table of B rows.  act_q, act_kv and table are the captured operands (absent ones
 * not present); table is only consulted for PA_BSND. */
aclnnStatus sfa_geom_batch(sfa_geom *g, const cann_operand *q, const cann_operand *k, const cann_operand *act_q,
                           const cann_operand *act_kv, const cann_operand *table);

/* Expected shape of a sequence operand of a side with `heads` heads of `feat` features (query
 * side: (B,S1,N,E) or (T1,N,E); kv side: (B,S2,N,E), (T2,N,E) or (blockNum,blockSize,N,E)). */
int sfa_seq_dims(const sfa_geom *g, bool q_side, int64_t heads, int64_t feat, int64_t dims[4]);
aclnnStatus sfa_check_seq(const sfa_geom *g, const cann_operand *t, bool q_side, int64_t heads, int64_t feat);

/* sparseIndices: (B,S1,N2,K) or (T1,N2,K); sets K. */
aclnnStatus sfa_check_indices(sfa_geom *g, const cann_operand *t);

/* Softmax statistics: (B,N2,S1,G) or (N2,T1,G). */
aclnnStatus sfa_check_stats(const sfa_geom *g, const cann_operand *t);

/* The strided view of a sequence operand of a side (paged kv: blocks at sb, slots at ss). */
fc_view sfa_seq_view(const sfa_geom *g, const cann_operand *t, bool q_side);

#endif /* FC_CANN_SFA_GEOM_H */
