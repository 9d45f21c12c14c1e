/* Semantics §9l: the same logical data in every padded layout and in TND with equal lengths gives
 * the same results; TND with B batches equals B separate dense calls. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/tolerance.h"
#include "harness.h"

static nt_case base(uint64_t seed) { return nt_fixture(seed, (nt_sizes){2, 4, 2, 16, 12, 10, 10}); }

static void layouts(void)
{
    tc_context("§9l the same data in every layout");
    nt_case a = base(5700);
    a.Sq = 9, a.Skv = 14, a.dt = a.out_dt = FC_F16, a.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    for (int l = NT_BSND; l <= NT_SBH; l++) {
        nt_case b = a;
        b.layout = (nt_layout)l;
        nt_same_data("layout vs BNSD", &a, &b, true);
    }
    tc_context("§9l TND with equal lengths equals dense");
    const int sq[2] = {9, 9}, skv[2] = {14, 14};
    nt_case t = a;
    t.packed = true, t.sq = sq, t.skv = skv;
    nt_same_data("TND vs BNSD", &a, &t, true);
}

/* TND with B batches equals B separate dense calls. */

/* TND with B batches equals B separate dense calls. */
static void tnd_as_separate_calls(void)
{
    tc_context("§9l TND batches equal separate dense calls");
    static const int sq[4] = {5, 0, 8, 3}, skv[4] = {7, 4, 2, 0};
    nt_case t = base(5710);
    t.B = 4, t.packed = true, t.sq = sq, t.skv = skv, t.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    nt_data dt = nt_prepare(&t);
    nt_result rt;
    nt_execute(&t, &dt, &rt);
    for (int b = 0; b < t.B; b++) {
        if (sq[b] == 0 || skv[b] == 0)
            continue; /* a dense call needs at least one position on each side */
        nt_case one = t;
        one.B = 1, one.packed = false, one.sq = one.skv = NULL, one.Sq = sq[b], one.Skv = skv[b];
        nt_data d1 = nt_prepare(&one);
        for (int n = 0; n < t.N1; n++)
            memcpy(d1.q + (int64_t)n * sq[b] * t.D, dt.q + ((int64_t)b * t.N1 + n) * dt.S1cap * t.D,
                   sizeof(double) * (size_t)sq[b] * t.D);
        for (int n = 0; n < t.N2; n++) {
            memcpy(d1.k + (int64_t)n * skv[b] * t.D, dt.k + ((int64_t)b * t.N2 + n) * dt.S2cap * t.D,
                   sizeof(double) * (size_t)skv[b] * t.D);
            memcpy(d1.v + (int64_t)n * skv[b] * dt.Dv, dt.v + ((int64_t)b * t.N2 + n) * dt.S2cap * dt.Dv,
                   sizeof(double) * (size_t)skv[b] * dt.Dv);
        }
        nt_result r1;
        nt_execute(&one, &d1, &r1);
        double *y = calloc((size_t)t.N1 * sq[b] * dt.Dv, sizeof(double)), *ym = calloc((size_t)t.N1 * sq[b], sizeof(double));
        for (int n = 0; n < t.N1; n++)
            for (int i = 0; i < sq[b]; i++) {
                const int64_t rp = ((int64_t)b * t.N1 + n) * rt.S1cap + i, r1i = (int64_t)n * sq[b] + i;
                memcpy(y + r1i * dt.Dv, rt.out + rp * dt.Dv, sizeof(double) * (size_t)dt.Dv);
                ym[r1i] = rt.smax[rp];
            }
        tc_compare("TND batch vs its dense call: out", y, r1.out, (int64_t)t.N1 * sq[b] * dt.Dv, tc_tol_out(TC_F32), 1);
        tc_compare("TND batch vs its dense call: max", ym, r1.smax, (int64_t)t.N1 * sq[b], tc_tol_max(), 1);
        free(y), free(ym);
        nt_result_free(&r1), nt_data_free(&d1);
    }
    nt_result_free(&rt), nt_data_free(&dt);
}

/* The same fp32 BNSD call with its buffers at every 4-byte offset from a 64-byte boundary up to
 * 60 bytes: the same bits.  Values read in place and values copied because every vector load of
 * them would split a cache line (fc_rows_split_vectors: offsets off the vector width) must agree;
 * several kv tiles, a causal diagonal and a partial tile. */
static void placements(void)
{
    tc_context("§9l the same fp32 BNSD data at every 4-byte placement");
    enum { N = 2, S = 301, D = 128, OFFSETS = 16 };
    const size_t n = (size_t)N * S * D;
    float *ref = NULL;
    for (int o = 0; o < OFFSETS; o++) {
        char *mem[4];
        float *t[4];
        for (int x = 0; x < 4; x++) {
            mem[x] = aligned_alloc(64, n * sizeof(float) + 64);
            t[x] = (float *)(mem[x] + 4 * o);
            for (size_t e = 0; e < n; e++)
                t[x][e] = x == 3 ? NAN : (float)((e * 2654435761u + 977u * (unsigned)x) % 2001u) / 1000.0f - 1.0f;
        }
        fc_attention_desc d = fc_attention_desc_init();
        d.batch = 1, d.q_heads = d.kv_heads = N, d.head_dim = D, d.q_len = d.kv_len = S;
        d.q = fc_tensor_bnsd(t[0], FC_F32, N, S, D), d.k = fc_tensor_bnsd(t[1], FC_F32, N, S, D);
        d.v = fc_tensor_bnsd(t[2], FC_F32, N, S, D), d.out = fc_tensor_bnsd(t[3], FC_F32, N, S, D);
        d.vis.window = fc_window_causal(FC_ALIGN_TOP_LEFT);
        if (TC_CHECK(fc_attention(&d) == FC_OK, "offset %d bytes: the call", 4 * o)) {
            if (!ref) {
                ref = malloc(n * sizeof(float));
                memcpy(ref, t[3], n * sizeof(float));
                size_t finite = 0;
                for (size_t e = 0; e < n; e++)
                    finite += isfinite(ref[e]) != 0;
                TC_CHECK(finite == n, "every output element written and finite (%zu of %zu)", finite, n);
            } else {
                TC_CHECK(memcmp(ref, t[3], n * sizeof(float)) == 0, "offset %d bytes: the same bits as at 0", 4 * o);
            }
        }
        for (int x = 0; x < 4; x++)
            free(mem[x]);
    }
    free(ref);
}

static void body(void)
{
    layouts();
    tnd_as_separate_calls();
    placements();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_identity_layouts", body); }
