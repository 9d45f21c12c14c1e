#include "errors_common.h"

#include <string.h>

#include "common/check.h"

float q[B * NQ * S * D], k[B * NKV * S * D], v[B * NKV * S * D], qr[B * NQ * S * D], kr[B * NKV * S * D];
float out[B * NQ * S * D], bias[B * NQ * S * S], slopes[NQ], smax[B * NQ * S * 8], ssum[B * NQ * S * 8];
uint8_t mask[S * S], keep[(B * NQ * S * S + 7) / 8];

fc_attention_desc valid(void)
{
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = B, d.q_heads = NQ, d.kv_heads = NKV, d.head_dim = D, d.q_len = d.kv_len = S;
    d.q = fc_tensor_bnsd(q, FC_F32, NQ, S, D);
    d.k = fc_tensor_bnsd(k, FC_F32, NKV, S, D);
    d.v = fc_tensor_bnsd(v, FC_F32, NKV, S, D);
    d.out = fc_tensor_bnsd(out, FC_F32, NQ, S, D);
    return d;
}

void add_options(fc_attention_desc *d)
{
    d->bias = (fc_bias){.data = bias, .dtype = FC_F32, .rows = S, .cols = S, .stride_batch = NQ * S * S,
                        .stride_head = S * S, .stride_row = S, .stride_col = 1};
    d->alibi = (fc_alibi){.slopes = slopes, .stride_head = 1};
    d->vis.mask = (fc_mask){.data = mask, .dtype = FC_U8, .stride_row = S, .stride_col = 1};
    d->dropout = (fc_dropout){.keep_bits = keep, .keep_bits_bytes = sizeof keep, .keep_prob = 0.9};
    d->stats = (fc_stats){.max = smax, .sum = ssum, .replicas = 8};
}


void expect_at(int line, fc_status want, const char *field, const char *field2, fc_attention_desc d,
                      const fc_options *opt)
{
    fc_plan *plan = (fc_plan *)&plan; /* garbage the call must overwrite */
    const fc_status st = fc_plan_create(&d, opt, &plan);
    const char *msg = fc_last_error();
    tc_context("line %d: %s", line, field);
    TC_CHECK(st == want, "status %s, want %s (message \"%s\")", fc_status_name(st), fc_status_name(want), msg);
    TC_CHECK(strstr(msg, field) != NULL, "message \"%s\" does not name %s", msg, field);
    if (field2)
        TC_CHECK(strstr(msg, field2) != NULL, "message \"%s\" does not name %s", msg, field2);
    TC_CHECK(plan == NULL, "*plan not NULL after a failure");
    if (st == FC_OK)
        fc_plan_destroy(plan);
    if (!opt) {
        const fc_status st2 = fc_attention(&d);
        TC_CHECK(st2 == want, "fc_attention status %s, want %s", fc_status_name(st2), fc_status_name(want));
    }
}

void expect_ok(int line, fc_attention_desc d)
{
    tc_context("line %d: accepted", line);
    fc_plan *plan = NULL;
    TC_CHECK(fc_plan_create(&d, NULL, &plan) == FC_OK, "rejected: %s", fc_last_error());
    TC_CHECK(fc_last_error()[0] == '\0', "message after success: \"%s\"", fc_last_error());
    fc_plan_destroy(plan);
}
