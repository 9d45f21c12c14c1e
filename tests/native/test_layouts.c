/* Layouts, strides, dtypes, sizes, GQA/MQA, Dv != D, rope and scale, each against the reference. */
#include "common/check.h"
#include "harness.h"

static const char *layout_name[] = {"BNSD", "BSND", "BSH", "SBH", "TND"};
static const char *dt_name[] = {"f32", "f16", "bf16"};

/* GQA with Dv != D in every padded layout and input/output dtype pair. */
static void layouts_and_dtypes(void)
{
    const fc_dtype pairs[][2] = {{FC_F32, FC_F32}, {FC_F16, FC_F16}, {FC_BF16, FC_BF16},
                                 {FC_F16, FC_F32}, {FC_BF16, FC_F16}, {FC_F32, FC_BF16}};
    for (int l = NT_BNSD; l <= NT_SBH; l++)
        for (int p = 0; p < 6; p++) {
            nt_case c = nt_default();
            c.seed = 100 + l * 10 + p;
            c.B = 2, c.N1 = 4, c.N2 = 2, c.D = 24, c.Dv = 16, c.Sq = 13, c.Skv = 17;
            c.layout = (nt_layout)l, c.dt = pairs[p][0], c.out_dt = pairs[p][1];
            c.stats = true;
            tc_context("layout %s in %s out %s", layout_name[l], dt_name[c.dt], dt_name[c.out_dt]);
            nt_run(&c);
        }
}

/* Padded strides, a non-unit feature stride, mixed layouts per operand, broadcast strides. */
static void strides(void)
{
    for (int v = 0; v < 8; v++) {
        nt_case c = nt_default();
        c.seed = 200 + v;
        c.B = 2, c.N1 = 3, c.N2 = 3, c.D = 20, c.Dv = 12, c.Sq = 9, c.Skv = 11;
        c.layout = (nt_layout)(v % 4);
        c.pad = v & 1 ? 5 : 0;
        c.dim_stride = v & 2 ? 3 : 1;
        c.mixed_layouts = v & 4;
        c.dt = v % 3 == 0 ? FC_F16 : FC_F32;
        c.out_dt = c.dt;
        c.stats = true;
        tc_context("strides %s pad=%d dim_stride=%d mixed=%d", layout_name[c.layout], c.pad, c.dim_stride,
                   c.mixed_layouts);
        nt_run(&c);
    }
    for (int v = 0; v < 4; v++) {
        nt_case c = nt_default();
        c.seed = 220 + v;
        c.B = 2, c.N1 = 4, c.N2 = 2, c.D = 8, c.Sq = 6, c.Skv = 10, c.layout = (nt_layout)v;
        c.kv_bcast_seq = v & 1, c.q_bcast_head = (v & 2) || v == 0;
        c.pad = 1;
        tc_context("broadcast strides kv_seq=%d q_head=%d", c.kv_bcast_seq, c.q_bcast_head);
        nt_run(&c);
    }
}

/* Odd and boundary sizes (S = 1, 37, 130, 700, 1000; D = 1, 40, 64, 128, 256), Sq < Skv and Sq > Skv. */
static void sizes(void)
{
    const struct { int B, N1, N2, D, Dv, Sq, Skv; } s[] = {
        {1, 1, 1, 1, 1, 1, 1},      {2, 2, 1, 1, 3, 1, 37},     {1, 2, 2, 40, 40, 37, 130},
        {1, 3, 1, 64, 64, 130, 37}, {1, 1, 1, 128, 128, 37, 130}, {1, 2, 1, 256, 256, 130, 130},
        {1, 1, 1, 64, 64, 1000, 1000}, {1, 1, 1, 256, 1, 37, 1},  {1, 1, 1, 1, 256, 1, 130},
        {3, 2, 2, 64, 40, 65, 63},  {1, 2, 1, 128, 64, 1, 1000}, {1, 1, 1, 40, 128, 1000, 1},
        {1, 1, 1, 1024, 1024, 33, 70}, {1, 2, 1, 600, 3, 40, 9}, /* the widest heads, other tile shapes */
        {1, 256, 1, 4, 4, 3, 5},     {1, 256, 256, 2, 2, 2, 2},   /* the most heads */
        /* BNSD, then BSND (kv rows strided: the tile policy's longer items), over several items */
        {1, 4, 2, 64, 64, 700, 300}, {2, 4, 2, 64, 64, 700, 300},
    };
    for (unsigned k = 0; k < sizeof s / sizeof s[0]; k++) {
        nt_case c = nt_default();
        c.seed = 300 + k;
        c.B = s[k].B, c.N1 = s[k].N1, c.N2 = s[k].N2, c.D = s[k].D, c.Dv = s[k].Dv, c.Sq = s[k].Sq, c.Skv = s[k].Skv;
        c.layout = (nt_layout)(k % 4);
        c.stats = true;
        tc_context("size B=%d N=%d/%d D=%d Dv=%d Sq=%d Skv=%d", c.B, c.N1, c.N2, c.D, c.Dv, c.Sq, c.Skv);
        nt_run(&c);
    }
}

