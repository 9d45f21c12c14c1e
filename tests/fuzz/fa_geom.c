#include "fa_geom.h"

#include <math.h>
#include <string.h>

void fz_fa_draw(fz *f, fz_fa *g, bool tnd_ok)
{
    static const int dims[] = {8, 16, 1, 2, 4, 24, 32, 64, 128, 3};
    static const char *const layouts[] = {"BNSD", "BSND", "BSH", "SBH", "TND"};
    static const aclDataType dts[] = {ACL_FLOAT16, ACL_BF16, ACL_FLOAT};
    memset(g, 0, sizeof *g);
    g->B = (int)fz_range(f, 1, 3);
    g->N2 = (int)fz_range(f, 1, 2);
    g->N1 = g->N2 * (int)fz_range(f, 1, 3);
    g->S1 = (int)fz_range(f, 1, 17);
    g->S2 = (int)fz_range(f, 1, 19);
    g->D = dims[fz_range(f, 0, 9)];
    g->Dv = g->D;
    g->dt = dts[fz_range(f, 0, 2)];
    const int lay = (int)fz_range(f, 0, tnd_ok ? 4 : 3);
    g->tnd = lay == 4;
    fz_pick_str(f, layouts + lay, 1, g->layout);
    for (int b = 0; b < g->B; b++) {
        g->s1[b] = g->tnd ? (int)fz_range(f, 0, g->S1) : g->S1;
        g->s2[b] = g->tnd ? (int)fz_range(f, 1, g->S2) : g->S2;
        g->T1 += g->s1[b], g->T2 += g->s2[b];
    }
    if (g->tnd && g->T1 == 0)
        g->s1[0] = 1, g->T1 = 1;
    g->mode = fz_chance(f, 40) ? fz_range(f, 0, 8) : 0;
    g->pse_type = fz_chance(f, 70) ? 1 : fz_range(f, 0, 3);
}

fz_spec fz_fa_seq(const fz_fa *g, bool q_side, int e)
{
    const int N = q_side ? g->N1 : g->N2, S = q_side ? g->S1 : g->S2, T = q_side ? g->T1 : g->T2;
    if (g->tnd)
        return fz_sp(g->dt, 3, T, N, e, 0);
    switch (g->layout[1]) {
    case 'N': return fz_sp(g->dt, 4, g->B, N, S, e);             /* BNSD */
    case 'S': return g->layout[2] == 'N' ? fz_sp(g->dt, 4, g->B, S, N, e) /* BSND */
                                         : fz_sp(g->dt, 3, g->B, S, (int64_t)N * e, 0); /* BSH */
    default: return fz_sp(g->dt, 3, S, g->B, (int64_t)N * e, 0); /* SBH */
    }
}

fz_spec fz_fa_stats(const fz_fa *g)
{
    return g->tnd ? fz_sp(ACL_FLOAT, 3, g->T1, g->N1, 8, 0) : fz_sp(ACL_FLOAT, 4, g->B, g->N1, g->S1, 8);
}

static aclTensor *fz_fa_pse(fz *f, fz_cann *c, const fz_fa *g)
{
    if (!fz_chance(f, 25))
        return NULL;
    fz_spec s;
    if (g->pse_type >= 2)
        s = fz_chance(f, 50) ? fz_sp(ACL_FLOAT, 1, g->N1, 0, 0, 0) : fz_sp(ACL_FLOAT, 2, g->B, g->N1, 0, 0);
    else if (g->tnd)
        s = fz_sp(g->dt, 4, fz_chance(f, 50) ? 1 : g->B, g->N1, 1024, g->S2);
    else
        s = fz_sp(g->dt, 4, fz_chance(f, 50) ? 1 : g->B, g->N1, fz_chance(f, 30) ? 1 : g->S1, g->S2);
    return fz_tensor(f, c, &s);
}

static int64_t mask_value(void *ctx, int64_t e)
{
    const int64_t *cols = ctx; /* causal-like pattern with some holes */
    const int64_t i = e / cols[0], j = e % cols[0];
    return j > i + cols[1];
}

