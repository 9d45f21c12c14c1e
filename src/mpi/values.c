/* The array-valued fields of the agreement (windows, prefixes, sink, ALiBi slopes): compared by a
 * hash of their elements, and on a mismatch gathered from every rank so the message can name the
 * first element that differs and both values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"

static int64_t float_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return (int64_t)u;
}

static float bits_float(int64_t v)
{
    const uint32_t u = (uint32_t)v;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

int64_t ring_array_count(const ring_ctx *c, int k)
{
    switch (k) {
    case F_WINDOWS: return 4 * c->B;
    case F_PREFIX: return 1 + c->B;
    case F_SINK: return 1 + c->Nq;
    default: return 2 + c->B * c->Nq; /* F_ALIBI */
    }
}

void ring_array_values(const ring_ctx *c, int k, int64_t *v)
{
    const fc_attention_desc *d = c->d;
    memset(v, 0, (size_t)ring_array_count(c, k) * sizeof *v);
    switch (k) {
    case F_WINDOWS:
        for (int64_t b = 0; b < c->B; b++) {
            const fc_window *w = d->vis.batch_window ? &d->vis.batch_window[b] : &d->vis.window;
            if (w->enabled)
                v[4 * b] = 1, v[4 * b + 1] = w->left, v[4 * b + 2] = w->right, v[4 * b + 3] = w->align;
        }
        break;
    case F_PREFIX:
        v[0] = d->vis.prefix != NULL;
        for (int64_t b = 0; d->vis.prefix && b < c->B; b++)
            v[1 + b] = d->vis.prefix[b];
        break;
    case F_SINK:
        v[0] = d->sink != NULL;
        for (int64_t n = 0; d->sink && n < c->Nq; n++)
            v[1 + n] = float_bits(d->sink[n]);
        break;
    default:
        v[0] = d->alibi.slopes != NULL, v[1] = d->alibi.slopes && d->alibi.sqrt_distance;
        for (int64_t b = 0; d->alibi.slopes && b < c->B; b++)
            for (int64_t n = 0; n < c->Nq; n++)
                v[2 + b * c->Nq + n] = float_bits(d->alibi.slopes[b * d->alibi.stride_batch + n * d->alibi.stride_head]);
        break;
    }
}

int64_t ring_array_hash(const ring_ctx *c, int k)
{
    const int64_t n = ring_array_count(c, k);
    int64_t *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v)
        return 0; /* no memory: compared as equal; the local check of the next step will fail */
    ring_array_values(c, k, v);
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    const unsigned char *p = (const unsigned char *)v;
    for (size_t i = 0; i < (size_t)n * sizeof *v; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    free(v);
    return (int64_t)h;
}

/* Element i of field k as text. */
static void element_text(const ring_ctx *c, int k, int64_t i, const int64_t *v, char *out, size_t size)
{
    switch (k) {
    case F_WINDOWS: {
        const int64_t *w = v + 4 * (i / 4);
        char side[2][24];
        for (int j = 0; j < 2; j++)
            w[1 + j] == FC_UNBOUNDED ? snprintf(side[j], sizeof side[j], "unbounded")
                                     : snprintf(side[j], sizeof side[j], "%lld", (long long)w[1 + j]);
        if (!w[0])
            snprintf(out, size, "no window");
        else
            snprintf(out, size, "window (left %s, right %s, %s)", side[0], side[1],
                     w[3] == FC_ALIGN_BOTTOM_RIGHT ? "bottom-right" : "top-left");
        return;
    }
    case F_SINK:
        if (i > 0) {
            snprintf(out, size, "%.9g", bits_float(v[i]));
            return;
        }
        break;
    case F_ALIBI:
        if (i == 1) {
            snprintf(out, size, "sqrt_distance = %s", v[1] ? "true" : "false");
            return;
        }
        if (i > 1) {
            snprintf(out, size, "%.9g", bits_float(v[i]));
            return;
        }
        break;
    default:
        if (i > 0) {
            snprintf(out, size, "%lld", (long long)v[i]);
            return;
        }
        break;
    }
    snprintf(out, size, "%s", v[0] ? "one" : "none"); /* element 0: whether the array is given */
}

/* Which element the message names. */
static void element_name(const ring_ctx *c, int k, int64_t i, char *out, size_t size)
{
    switch (k) {
    case F_WINDOWS: snprintf(out, size, "desc.vis.window / batch_window (batch %lld)", (long long)(i / 4)); return;
    case F_PREFIX: i > 0 ? snprintf(out, size, "desc.vis.prefix[%lld]", (long long)(i - 1)) : snprintf(out, size, "desc.vis.prefix"); return;
    case F_SINK: i > 0 ? snprintf(out, size, "desc.sink[%lld]", (long long)(i - 1)) : snprintf(out, size, "desc.sink"); return;
    default:
        if (i > 1)
            snprintf(out, size, "desc.alibi slope (batch %lld, head %lld)", (long long)((i - 2) / c->Nq),
                     (long long)((i - 2) % c->Nq));
        else
            snprintf(out, size, "desc.alibi%s", i == 1 ? ".sqrt_distance" : "");
        return;
    }
}

fc_status ring_array_mismatch(ring_ctx *c, int k, int r)
{
    const int P = c->geom.ranks;
    const int64_t n = ring_array_count(c, k);
    if (n > INT32_MAX / 8)
        return ring_fail(FC_ERR_INVALID_ARG, "%s: the ranks' %s differ", c->fn, k == F_ALIBI ? "ALiBi slopes" : "arrays");
    int64_t *buf = ring_alloc((size_t)(P + 1) * (size_t)n, sizeof *buf, "the mismatching field's values");
    if (!buf)
        return FC_ERR_NO_MEMORY; /* the other ranks time out */
    int64_t *all = buf + n;
    ring_array_values(c, k, buf);
    MPI_Request req;
    fc_status st = FC_OK;
    if (MPI_Iallgather(buf, (int)n, MPI_INT64_T, all, (int)n, MPI_INT64_T, c->comm, &req) != MPI_SUCCESS)
        st = ring_fail(FC_ERR_BACKEND, "%s: MPI_Iallgather of the mismatching field failed", c->fn);
    else if ((st = ring_wait(c, &req, 1, "the other ranks' values of a field that differs")) != FC_OK)
        ring_abandon(c, &req, 1, false);
    if (st == FC_OK) {
        const int64_t *v0 = all, *vr = all + (size_t)r * (size_t)n;
        int64_t i = 0;
        while (i < n - 1 && v0[i] == vr[i])
            i++;
        char name[96], a[96], b[96];
        element_name(c, k, i, name, sizeof name);
        element_text(c, k, i, v0, a, sizeof a);
        element_text(c, k, i, vr, b, sizeof b);
        st = ring_fail(FC_ERR_INVALID_ARG, "%s: %s differs across ranks: rank 0 has %s, rank %d has %s", c->fn, name, a,
                       r, b);
    }
    ring_free_transfer(c, buf);
    return st;
}
