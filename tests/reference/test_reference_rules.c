/* The rule helpers against the documents' own examples and hand-worked positions. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "common/check.h"
#include "reference/dropout.h"
#include "reference/rules_cann.h"
#include "reference/rules_native.h"

/* Renders the visible set of batch b as a string of rows "1101|0011|..." for easy comparison. */
static void pattern(bool (*hidden)(void *, int, int, int, int), void *ctx, int b, int S1, int S2, char *out)
{
    for (int i = 0; i < S1; i++) {
        for (int j = 0; j < S2; j++)
            *out++ = hidden(ctx, b, 0, i, j) ? '0' : '1';
        *out++ = i + 1 < S1 ? '|' : '\0';
    }
    if (S1 == 0)
        *out = '\0';
}

#define EXPECT_PATTERN(hook, ctx, b, S1, S2, want)                                                       \
    do {                                                                                                \
        char got_[256];                                                                                 \
        pattern(hook, ctx, b, S1, S2, got_);                                                            \
        TC_CHECK(strcmp(got_, want) == 0, "batch %d: got %s want %s", b, got_, want);                    \
    } while (0)

static void native_windows(void)
{
    int S1[2] = {3, 2}, S2[2] = {3, 4};
    ref_native c;
    memset(&c, 0, sizeof c);
    c.B = 2, c.N1 = 1, c.S1 = S1, c.S2 = S2;

    tc_context("native causal");
    c.window = (ref_window){true, REF_UNBOUNDED, 0, false};
    EXPECT_PATTERN(ref_native_hidden, &c, 0, 3, 3, "100|110|111");
    EXPECT_PATTERN(ref_native_hidden, &c, 1, 2, 4, "1000|1100");
    c.window.bottom_right = true; /* diagonal j = i + 2 in batch 1 */
    EXPECT_PATTERN(ref_native_hidden, &c, 1, 2, 4, "1110|1111");

    tc_context("native band with negative sides");
    c.window = (ref_window){true, 2, -1, false}; /* -2 <= j - i <= -1 */
    EXPECT_PATTERN(ref_native_hidden, &c, 0, 3, 3, "000|100|110");
    c.window = (ref_window){true, -1, 2, false}; /* 1 <= j - i <= 2 */
    EXPECT_PATTERN(ref_native_hidden, &c, 1, 2, 4, "0110|0011");

    tc_context("native global positions");
    /* rows at global 10.., columns at global 8..: causal sees column j when j + 8 <= i + 10 */
    c.window = (ref_window){true, REF_UNBOUNDED, 0, false};
    c.q_start = 10, c.kv_start = 12;
    EXPECT_PATTERN(ref_native_hidden, &c, 0, 3, 3, "000|000|100");
    c.kv_start = 11;
    EXPECT_PATTERN(ref_native_hidden, &c, 0, 3, 3, "000|100|110");
    /* exact at the extremes: d = (j - i) - INT64_MAX must stay >= -left = -(INT64_MAX - 1) */
    c.q_start = INT64_MAX - 5, c.kv_start = -5;
    c.window = (ref_window){true, REF_UNBOUNDED - 1, REF_UNBOUNDED, false};
    EXPECT_PATTERN(ref_native_hidden, &c, 0, 3, 3, "011|001|000");
    c.window.left = REF_UNBOUNDED; /* unbounded: no lower bound at all */
    EXPECT_PATTERN(ref_native_hidden, &c, 0, 3, 3, "111|111|111");
    c.q_start = INT64_MIN, c.kv_start = 0; /* d = j - i + 2^63 exceeds right = 2^62 */
    c.window = (ref_window){true, REF_UNBOUNDED, (int64_t)1 << 62, false};
    EXPECT_PATTERN(ref_native_hidden, &c, 0, 3, 3, "000|000|000");
    c.q_start = c.kv_start = 0;

    tc_context("native prefix and per-batch windows");
    int64_t prefix[2] = {0, 3};
    c.prefix = prefix;
    c.window = (ref_window){true, 0, 0, false}; /* the diagonal only */
    EXPECT_PATTERN(ref_native_hidden, &c, 0, 3, 3, "100|010|001");
    EXPECT_PATTERN(ref_native_hidden, &c, 1, 2, 4, "1110|1110");
    c.prefix = NULL;
    ref_window per[2] = {{false, 0, 0, false}, {true, 0, 0, true}};
    c.batch_window = per;
    EXPECT_PATTERN(ref_native_hidden, &c, 0, 3, 3, "111|111|111");
    EXPECT_PATTERN(ref_native_hidden, &c, 1, 2, 4, "0010|0001");
}

