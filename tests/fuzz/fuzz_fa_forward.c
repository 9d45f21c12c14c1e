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
    fz_fa_optional o;
    fz_fa_optional_draw(&f, &c, &g, fn == 2 || fn == 4, &o);
    aclTensor *smax = fz_tensor(&f, &c, &sst), *ssum = fz_tensor(&f, &c, &sst), *out = fz_tensor(&f, &c, &so);
    fz_fa_attrs a;
    fz_fa_attrs_draw(&f, &c, &g, &a);

    fz_call r = {0};
    switch (fn) {
    case 0:
        r.st = aclnnFlashAttentionScoreGetWorkspaceSize(q, k, v, o.pse, o.drop, NULL, o.mask, a.prefix, a.scale, o.keep,
                                                        a.pre, a.next, a.heads, g.layout, a.inner, a.mode, smax, ssum,
                                                        NULL, out, &r.ws, &r.ex);
        r.run = aclnnFlashAttentionScore;
        break;
    case 1:
        r.st = aclnnFlashAttentionScoreV2GetWorkspaceSize(
            q, k, v, o.pse, o.drop, NULL, o.mask, a.prefix, a.q_start, a.kv_start, a.scale, o.keep, a.pre, a.next,
            a.heads, g.layout, a.inner, a.mode, a.pse_type, smax, ssum, NULL, out, &r.ws, &r.ex);
        r.run = aclnnFlashAttentionScoreV2;
        break;
    case 2:
        r.st = aclnnFlashAttentionScoreV3GetWorkspaceSize(
            q, k, v, o.pse, o.drop, NULL, o.mask, o.sink, a.prefix, a.q_start, a.kv_start, a.scale, o.keep, a.pre,
            a.next, a.heads, g.layout, a.inner, a.mode, a.pse_type, smax, ssum, NULL, out, &r.ws, &r.ex);
        r.run = aclnnFlashAttentionScoreV3;
        break;
    case 3:
        r.st = aclnnFlashAttentionVarLenScoreGetWorkspaceSize(
            q, k, v, o.pse, o.drop, NULL, o.mask, a.prefix, a.actual_q, a.actual_kv, a.scale, o.keep, a.pre, a.next,
            a.heads, g.layout, a.inner, a.mode, smax, ssum, NULL, out, &r.ws, &r.ex);
        r.run = aclnnFlashAttentionVarLenScore;
        break;
    default:
        r.st = aclnnFlashAttentionVarLenScoreV5GetWorkspaceSize(
            q, qr, k, kr, v, o.pse, o.drop, NULL, o.mask, o.sink, a.prefix, a.actual_q, a.actual_kv, a.q_start,
            a.kv_start, a.scale, o.keep, a.pre, a.next, a.heads, g.layout, a.inner, a.mode, a.pse_type, a.sml, smax,
            ssum, NULL, out, &r.ws, &r.ex);
        r.run = aclnnFlashAttentionVarLenScoreV5;
        break;
    }
    return fz_finish(&f, &c, &r);
}
