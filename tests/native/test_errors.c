/* Bad input through the native API, part 1: NULL pointers, sizes and operands.  Every rule of the
 * native face (src/native, src/core) gets its status and an fc_last_error() message naming the
 * field at fault; fc_attention reports the same; a failed fc_plan_create leaves *plan NULL. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "errors_common.h"
#include "harness.h"

static void null_pointers(void)
{
    fc_plan *plan;
    tc_context("NULL desc / plan");
    TC_CHECK(fc_plan_create(NULL, NULL, &plan) == FC_ERR_NULL_ARG && strstr(fc_last_error(), "desc"), "desc NULL");
    TC_CHECK(fc_attention(NULL) == FC_ERR_NULL_ARG, "fc_attention(NULL)");
    fc_attention_desc d = valid();
    TC_CHECK(fc_plan_create(&d, NULL, NULL) == FC_ERR_NULL_ARG && strstr(fc_last_error(), "plan"), "plan NULL");

    const char *names[] = {"desc.q.data", "desc.k.data", "desc.v.data", "desc.out.data"};
    for (int t = 0; t < 4; t++) {
        d = valid();
        fc_tensor *ts[] = {&d.q, &d.k, &d.v, &d.out};
        ts[t]->data = NULL;
        EXPECT(FC_ERR_NULL_ARG, names[t], d);
    }
    d = valid();
    d.rope_dim = 4;
    d.k_rope = fc_tensor_bnsd(kr, FC_F32, NKV, S, 4);
    EXPECT(FC_ERR_NULL_ARG, "desc.q_rope.data", d);
    d.q_rope = fc_tensor_bnsd(qr, FC_F32, NQ, S, 4);
    d.k_rope.data = NULL;
    EXPECT(FC_ERR_NULL_ARG, "desc.k_rope.data", d);
    d.k_rope.data = kr;
    EXPECT_OK(d);
    d = valid();
    d.packed = true;
    const int64_t lens[B] = {S, S};
    d.kv_lens = lens;
    EXPECT(FC_ERR_NULL_ARG, "desc.q_lens", d);
    d.q_lens = lens, d.kv_lens = NULL;
    EXPECT(FC_ERR_NULL_ARG, "desc.kv_lens", d);
    d = valid();
    d.dropout = (fc_dropout){.keep_prob = 0.5};
    EXPECT(FC_ERR_NULL_ARG, "desc.dropout.keep_bits", d);
    d = valid();
    d.stats.max = smax;
    EXPECT(FC_ERR_NULL_ARG, "desc.stats.sum", d);
    d.stats.max = NULL, d.stats.sum = ssum;
    EXPECT(FC_ERR_NULL_ARG, "desc.stats.max", d);
}

static void sizes(void)
{
    const struct { int which; int64_t bad; const char *name; } s[] = {
        {0, 0, "desc.batch"}, {0, -1, "desc.batch"}, {0, 2097153, "desc.batch"},
        {1, 0, "desc.q_heads"}, {1, 257, "desc.q_heads"},
        {2, 0, "desc.kv_heads"}, {2, 3, "desc.kv_heads"}, {2, 8, "desc.kv_heads"}, {2, -2, "desc.kv_heads"},
        {3, 0, "desc.head_dim"}, {3, 1025, "desc.head_dim"},
        {4, -1, "desc.v_head_dim"}, {4, 1025, "desc.v_head_dim"},
        {5, -1, "desc.rope_dim"}, {5, 1025, "desc.rope_dim"},
        {6, 0, "desc.q_len"}, {6, 1048577, "desc.q_len"}, {7, 0, "desc.kv_len"}, {7, -3, "desc.kv_len"},
    };
    for (unsigned t = 0; t < sizeof s / sizeof s[0]; t++) {
        fc_attention_desc d = valid();
        int64_t *f[] = {&d.batch, &d.q_heads, &d.kv_heads, &d.head_dim, &d.v_head_dim, &d.rope_dim, &d.q_len, &d.kv_len};
        *f[s[t].which] = s[t].bad;
        EXPECT(FC_ERR_INVALID_ARG, s[t].name, d);
    }
    fc_attention_desc d = valid();
    int64_t ql[B] = {S, S + 1}, kl[B] = {S, S};
    d.q_lens = ql, d.kv_lens = kl;
    EXPECT(FC_ERR_INVALID_ARG, "desc.q_lens[1]", d);
    ql[1] = -1;
    EXPECT(FC_ERR_INVALID_ARG, "desc.q_lens[1]", d);
    ql[1] = 0, kl[0] = S + 1;
    EXPECT(FC_ERR_INVALID_ARG, "desc.kv_lens[0]", d);
    kl[0] = 0;
    EXPECT_OK(d); /* zero lengths are fine */
    d = valid();
    d.packed = true, d.q_lens = ql, d.kv_lens = kl;
    d.q = fc_tensor_tnd(q, FC_F32, NQ, D), d.k = fc_tensor_tnd(k, FC_F32, NKV, D), d.v = fc_tensor_tnd(v, FC_F32, NKV, D);
    d.out = fc_tensor_tnd(out, FC_F32, NQ, D);
    ql[0] = 2, ql[1] = -1, kl[0] = 3, kl[1] = 3;
    EXPECT(FC_ERR_INVALID_ARG, "desc.q_lens[1]", d);
    ql[1] = 1048577;
    EXPECT(FC_ERR_INVALID_ARG, "desc.q_lens[1]", d);
    ql[1] = 4, kl[1] = -2;
    EXPECT(FC_ERR_INVALID_ARG, "desc.kv_lens[1]", d);
    kl[1] = 3;
    d.q_len = d.kv_len = 0; /* ignored when packed */
    d.q.stride_batch = -5;  /* ignored when packed */
    EXPECT_OK(d);
}

