/*
 * The key-padding mask (semantics §7.4): every dtype (BOOL, BYTE, I8..I64, U8..U64) with hidden
 * values whose low byte is zero, every shape ((B, Skv) and (Skv) with 4-D q, (Skv) with 3-D q),
 * strided rows (gaps, negative, stride 0), batches with every key hidden (rows exactly 0), a NULL
 * mask pointer with a mask descriptor (no mask), a mask pointer without a descriptor (ignored).
 */
#include <stdio.h>

#include "harness.h"

static const infiniDtype_t mask_dtypes[] = {INFINI_DTYPE_BOOL, INFINI_DTYPE_BYTE, INFINI_DTYPE_I8,  INFINI_DTYPE_I16,
                                            INFINI_DTYPE_I32,  INFINI_DTYPE_I64,  INFINI_DTYPE_U8,  INFINI_DTYPE_U16,
                                            INFINI_DTYPE_U32,  INFINI_DTYPE_U64};
#define N_MASK_DTYPES (int)(sizeof mask_dtypes / sizeof mask_dtypes[0])

static void every_dtype_and_shape(void)
{
    static const struct { const char *name; int rank, mask_rank; } shapes[] = {
        {"(B, Skv) mask, 4-D q", 4, 2}, {"(Skv) mask, 4-D q", 4, 1}, {"(Skv) mask, 3-D q", 3, 1}};
    for (int m = 0; m < N_MASK_DTYPES; m++)
        for (int s = 0; s < 3; s++) {
            ifa_case c = ifa_case_default();
            c.rank = shapes[s].rank, c.B = c.rank == 4 ? 3 : 1;
            c.Nq = 2, c.Sq = 6, c.Skv = 70, c.D = 8;
            c.mask_rank = shapes[s].mask_rank, c.mask_dtype = mask_dtypes[m], c.mask_density = 0.5;
            c.seed = 400 + m * 3 + s;
            char name[96];
            snprintf(name, sizeof name, "mask dtype %d, %s", (int)mask_dtypes[m], shapes[s].name);
            ifa_run_case(name, &c);
        }
}

static void strided_rows(void)
{
    static const struct { const char *name; ifa_layout lay; } lays[] = {
        {"gaps", LAY_GAPS}, {"negative row stride", LAY_NEGATIVE}, {"row stride 0", LAY_BROADCAST}};
    const infiniDtype_t dts[2] = {INFINI_DTYPE_BOOL, INFINI_DTYPE_U16};
    for (int k = 0; k < 3; k++)
        for (int d = 0; d < 2; d++) {
            ifa_case c = ifa_case_default();
            c.B = 3, c.Sq = 5, c.Skv = 9;
            c.mask_rank = 2, c.mask_dtype = dts[d], c.mask_layout = lays[k].lay;
            c.seed = 500 + k * 2 + d;
            char name[96];
            snprintf(name, sizeof name, "mask %s, dtype %d", lays[k].name, (int)dts[d]);
            ifa_run_case(name, &c);
        }
}

static void fully_hidden_batches(void)
{
    const tc_dtype dts[3] = {TC_F32, TC_F16, TC_BF16};
    for (int d = 0; d < 3; d++)
        for (int wide = 0; wide < 2; wide++) {
            ifa_case c = ifa_case_default();
            c.dtype = dts[d], c.B = 2, c.Nq = 4, c.Nkv = 2, c.Sq = 7, c.Skv = 66;
            c.mask_rank = 2, c.mask_dtype = wide ? INFINI_DTYPE_I64 : INFINI_DTYPE_BOOL, c.hide_batch0 = true;
            c.seed = 600 + d * 2 + wide;
            char name[96];
            snprintf(name, sizeof name, "batch 0 fully hidden, %s, %s mask", tc_dtype_name(c.dtype), wide ? "I64" : "BOOL");
            ifa_run_case(name, &c);
        }
    ifa_case c = ifa_case_default();
    c.rank = 3, c.B = 1, c.mask_rank = 1, c.mask_dtype = INFINI_DTYPE_U32, c.mask_density = 1.0, c.seed = 610;
    ifa_run_case("every key hidden, 3-D", &c);
}

static void absent_masks(void)
{
    for (int wide = 0; wide < 2; wide++) {
        ifa_case c = ifa_case_default();
        c.mask_rank = 2, c.mask_dtype = wide ? INFINI_DTYPE_I32 : INFINI_DTYPE_BYTE, c.mask_density = 0.6;
        c.mask_null_at_run = true, c.seed = 700 + wide;
        ifa_run_case(wide ? "NULL mask pointer with an I32 mask descriptor" : "NULL mask pointer with a BYTE mask descriptor", &c);
        c.mask_null_at_run = false, c.mask_without_desc = true, c.seed = 710 + wide;
        ifa_run_case(wide ? "I32 mask pointer without a descriptor" : "BYTE mask pointer without a descriptor", &c);
    }
    ifa_case c = ifa_case_default();
    c.mask_rank = 2, c.mask_dtype = INFINI_DTYPE_I16, c.runtime = true, c.seed = 720;
    ifa_run_case("I16 mask and workspace in infinirt allocations", &c);
}

int main(void)
{
    every_dtype_and_shape();
    strided_rows();
    fully_hidden_batches();
    absent_masks();
    return tc_summary("infiniop_masks");
}
