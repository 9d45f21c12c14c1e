/* fp16 operands against the double reference with data built so that each bf16 product the amx
 * set keeps for fp16 (amx_pack.h: S = 4 products of hi/lo parts, P·V = p_hi·v_hi + p_hi·v_lo +
 * p_lo·v_hi) matters: dropping any one of them moves the fp16 output (or the fp32 statistics)
 * out of tolerance (semantics §0.4), by the factor given per case.  Every value is an fp16 value,
 * and every row has more query rows than the dot-product path takes, so the amx set runs its
 * tile products; the other paths compute in fp32 and pass as well.
 *
 *  - S's lo·lo: queries of 8.03125 (bf16 hi 8, lo 2⁻⁵) against keys of that value and keys whose
 *    parts are exact bf16 (half of them 8.0625, half 8) with the same true logit, 729.8: without
 *    lo·lo the first keys' logits drop by 128·2⁻¹⁰/√128 = 0.011 and their weight by 1.1 %; the
 *    values (+2 and −2) make that an output error of 0.011 against a tolerance of 0.002 (5.5×),
 *    and the softmax sum moves by 0.55 % against 1e-4.
 *  - S's lo·lo at small logits: queries and keys of 1.00390625 (hi 1, lo 2⁻⁸): the logit 11.403
 *    loses 128·2⁻¹⁶/√128 = 1.7e-4, and the softmax max (fp32 statistics, 1e-5 + 1e-5·|m|) allows
 *    1.2e-4 (1.4×).
 *  - P's lo part (P rounded to bf16): the row's maximum logit 0 at key 0, every other key at
 *    −0.689453 (fp16), whose weight exp(−0.689453) = 0.50184 is 0.0018 from the bf16 value 0.5:
 *    values 8 move by 0.37 %, 0.029 against a tolerance of 0.018 (1.7×).
 *  - V's lo part (V rounded to bf16): every value 64.25 (bf16 hi 64, lo 0.25): an output error of
 *    0.25 against a tolerance of 0.13 (1.9×). */
#include <stdio.h>

#include "common/check.h"
#include "harness.h"

enum { HP_S_LOLO, HP_S_MAX, HP_P_LO, HP_V_LO, HP_CASES };

static const char *const names[HP_CASES] = {"S lo·lo (near-tied logits of 730)", "S lo·lo (softmax max 11.4)",
                                            "P lo part (weights 0.50184)", "V lo part (values 64.25)"};

/* The logical inputs of one head: q[i][e], k[j][e], v[j][e]. */
static void fill(int which, const nt_case *c, nt_data *d)
{
    const int D = c->D, Dv = d->Dv;
    for (int i = 0; i < d->S1cap; i++)
        for (int e = 0; e < D; e++)
            d->q[(int64_t)i * D + e] = which == HP_S_LOLO ? 8.03125 : which == HP_S_MAX ? 1.00390625 : e == 0 ? 1.0 : 0.0;
    for (int j = 0; j < d->S2cap; j++) {
        for (int e = 0; e < D; e++) {
            double k = 0.0;
            if (which == HP_S_LOLO) /* odd keys: Σ_e k = 1028 = 128 · 8.03125, parts exact */
                k = j % 2 == 0 ? 8.03125 : e % 2 == 0 ? 8.0625 : 8.0;
            else if (which == HP_S_MAX)
                k = 1.00390625;
            else if (e == 0 && j > 0)
                k = -0.689453125;
            d->k[(int64_t)j * D + e] = k;
        }
        for (int e = 0; e < Dv; e++)
            d->v[(int64_t)j * Dv + e] = which == HP_S_LOLO ? (j % 2 == 0 ? 2.0 : -2.0) : which == HP_V_LO ? 64.25 : 8.0;
    }
}

static void body(void)
{
    for (int which = 0; which < HP_CASES; which++) {
        nt_case c = nt_fixture(7300 + (uint64_t)which, (nt_sizes){.B = 1, .N1 = 1, .N2 = 1, .D = 128, .Sq = 40, .Skv = 300});
        c.dt = c.out_dt = FC_F16;
        c.scale = which == HP_S_LOLO || which == HP_S_MAX ? 0.0 : 1.0; /* 0: the default 1/√D */
        tc_context("fp16 parts: %s", names[which]);
        nt_data d = nt_prepare(&c);
        fill(which, &c, &d);
        nt_check_threads(&c, &d); /* against the reference, with 1 and 2 threads */
        nt_data_free(&d);
    }
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_half_parts", body); }
