/* Bad input for the decode, sparse and backward fields of the native API: kv storage (per-batch
 * tensors, block tables), int8 data and their affine maps, kv_starts, fc_sparse and its
 * combination rules, statistics orders for grouped statistics, and the backward's gradients.
 * Each rule (src/native/validate.c, lower.c, plans.c) gets its status and a message naming the
 * field; fc_attention / fc_attention_backward agree; a failed plan creation leaves *plan NULL. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/check.h"
#include "errors_common.h"
#include "harness.h"

static int8_t k8[B * NKV * S * D], v8[B * NKV * S * D];
static float kscale[NKV * D], koff[NKV * D], oscale[NQ * D];
static int8_t out8[B * NQ * S * D];
static int32_t table[B * 4];
static float pages_k[8 * 2 * NKV * D], pages_v[8 * 2 * NKV * D];

/* A valid paged problem: 8 blocks of 2 slots, [blocks][slots][heads][features]. */
static fc_attention_desc paged(void)
{
    fc_attention_desc d = valid();
    for (int t = 0; t < B * 4; t++)
        table[t] = t % 8;
    d.k = (fc_tensor){.data = pages_k, .dtype = FC_F32, .stride_batch = 2 * NKV * D, .stride_seq = NKV * D, .stride_head = D, .stride_dim = 1};
    d.v = (fc_tensor){.data = pages_v, .dtype = FC_F32, .stride_batch = 2 * NKV * D, .stride_seq = NKV * D, .stride_head = D, .stride_dim = 1};
    d.kv.block_table = table, d.kv.table_stride = 4, d.kv.block_size = 2, d.kv.num_blocks = 8;
    return d;
}

static void storage(void)
{
    fc_attention_desc d = valid();
    const void *kb[B] = {k, k}, *vb[B] = {v, v};
    d.kv.k_batches = kb;
    EXPECT(FC_ERR_NULL_ARG, "desc.kv.v_batches", d);
    d.kv.k_batches = NULL, d.kv.v_batches = vb;
    EXPECT(FC_ERR_NULL_ARG, "desc.kv.k_batches", d);
    d.kv.k_batches = kb, d.k.data = NULL, d.v.data = NULL;
    EXPECT_OK(d); /* per-batch tensors: k.data / v.data are not needed */
    const void *kb1[B] = {k, NULL}, *vb0[B] = {NULL, v};
    d.kv.k_batches = kb1;
    EXPECT(FC_ERR_NULL_ARG, "desc.kv.k_batches[1]", d);
    d.kv.k_batches = kb, d.kv.v_batches = vb0;
    EXPECT(FC_ERR_NULL_ARG, "desc.kv.v_batches[0]", d);

    d = paged();
    EXPECT_OK(d);
    d.kv.k_batches = kb, d.kv.v_batches = vb;
    EXPECT2(FC_ERR_INVALID_ARG, "desc.kv.block_table", "desc.kv.k_batches", d);
    d = paged();
    d.packed = true;
    const int64_t lens[B] = {S, S};
    d.q_lens = d.kv_lens = lens;
    EXPECT2(FC_ERR_INVALID_ARG, "desc.kv.block_table", "desc.packed", d);
    /* the message names the kv storage and the field ("desc.kv.block_size and num_blocks ...") */
    const struct { int64_t bs, nb, ts; const char *name; } bad[] = {
        {0, 8, 4, "block_size"}, {-2, 8, 4, "block_size"}, {2, 0, 4, "num_blocks"},
        {2, -1, 4, "num_blocks"}, {2, 8, 2, "table_stride"}, {4, 8, 1, "table_stride"},
    };
    for (unsigned t = 0; t < sizeof bad / sizeof bad[0]; t++) {
        d = paged();
        d.kv.block_size = bad[t].bs, d.kv.num_blocks = bad[t].nb, d.kv.table_stride = bad[t].ts;
        EXPECT2(FC_ERR_INVALID_ARG, "desc.kv.", bad[t].name, d);
    }
    d = paged();
    d.kv.block_size = 3, d.kv.table_stride = 2; /* ceil(6 / 3) = 2 entries suffice */
    EXPECT_OK(d);
    /* the block stride is used for addressing when paged: negative strides are rejected as
     * everywhere else (plan creation only: a run would read outside the cache) */
    const fc_options opt = {.threads = 1};
    d = paged();
    d.k.stride_batch = -(2 * NKV * D);
    EXPECT_OPT(FC_ERR_INVALID_ARG, "desc.k", d, &opt);
    d = paged();
    d.v.stride_batch = -1;
    EXPECT_OPT(FC_ERR_INVALID_ARG, "desc.v", d, &opt);
    d = paged();
    d.rope_dim = 4;
    d.q_rope = fc_tensor_bnsd(qr, FC_F32, NQ, S, 4);
    d.k_rope = (fc_tensor){.data = kr, .dtype = FC_F32, .stride_batch = -8, .stride_seq = NKV * 4, .stride_head = 4, .stride_dim = 1};
    EXPECT_OPT(FC_ERR_INVALID_ARG, "desc.k_rope", d, &opt);
}

