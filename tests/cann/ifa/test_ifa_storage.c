/*
 * IncreFlashAttentionV4's kv storage forms (semantics §4.3), each against tests/reference and
 * against the contiguous form of the same logical cache:
 *   - page attention == the contiguous cache gathered through the block table (§9 h), both cache
 *     forms, block sizes 1 to 128, permuted blocks, lengths 0 to W·blockSize;
 *   - a list of B tensors == one padded tensor with the same actualSeqLengths (§9 o);
 *   - left padding == the trimmed cache (§9 o), windows that start before the cache give zeros,
 *     negative padding counts as 0; the padding is read in the second phase.
 */
#include <stdio.h>

#include "ifa_harness.h"

static const char *const layouts[] = {"BSH", "BSND", "BNSD"};

/* The contiguous twin of a case: one tensor holding each batch's window at its start. */
static ifa_case contiguous_twin(const ifa_case *c, const int64_t *len, int B)
{
    ifa_case d = *c;
    d.form = IFA_DENSE;
    d.left_pad = false;
    d.act_count = B;
    int64_t longest = 1;
    for (int b = 0; b < B; b++) {
        d.L[b] = len[b];
        longest = len[b] > longest ? len[b] : longest;
    }
    d.S[0] = (int)longest;
    d.extra_cols = 0;
    return d;
}

static void paged(void)
{
    char name[160];
    const int block_sizes[] = {1, 3, 16, 128};
    for (int f = 0; f < 2; f++)
        for (int l = 0; l < 3; l++)
            for (int k = 0; k < 4; k++) {
                if (f == 1 && l != 2)
                    continue; /* (blockNum, N2, blockSize, D) is BNSD only */
                ifa_case c = ifa_case_default();
                c.layout = layouts[l];
                c.form = f ? IFA_PAGED4 : IFA_PAGED3;
                c.B = 4, c.N1 = 8, c.N2 = 2, c.D = 32;
                c.block_size = block_sizes[k];
                c.W = (300 + c.block_size - 1) / c.block_size;
                c.act_count = 4, c.L[0] = 300, c.L[1] = 0, c.L[2] = 1, c.L[3] = 2 * c.block_size + 1;
                c.L[0] = c.W * c.block_size; /* exactly the table's reach */
                c.mask_rank = 2, c.pse = true, c.extra_cols = 2;
                c.strides = (fa_strides)(k % 3);
                c.seed = 100 + f * 20 + l * 4 + k;
                snprintf(name, sizeof name, "paged %s %s block %d: paged == gathered contiguous",
                         f ? "(blockNum, N2, bs, D)" : "(blockNum, bs, H)", c.layout, c.block_size);
                const ifa_case d = contiguous_twin(&c, c.L, c.B);
                ifa_expect_same(name, &c, &d);
            }
    ifa_case c = ifa_case_default();
    c.form = IFA_PAGED4, c.block_size = 512, c.W = 3, c.B = 2;
    c.act_count = 1, c.L[0] = 1300;
    ifa_run_case("paged, blockSize 512, one length for all", &c, NULL);
    c.dtype = TC_BF16, c.layout = "BSND", c.form = IFA_PAGED3, c.block_size = 7, c.W = 9, c.N1 = c.N2 = 3;
    c.nkv_zero = true, c.act_count = 2, c.L[0] = 63, c.L[1] = 50;
    ifa_run_case("paged bf16 BSND, numKeyValueHeads 0", &c, NULL);
}

static void lists(void)
{
    char name[160];
    for (int l = 0; l < 3; l++)
        for (int st = 0; st < 3; st++) {
            ifa_case c = ifa_case_default();
            c.layout = layouts[l];
            c.form = IFA_LIST;
            c.B = 4, c.N1 = 6, c.N2 = 2, c.D = 16;
            c.S[0] = 9, c.S[1] = 30, c.S[2] = 1, c.S[3] = 17;
            /* BNSD tensors of different S share a stride set only inside a common capacity */
            c.list_common_stride = l == 2 || st == ST_REVERSED;
            c.act_count = 4, c.L[0] = 9, c.L[1] = 21, c.L[2] = 0, c.L[3] = 17;
            c.mask_rank = 3, c.pse = true;
            c.strides = (fa_strides)st;
            c.seed = 200 + l * 3 + st;
            snprintf(name, sizeof name, "list of 4 tensors %s strides %d == padded tensor", c.layout, st);
            ifa_case d = c;
            d.form = IFA_DENSE, d.S[0] = 30;
            ifa_expect_same(name, &c, &d);
        }
    ifa_case c = ifa_case_default();
    c.form = IFA_LIST, c.layout = "BSH", c.B = 3, c.S[0] = 5, c.S[1] = 6, c.S[2] = 7;
    ifa_run_case("list without actualSeqLengths: each tensor's own S", &c, NULL);
    c.B = 1, c.S[0] = 12;
    ifa_run_case("list of one tensor for one batch", &c, NULL);
}

static void left_padding(void)
{
    char name[160];
    for (int l = 0; l < 3; l++)
        for (int form = 0; form < 2; form++) {
            ifa_case c = ifa_case_default();
            c.layout = layouts[l];
            c.form = form ? IFA_LIST : IFA_DENSE;
            c.list_common_stride = true;
            c.B = 3, c.N1 = 4, c.N2 = 4, c.D = 16;
            c.S[0] = 24, c.S[1] = 24, c.S[2] = 24;
            if (form)
                c.S[1] = 30, c.S[2] = 26;
            c.act_count = 3, c.L[0] = 10, c.L[1] = 24, c.L[2] = 1;
            c.left_pad = true, c.pad = 3;
            c.mask_rank = 4, c.pse = true, c.extra_cols = 1;
            c.seed = 300 + l * 2 + form;
            /* batch 1 (S 24, L 24, pad 3) starts before the cache in the dense form: zeros there */
            int64_t win[3];
            for (int b = 0; b < 3; b++) {
                const int64_t S = form ? c.S[b] : c.S[0];
                win[b] = S - c.pad - c.L[b] < 0 ? 0 : c.L[b];
            }
            snprintf(name, sizeof name, "left padding %s %s == trimmed cache", c.layout, form ? "list" : "tensor");
            const ifa_case d = contiguous_twin(&c, win, c.B);
            ifa_expect_same(name, &c, &d);
        }
    ifa_case c = ifa_case_default();
    c.S[0] = 16, c.act_count = 2, c.L[0] = 6, c.L[1] = 16, c.left_pad = true;
    c.pad = -5;
    ifa_run_case("negative kvPaddingSize counts as 0", &c, NULL);
    c.pad = 0;
    ifa_run_case("kvPaddingSize 0: the last L_b positions", &c, NULL);
    c.pad = 17;
    ifa_run_case("kvPaddingSize beyond the cache: zeros", &c, NULL);
    c.pad = INT64_MAX;
    ifa_run_case("kvPaddingSize INT64_MAX: zeros", &c, NULL);
    c.pad = INT64_MIN;
    ifa_run_case("kvPaddingSize INT64_MIN counts as 0", &c, NULL);
    c.act_count = 0, c.pad = 5;
    ifa_run_case("kvPaddingSize without actualSeqLengths is ignored", &c, NULL);
}

int main(void)
{
    paged();
    lists();
    left_padding();
    return tc_summary("cann_ifa_storage");
}