static void operands(void)
{
    const char *names[] = {"desc.q", "desc.k", "desc.v", "desc.out"};
    for (int t = 0; t < 4; t++) {
        fc_attention_desc d = valid();
        fc_tensor *ts[] = {&d.q, &d.k, &d.v, &d.out};
        char dt[32], al[32];
        snprintf(dt, sizeof dt, "%s.dtype", names[t]);
        snprintf(al, sizeof al, "%s.data", names[t]);
        const fc_dtype bad[] = {FC_I8, FC_U8, FC_BOOL, FC_I32, FC_I64, (fc_dtype)99};
        for (int b = 0; b < 6; b++) {
            ts[t]->dtype = bad[b];
            EXPECT(FC_ERR_INVALID_ARG, dt, d);
        }
        ts[t]->dtype = FC_F32;
        int64_t *strides[] = {&ts[t]->stride_batch, &ts[t]->stride_head, &ts[t]->stride_seq, &ts[t]->stride_dim};
        for (int s = 0; s < 4; s++) {
            const int64_t keep_s = *strides[s];
            *strides[s] = -1;
            EXPECT2(FC_ERR_INVALID_ARG, names[t], "stride", d);
            *strides[s] = keep_s;
        }
        ts[t]->data = (char *)ts[t]->data + 2; /* not a multiple of 4 bytes */
        EXPECT(FC_ERR_INVALID_ARG, al, d);
        ts[t]->dtype = FC_F16; /* 2-byte aligned is fine for fp16 */
        EXPECT_OK(d);
        ts[t]->data = (char *)ts[t]->data + 1;
        EXPECT(FC_ERR_INVALID_ARG, al, d);
    }
    fc_attention_desc d = valid();
    d.rope_dim = 4;
    d.q_rope = fc_tensor_bnsd(qr, FC_I8, NQ, S, 4), d.k_rope = fc_tensor_bnsd(kr, FC_F32, NKV, S, 4);
    EXPECT(FC_ERR_INVALID_ARG, "desc.q_rope.dtype", d);
    d.q_rope.dtype = FC_F32, d.k_rope.stride_seq = -4;
    EXPECT(FC_ERR_INVALID_ARG, "desc.k_rope", d);
    d = valid();
    d.rope_dim = 0, d.q_rope.dtype = (fc_dtype)77; /* rope operands unused without rope_dim */
    EXPECT_OK(d);

    /* outputs that overlap themselves */
    const struct { int64_t sb, sh, ss, sd; } ov[] = {
        {NQ * S * D, S * D, 0, 1}, {NQ * S * D, 1, D, 1}, {0, S * D, D, 1}, {NQ * S * D, S * D, D, 0},
        {NQ * S * D, S * D, 4, 1},
    };
    for (int t = 0; t < 5; t++) {
        d = valid();
        d.out.stride_batch = ov[t].sb, d.out.stride_head = ov[t].sh, d.out.stride_seq = ov[t].ss, d.out.stride_dim = ov[t].sd;
        EXPECT(FC_ERR_INVALID_ARG, "desc.out", d);
    }
    d = valid();
    d.out = fc_tensor_bsnd(out, FC_F32, NQ, S, D); /* other orders are fine */
    EXPECT_OK(d);
}

static void body(void)
{
    EXPECT_OK(valid());
    null_pointers();
    sizes();
    operands();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_errors", body); }