static void int8_maps(void)
{
    fc_attention_desc d = valid();
    d.k = fc_tensor_bnsd(k8, FC_I8, NKV, S, D);
    EXPECT(FC_ERR_INVALID_ARG, "desc.kv.k_dequant", d);
    d.kv.k_dequant = (fc_affine){.scale = kscale, .dtype = FC_F32, .stride_head = D, .stride_dim = 1};
    EXPECT_OK(d);
    d.v = fc_tensor_bnsd(v8, FC_I8, NKV, S, D);
    EXPECT(FC_ERR_INVALID_ARG, "desc.kv.v_dequant", d);
    d.kv.v_dequant = (fc_affine){.scale = kscale, .offset = koff, .dtype = FC_F16};
    EXPECT_OK(d);
    const fc_dtype bad_dt[] = {FC_I8, FC_I32, FC_BOOL, (fc_dtype)99};
    for (unsigned t = 0; t < 4; t++) {
        fc_attention_desc e = d;
        e.kv.k_dequant.dtype = bad_dt[t];
        EXPECT(FC_ERR_INVALID_ARG, "desc.kv.k_dequant.dtype", e);
        e = d;
        e.kv.v_dequant.dtype = bad_dt[t];
        EXPECT(FC_ERR_INVALID_ARG, "desc.kv.v_dequant.dtype", e);
    }
    fc_attention_desc e = d;
    e.kv.k_dequant.stride_head = -1;
    EXPECT(FC_ERR_INVALID_ARG, "desc.kv.k_dequant", e);
    e = d;
    e.kv.v_dequant.stride_dim = -3;
    EXPECT(FC_ERR_INVALID_ARG, "desc.kv.v_dequant", e);
    e = valid(); /* a dequant map on float data is ignored */
    e.kv.k_dequant = (fc_affine){.dtype = (fc_dtype)77, .stride_head = -5};
    EXPECT_OK(e);
    e = valid();
    e.q = fc_tensor_bnsd(out8, FC_I8, NQ, S, D);
    EXPECT(FC_ERR_INVALID_ARG, "desc.q.dtype", e);
    e = valid();
    e.rope_dim = 4, e.q_rope = fc_tensor_bnsd(qr, FC_F32, NQ, S, 4), e.k_rope = fc_tensor_bnsd(k8, FC_I8, NKV, S, 4);
    EXPECT(FC_ERR_INVALID_ARG, "desc.k_rope.dtype", e);

    /* int8 output */
    d = valid();
    d.out = fc_tensor_bnsd(out8, FC_I8, NQ, S, D);
    EXPECT(FC_ERR_INVALID_ARG, "desc.out_quant", d);
    d.out_quant = (fc_affine){.scale = oscale, .dtype = FC_F32, .stride_head = D, .stride_dim = 1};
    EXPECT_OK(d);
    e = d;
    e.out_quant.dtype = FC_I64;
    EXPECT(FC_ERR_INVALID_ARG, "desc.out_quant.dtype", e);
    e = d;
    e.out_quant.stride_head = -D;
    EXPECT(FC_ERR_INVALID_ARG, "desc.out_quant", e);
    e = d;
    e.out.stride_seq = 0; /* overlapping int8 output */
    EXPECT(FC_ERR_INVALID_ARG, "desc.out", e);
    e = valid();
    e.out.dtype = FC_U8;
    EXPECT(FC_ERR_INVALID_ARG, "desc.out.dtype", e);
}

