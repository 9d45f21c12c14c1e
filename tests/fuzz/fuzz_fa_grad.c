/* libFuzzer harness: FlashAttentionScoreGrad (V1), GradV2, GradV3 and UnpaddingScoreGradV5, both phases. */
#include <math.h>
#include <stdlib.h>

#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "fa_geom.h"

FZ_CANN_INITIALIZE

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f;
    fz_init(&f, data, size);
    fz_cann c = {0};
    const int fn = (int)fz_range(&f, 0, 3); /* V1, V2, V3, V5 */
    fz_fa g;
    fz_fa_draw(&f, &g, fn == 3);
    if (fn == 3 && fz_chance(&f, 30))
        g.Dr = (int)fz_range(&f, 1, 16);
    fz_spec sq = fz_fa_seq(&g, true, g.D), sk = fz_fa_seq(&g, false, g.D), so = fz_fa_seq(&g, true, g.Dv);
    fz_spec sst = fz_fa_stats(&g);
    aclTensor *q = fz_tensor(&f, &c, &sq), *k = fz_tensor(&f, &c, &sk), *v = fz_tensor(&f, &c, &sk);
    aclTensor *dy = fz_tensor(&f, &c, &so), *out = fz_chance(&f, 90) ? fz_tensor(&f, &c, &so) : NULL;
    aclTensor *smax = fz_chance(&f, 95) ? fz_tensor(&f, &c, &sst) : NULL;
    aclTensor *ssum = fz_chance(&f, 95) ? fz_tensor(&f, &c, &sst) : NULL;
    aclTensor *qr = NULL, *kr = NULL, *dqr = NULL, *dkr = NULL;
    fz_spec oq = sq, ok = sk;
    oq.output = ok.output = true;
    if (g.Dr) {
        fz_spec a = fz_fa_seq(&g, true, g.Dr), b = fz_fa_seq(&g, false, g.Dr);
        qr = fz_tensor(&f, &c, &a), kr = fz_tensor(&f, &c, &b);
        a.output = b.output = true;
        dqr = fz_tensor(&f, &c, &a), dkr = fz_tensor(&f, &c, &b);
    }
    double keep;
    aclTensor *pse = fz_fa_pse(&f, &c, &g), *mask = fz_fa_mask(&f, &c, &g), *drop = fz_fa_drop(&f, &c, &g, &keep);
    aclTensor *sink = fn >= 2 ? fz_fa_sink(&f, &c, &g) : NULL;
    aclTensor *dq = fz_tensor(&f, &c, &oq), *dk = fz_tensor(&f, &c, &ok), *dv = fz_tensor(&f, &c, &ok);
    aclTensor *dpse = NULL, *dsink = NULL;
    if (fz_chance(&f, 5)) {
        fz_spec s = fz_sp(g.dt, 4, g.B, g.N1, g.S1, g.S2);
        s.output = true;
        dpse = fz_tensor(&f, &c, &s);
    }
    if (sink && fz_chance(&f, 70)) {
        fz_spec s = fz_sp(ACL_FLOAT, 1, g.N1, 0, 0, 0);
        s.output = true;
        dsink = fz_tensor(&f, &c, &s);
    }
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
        st = aclnnFlashAttentionScoreGradGetWorkspaceSize(q, k, v, dy, pse, drop, NULL, mask, smax, ssum, NULL, out, prefix,
                                                          scale, keep, pre, next, heads, g.layout, inner, mode, dq, dk,
                                                          dv, dpse, &ws, &ex);
        run = aclnnFlashAttentionScoreGrad;
        break;
    case 1:
        st = aclnnFlashAttentionScoreGradV2GetWorkspaceSize(q, k, v, dy, pse, drop, NULL, mask, smax, ssum, NULL, out,
                                                            prefix, qs, kvs, scale, keep, pre, next, heads, g.layout,
                                                            inner, mode, pt, dq, dk, dv, dpse, &ws, &ex);
        run = aclnnFlashAttentionScoreGradV2;
        break;
    case 2:
        st = aclnnFlashAttentionScoreGradV3GetWorkspaceSize(q, k, v, dy, pse, drop, NULL, mask, smax, ssum, NULL, out, sink,
                                                            prefix, qs, kvs, scale, keep, pre, next, heads, g.layout,
                                                            inner, mode, pt, dq, dk, dv, dpse, dsink, &ws, &ex);
        run = aclnnFlashAttentionScoreGradV3;
        break;
    default:
        st = aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
            q, qr, k, kr, v, dy, pse, drop, NULL, mask, smax, ssum, NULL, out, sink, prefix, aq, akv, qs, kvs, scale, keep,
            pre, next, heads, g.layout, inner, mode, pt, sml_s, dq, dqr, dk, dkr, dv, dpse, dsink, &ws, &ex);
        run = aclnnFlashAttentionUnpaddingScoreGradV5;
        break;
    }
    if (st == ACLNN_SUCCESS) {
        fz_free_between(&f, &c);
        fz_run(&f, run, ws, ex);
    }
    fz_cann_release(&c);
    return 0;
}
