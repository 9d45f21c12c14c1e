/*
 * IncreFlashAttentionV4 with int8 data (semantics §4.5, §4.6, §9 n):
 *   - int8 key/value dequantised per tensor and per channel in every antiquant shape and dtype,
 *     with and without offsets, in every kv form — within the tolerance of the fp reference that
 *     holds (x + offset)·scale;
 *   - int8 output quantised per tensor and per channel in every accepted shape, FLOAT and (with a
 *     BFLOAT16 query) BFLOAT16 scales, with and without offsets: within 1 of the §4.6 rounding,
 *     saturation exact, NaN → 0, rows that see nothing exactly 0 (quantisation not applied).
 */
#include <stdio.h>

#include "ifa_harness.h"

static const char *const layouts[] = {"BSH", "BSND", "BNSD"};

static void int8_kv(void)
{
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    char name[160];
    for (int rank = 1; rank <= 4; rank++)
        for (int d = 0; d < 3; d++)
            for (int off = 0; off < 2; off++) {
                ifa_case c = ifa_case_default();
                c.layout = layouts[(rank + d) % 3];
                c.dtype = d == 2 ? TC_BF16 : TC_F16;
                c.B = 3, c.N1 = 8, c.N2 = 2, c.D = 16, c.S[0] = 40;
                c.int8_kv = true, c.aq_rank = rank, c.aq_dt = dts[d], c.aq_offset = off;
                c.act_count = 3, c.L[0] = 40, c.L[1] = 0, c.L[2] = 23;
                c.strides = (fa_strides)((rank + off) % 3);
                c.seed = 500 + rank * 6 + d * 2 + off;
                snprintf(name, sizeof name, "int8 key/value, antiquant rank %d dtype %d%s, %s", rank, (int)dts[d],
                         off ? " with offset" : "", c.layout);
                ifa_run_case(name, &c, NULL);
            }
    ifa_case c = ifa_case_default();
    c.int8_kv = true, c.aq_rank = 4, c.aq_offset = true;
    c.form = IFA_PAGED4, c.block_size = 16, c.W = 4, c.act_count = 2, c.L[0] = 64, c.L[1] = 17;
    c.mask_rank = 2, c.pse = true;
    ifa_run_case("int8 paged cache (blockNum, N2, bs, D) with mask and pse", &c, NULL);
    c.form = IFA_PAGED3, c.aq_rank = 2, c.layout = "BSH";
    ifa_run_case("int8 paged cache (blockNum, bs, H)", &c, NULL);
    c = ifa_case_default();
    c.int8_kv = true, c.aq_rank = 3, c.form = IFA_LIST, c.layout = "BSND", c.B = 3;
    c.S[0] = 4, c.S[1] = 19, c.S[2] = 11;
    ifa_run_case("int8 list of per-batch tensors", &c, NULL);
    c.form = IFA_DENSE, c.S[0] = 30, c.act_count = 3, c.L[0] = 9, c.L[1] = 30, c.L[2] = 2;
    c.left_pad = true, c.pad = 4;
    ifa_run_case("int8 with left padding", &c, NULL);
    c = ifa_case_default();
    c.int8_kv = true, c.aq_rank = 1, c.B = 1, c.N1 = 8, c.N2 = 2, c.D = 64, c.S[0] = 1500;
    ifa_run_case("int8 long cache (flash-decoding)", &c, NULL);
}

static void int8_out(void)
{
    char name[160];
    for (int form = 1; form <= 5; form++)
        for (int bf = 0; bf < 2; bf++)
            for (int qo = 0; qo < 2; qo++) {
                ifa_case c = ifa_case_default();
                c.layout = layouts[(form + qo) % 3];
                c.dtype = bf ? TC_BF16 : TC_F16;
                c.B = 3, c.N1 = 4, c.N2 = 2, c.D = 8, c.S[0] = 25;
                c.qs_form = form, c.qo = qo;
                c.qs_dt = bf && qo ? ACL_BF16 : ACL_FLOAT; /* BFLOAT16 scales need a BFLOAT16 query */
                c.act_count = 3, c.L[0] = 25, c.L[1] = 0, c.L[2] = 7; /* batch 1 sees nothing: 0 */
                c.strides = (fa_strides)((form + bf) % 3);
                c.seed = 700 + form * 4 + bf * 2 + qo;
                snprintf(name, sizeof name, "int8 output, quantScale2 form %d %s%s, %s query", form,
                         c.qs_dt == ACL_BF16 ? "bf16" : "fp32", qo ? " with offset" : "", bf ? "bf16" : "fp16");
                ifa_run_case(name, &c, NULL);
            }
    ifa_case c = ifa_case_default();
    c.qs_form = 2, c.qo = true, c.qs_mag = 2000;
    ifa_run_case("int8 output saturating to [-128, 127]", &c, NULL);
    c.qs_mag = 40, c.qs_nan_channel = 5;
    ifa_run_case("int8 output: a NaN scale channel stores 0", &c, NULL);
    c = ifa_case_default();
    c.qs_form = 1, c.qo = true, c.mask_rank = 2, c.mask_full_batch = 0, c.qs_mag = 30;
    ifa_run_case("int8 output: an all-masked row stores 0, not the offset", &c, NULL);
    c.int8_kv = true, c.aq_rank = 3, c.aq_offset = true, c.form = IFA_PAGED3, c.block_size = 5, c.W = 3;
    c.act_count = 2, c.L[0] = 15, c.L[1] = 6, c.mask_full_batch = -1;
    ifa_run_case("int8 key/value and int8 output, paged", &c, NULL);
}

int main(void)
{
    int8_kv();
    int8_out();
    return tc_summary("cann_ifa_quant");
}