static void kv_starts(void)
{
    fc_attention_desc d = valid();
    int64_t st[B] = {0, S};
    d.kv_starts = st;
    EXPECT_OK(d);
    st[1] = S + 1;
    EXPECT(FC_ERR_INVALID_ARG, "desc.kv_starts[1]", d);
    st[1] = -1;
    EXPECT(FC_ERR_INVALID_ARG, "desc.kv_starts[1]", d);
    int64_t ql[B] = {S, S}, kl[B] = {S, 2};
    st[0] = 1, st[1] = 3;
    d.q_lens = ql, d.kv_lens = kl;
    EXPECT(FC_ERR_INVALID_ARG, "desc.kv_starts[1]", d); /* beyond this batch's kv length */
    st[1] = 2;
    EXPECT_OK(d);
}

static int32_t idx32[B * S * NKV * 4];
static int64_t idx64[B * S * NKV * 4];

static fc_attention_desc sparse_desc(void)
{
    fc_attention_desc d = valid();
    d.sparse = (fc_sparse){.indices = idx32, .dtype = FC_I32, .count = 4, .block_size = 2, .stride_batch = S * NKV * 4,
                           .stride_seq = NKV * 4, .stride_head = 4, .stride_entry = 1};
    return d;
}

static void sparse(void)
{
    fc_attention_desc d = sparse_desc();
    EXPECT_OK(d);
    d.sparse.indices = idx64, d.sparse.dtype = FC_I64;
    EXPECT_OK(d);
    const fc_dtype bad_dt[] = {FC_F32, FC_I8, FC_U8, FC_BOOL, (fc_dtype)-1};
    for (unsigned t = 0; t < 5; t++) {
        d = sparse_desc();
        d.sparse.dtype = bad_dt[t];
        EXPECT(FC_ERR_INVALID_ARG, "desc.sparse.dtype", d);
    }
    const int64_t bad_n[] = {0, -1};
    for (int t = 0; t < 2; t++) {
        d = sparse_desc();
        d.sparse.count = bad_n[t];
        EXPECT(FC_ERR_INVALID_ARG, "desc.sparse.count", d);
        d = sparse_desc();
        d.sparse.block_size = bad_n[t];
        EXPECT2(FC_ERR_INVALID_ARG, "desc.sparse.", "block_size", d);
    }
    for (int s = 0; s < 4; s++) {
        d = sparse_desc();
        int64_t *f[] = {&d.sparse.stride_batch, &d.sparse.stride_seq, &d.sparse.stride_head, &d.sparse.stride_entry};
        *f[s] = -1;
        EXPECT(FC_ERR_INVALID_ARG, "desc.sparse", d);
    }
    /* what sparse selection replaces or cannot combine with (flashc.h fc_attention_desc.sparse) */
    const char *other[] = {"desc.vis.window", "desc.vis.window", "desc.vis.prefix", "desc.vis.mask", "desc.kv_starts",
                           "desc.bias", "desc.alibi", "desc.sink", "desc.dropout"};
    static const fc_window bw[B] = {{0}, {0}};
    static const int64_t prefix[B] = {1, 1}, starts[B] = {0, 0};
    static const float sink[NQ] = {0};
    for (int t = 0; t < 9; t++) {
        d = sparse_desc();
        add_options(&d); /* bias, ALiBi, mask, dropout, statistics ... */
        fc_attention_desc e = sparse_desc();
        e.stats = d.stats;
        switch (t) {
        case 0: e.vis.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT); break;
        case 1: e.vis.batch_window = bw; break;
        case 2: e.vis.prefix = prefix; break;
        case 3: e.vis.mask = d.vis.mask; break;
        case 4: e.kv_starts = starts; break;
        case 5: e.bias = d.bias; break;
        case 6: e.alibi = d.alibi; break;
        case 7: e.sink = sink; break;
        default: e.dropout = d.dropout; break;
        }
        EXPECT2(FC_ERR_INVALID_ARG, "desc.sparse", other[t], e);
    }
    d = sparse_desc();
    d.dropout = (fc_dropout){.keep_bits = keep, .keep_bits_bytes = sizeof keep, .keep_prob = 1};
    EXPECT_OK(d); /* keep_prob 1: no dropout, the bits are ignored */
    d.stats = (fc_stats){.max = smax, .sum = ssum, .order = FC_STATS_KV_TOKEN_GROUP};
    EXPECT_OK(d);
    d.stats.replicas = 2;
    EXPECT(FC_ERR_INVALID_ARG, "desc.stats.replicas", d);
    d.stats.order = (fc_stats_order)4, d.stats.replicas = 1;
    EXPECT(FC_ERR_INVALID_ARG, "desc.stats.order", d);
}

