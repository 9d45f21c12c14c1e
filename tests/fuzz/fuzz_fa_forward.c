/* libFuzzer harness: FlashAttentionScore (V1), V2, V3, VarLenScore and VarLenScoreV5, both phases. */
#include <math.h>
#include <stdlib.h>

#include "aclnnop/aclnn_flash_attention_score.h"
#include "fa_geom.h"

FZ_CANN_INITIALIZE

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f;
    fz_init(&f, data, size);
    fz_cann c = {0};
    const int fn = (int)fz_range(&f, 0, 4); /* V1, V2, V3, VarLen, V5 */
    fz_fa g;
    fz_fa_draw(&f, &g, fn >= 3);
    if (fn == 4 && fz_chance(&f, 30))
        g.Dr = (int)fz_range(&f, 1, 16);
    if (fz_chance(&f, 10))
        g.Dv = (int)fz_range(&f, 1, 32);
    fz_spec sq = fz_fa_seq(&g, true, g.D), sk = fz_fa_seq(&g, false, g.D), sv = fz_fa_seq(&g, false, g.Dv);
    fz_spec so = fz_fa_seq(&g, true, g.Dv), sst = fz_fa_stats(&g);
    so.output = sst.output = true;
    aclTensor *q = fz_tensor(&f, &c, &sq), *k = fz_tensor(&f, &c, &sk), *v = fz_tensor(&f, &c, &sv);
    aclTensor *qr = NULL, *kr = NULL;
    if (g.Dr) {
        fz_spec a = fz_fa_seq(&g, true, g.Dr), b = fz_fa_seq(&g, false, g.Dr);
        qr = fz_tensor(&f, &c, &a), kr = fz_tensor(&f, &c, &b);
    }
    double keep;
    aclTensor *pse = fz_fa_pse(&f, &c, &g), *mask = fz_fa_mask(&f, &c, &g), *drop = fz_fa_drop(&f, &c, &g, &keep);
    aclTensor *sink = fn == 2 || fn == 4 ? fz_fa_sink(&f, &c, &g) : NULL;
    aclTensor *smax = fz_tensor(&f, &c, &sst), *ssum = fz_tensor(&f, &c, &sst), *out = fz_tensor(&f, &c, &so);
    aclIntArray *prefix = fz_fa_prefix(&f, &c, &g), *aq = fz_fa_lens(&f, &c, &g, true), *akv = fz_fa_lens(&f, &c, &g, false);
    aclIntArray *qs = fz_fa_start(&f, &c), *kvs = fz_fa_start(&f, &c);
    fz_fa_attrs a;
    fz_fa_attrs_draw(&f, &g, &a);
    const double scale = a.scale;
    const int64_t pre = a.pre, next = a.next, heads = a.heads, inner = a.inner, mode = a.mode, pt = a.pse_type;
    char *sml_s = a.sml;

    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st;
    aclnnStatus (*run)(void *, uint64_t, aclOpExecutor *, aclrtStream);
    switch (fn) {
    case 0:
        st = aclnnFlashAttentionScoreGetWorkspaceSize(q, k, v, pse, drop, NULL, mask, prefix, scale, keep, pre, next,
                                                      heads, g.layout, inner, mode, smax, ssum, NULL, out, &ws, &ex);
        run = aclnnFlashAttentionScore;
        break;
    case 1:
        st = aclnnFlashAttentionScoreV2GetWorkspaceSize(q, k, v, pse, drop, NULL, mask, prefix, qs, kvs, scale, keep, pre,
                                                        next, heads, g.layout, inner, mode, pt, smax, ssum, NULL, out,
                                                        &ws, &ex);
        run = aclnnFlashAttentionScoreV2;
        break;
    case 2:
        st = aclnnFlashAttentionScoreV3GetWorkspaceSize(q, k, v, pse, drop, NULL, mask, sink, prefix, qs, kvs, scale, keep,
                                                        pre, next, heads, g.layout, inner, mode, pt, smax, ssum, NULL,
                                                        out, &ws, &ex);
        run = aclnnFlashAttentionScoreV3;
        break;
    case 3:
        st = aclnnFlashAttentionVarLenScoreGetWorkspaceSize(q, k, v, pse, drop, NULL, mask, prefix, aq, akv, scale, keep,
                                                            pre, next, heads, g.layout, inner, mode, smax, ssum, NULL,
                                                            out, &ws, &ex);
        run = aclnnFlashAttentionVarLenScore;
        break;
    default:
        st = aclnnFlashAttentionVarLenScoreV5GetWorkspaceSize(q, qr, k, kr, v, pse, drop, NULL, mask, sink, prefix, aq,
                                                              akv, qs, kvs, scale, keep, pre, next, heads, g.layout,
                                                              inner, mode, pt, sml_s, smax, ssum, NULL, out, &ws, &ex);
        run = aclnnFlashAttentionVarLenScoreV5;
        break;
    }
    if (st == ACLNN_SUCCESS) {
        fz_free_between(&f, &c);
        fz_run(&f, run, ws, ex);
    }
    fz_cann_release(&c);
    return 0;
}