static aclTensor *fz_fa_mask(fz *f, fz_cann *c, const fz_fa *g)
{
    static int64_t shape[2];
    const bool compressed = g->mode >= 2 && g->mode != 5;
    if (!fz_chance(f, compressed ? 70 : 25))
        return NULL;
    const aclDataType dt = fz_chance(f, 50) ? ACL_BOOL : ACL_UINT8;
    fz_spec s;
    if (compressed)
        s = fz_sp(dt, 2, g->mode == 6 ? 3072 : 2048, 2048, 0, 0);
    else if (g->tnd)
        s = fz_chance(f, 50) ? fz_sp(dt, 2, g->S1, g->S2, 0, 0) : fz_sp(dt, 2, g->T1, g->T2, 0, 0);
    else
        s = fz_chance(f, 50) ? fz_sp(dt, 4, g->B, 1, g->S1, g->S2) : fz_sp(dt, 2, g->S1, g->S2, 0, 0);
    shape[0] = s.dims[s.rank - 1], shape[1] = fz_range(f, -3, 3);
    s.ints = mask_value, s.ctx = shape;
    return fz_tensor(f, c, &s);
}

static aclTensor *fz_fa_drop(fz *f, fz_cann *c, const fz_fa *g, double *keep)
{
    *keep = 1.0;
    if (!fz_chance(f, 15))
        return NULL;
    *keep = fz_real(f, 0.75);
    const int64_t scores = (int64_t)g->B * g->N1 * (g->tnd ? g->S1 : g->S1) * g->S2;
    fz_spec s = fz_sp(ACL_UINT8, 1, (scores + 7) / 8, 0, 0, 0);
    return fz_tensor(f, c, &s);
}

static aclTensor *fz_fa_sink(fz *f, fz_cann *c, const fz_fa *g)
{
    if (!fz_chance(f, 15))
        return NULL;
    fz_spec s = fz_sp(ACL_FLOAT, 1, g->N1, 0, 0, 0);
    return fz_tensor(f, c, &s);
}

static aclIntArray *fz_fa_lens(fz *f, fz_cann *c, const fz_fa *g, bool q_side)
{
    if (!g->tnd)
        return NULL;
    int64_t v[4], run = 0;
    for (int b = 0; b < g->B; b++)
        v[b] = run += q_side ? g->s1[b] : g->s2[b];
    return fz_int_array(f, c, v, g->B);
}

static aclIntArray *fz_fa_prefix(fz *f, fz_cann *c, const fz_fa *g)
{
    if (g->mode != 6 && !fz_chance(f, 3))
        return NULL;
    int64_t v[4];
    for (int b = 0; b < g->B; b++)
        v[b] = fz_range(f, 0, g->S2);
    return fz_int_array(f, c, v, g->B);
}

static aclIntArray *fz_fa_start(fz *f, fz_cann *c)
{
    if (!fz_chance(f, 10))
        return NULL;
    const int64_t v[1] = {fz_range(f, -20, 20)};
    return fz_int_array(f, c, v, 1);
}

void fz_fa_optional_draw(fz *f, fz_cann *c, const fz_fa *g, bool sink_ok, fz_fa_optional *o)
{
    o->pse = fz_fa_pse(f, c, g);
    o->mask = fz_fa_mask(f, c, g);
    o->drop = fz_fa_drop(f, c, g, &o->keep);
    o->sink = sink_ok ? fz_fa_sink(f, c, g) : NULL;
}

void fz_fa_attrs_draw(fz *f, fz_cann *c, const fz_fa *g, fz_fa_attrs *a)
{
    static const char *const sml[] = {"", "TND", "NTD", "BNSD"};
    a->prefix = fz_fa_prefix(f, c, g);
    a->actual_q = fz_fa_lens(f, c, g, true), a->actual_kv = fz_fa_lens(f, c, g, false);
    a->q_start = fz_fa_start(f, c), a->kv_start = fz_fa_start(f, c);
    a->scale = fz_real(f, 1.0 / sqrt((double)g->D));
    a->pre = fz_int(f, fz_chance(f, 50) ? 2147483647 : fz_range(f, -4, 20));
    a->next = fz_int(f, fz_chance(f, 50) ? 2147483647 : fz_range(f, -4, 20));
    a->heads = fz_int(f, g->N1), a->inner = fz_int(f, 0), a->mode = fz_int(f, g->mode), a->pse_type = fz_int(f, g->pse_type);
    fz_pick_str(f, sml, 4, a->sml);
}
