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
    fz_fa_optional o;
    fz_fa_optional_draw(&f, &c, &g, fn >= 2, &o);
    aclTensor *dq = fz_tensor(&f, &c, &oq), *dk = fz_tensor(&f, &c, &ok), *dv = fz_tensor(&f, &c, &ok);
    aclTensor *dpse = NULL, *dsink = NULL;
    if (fz_chance(&f, 5)) {
        fz_spec s = fz_sp(g.dt, 4, g.B, g.N1, g.S1, g.S2);
        s.output = true;
        dpse = fz_tensor(&f, &c, &s);
    }
    if (o.sink && fz_chance(&f, 70)) {
        fz_spec s = fz_sp(ACL_FLOAT, 1, g.N1, 0, 0, 0);
        s.output = true;
        dsink = fz_tensor(&f, &c, &s);
    }
    fz_fa_attrs a;
    fz_fa_attrs_draw(&f, &c, &g, &a);

    fz_call r = {0};
    switch (fn) {
    case 0:
        r.st = aclnnFlashAttentionScoreGradGetWorkspaceSize(q, k, v, dy, o.pse, o.drop, NULL, o.mask, smax, ssum, NULL,
                                                            out, a.prefix, a.scale, o.keep, a.pre, a.next, a.heads,
                                                            g.layout, a.inner, a.mode, dq, dk, dv, dpse, &r.ws, &r.ex);
        r.run = aclnnFlashAttentionScoreGrad;
        break;
    case 1:
        r.st = aclnnFlashAttentionScoreGradV2GetWorkspaceSize(
            q, k, v, dy, o.pse, o.drop, NULL, o.mask, smax, ssum, NULL, out, a.prefix, a.q_start, a.kv_start, a.scale,
            o.keep, a.pre, a.next, a.heads, g.layout, a.inner, a.mode, a.pse_type, dq, dk, dv, dpse, &r.ws, &r.ex);
        r.run = aclnnFlashAttentionScoreGradV2;
        break;
    case 2:
        r.st = aclnnFlashAttentionScoreGradV3GetWorkspaceSize(
            q, k, v, dy, o.pse, o.drop, NULL, o.mask, smax, ssum, NULL, out, o.sink, a.prefix, a.q_start, a.kv_start,
            a.scale, o.keep, a.pre, a.next, a.heads, g.layout, a.inner, a.mode, a.pse_type, dq, dk, dv, dpse, dsink,
            &r.ws, &r.ex);
        r.run = aclnnFlashAttentionScoreGradV3;
        break;
    default:
        r.st = aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
            q, qr, k, kr, v, dy, o.pse, o.drop, NULL, o.mask, smax, ssum, NULL, out, o.sink, a.prefix, a.actual_q,
            a.actual_kv, a.q_start, a.kv_start, a.scale, o.keep, a.pre, a.next, a.heads, g.layout, a.inner, a.mode,
            a.pse_type, a.sml, dq, dqr, dk, dkr, dv, dpse, dsink, &r.ws, &r.ex);
        r.run = aclnnFlashAttentionUnpaddingScoreGradV5;
        break;
    }
    return fz_finish(&f, &c, &r);
}