static void native_mask_and_bias(void)
{
    int S1[2] = {1, 2}, S2[2] = {2, 1};
    ref_native c;
    memset(&c, 0, sizeof c);
    c.B = 2, c.N1 = 1, c.S1 = S1, c.S2 = S2;

    tc_context("native mask by tokens");
    /* [T1 = 3, T2 = 3]: batch 1 reads rows 1..2, column 2 */
    const uint8_t m[9] = {0, 7, 1, /**/ 1, 1, 0, /**/ 1, 1, 0x80};
    c.mask = m, c.mask_sr = 3, c.mask_sc = 1, c.mask_sb = 1000, c.mask_by_tokens = true;
    EXPECT_PATTERN(ref_native_hidden, &c, 0, 1, 2, "10");
    EXPECT_PATTERN(ref_native_hidden, &c, 1, 2, 1, "1|0");
    c.mask_by_tokens = false, c.mask_sb = 0; /* every batch reads the top-left block */
    EXPECT_PATTERN(ref_native_hidden, &c, 1, 2, 1, "1|0");
    c.mask = NULL;

    tc_context("native bias reading");
    /* a 3 × 4 block per head, value 10·row + col */
    double bias[12];
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 4; k++)
            bias[r * 4 + k] = 10 * r + k;
    c.bias = bias, c.bias_rows = 3, c.bias_cols = 4, c.bias_sr = 4, c.bias_sc = 1;
    TC_CHECK(ref_native_bias_after(&c, 1, 0, 1, 0) == 10, "top-left (1, 0)");
    c.bias_bottom_right = true; /* batch 1: rows shift 3 - 2 = 1, cols 4 - 1 = 3 */
    TC_CHECK(ref_native_bias_after(&c, 1, 0, 1, 0) == 23, "bottom-right (1, 0) -> (2, 3)");
    TC_CHECK(ref_native_bias_before(&c, 1, 0, 1, 0) == 0, "after-scale bias is not before");
    c.bias_sr = 0; /* one row broadcast */
    TC_CHECK(ref_native_bias_after(&c, 1, 0, 1, 0) == 3, "row broadcast reads row 0, col 3");

    tc_context("native compressed bias");
    /* Toeplitz full bias t(c - r) with 6 rows x 6 cols, stored as its last R = 2 rows */
    int S1c[1] = {6}, S2c[1] = {6};
    double stored[2 * 6];
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 6; k++)
            stored[r * 6 + k] = 100 + k - (r + 4);
    ref_native z;
    memset(&z, 0, sizeof z);
    z.B = 1, z.N1 = 1, z.S1 = S1c, z.S2 = S2c;
    z.bias = stored, z.bias_rows = 2, z.bias_cols = 6, z.bias_sr = 6, z.bias_sc = 1;
    z.bias_bottom_right = z.bias_compressed = true;
    int bad = 0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j <= i; j++)
            bad += ref_native_bias_after(&z, 0, 0, i, j) != 100 + j - i;
    TC_CHECK(bad == 0, "compressed Toeplitz equals the full bias on j <= i (%d wrong)", bad);
    EXPECT_PATTERN(ref_native_hidden, &z, 0, 3, 3, "100|110|111");

    tc_context("native alibi");
    double slopes[2] = {0.5, 0.25};
    c.bias = NULL;
    c.slopes = slopes, c.slope_sh = 1, c.q_start = 3, c.kv_start = 1;
    TC_CHECK(ref_native_bias_after(&c, 0, 1, 0, 0) == -0.5, "slope 0.25 · |1 - 3|");
    c.alibi_sqrt = true;
    TC_CHECK(ref_native_bias_after(&c, 0, 0, 1, 1) == -0.5 * sqrt(2.0), "sqrt distance");
}

