/*
 * The FlashAttention geometry both FA harnesses draw (forward and grad share it): sizes, layout,
 * per-batch lengths for TND, and the shapes of every operand in that layout.
 */
#ifndef FLASHC_TESTS_FUZZ_FA_GEOM_H
#define FLASHC_TESTS_FUZZ_FA_GEOM_H

#include "fz.h"

typedef struct fz_fa {
    int B, N1, N2, S1, S2, D, Dv, Dr, T1, T2;
    int s1[4], s2[4];
    bool tnd;
    char layout[16];
    aclDataType dt;
    int64_t mode, pse_type;
} fz_fa;

/* Draws a geometry; tnd_ok allows layout TND (VarLen, V5). */
void fz_fa_draw(fz *f, fz_fa *g, bool tnd_ok);
/* A query-side (heads N1, rows S1/T1) or kv-side (N2, S2/T2) operand of feature width e. */
fz_spec fz_fa_seq(const fz_fa *g, bool q_side, int e);
/* softmaxMax / softmaxSum: [B, N1, S1, 8] or [T1, N1, 8]. */
fz_spec fz_fa_stats(const fz_fa *g);
/* The optional inputs both directions take, drawn in this order: pse, atten mask, drop mask (with
 * keepProb) and, where the operator has one (sink_ok), the sink. */
typedef struct fz_fa_optional {
    aclTensor *pse, *mask, *drop, *sink;
    double keep;
} fz_fa_optional;
void fz_fa_optional_draw(fz *f, fz_cann *c, const fz_fa *g, bool sink_ok, fz_fa_optional *o);

/* The int arrays and scalar attributes both directions take, drawn after the tensors. */
typedef struct fz_fa_attrs {
    aclIntArray *prefix, *actual_q, *actual_kv, *q_start, *kv_start;
    double scale;
    int64_t pre, next, heads, inner, mode, pse_type;
    char sml[16]; /* softmax layout (V5) */
} fz_fa_attrs;
void fz_fa_attrs_draw(fz *f, fz_cann *c, const fz_fa *g, fz_fa_attrs *a);

#endif