/* ---- backward ---------------------------------------------------------------------------------- */

static float dout[B * NQ * S * D], dq[B * NQ * S * D], dk[B * NKV * S * D], dv[B * NKV * S * D];
static float dqr[B * NQ * S * 4], dkr[B * NKV * S * 4], dsink[NQ];

static fc_attention_desc bwd_desc(void)
{
    fc_attention_desc d = valid();
    d.stats = (fc_stats){.max = smax, .sum = ssum, .replicas = 8};
    return d;
}

static fc_attention_grads grads(void)
{
    fc_attention_grads g;
    memset(&g, 0, sizeof g);
    g.d_out = fc_tensor_bnsd(dout, FC_F32, NQ, S, D);
    g.dq = fc_tensor_bnsd(dq, FC_F32, NQ, S, D);
    g.dk = fc_tensor_bnsd(dk, FC_F32, NKV, S, D);
    g.dv = fc_tensor_bnsd(dv, FC_F32, NKV, S, D);
    return g;
}

#define BEXPECT(want, field, d, g) bexpect(__LINE__, want, field, d, g)

static void bexpect(int line, fc_status want, const char *field, fc_attention_desc d, fc_attention_grads g)
{
    fc_plan *plan = (fc_plan *)&plan;
    const fc_status st = fc_plan_create_backward(&d, &g, NULL, &plan);
    const char *msg = fc_last_error();
    tc_context("line %d: %s", line, field ? field : "accepted");
    TC_CHECK(st == want, "status %s, want %s (message \"%s\")", fc_status_name(st), fc_status_name(want), msg);
    if (field) {
        TC_CHECK(strstr(msg, field) != NULL, "message \"%s\" does not name %s", msg, field);
        TC_CHECK(plan == NULL, "*plan not NULL after a failure");
    } else {
        TC_CHECK(msg[0] == '\0', "message after success: \"%s\"", msg);
    }
    if (st == FC_OK)
        fc_plan_destroy(plan);
    const fc_status st2 = fc_attention_backward(&d, &g);
    TC_CHECK(st2 == want, "fc_attention_backward status %s, want %s", fc_status_name(st2), fc_status_name(want));
}

