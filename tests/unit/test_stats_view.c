/*
 * The statistics view (core/problem.h) as the CANN faces lower it, against offsets computed by
 * hand from the tensor shapes of semantics §2.8 (FlashAttention) and §5 (SparseFlashAttention):
 *   - FA dense [B, N1, S1, 8]; FA TND "" (per batch [N1, S1_b, 8] blocks); FA TND "same_as_input"
 *     [T1, N1, 8]; SFA BSND (B, N2, S1, G); SFA TND (N2, T1, G) — a few literal offsets each, then
 *     every (batch, head, row) against the shape's own index formula, which must tile the tensor;
 *   - fc_stat_store writes the value `copies` times at consecutive elements and nothing else.
 * The faces' own functions build the views and the per-batch rows (fa_lower_stats + fa_batch_rule,
 * sfa_lower_stats + sfa_batch_rule, through fc_batch_facts); kernels read only fc_stat_offset.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cann/fa/fa_forward_state.h"
#include "cann/fa/fa_stats.h"
#include "cann/sfa/sfa_lower.h"
#include "common/check.h"

#define MAXB 4

/* A face's lowering of one small problem: the view and the per-batch facts it reads. */
typedef struct form {
    const char *name;
    fc_problem p;
    fc_batch bt[MAXB];
    int64_t q_rows[MAXB], tok[MAXB];
    int64_t elements; /* of the statistics tensor */
} form;

static void set_heads(form *f, int64_t B, int64_t N1, int64_t N2)
{
    f->p.B = B, f->p.Nq = N1, f->p.Nkv = N2, f->p.G = N1 / N2, f->p.batch = f->bt;
}

/* FlashAttention: dense when cum_q is NULL (S1 rows per batch), else TND with these ends. */
static form fa_form(const char *name, int64_t B, int64_t N1, int64_t N2, int64_t S1, int64_t *cum_q, bool token_major)
{
    form f = {.name = name};
    set_heads(&f, B, N1, N2);
    fa_geom g = {.layout = cum_q ? FA_LAYOUT_TND : FA_LAYOUT_BSND, .B = B, .N1 = N1, .N2 = N2, .S1 = S1, .S2 = S1,
                 .cum_q = cum_q, .cum_kv = cum_q};
    g.T1 = g.T2 = cum_q ? cum_q[B - 1] : B * S1;
    int64_t len[MAXB];
    for (int64_t b = 0; b < B; b++)
        len[b] = fa_len_q(&g, b);
    const fa_mask_plan no_mask = {.kind = FA_MASK_NONE};
    const fc_batch_rule rule = fa_batch_rule(&g, &no_mask); /* what fa_forward.c's lower_batches applies */
    const fc_lengths lengths = {.sq = len, .skv = len};
    fc_batch_totals tot;
    fc_batch_facts(&rule, &lengths, f.bt, &tot);
    for (int64_t b = 0; b < B; b++)
        f.q_rows[b] = f.bt[b].q_rows, f.tok[b] = fa_tok_q(&g, b);
    f.p.stats = fa_lower_stats(&g, token_major, NULL, NULL);
    f.elements = g.T1 * N1 * FA_STAT_REPLICAS;
    return f;
}

/* SparseFlashAttention with query lengths sq (BSND: padded to S1). */
static form sfa_form(const char *name, int64_t B, int64_t N1, int64_t N2, int64_t S1, const int64_t *sq, bool tnd)
{
    form f = {.name = name};
    set_heads(&f, B, N1, N2);
    sfa_geom g = {.lq = tnd ? SFA_TND : SFA_BSND, .lkv = tnd ? SFA_TND : SFA_BSND, .B = B, .N1 = N1, .N2 = N2,
                  .G = N1 / N2, .S1 = tnd ? 0 : S1, .S2 = tnd ? 0 : S1, .kv_cap = S1};
    int64_t skv[MAXB], total = 0;
    for (int64_t b = 0; b < B; b++)
        skv[b] = S1, f.tok[b] = total, total += tnd ? sq[b] : S1;
    g.T1 = g.T2 = tnd ? total : 0;
    f.p.stats = sfa_lower_stats(&g, NULL, NULL);
    const fc_batch_rule rule = sfa_batch_rule(&g);
    const fc_lengths lengths = {.sq = sq, .skv = skv};
    fc_batch_totals tot;
    fc_batch_facts_into(&rule, &lengths, &f.p, &tot);
    for (int64_t b = 0; b < B; b++)
        f.q_rows[b] = f.bt[b].q_rows;
    f.elements = total * N1;
    return f;
}

