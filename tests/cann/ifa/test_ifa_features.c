/*
 * IncreFlashAttentionV4 against tests/reference (semantics §4, §9 e): layouts, dtypes, GQA
 * (numKeyValueHeads, 0 = numHeads), strided views, actual lengths (one for all, per batch, 0),
 * attention masks in every shape and dtype, pseShift (per batch and shared) after the scale,
 * innerPrecise, and long caches that the kernel splits across threads (flash-decoding).
 */
#include <stdio.h>

#include "ifa_harness.h"

static const char *const layouts[] = {"BSH", "BSND", "BNSD"};

static void layouts_dtypes_heads(void)
{
    char name[128];
    for (int l = 0; l < 3; l++)
        for (int dt = 0; dt < 2; dt++)
            for (int st = 0; st < 3; st++) {
                ifa_case c = ifa_case_default();
                c.layout = layouts[l];
                c.dtype = dt ? TC_BF16 : TC_F16;
                c.strides = (fa_strides)st;
                c.B = 3, c.N1 = 8, c.N2 = 2, c.D = 24;
                c.seed = 10 + l * 6 + dt * 3 + st;
                snprintf(name, sizeof name, "%s %s strides %d GQA 8/2", c.layout, dt ? "bf16" : "fp16", st);
                ifa_run_case(name, &c, NULL);
            }
    for (int l = 0; l < 3; l++) {
        ifa_case c = ifa_case_default();
        c.layout = layouts[l];
        c.N1 = c.N2 = 4;
        c.nkv_zero = true; /* numKeyValueHeads 0: as many kv heads as query heads */
        snprintf(name, sizeof name, "%s numKeyValueHeads 0", c.layout);
        ifa_run_case(name, &c, NULL);
        c.nkv_zero = false, c.N1 = 64, c.N2 = 1, c.D = 8; /* MQA with the widest group */
        snprintf(name, sizeof name, "%s MQA 64/1", c.layout);
        ifa_run_case(name, &c, NULL);
    }
    ifa_case c = ifa_case_default();
    c.B = 1, c.N1 = 1, c.N2 = 1, c.D = 1, c.S[0] = 1;
    ifa_run_case("smallest: B 1, N 1, D 1, S 1", &c, NULL);
    c = ifa_case_default();
    c.D = 256, c.N1 = 2, c.N2 = 1, c.S[0] = 70;
    ifa_run_case("D 256", &c, NULL);
    c.scale = -0.7, c.inner_precise = 0;
    ifa_run_case("negative scale, innerPrecise 0", &c, NULL);
}

static void lengths(void)
{
    ifa_case c = ifa_case_default();
    c.B = 4, c.S[0] = 20;
    c.act_count = 1, c.L[0] = 13;
    ifa_run_case("actualSeqLengths: one value for all batches", &c, NULL);
    c.act_count = 4, c.L[0] = 20, c.L[1] = 0, c.L[2] = 1, c.L[3] = 9;
    ifa_run_case("actualSeqLengths per batch, one of them 0 (zeros)", &c, NULL);
    c.act_count = 1, c.L[0] = 0;
    ifa_run_case("actualSeqLengths 0 for all: every row zero", &c, NULL);
    c.act_count = 4, c.L[0] = 5, c.L[1] = 0, c.L[2] = 20, c.L[3] = 3;
    c.mask_rank = 4, c.pse = true;
    ifa_run_case("lengths with mask and pse", &c, NULL);
}

static void masks(void)
{
    const aclDataType dts[] = {ACL_BOOL, ACL_INT8, ACL_UINT8};
    char name[128];
    for (int rank = 2; rank <= 4; rank++)
        for (int d = 0; d < 3; d++) {
            ifa_case c = ifa_case_default();
            c.B = 3, c.S[0] = 33, c.mask_rank = rank, c.mask_dt = dts[d], c.extra_cols = d * 5;
            c.layout = layouts[(rank + d) % 3];
            c.seed = 40 + rank * 3 + d;
            snprintf(name, sizeof name, "attenMask rank %d dtype %d extra columns %d", rank, (int)dts[d], c.extra_cols);
            ifa_run_case(name, &c, NULL);
        }
    ifa_case c = ifa_case_default();
    c.B = 3, c.mask_rank = 2, c.mask_full_batch = 1, c.mask_density = 0.5;
    ifa_run_case("a batch with every position masked: zeros (§8.10)", &c, NULL);
    c.strides = ST_GAPS, c.mask_rank = 3, c.mask_density = 0.9;
    ifa_run_case("dense mask, strided", &c, NULL);
}

static void pse(void)
{
    char name[128];
    for (int shared = 0; shared < 2; shared++)
        for (int dt = 0; dt < 2; dt++) {
            ifa_case c = ifa_case_default();
            c.B = 3, c.N1 = 6, c.N2 = 3, c.S[0] = 17, c.pse = true, c.pse_shared = shared, c.extra_cols = 4;
            c.dtype = dt ? TC_BF16 : TC_F16, c.scale = 0.4;
            c.layout = layouts[shared + dt];
            snprintf(name, sizeof name, "pseShift %s, %s", shared ? "(1, N1, 1, S)" : "(B, N1, 1, S)",
                     dt ? "bf16" : "fp16");
            ifa_run_case(name, &c, NULL);
            c.mask_rank = 2, c.strides = ST_REVERSED;
            ifa_run_case("pseShift and attenMask, reversed strides", &c, NULL);
        }
}

/* Few query rows and long caches: the kv axis is split across threads and merged. */
static void long_caches(void)
{
    ifa_case c = ifa_case_default();
    c.B = 1, c.N1 = 8, c.N2 = 2, c.D = 64, c.S[0] = 2500;
    ifa_run_case("one batch, 2500 positions (flash-decoding)", &c, NULL);
    c.B = 2, c.act_count = 2, c.L[0] = 1777, c.L[1] = 64, c.mask_rank = 2, c.mask_density = 0.2, c.pse = true;
    c.layout = "BSH", c.dtype = TC_BF16;
    ifa_run_case("two batches, long and short, mask and pse", &c, NULL);
}

int main(void)
{
    layouts_dtypes_heads();
    lengths();
    masks();
    pse();
    long_caches();
    return tc_summary("cann_ifa_features");
}