static void backward(void)
{
    fc_attention_desc d = bwd_desc();
    fc_attention_grads g = grads();
    BEXPECT(FC_OK, NULL, d, g);
    fc_plan *plan;
    tc_context("backward NULL arguments");
    TC_CHECK(fc_plan_create_backward(NULL, &g, NULL, &plan) == FC_ERR_NULL_ARG && strstr(fc_last_error(), "desc"), "desc NULL");
    TC_CHECK(fc_plan_create_backward(&d, NULL, NULL, &plan) == FC_ERR_NULL_ARG && strstr(fc_last_error(), "grads"), "grads NULL");
    TC_CHECK(fc_plan_create_backward(&d, &g, NULL, NULL) == FC_ERR_NULL_ARG && strstr(fc_last_error(), "plan"), "plan NULL");
    TC_CHECK(fc_attention_backward(&d, NULL) == FC_ERR_NULL_ARG, "fc_attention_backward(grads NULL)");
    TC_CHECK(fc_attention_backward(NULL, &g) == FC_ERR_NULL_ARG, "fc_attention_backward(desc NULL)");

    d.stats = (fc_stats){0};
    BEXPECT(FC_ERR_NULL_ARG, "desc.stats", d, g);
    d = bwd_desc();
    d.stats.sum = NULL;
    BEXPECT(FC_ERR_NULL_ARG, "desc.stats.sum", d, g);
    d = bwd_desc();
    d.out.data = NULL;
    BEXPECT(FC_ERR_NULL_ARG, "desc.out.data", d, g); /* the forward output is read */
    d = bwd_desc();

    const char *names[] = {"grads.d_out", "grads.dq", "grads.dk", "grads.dv"};
    for (int t = 0; t < 4; t++) {
        char field[64];
        fc_attention_grads e = g;
        fc_tensor *ts[] = {&e.d_out, &e.dq, &e.dk, &e.dv};
        ts[t]->data = NULL;
        snprintf(field, sizeof field, "%s.data", names[t]);
        BEXPECT(FC_ERR_NULL_ARG, field, d, e);
        e = g;
        ts[t]->dtype = t % 2 ? FC_I8 : FC_I32;
        snprintf(field, sizeof field, "%s.dtype", names[t]);
        BEXPECT(FC_ERR_INVALID_ARG, field, d, e);
        e = g;
        ts[t]->stride_head = -1;
        BEXPECT(FC_ERR_INVALID_ARG, names[t], d, e);
        e = g;
        ts[t]->data = (char *)ts[t]->data + 2; /* not aligned to 4 bytes */
        BEXPECT(FC_ERR_INVALID_ARG, names[t], d, e);
        if (t == 0)
            continue;
        e = g;
        ts[t]->stride_seq = 0; /* gradients are outputs: they must not overlap */
        BEXPECT(FC_ERR_INVALID_ARG, names[t], d, e);
        e = g;
        ts[t]->stride_dim = 0;
        BEXPECT(FC_ERR_INVALID_ARG, names[t], d, e);
    }
    fc_attention_grads e = g;
    e.dq.dtype = FC_F16, e.dk.dtype = FC_BF16, e.d_out.dtype = FC_BF16;
    BEXPECT(FC_OK, NULL, d, e); /* any float dtype, independently */

    /* rope gradients */
    d.rope_dim = 4;
    d.q_rope = fc_tensor_bnsd(qr, FC_F32, NQ, S, 4), d.k_rope = fc_tensor_bnsd(kr, FC_F32, NKV, S, 4);
    BEXPECT(FC_ERR_NULL_ARG, "grads.dq_rope.data", d, g);
    e = g;
    e.dq_rope = fc_tensor_bnsd(dqr, FC_F32, NQ, S, 4);
    BEXPECT(FC_ERR_NULL_ARG, "grads.dk_rope.data", d, e);
    e.dk_rope = fc_tensor_bnsd(dkr, FC_F32, NKV, S, 4);
    BEXPECT(FC_OK, NULL, d, e);
    fc_attention_grads f = e;
    f.dk_rope.stride_seq = 0;
    BEXPECT(FC_ERR_INVALID_ARG, "grads.dk_rope", d, f);
    f = e;
    f.dq_rope.stride_head = 0;
    BEXPECT(FC_ERR_INVALID_ARG, "grads.dq_rope", d, f);
    f = e;
    f.dq_rope.dtype = FC_I8;
    BEXPECT(FC_ERR_INVALID_ARG, "grads.dq_rope.dtype", d, f);

    /* dsink */
    d = bwd_desc();
    static const float sink[NQ] = {0.5f, 0, -1, 2};
    d.sink = sink;
    BEXPECT(FC_ERR_NULL_ARG, "grads.dsink", d, g);
    e = g;
    e.dsink = dsink;
    BEXPECT(FC_OK, NULL, d, e);
    d.sink = NULL;
    BEXPECT(FC_OK, NULL, d, e); /* dsink without a sink is ignored */

    /* the forward's rules still apply to the backward's description */
    d = bwd_desc();
    d.kv_heads = 3;
    BEXPECT(FC_ERR_INVALID_ARG, "desc.kv_heads", d, g);
    d = bwd_desc();
    d.dropout = (fc_dropout){.keep_prob = 0.5};
    BEXPECT(FC_ERR_NULL_ARG, "desc.dropout.keep_bits", d, g);
    d = sparse_desc();
    d.stats = bwd_desc().stats;
    d.sink = sink;
    e = g;
    e.dsink = dsink;
    BEXPECT(FC_ERR_INVALID_ARG, "desc.sink", d, e);
    d.sink = NULL;
    d.stats.order = FC_STATS_KV_GROUP;
    BEXPECT(FC_ERR_INVALID_ARG, "desc.stats.replicas", d, g);
    d.stats.replicas = 1;
    BEXPECT(FC_OK, NULL, d, g);
    fc_options opt = {.threads = -1};
    tc_context("backward options");
    TC_CHECK(fc_plan_create_backward(&d, &g, &opt, &plan) == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "options.threads"),
             "options.threads -1: %s", fc_last_error());
}

static void body(void)
{
    storage();
    int8_maps();
    kv_starts();
    sparse();
    backward();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_errors_storage", body); }