static int64_t at(const form *f, int64_t b, int64_t n1, int64_t i) { return fc_stat_offset(&f->p, &f->bt[b], n1, i); }

static void expect(const form *f, int64_t b, int64_t n1, int64_t i, int64_t want)
{
    const int64_t got = at(f, b, n1, i);
    TC_CHECK(got == want, "%s: (b %lld, n1 %lld, i %lld) at %lld, want %lld", f->name, (long long)b, (long long)n1,
             (long long)i, (long long)got, (long long)want);
}

/* Shape index formulas, written from the tensor shapes (r = copy, always 0 here). */
typedef int64_t (*shape_index)(const form *f, int64_t b, int64_t n1, int64_t i);

static int64_t fa_dense(const form *f, int64_t b, int64_t n1, int64_t i)
{
    return ((b * f->p.Nq + n1) * f->q_rows[b] + i) * 8; /* [B, N1, S1, 8] */
}

static int64_t fa_tnd_blocks(const form *f, int64_t b, int64_t n1, int64_t i)
{
    return (f->tok[b] * f->p.Nq + n1 * f->q_rows[b] + i) * 8; /* ((cumS1[b]·N1) + n1·S1_b + i)·8 */
}

static int64_t fa_tnd_tokens(const form *f, int64_t b, int64_t n1, int64_t i)
{
    return ((f->tok[b] + i) * f->p.Nq + n1) * 8; /* ((cumS1[b] + i)·N1 + n1)·8 */
}

static int64_t sfa_bsnd(const form *f, int64_t b, int64_t n1, int64_t i)
{
    const int64_t G = f->p.G;
    return ((b * f->p.Nkv + n1 / G) * f->q_rows[b] + i) * G + n1 % G; /* (B, N2, S1, G) */
}

static int64_t sfa_tnd(const form *f, int64_t b, int64_t n1, int64_t i)
{
    const int64_t G = f->p.G, T1 = f->elements / f->p.Nq;
    return ((n1 / G) * T1 + f->tok[b] + i) * G + n1 % G; /* (N2, T1, G) */
}

/* Every (b, n1, i) at the shape's index; the first copies tile [0, elements) once each. */
static void sweep(const form *f, shape_index want)
{
    const int64_t copies = f->p.stats.copies;
    char *seen = calloc((size_t)f->elements, 1);
    int64_t rows = 0, bad = 0;
    for (int64_t b = 0; b < f->p.B; b++)
        for (int64_t n1 = 0; n1 < f->p.Nq; n1++)
            for (int64_t i = 0; i < f->q_rows[b]; i++, rows++) {
                const int64_t o = at(f, b, n1, i);
                if (o != want(f, b, n1, i) || o < 0 || o + copies > f->elements || o % copies || seen[o]) {
                    if (bad++ < 3)
                        TC_CHECK(false, "%s: (b %lld, n1 %lld, i %lld) at %lld, the shape says %lld (or taken)",
                                 f->name, (long long)b, (long long)n1, (long long)i, (long long)o,
                                 (long long)want(f, b, n1, i));
                    continue;
                }
                seen[o] = 1;
            }
    TC_CHECK(bad == 0 && rows * copies == f->elements, "%s: %lld rows × %lld copies for %lld elements, %lld wrong",
             f->name, (long long)rows, (long long)copies, (long long)f->elements, (long long)bad);
    free(seen);
}

