/*
 * The CUDA sparse forward's geometry (src/cuda/sparse_plan.h: plain C, so it runs without CUDA):
 * the grid row → (batch, row) search against a linear scan over random batches (empty batches,
 * padding rows, one batch), and the kernel class of head dims against its definition (the
 * smallest tile that holds Dqk rounded up to 8 plus Dr, and Dv; MLA 576 / 512; none beyond).
 */
#include <stdio.h>
#include <string.h>

#include "common/check.h"
#include "common/rng.h"
#include "cuda/sparse_plan.h"

static void token_search(void)
{
    tc_rng r = tc_rng_seed(30);
    fc_batch bt[40];
    for (int round = 0; round < 400; round++) {
        const int nb = (int)tc_rng_int(&r, 1, 40);
        int64_t rows = 0;
        memset(bt, 0, sizeof bt);
        for (int b = 0; b < nb; b++) {
            bt[b].q_rows = tc_rng_int(&r, 0, 3) == 0 ? 0 : tc_rng_int(&r, 1, 9);
            bt[b].sq = bt[b].q_rows - (bt[b].q_rows ? tc_rng_int(&r, 0, 1) : 0);
            bt[b].stat_row0 = rows;
            rows += bt[b].q_rows;
        }
        TC_CHECK(fc_sfa_rows(bt, nb) == rows, "round %d: %lld rows, counted %lld", round, (long long)fc_sfa_rows(bt, nb),
                 (long long)rows);
        for (int64_t x = 0, b0 = 0; x < rows; x++) {
            while (x >= bt[b0].stat_row0 + bt[b0].q_rows)
                b0++;
            int64_t b, i;
            fc_sfa_token(bt, nb, x, &b, &i);
            if (b != b0 || i != x - bt[b0].stat_row0) {
                TC_CHECK(false, "round %d: row %lld is (%lld, %lld), not (%lld, %lld)", round, (long long)x, (long long)b,
                         (long long)i, (long long)b0, (long long)(x - bt[b0].stat_row0));
                break;
            }
        }
    }
    TC_CHECK(fc_sfa_rows(bt, 0) == 0, "no batches, no rows");
}

static int class_by_definition(int64_t dqk, int64_t dr, int64_t dv)
{
    const int64_t k = (dqk + 7) / 8 * 8 + dr;
    static const int classes[3] = {64, 128, 256};
    for (int c = 0; c < 3; c++)
        if (k <= classes[c] && dv <= classes[c])
            return classes[c];
    return k <= 576 && dv <= 512 ? 576 : 0;
}

static void classes(void)
{
    static const struct {
        int64_t dqk, dr, dv;
        int want;
    } fixed[] = {
        {64, 0, 64, 64},   {24, 8, 16, 64},   {57, 0, 64, 64},   {57, 7, 64, 128}, {128, 0, 128, 128}, {96, 32, 128, 128},
        {100, 0, 130, 256}, {256, 0, 256, 256}, {512, 64, 512, 576}, {512, 0, 512, 576}, {256, 8, 256, 576},
        {512, 65, 512, 0}, {513, 0, 64, 576}, {513, 64, 64, 0}, {64, 0, 513, 0},  {0, 0, 64, 0},    {8, 0, 0, 0},
    };
    for (size_t x = 0; x < sizeof fixed / sizeof fixed[0]; x++)
        TC_CHECK(fc_sfa_class(fixed[x].dqk, fixed[x].dr, fixed[x].dv) == fixed[x].want, "class of %lld + %lld, %lld: %d, want %d",
                 (long long)fixed[x].dqk, (long long)fixed[x].dr, (long long)fixed[x].dv,
                 fc_sfa_class(fixed[x].dqk, fixed[x].dr, fixed[x].dv), fixed[x].want);
    int bad = 0;
    for (int64_t dqk = 1; dqk <= 600; dqk += 1)
        for (int64_t dr = 0; dr <= 80; dr += 3)
            for (int64_t dv = 1; dv <= 600; dv += 7) {
                const int c = fc_sfa_class(dqk, dr, dv);
                if (c != class_by_definition(dqk, dr, dv) && bad++ < 5)
                    TC_CHECK(false, "class of %lld + %lld, %lld: %d", (long long)dqk, (long long)dr, (long long)dv, c);
                /* the tile holds every feature: rope after the main part, both inside the class */
                if (c && (fc_sfa_rope_at(dqk) < dqk || fc_sfa_rope_at(dqk) % 8 || fc_sfa_rope_at(dqk) + dr > c) && bad++ < 5)
                    TC_CHECK(false, "rope of %lld + %lld at %lld in class %d", (long long)dqk, (long long)dr,
                             (long long)fc_sfa_rope_at(dqk), c);
            }
    TC_CHECK(bad == 0, "%d head-dim triples classed wrong", bad);
    TC_CHECK(fc_sfa_head_tiles(1) == 1 && fc_sfa_head_tiles(16) == 1 && fc_sfa_head_tiles(17) == 2 && fc_sfa_head_tiles(64) == 4,
             "head tiles of 1, 16, 17, 64 query heads per kv head");
}

int main(void)
{
    token_search();
    classes();
    return tc_summary("unit_sparse_plan");
}