static void dropout_bits(void)
{
    tc_context("dropout bits");
    const uint8_t bits[2] = {0x05, 0x80}; /* bits 0, 2 and 15 set */
    TC_CHECK(ref_keep_bit(bits, 0) && !ref_keep_bit(bits, 1) && ref_keep_bit(bits, 2), "LSB first");
    TC_CHECK(ref_keep_bit(bits, 15) && !ref_keep_bit(bits, 8), "second byte");
    int S1[3] = {2, 0, 3}, S2[3] = {2, 5, 4};
    /* N1 = 2: batch 0 holds 2·2·2 = 8 bits, batch 1 none; batch 2 (n1 = 1, i = 2, j = 3) */
    TC_CHECK(ref_drop_index(2, S1, S2, 2, 1, 2, 3) == 8 + (1 * 3 + 2) * 4 + 3, "TND blocks");
    TC_CHECK(ref_drop_bytes(3, 2, S1, S2) == (8 + 24 + 7) / 8, "bytes needed");
    int D1[2] = {3, 3}, D2[2] = {4, 4};
    TC_CHECK(ref_drop_index(5, D1, D2, 1, 4, 2, 1) == ((1 * 5 + 4) * 3 + 2) * 4 + 1, "dense flat index");
}

static void cann_modes(void)
{
    int S1[3] = {2, 0, 2}, S2[3] = {3, 4, 6};
    ref_cann c;
    memset(&c, 0, sizeof c);
    c.B = 3, c.N1 = 1, c.S1 = S1, c.S2 = S2, c.tnd = true;
    const uint8_t mask[1] = {0};
    c.mask = mask, c.mask_rank = 2, c.mask_dims[0] = c.mask_dims[1] = 2048; /* compressed */

    tc_context("CANN rule 0");
    c.sparse_mode = 2;
    const uint8_t *keep = c.mask;
    c.mask = NULL;
    EXPECT_PATTERN(ref_cann_masked, &c, 0, 2, 3, "111|111");
    c.mask = keep;

    tc_context("CANN modes 2, 3, 4");
    EXPECT_PATTERN(ref_cann_masked, &c, 0, 2, 3, "100|110");
    c.sparse_mode = 3;
    EXPECT_PATTERN(ref_cann_masked, &c, 0, 2, 3, "110|111");
    c.sparse_mode = 4, c.pre_tokens = 1, c.next_tokens = 0; /* Δ - 1 <= d <= Δ, Δ = 1 */
    EXPECT_PATTERN(ref_cann_masked, &c, 0, 2, 3, "110|011");

    tc_context("CANN mode 7 worked example");
    /* last batch Sq = 2, Skv = 6, pre = 6, next = -2: visible j <= i + 2 */
    c.sparse_mode = 7, c.pre_tokens = 6, c.next_tokens = -2;
    TC_CHECK(ref_cann_band_batch(&c) == 2, "band batch = last with S1 > 0");
    EXPECT_PATTERN(ref_cann_masked, &c, 2, 2, 6, "111000|111100");
    EXPECT_PATTERN(ref_cann_masked, &c, 0, 2, 3, "110|111"); /* others: mode 3 */
    c.sparse_mode = 8;
    TC_CHECK(ref_cann_band_batch(&c) == 0, "band batch = first with S1 > 0");
    EXPECT_PATTERN(ref_cann_masked, &c, 2, 2, 6, "100000|110000"); /* others: mode 2 */

    tc_context("CANN mode 0 negative band and extremes");
    int D1[1] = {4}, D2[1] = {4};
    ref_cann d;
    memset(&d, 0, sizeof d);
    const uint8_t zeros[16] = {0};
    d.B = 1, d.N1 = 1, d.S1 = D1, d.S2 = D2, d.mask = zeros, d.mask_rank = 2, d.mask_dims[0] = d.mask_dims[1] = 4;
    d.pre_tokens = 2, d.next_tokens = -1; /* -2 <= d <= -1 */
    EXPECT_PATTERN(ref_cann_masked, &d, 0, 4, 4, "0000|1000|1100|0110");
    d.pre_tokens = d.next_tokens = INT64_MAX;
    EXPECT_PATTERN(ref_cann_masked, &d, 0, 2, 2, "11|11");
    d.sparse_mode = 4, d.pre_tokens = INT64_MIN, d.next_tokens = INT64_MAX; /* no overflow */
    EXPECT_PATTERN(ref_cann_masked, &d, 0, 1, 4, "0000");

    tc_context("CANN mode 3 with S1 > S2, mode 6");
    int E1[1] = {4}, E2[1] = {2};
    d.S1 = E1, d.S2 = E2, d.sparse_mode = 3;
    EXPECT_PATTERN(ref_cann_masked, &d, 0, 4, 2, "00|00|10|11");
    int64_t prefix[1] = {1};
    int F1[1] = {2}, F2[1] = {4};
    d.S1 = F1, d.S2 = F2, d.sparse_mode = 6, d.prefix = prefix; /* d > Δ = 2 and j >= 1 hidden */
    EXPECT_PATTERN(ref_cann_masked, &d, 0, 2, 4, "1110|1111");
}

