/* libFuzzer harness: IncreFlashAttentionV4 (one tensor, per-batch lists, paged caches in both forms;
 * lengths, left padding, pse, masks, int8 key/value with antiquant maps, int8 output), both phases. */
#include <math.h>
#include <stdlib.h>

#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "fz.h"

FZ_CANN_INITIALIZE

typedef struct geo {
    int B, N1, N2, D, S, NB, BS, W;
    int lay; /* 0 BNSD, 1 BSND, 2 BSH */
    int form; /* 0 one tensor, 1 per-batch list, 2 paged (blockNum, blockSize, H), 3 paged (blockNum, N2, blockSize, D) */
    aclDataType dt, kvdt;
} geo;

static fz_spec seq(const geo *g, aclDataType dt, int b, int N, int S)
{
    switch (g->lay) {
    case 0: return fz_sp(dt, 4, b, N, S, g->D);
    case 1: return fz_sp(dt, 4, b, S, N, g->D);
    default: return fz_sp(dt, 3, b, S, (int64_t)N * g->D, 0);
    }
}

static int64_t table_entry(void *ctx, int64_t e)
{
    const geo *g = ctx;
    return (e * 7 + 3) % g->NB; /* a permutation-like spread over the blocks */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int dims[] = {8, 16, 1, 4, 32, 64, 128, 24};
    static const char *const layouts[] = {"BNSD", "BSND", "BSH"};
    fz f;
    fz_init(&f, data, size);
    fz_cann c = {0};
    geo g = {0};
    g.B = (int)fz_range(&f, 1, 3);
    g.N2 = (int)fz_range(&f, 1, 2);
    g.N1 = g.N2 * (int)fz_range(&f, 1, 4);
    g.D = dims[fz_range(&f, 0, 7)];
    g.S = (int)fz_range(&f, 1, 40);
    g.lay = (int)fz_range(&f, 0, 2);
    g.form = fz_chance(&f, 40) ? (int)fz_range(&f, 1, 3) : 0;
    g.dt = fz_chance(&f, 50) ? ACL_FLOAT16 : ACL_BF16;
    g.kvdt = fz_chance(&f, 20) ? ACL_INT8 : g.dt;
    g.BS = (int)fz_range(&f, 1, 16);
    g.W = (g.S + g.BS - 1) / g.BS;
    g.NB = g.B * g.W + (int)fz_range(&f, 0, 3);
    char lay_buf[16];
    char *layout = fz_pick_str(&f, layouts + g.lay, 1, lay_buf);

    fz_spec sq = seq(&g, g.dt, g.B, g.N1, 1), so = sq;
    so.output = true;
    const bool out8 = fz_chance(&f, 10);
    if (out8)
        so.dtype = ACL_INT8;
    aclTensor *q = fz_tensor(&f, &c, &sq);
    aclTensor *kt[4] = {0}, *vt[4] = {0};
    int nkv = 1;
    aclTensor *table = NULL;
    if (g.form == 0) {
        fz_spec s = seq(&g, g.kvdt, g.B, g.N2, g.S);
        kt[0] = fz_tensor(&f, &c, &s), vt[0] = fz_tensor(&f, &c, &s);
    } else if (g.form == 1) {
        nkv = g.B;
        for (int b = 0; b < g.B; b++) {
            fz_spec s = seq(&g, g.kvdt, 1, g.N2, g.S);
            kt[b] = fz_tensor_plain(&f, &c, &s), vt[b] = fz_tensor_plain(&f, &c, &s);
        }
    } else {
        fz_spec s = g.form == 2 ? fz_sp(g.kvdt, 3, g.NB, g.BS, (int64_t)g.N2 * g.D, 0)
                                : fz_sp(g.kvdt, 4, g.NB, g.N2, g.BS, g.D);
        kt[0] = fz_tensor(&f, &c, &s), vt[0] = fz_tensor(&f, &c, &s);
        fz_spec st = fz_sp(ACL_INT32, 2, g.B, g.W, 0, 0);
        st.ints = table_entry, st.ctx = &g;
        table = fz_tensor(&f, &c, &st);
    }
    aclTensorList *kl = fz_tensor_list(&c, kt, nkv), *vl = fz_tensor_list(&c, vt, nkv);

    aclTensor *pse = NULL, *mask = NULL, *aqs = NULL, *aqo = NULL, *qs2 = NULL, *qo2 = NULL, *pad = NULL;
    if (fz_chance(&f, 15)) {
        fz_spec s = fz_sp(g.dt, 4, fz_chance(&f, 50) ? 1 : g.B, g.N1, 1, g.S);
        pse = fz_tensor(&f, &c, &s);
    }
    if (fz_chance(&f, 15)) {
        fz_spec s = fz_chance(&f, 50) ? fz_sp(ACL_BOOL, 2, g.B, g.S, 0, 0) : fz_sp(ACL_UINT8, 4, g.B, 1, 1, g.S);
        mask = fz_tensor(&f, &c, &s);
    }
    if (g.kvdt == ACL_INT8 || fz_chance(&f, 3)) {
        const int form = (int)fz_range(&f, 0, 3);
        const aclDataType adt = fz_chance(&f, 50) ? g.dt : ACL_FLOAT;
        fz_spec s = form == 0   ? fz_sp(adt, 1, 2, 0, 0, 0)
                    : form == 1 ? fz_sp(adt, 4, 2, g.N2, 1, g.D)
                    : form == 2 ? fz_sp(adt, 3, 2, g.N2, g.D, 0)
                                : fz_sp(adt, 2, 2, (int64_t)g.N2 * g.D, 0, 0);
        aqs = fz_tensor(&f, &c, &s);
        if (fz_chance(&f, 50))
            aqo = fz_tensor(&f, &c, &s);
    }
    if (out8 || fz_chance(&f, 3)) {
        fz_spec s = fz_chance(&f, 50) ? fz_sp(ACL_FLOAT, 1, 1, 0, 0, 0) : fz_sp(ACL_FLOAT, 1, (int64_t)g.N1 * g.D, 0, 0, 0);
        qs2 = fz_tensor(&f, &c, &s);
        if (fz_chance(&f, 50))
            qo2 = fz_tensor(&f, &c, &s);
    }
    if (g.form < 2 && fz_chance(&f, 10)) {
        const int64_t pad_len = fz_range(&f, 0, g.S);
        fz_ints v = {&pad_len, 1};
        fz_spec s = fz_sp(ACL_INT64, 1, 1, 0, 0, 0);
        s.ints = fz_ints_at, s.ctx = &v;
        pad = fz_tensor(&f, &c, &s);
    }
    aclIntArray *lens = NULL;
    if (g.form >= 2 || fz_chance(&f, 30)) {
        int64_t v[4];
        for (int b = 0; b < g.B; b++)
            v[b] = fz_range(&f, 0, g.S);
        lens = fz_int_array(&f, &c, v, fz_chance(&f, 20) ? 1 : g.B);
    }
    aclTensor *out = fz_tensor(&f, &c, &so);
    const int64_t heads = fz_int(&f, g.N1), kv_heads = fz_int(&f, fz_chance(&f, 30) ? 0 : g.N2);
    const int64_t block = fz_int(&f, g.form >= 2 ? g.BS : 0), inner = fz_int(&f, fz_range(&f, 0, 1));
    const double scale = fz_real(&f, 1.0 / sqrt((double)g.D));

    fz_call r = {.run = aclnnIncreFlashAttentionV4};
    r.st = aclnnIncreFlashAttentionV4GetWorkspaceSize(
        q, kl, vl, pse, mask, lens, NULL, NULL, NULL, qs2, qo2, aqs, aqo, table, pad, heads, scale, layout, kv_heads,
        block, inner, out, &r.ws, &r.ex);
    return fz_finish(&f, &c, &r);
}