static void fa_forms(void)
{
    /* B 2, N1 4, N2 2, S1 3: [2, 4, 3, 8] */
    form f = fa_form("FA dense", 2, 4, 2, 3, NULL, false);
    TC_CHECK(f.p.stats.copies == 8, "FA: copies %lld", (long long)f.p.stats.copies);
    expect(&f, 0, 0, 1, 8);
    expect(&f, 0, 1, 0, 24);                 /* (1·3)·8 */
    expect(&f, 1, 0, 0, 96);                 /* (4·3)·8 */
    expect(&f, 1, 3, 2, 184);                /* ((4 + 3)·3 + 2)·8, the last row */
    sweep(&f, fa_dense);

    /* TND, S1_b = 2, 5, 3 (T1 10), N1 4: blocks [4, 2, 8] at 0, [4, 5, 8] at 64, [4, 3, 8] at 224 */
    int64_t cum[3] = {2, 7, 10};
    f = fa_form("FA TND per-batch blocks", 3, 4, 2, 5, cum, false);
    expect(&f, 0, 1, 1, 24);                 /* (1·2 + 1)·8 */
    expect(&f, 1, 0, 0, 64);
    expect(&f, 1, 2, 3, 168);                /* 64 + (2·5 + 3)·8 */
    expect(&f, 2, 3, 2, 312);                /* 224 + (3·3 + 2)·8, the last row */
    sweep(&f, fa_tnd_blocks);

    f = fa_form("FA TND same_as_input", 3, 4, 2, 5, cum, true); /* [10, 4, 8] */
    expect(&f, 0, 1, 1, 40);                 /* (1·4 + 1)·8 */
    expect(&f, 1, 0, 0, 64);                 /* (2·4)·8 */
    expect(&f, 1, 2, 3, 176);                /* ((2 + 3)·4 + 2)·8 */
    expect(&f, 2, 3, 2, 312);                /* ((7 + 2)·4 + 3)·8 */
    sweep(&f, fa_tnd_tokens);

    /* one batch of MQA (G = N1) and GQA with a single head: the head split must not matter */
    f = fa_form("FA dense MQA", 1, 6, 1, 4, NULL, false);
    expect(&f, 0, 5, 3, 184);                /* (5·4 + 3)·8 */
    sweep(&f, fa_dense);
    int64_t one[2] = {3, 3};
    f = fa_form("FA TND empty batch", 2, 1, 1, 3, one, true);
    sweep(&f, fa_tnd_tokens);
}

static void sfa_forms(void)
{
    /* BSND, B 2, N1 4, N2 2 (G 2), S1 3: (2, 2, 3, 2); padded rows have slots too */
    const int64_t full[2] = {3, 1};
    form f = sfa_form("SFA BSND", 2, 4, 2, 3, full, false);
    TC_CHECK(f.p.stats.copies == 1, "SFA: copies %lld", (long long)f.p.stats.copies);
    expect(&f, 0, 1, 0, 1);                  /* n2 0, g 1 */
    expect(&f, 0, 2, 1, 8);                  /* ((0 + 1)·3 + 1)·2 */
    expect(&f, 1, 0, 0, 12);                 /* (2·3)·2 */
    expect(&f, 1, 3, 2, 23);                 /* ((2 + 1)·3 + 2)·2 + 1, the last row */
    sweep(&f, sfa_bsnd);

    /* TND, S1_b = 2, 5, 3 (T1 10), N1 4, N2 2: (2, 10, 2) */
    const int64_t sq[3] = {2, 5, 3};
    f = sfa_form("SFA TND", 3, 4, 2, 5, sq, true);
    expect(&f, 0, 2, 0, 20);                 /* (1·10)·2 */
    expect(&f, 1, 3, 4, 33);                 /* (10 + 2 + 4)·2 + 1 */
    expect(&f, 2, 0, 2, 18);                 /* (7 + 2)·2 */
    expect(&f, 2, 3, 2, 39);                 /* (10 + 9)·2 + 1, the last row */
    sweep(&f, sfa_tnd);

    const int64_t gqa[2] = {4, 0};
    f = sfa_form("SFA TND G 3, an empty batch", 2, 6, 2, 4, gqa, true);
    sweep(&f, sfa_tnd);
}

/* fc_stat_store: `copies` identical values from `at`, the elements around it untouched. */
static void store_copies(void)
{
    float mx[12], sm[12];
    for (int k = 0; k < 12; k++)
        mx[k] = sm[k] = NAN;
    const fc_stats_view s = {.max = mx, .sum = sm, .copies = 8};
    fc_stat_store(&s, 2, -1.5f, 3.25f);
    int bad = 0;
    for (int k = 0; k < 12; k++) {
        const bool in = k >= 2 && k < 10;
        bad += in ? !(mx[k] == -1.5f && sm[k] == 3.25f) : !(isnan(mx[k]) && isnan(sm[k]));
    }
    TC_CHECK(bad == 0, "fc_stat_store: %d elements wrong (8 copies from element 2 expected)", bad);
}

int main(void)
{
    fa_forms();
    sfa_forms();
    store_copies();
    return tc_summary("unit_stats_view");
}
