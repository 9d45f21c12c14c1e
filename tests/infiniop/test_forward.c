/*
 * infiniop FlashAttention against tests/reference: dtypes, 3-D and 4-D, the project document's
 * case (identical shapes), the flashc extensions (GQA/MQA, Skv != Sq, Dv != D), strided views
 * (gaps, negative, permuted, broadcast), infinirt allocations, head_dim limits, repeat runs.
 * Optional argv[1]: a kernel path to force ("scalar", "avx2", "avx512"); 77 when unavailable.
 */
#include <stdio.h>

#include "harness.h"

static const tc_dtype dtypes[3] = {TC_F32, TC_F16, TC_BF16};

static void dtypes_and_ranks(void)
{
    for (int d = 0; d < 3; d++)
        for (int rank = 3; rank <= 4; rank++) {
            ifa_case c = ifa_case_default();
            c.dtype = dtypes[d], c.rank = rank, c.B = rank == 4 ? 2 : 1;
            c.Nq = 3, c.Sq = 13, c.D = 24;
            c.seed = 10 + d * 2 + rank;
            char name[64];
            snprintf(name, sizeof name, "%s %d-D", tc_dtype_name(c.dtype), rank);
            ifa_run_case(name, &c);
        }
}

/* The seed's case: F16, q, k, v, out of one shape, a (batch, seq) mask; sizes past one tile. */
static void project_case(void)
{
    ifa_case c = ifa_case_default();
    c.dtype = TC_F16, c.B = 2, c.Nq = 4, c.Sq = 80, c.D = 64;
    c.mask_rank = 2, c.mask_dtype = INFINI_DTYPE_BOOL, c.mask_density = 0.25;
    c.seed = 21;
    ifa_run_case("project document case (F16, same shapes, BOOL mask)", &c);
}

static void extensions(void)
{
    static const struct { const char *name; int Nq, Nkv, Sq, Skv, D, Dv; } ext[] = {
        {"GQA 4/2", 4, 2, 9, 9, 16, 0},
        {"MQA 6/1", 6, 1, 7, 11, 8, 0},
        {"Skv > Sq", 2, 2, 5, 70, 16, 0},
        {"Skv < Sq", 2, 1, 67, 3, 16, 0},
        {"decode Sq 1", 8, 2, 1, 130, 32, 0},
        {"Dv < D", 2, 2, 6, 9, 32, 8},
        {"Dv > D", 2, 1, 6, 9, 8, 40},
        {"D 1", 1, 1, 4, 5, 1, 1},
        {"D 1024, Dv 1024", 1, 1, 3, 4, 1024, 1024},
    };
    for (size_t k = 0; k < sizeof ext / sizeof ext[0]; k++)
        for (int d = 0; d < 3; d++) {
            ifa_case c = ifa_case_default();
            c.dtype = dtypes[d];
            c.Nq = ext[k].Nq, c.Nkv = ext[k].Nkv, c.Sq = ext[k].Sq, c.Skv = ext[k].Skv, c.D = ext[k].D, c.Dv = ext[k].Dv;
            c.mask_rank = 2, c.mask_dtype = INFINI_DTYPE_U8;
            c.seed = 100 + k * 3 + d;
            char name[96];
            snprintf(name, sizeof name, "%s, %s", ext[k].name, tc_dtype_name(c.dtype));
            ifa_run_case(name, &c);
        }
}

static void layouts(void)
{
    static const struct { const char *name; ifa_layout lay; } lays[] = {
        {"gaps", LAY_GAPS}, {"negative strides", LAY_NEGATIVE}, {"heads/seq permuted", LAY_PERMUTED},
        {"inputs broadcast (stride 0)", LAY_BROADCAST}};
    for (size_t k = 0; k < sizeof lays / sizeof lays[0]; k++)
        for (int rank = 3; rank <= 4; rank++) {
            ifa_case c = ifa_case_default();
            c.dtype = rank == 4 ? TC_F16 : TC_F32, c.rank = rank, c.B = rank == 4 ? 2 : 1;
            c.Nq = 4, c.Nkv = 2, c.Sq = 10, c.Skv = 12, c.D = 16, c.Dv = 24;
            c.layout = lays[k].lay;
            c.mask_rank = 1, c.mask_dtype = INFINI_DTYPE_I32;
            c.seed = 200 + k * 2 + rank;
            char name[96];
            snprintf(name, sizeof name, "%s, %d-D", lays[k].name, rank);
            ifa_run_case(name, &c);
        }
}

static void runtime_memory(void)
{
    ifa_case c = ifa_case_default();
    c.dtype = TC_BF16, c.B = 3, c.Nq = 4, c.Nkv = 2, c.Sq = 33, c.Skv = 40, c.D = 32;
    c.mask_rank = 2, c.mask_dtype = INFINI_DTYPE_I64, c.hide_batch0 = true;
    c.runtime = true, c.repeat = true;
    c.seed = 300;
    ifa_run_case("infinirt allocations, exact workspace, repeated run", &c);
    c.layout = LAY_GAPS, c.dtype = TC_F32, c.seed = 301;
    ifa_run_case("infinirt allocations with gaps", &c);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !fc_cpu_force_isa(argv[1])) {
        printf("kernel path %s is not available here\n", argv[1]);
        return TC_SKIP;
    }
    dtypes_and_ranks();
    project_case();
    extensions();
    layouts();
    runtime_memory();
    return tc_summary("infiniop_forward");
}