/* GQA/MQA group sizes, rope features, v_head_dim = 0 and explicit scales. */
static void heads_rope_scale(void)
{
    const struct { int N1, N2, D, Dv, Dr; double scale; bool v0; } s[] = {
        {8, 1, 16, 16, 0, 0, false}, {6, 3, 16, 8, 0, 0, false}, {4, 4, 16, 0, 0, 0, true},
        {4, 2, 16, 16, 8, 0, false}, {2, 1, 1, 4, 7, 0, false},  {3, 1, 32, 24, 64, 0.05, false},
        {1, 1, 512, 8, 512, 0, false}, {1, 1, 1000, 3, 1000, 0, false},
        {2, 2, 16, 16, 0, 0.3, false}, {2, 2, 16, 16, 0, -0.2, false}, {5, 5, 9, 9, 0, 2.5, false},
    };
    for (unsigned k = 0; k < sizeof s / sizeof s[0]; k++)
        for (int dt = 0; dt < 2; dt++) {
            nt_case c = nt_default();
            c.seed = 400 + k * 2 + dt;
            c.B = 2, c.N1 = s[k].N1, c.N2 = s[k].N2, c.D = s[k].D, c.Dv = s[k].Dv, c.Dr = s[k].Dr;
            c.v_dim_zero = s[k].v0, c.scale = s[k].scale;
            c.Sq = 10, c.Skv = 14, c.layout = (nt_layout)(k % 4);
            c.dt = c.out_dt = dt ? FC_BF16 : FC_F32;
            c.pad = k & 1;
            c.stats = true;
            tc_context("heads %d/%d D=%d Dv=%d Dr=%d scale=%g %s", c.N1, c.N2, c.D, c.Dv, c.Dr, c.scale, dt_name[c.dt]);
            nt_run(&c);
        }
}

/* Packed batches (TND) including zero-length batches on either side. */
static void packed(void)
{
    static const int sq[][5] = {{3, 0, 5, 1, 7}, {0, 4, 4, 0, 2}, {1, 1, 1, 1, 1}, {9, 2, 0, 0, 6}};
    static const int skv[][5] = {{4, 2, 0, 6, 7}, {3, 4, 0, 5, 2}, {1, 9, 1, 20, 3}, {9, 0, 3, 0, 11}};
    for (int k = 0; k < 4; k++)
        for (int dt = 0; dt < 3; dt++) {
            nt_case c = nt_default();
            c.seed = 500 + k * 3 + dt;
            c.B = 5, c.N1 = 4, c.N2 = 2, c.D = 12, c.Dv = 20, c.Dr = k == 2 ? 4 : 0;
            c.packed = true, c.sq = sq[k], c.skv = skv[k];
            c.pad = k & 1, c.dim_stride = k == 3 ? 2 : 1;
            c.dt = c.out_dt = (fc_dtype)dt;
            c.stats = true, c.stats_order = (fc_stats_order)(k % 3);
            tc_context("packed set %d %s", k, dt_name[dt]);
            nt_run(&c);
        }
}

/* Degenerate packed problems: no tokens at all, or many batches of a few tokens. */
static void packed_edges(void)
{
    static const int none_q[3] = {0, 0, 0}, none_kv[3] = {3, 0, 2};
    nt_case c = nt_default();
    c.seed = 520, c.B = 3, c.N1 = 2, c.packed = true, c.sq = none_q, c.skv = none_kv, c.stats = true;
    tc_context("packed: no query tokens");
    nt_run(&c);
    static int many_q[300], many_kv[300];
    for (int b = 0; b < 300; b++)
        many_q[b] = (b * 7) % 4, many_kv[b] = (b * 5) % 3;
    c = nt_default();
    c.seed = 521, c.B = 300, c.N1 = 2, c.N2 = 1, c.D = 8, c.packed = true, c.sq = many_q, c.skv = many_kv;
    c.stats = true, c.stats_order = FC_STATS_TOKEN_MAJOR, c.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    tc_context("packed: 300 batches of 0-3 tokens");
    nt_run(&c);
}

static void body(void)
{
    layouts_and_dtypes();
    strides();
    sizes();
    heads_rope_scale();
    packed();
    packed_edges();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_layouts", body); }