static void cann_masks_and_pse(void)
{
    tc_context("CANN TND element masks");
    int S1[2] = {1, 2}, S2[2] = {2, 1};
    ref_cann c;
    memset(&c, 0, sizeof c);
    c.B = 2, c.N1 = 1, c.S1 = S1, c.S2 = S2, c.tnd = true, c.sparse_mode = 1;
    /* [maxS1 = 2, maxS2 = 2]: top-left window */
    const uint8_t tl[4] = {0, 1, 1, 0};
    c.mask = tl, c.mask_rank = 2, c.mask_dims[0] = 2, c.mask_dims[1] = 2;
    EXPECT_PATTERN(ref_cann_masked, &c, 0, 1, 2, "10");
    EXPECT_PATTERN(ref_cann_masked, &c, 1, 2, 1, "1|0");
    /* [1, 1, T1 = 3, T2 = 3]: diagonal blocks; batch 1 reads rows 1..2, column 2 */
    const uint8_t dg[9] = {0, 1, 1, /**/ 1, 1, 1, /**/ 1, 1, 0};
    c.mask = dg, c.mask_rank = 4, c.mask_dims[0] = c.mask_dims[1] = 1, c.mask_dims[2] = c.mask_dims[3] = 3;
    EXPECT_PATTERN(ref_cann_masked, &c, 0, 1, 2, "10");
    EXPECT_PATTERN(ref_cann_masked, &c, 1, 2, 1, "0|1");

    tc_context("CANN dense element masks");
    int D1[2] = {1, 1}, D2[2] = {2, 2};
    ref_cann d;
    memset(&d, 0, sizeof d);
    d.B = 2, d.N1 = 2, d.S1 = D1, d.S2 = D2, d.sparse_mode = 0;
    d.pre_tokens = d.next_tokens = 2147483647;
    const uint8_t bn[8] = {0, 1, 1, 0, /* b1 */ 0, 0, 1, 1}; /* [B=2, N1=2, 1, 2] */
    d.mask = bn, d.mask_rank = 4, d.mask_dims[0] = 2, d.mask_dims[1] = 2, d.mask_dims[2] = 1, d.mask_dims[3] = 2;
    TC_CHECK(ref_cann_masked(&d, 1, 1, 0, 0) && !ref_cann_masked(&d, 1, 0, 0, 1), "[B,N1,S1,S2]");
    d.mask_dims[1] = 1; /* [B, 1, S1, S2]: batch 1 reads {1, 0} */
    TC_CHECK(!ref_cann_masked(&d, 1, 1, 0, 1) && ref_cann_masked(&d, 1, 1, 0, 0), "[B,1,S1,S2]");

    tc_context("CANN pse shapes");
    double full[2 * 2 * 2] = {1, 2, 3, 4, 5, 6, 7, 8}; /* [1, N1 = 2, S1 = 2, S2 = 2] */
    int P1[1] = {2}, P2[1] = {2};
    ref_cann p;
    memset(&p, 0, sizeof p);
    p.B = 1, p.N1 = 2, p.S1 = P1, p.S2 = P2, p.pse = full, p.pse_type = 0, p.pse_rank = 4;
    p.pse_dims[0] = 1, p.pse_dims[1] = 2, p.pse_dims[2] = 2, p.pse_dims[3] = 2;
    TC_CHECK(ref_cann_bias_after(&p, 0, 1, 1, 0) == 7 && ref_cann_bias_before(&p, 0, 1, 1, 0) == 0, "type 0 full");
    p.pse_type = 1;
    TC_CHECK(ref_cann_bias_before(&p, 0, 1, 1, 0) == 7 && ref_cann_bias_after(&p, 0, 1, 1, 0) == 0, "type 1 full");
    p.pse_dims[2] = 1; /* [1, N1, 1, S2]: row 0 for every row; head 1 starts at element 2 */
    TC_CHECK(ref_cann_bias_before(&p, 0, 1, 1, 1) == 4, "one row for all rows");

    tc_context("CANN compressed pse");
    /* dense S1 = S2 = 1030 > 1024: Toeplitz pse t(j - i), last 1024 rows of 1030 stored */
    enum { L = 1030, R = 1024 };
    static double comp[R * L];
    for (int m = 0; m < R; m++)
        for (int j = 0; j < L; j++)
            comp[(int64_t)m * L + j] = 0.001 * (j - (m + L - R));
    int C1[1] = {L}, C2[1] = {L};
    ref_cann z;
    memset(&z, 0, sizeof z);
    z.B = 1, z.N1 = 1, z.S1 = C1, z.S2 = C2, z.pse = comp, z.pse_type = 0, z.pse_rank = 4;
    z.pse_dims[0] = z.pse_dims[1] = 1, z.pse_dims[2] = R, z.pse_dims[3] = L;
    int bad = 0;
    for (int i = 0; i < L; i += 37)
        for (int j = 0; j <= i; j += 5)
            bad += fabs(ref_cann_bias_after(&z, 0, 0, i, j) - 0.001 * (j - i)) > 1e-12;
    TC_CHECK(bad == 0, "compressed rows equal the full Toeplitz pse (%d wrong)", bad);
    TC_CHECK(ref_cann_masked(&z, 0, 0, 3, 4) && !ref_cann_masked(&z, 0, 0, 4, 4), "compression masks j > i");
    /* TND, S1_b = 2 <= 1024, P2 = 5, S2_b = 3: rows 1022 + i, columns 2 + j */
    static double tnd[R * 5];
    for (int t = 0; t < R * 5; t++)
        tnd[t] = t;
    int T1[1] = {2}, T2[1] = {3};
    z.S1 = T1, z.S2 = T2, z.tnd = true, z.pse = tnd, z.pse_dims[3] = 5;
    TC_CHECK(ref_cann_bias_after(&z, 0, 0, 1, 0) == 1023 * 5 + 2, "TND bottom-right corner");
    TC_CHECK(!ref_cann_masked(&z, 0, 0, 0, 2), "no extra masking when S1_b <= 1024");

    tc_context("CANN generated ALiBi");
    double slopes[2 * 2] = {0.5, 0.25, 2, 4}; /* [B = 2, N1 = 2] */
    int A1[2] = {2, 2}, A2[2] = {3, 3};
    ref_cann a;
    memset(&a, 0, sizeof a);
    a.B = 2, a.N1 = 2, a.S1 = A1, a.S2 = A2, a.pse = slopes, a.pse_type = 2, a.pse_rank = 2;
    a.pse_dims[0] = 2, a.pse_dims[1] = 2, a.q_start_idx = 5, a.kv_start_idx = 1;
    TC_CHECK(ref_cann_bias_after(&a, 1, 1, 0, 2) == -4 * 2, "type 2: 4·|(2 + 1) - (0 + 5)|");
    a.pse_type = 3;
    TC_CHECK(ref_cann_bias_after(&a, 0, 1, 1, 0) == -0.25 * sqrt(5.0), "type 3 sqrt");
    a.pse_rank = 1; /* [N1] */
    TC_CHECK(ref_cann_bias_after(&a, 1, 1, 1, 0) == -0.25 * sqrt(5.0), "[N1] slopes");
    a.tnd = true, a.sparse_mode = 8, a.pse_type = 2;
    TC_CHECK(ref_cann_bias_after(&a, 1, 0, 1, 0) == -0.5 * 1, "TND mode 8: later batches start at 0");
    TC_CHECK(ref_cann_bias_after(&a, 0, 0, 1, 0) == -0.5 * 5, "TND mode 8: batch 0 uses the starts");
}

int main(void)
{
    native_windows();
    native_mask_and_bias();
    dropout_bits();
    cann_modes();
    cann_masks_and_pse();
    return tc_summary("reference_rules");
}
