/* Half-precision forwards that span several kv tiles and several row items (the amx set takes
 * 256-column tiles and 128-row items for them): the online softmax across tiles, the rescale of
 * the accumulator when a later tile raises a row's maximum (wide inputs make that common), the
 * partial last tile, causal and band edges inside a tile, GQA groups, a sink, and bitwise equal
 * results for 1 and more threads.  The last two cases have 32 × 1030 fp16 query rows, enough for the
 * fused pipeline's 1024-row items of fp16 parts (amx_rows.h fc_amx_rows_item: at least 32 of
 * them), with a partial last item.  On the other paths the same problems run on their own tiles. */
#include <stdio.h>

#include "common/check.h"
#include "harness.h"

typedef struct tile_case {
    fc_dtype dt, out_dt;
    int D, Sq, Skv;
    int window; /* 0 none, 1 causal top-left, 2 causal bottom-right, 3 band */
    bool sink;
    int N1; /* query heads over N1 / 4 kv heads; 0: 4 over 2 */
} tile_case;

static const tile_case cases[] = {
    {FC_BF16, FC_BF16, 64, 300, 600, 0, false, 0}, {FC_BF16, FC_BF16, 128, 260, 777, 1, false, 0},
    {FC_BF16, FC_BF16, 64, 200, 530, 2, true, 0},  {FC_BF16, FC_BF16, 32, 290, 900, 3, false, 0},
    {FC_BF16, FC_BF16, 40, 140, 515, 0, false, 0}, {FC_BF16, FC_F32, 64, 150, 600, 1, false, 0},
    {FC_F16, FC_F16, 64, 150, 600, 2, false, 0},  {FC_F16, FC_F16, 16, 1030, 300, 0, false, 32},
    {FC_F16, FC_F16, 16, 1030, 333, 2, true, 32},
};

static nt_case make(int k)
{
    const tile_case *t = &cases[k];
    const int n1 = t->N1 ? t->N1 : 4, n2 = t->N1 ? t->N1 / 4 : 2;
    nt_case c = nt_fixture(7100 + (uint64_t)k, (nt_sizes){.B = 1, .N1 = n1, .N2 = n2, .D = t->D, .Sq = t->Sq, .Skv = t->Skv});
    c.dt = t->dt, c.out_dt = t->out_dt;
    c.range = 2.5; /* logits over a wide range: later tiles raise the maxima */
    c.v_range = 1;
    if (t->window == 1 || t->window == 2)
        c.window = fc_window_causal(t->window == 1 ? FC_ALIGN_TOP_LEFT : FC_ALIGN_BOTTOM_RIGHT);
    if (t->window == 3)
        c.window = fc_window_band(300, 40, FC_ALIGN_TOP_LEFT);
    c.sink = t->sink ? NT_SINK_FINITE : NT_SINK_NONE;
    return c;
}

static void body(void)
{
    for (int k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
        nt_case c = make(k);
        tc_context("tiles case %d (D %d, Sq %d, Skv %d)", k, c.D, c.Sq, c.Skv);
        nt_run_threads(&c); /* against the reference, with 1 and more threads */
    }
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_tiles", body); }
