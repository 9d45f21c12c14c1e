/*
 * Generated dropout (fc_dropout.generate): the library's Philox-4x32-10 keep bits against a Philox
 * written here from the paper (checked on the Random123 known-answer vectors).  The mask the test
 * generates is passed as keep_bits to a second run: both runs must agree bit for bit — forward
 * output, statistics and every gradient — for dense, padded and packed batches, several seeds and
 * offsets, and 1 or 2 threads.  The keep-bits path itself is checked against the reference by the
 * other dropout tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "harness.h"

/* ---- reference Philox-4x32-10 (Salmon et al., SC'11) ---------------------------------------- */

static void philox_ref(uint32_t x[4], uint32_t key0, uint32_t key1)
{
    const uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
    uint32_t k[2] = {key0, key1};
    for (int r = 0; r < 10; r++) {
        if (r > 0)
            k[0] += W0, k[1] += W1;
        const uint64_t a = (uint64_t)M0 * x[0], b = (uint64_t)M1 * x[2];
        const uint32_t y0 = (uint32_t)(b >> 32) ^ x[1] ^ k[0], y1 = (uint32_t)b;
        const uint32_t y2 = (uint32_t)(a >> 32) ^ x[3] ^ k[1], y3 = (uint32_t)a;
        x[0] = y0, x[1] = y1, x[2] = y2, x[3] = y3;
    }
}

static void known_answers(void)
{
    /* Random123 kat_vectors: philox4x32 10 rounds */
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
        {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0x408f276du, 0x41c83b0eu,
         0xa20bc7c6u, 0x6d5451fdu},
        {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u, 0xd16cfe09u, 0x94fdccebu,
         0x5001e420u, 0x24126ea1u}};
    for (int t = 0; t < 3; t++) {
        uint32_t x[4] = {kat[t][0], kat[t][1], kat[t][2], kat[t][3]};
        philox_ref(x, kat[t][4], kat[t][5]);
        TC_CHECK(x[0] == kat[t][6] && x[1] == kat[t][7] && x[2] == kat[t][8] && x[3] == kat[t][9],
                 "Philox known answer %d: got %08x %08x %08x %08x", t, x[0], x[1], x[2], x[3]);
    }
}

/* The documented mask: element e kept iff word e%4 of Philox(offset + e/4, seed) < keep·2^32. */
static void make_bits(uint8_t *bits, int64_t n, uint64_t seed, uint64_t offset, double keep)
{
    const double threshold = keep * 4294967296.0;
    memset(bits, 0, (size_t)((n + 7) / 8));
    for (int64_t e = 0; e < n; e += 4) {
        const uint64_t c = offset + (uint64_t)e / 4;
        uint32_t x[4] = {(uint32_t)c, (uint32_t)(c >> 32), 0, 0};
        philox_ref(x, (uint32_t)seed, (uint32_t)(seed >> 32));
        for (int w = 0; w < 4 && e + w < n; w++)
            if ((double)x[w] < threshold)
                bits[(e + w) / 8] |= (uint8_t)(1u << ((e + w) % 8));
    }
}

/* ---- one problem, run with generated and with explicit bits -------------------------------- */

typedef struct {
    int64_t B, N, Nkv, Sq, Skv, D;
    bool packed, lens, causal;
    uint64_t seed, offset;
    double keep;
} pcase;

static uint64_t lcg = 88172645463325252ull;
static float urand(void)
{
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((lcg >> 40) / 16777216.0) * 2.0f - 1.0f;
}

static float *fill(size_t n)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = urand();
    return x;
}

typedef struct {
    float *out, *max, *sum, *dq, *dk, *dv;
} results;

static void run_one(const pcase *c, const float *q, const float *k, const float *v, const float *dout,
                    const int64_t *sq, const int64_t *skv, const uint8_t *bits, size_t nbytes, int threads,
                    results *r)
{
    const int64_t rows_q = c->packed ? sq[0] + sq[1] + sq[2] : c->B * c->Sq;
    const int64_t rows_kv = c->packed ? skv[0] + skv[1] + skv[2] : c->B * c->Skv;
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = c->B, d.q_heads = c->N, d.kv_heads = c->Nkv, d.head_dim = c->D;
    d.q_len = c->Sq, d.kv_len = c->Skv, d.packed = c->packed;
    if (c->packed || c->lens)
        d.q_lens = sq, d.kv_lens = skv;
    r->out = calloc((size_t)(rows_q * c->N * c->D), sizeof(float));
    r->max = calloc((size_t)(rows_q * c->N), sizeof(float));
    r->sum = calloc((size_t)(rows_q * c->N), sizeof(float));
    if (c->packed) {
        d.q = fc_tensor_tnd((void *)q, FC_F32, c->N, c->D);
        d.k = fc_tensor_tnd((void *)k, FC_F32, c->Nkv, c->D);
        d.v = fc_tensor_tnd((void *)v, FC_F32, c->Nkv, c->D);
        d.out = fc_tensor_tnd(r->out, FC_F32, c->N, c->D);
        d.stats.order = FC_STATS_TOKEN_MAJOR;
    } else {
        d.q = fc_tensor_bnsd((void *)q, FC_F32, c->N, c->Sq, c->D);
        d.k = fc_tensor_bnsd((void *)k, FC_F32, c->Nkv, c->Skv, c->D);
        d.v = fc_tensor_bnsd((void *)v, FC_F32, c->Nkv, c->Skv, c->D);
        d.out = fc_tensor_bnsd(r->out, FC_F32, c->N, c->Sq, c->D);
    }
    d.stats.max = r->max, d.stats.sum = r->sum;
    if (c->causal)
        d.vis.window = fc_window_causal(FC_ALIGN_BOTTOM_RIGHT);
    d.dropout.keep_prob = c->keep;
    if (bits)
        d.dropout.keep_bits = bits, d.dropout.keep_bits_bytes = nbytes;
    else
        d.dropout.generate = true, d.dropout.seed = c->seed, d.dropout.offset = c->offset;
    const fc_options opts = {.threads = threads};
    fc_plan *plan = NULL;
    size_t ws = 0;
    fc_status st = fc_plan_create(&d, &opts, &plan);
    void *work = NULL;
    if (st == FC_OK && (st = fc_plan_workspace_size(plan, &ws)) == FC_OK && (work = malloc(ws ? ws : 1)))
        st = fc_plan_run(plan, NULL, work, ws);
    TC_CHECK(st == FC_OK, "forward: %s", fc_last_error());
    fc_plan_destroy(plan);
    free(work);

    fc_attention_grads g = {0};
    r->dq = calloc((size_t)(rows_q * c->N * c->D), sizeof(float));
    r->dk = calloc((size_t)(rows_kv * c->Nkv * c->D), sizeof(float));
    r->dv = calloc((size_t)(rows_kv * c->Nkv * c->D), sizeof(float));
    if (c->packed) {
        g.d_out = fc_tensor_tnd((void *)dout, FC_F32, c->N, c->D);
        g.dq = fc_tensor_tnd(r->dq, FC_F32, c->N, c->D);
        g.dk = fc_tensor_tnd(r->dk, FC_F32, c->Nkv, c->D);
        g.dv = fc_tensor_tnd(r->dv, FC_F32, c->Nkv, c->D);
    } else {
        g.d_out = fc_tensor_bnsd((void *)dout, FC_F32, c->N, c->Sq, c->D);
        g.dq = fc_tensor_bnsd(r->dq, FC_F32, c->N, c->Sq, c->D);
        g.dk = fc_tensor_bnsd(r->dk, FC_F32, c->Nkv, c->Skv, c->D);
        g.dv = fc_tensor_bnsd(r->dv, FC_F32, c->Nkv, c->Skv, c->D);
    }
    st = fc_plan_create_backward(&d, &g, &opts, &plan);
    work = NULL;
    if (st == FC_OK && (st = fc_plan_workspace_size(plan, &ws)) == FC_OK && (work = malloc(ws ? ws : 1)))
        st = fc_plan_run(plan, NULL, work, ws);
    TC_CHECK(st == FC_OK, "backward: %s", fc_last_error());
    fc_plan_destroy(plan);
    free(work);
}

static void free_results(results *r)
{
    free(r->out), free(r->max), free(r->sum), free(r->dq), free(r->dk), free(r->dv);
}

static void same(const char *what, const float *a, const float *b, int64_t n)
{
    TC_CHECK(memcmp(a, b, (size_t)n * sizeof *a) == 0, "%s differs between generated and explicit keep bits", what);
}

static void check_case(const pcase *c)
{
    static const int64_t sq_l[3] = {5, 0, 7}, skv_l[3] = {9, 3, 6};
    int64_t sq[3], skv[3];
    for (int b = 0; b < 3; b++)
        sq[b] = c->packed || c->lens ? sq_l[b] : c->Sq, skv[b] = c->packed || c->lens ? skv_l[b] : c->Skv;
    const int64_t rows_q = c->packed ? sq[0] + sq[1] + sq[2] : c->B * c->Sq;
    const int64_t rows_kv = c->packed ? skv[0] + skv[1] + skv[2] : c->B * c->Skv;
    float *q = fill((size_t)(rows_q * c->N * c->D)), *k = fill((size_t)(rows_kv * c->Nkv * c->D));
    float *v = fill((size_t)(rows_kv * c->Nkv * c->D)), *dout = fill((size_t)(rows_q * c->N * c->D));
    int64_t nbits = 0;
    for (int b = 0; b < c->B; b++)
        nbits += c->N * sq[b] * skv[b];
    const size_t nbytes = (size_t)((nbits + 7) / 8);
    uint8_t *bits = malloc(nbytes ? nbytes : 1);
    make_bits(bits, nbits, c->seed, c->offset, c->keep);
    int64_t kept = 0;
    for (int64_t e = 0; e < nbits; e++)
        kept += (bits[e / 8] >> (e % 8)) & 1;
    TC_CHECK(nbits < 200 || (kept > 0.8 * c->keep * nbits && kept < 1.2 * c->keep * nbits),
             "kept %lld of %lld at keep_prob %g", (long long)kept, (long long)nbits, c->keep);

    results gen1, gen2, given;
    run_one(c, q, k, v, dout, sq, skv, NULL, 0, 1, &gen1);
    run_one(c, q, k, v, dout, sq, skv, NULL, 0, 2, &gen2);
    run_one(c, q, k, v, dout, sq, skv, bits, nbytes, 2, &given);
    const int64_t no = rows_q * c->N * c->D, ns = rows_q * c->N, nk = rows_kv * c->Nkv * c->D;
    same("out", gen1.out, given.out, no), same("max", gen1.max, given.max, ns), same("sum", gen1.sum, given.sum, ns);
    same("dq", gen1.dq, given.dq, no), same("dk", gen1.dk, given.dk, nk), same("dv", gen1.dv, given.dv, nk);
    same("out (1 vs 2 threads)", gen1.out, gen2.out, no), same("dq (1 vs 2 threads)", gen1.dq, gen2.dq, no);
    same("dk (1 vs 2 threads)", gen1.dk, gen2.dk, nk);
    free_results(&gen1), free_results(&gen2), free_results(&given);
    free(q), free(k), free(v), free(dout), free(bits);
}

static void generated_equals_explicit(void)
{
    const uint64_t seeds[] = {0, 1, 0x123456789abcdef0ull, UINT64_MAX};
    const uint64_t offsets[] = {0, 3, 1ull << 40, UINT64_MAX - 2}; /* the last wraps the counter */
    const double keeps[] = {0.9, 0.5, 0.1, 0.75};
    for (int t = 0; t < 4; t++)
        for (int layout = 0; layout < 3; layout++) {
            pcase c = {.B = 3, .N = 4, .Nkv = 2, .Sq = 7, .Skv = 33, .D = 16, .packed = layout == 1,
                       .lens = layout == 2, .causal = t % 2 == 1, .seed = seeds[t], .offset = offsets[t],
                       .keep = keeps[t]};
            tc_context("seed %llu offset %llu keep %g layout %d", (unsigned long long)c.seed,
                       (unsigned long long)c.offset, c.keep, layout);
            check_case(&c);
        }
}

static void bad_input(void)
{
    float x[64] = {0};
    uint8_t bits[8] = {0};
    fc_attention_desc d = fc_attention_desc_init();
    d.batch = 1, d.q_heads = d.kv_heads = 1, d.head_dim = 8, d.q_len = 2, d.kv_len = 2;
    d.q = d.k = d.v = d.out = fc_tensor_bnsd(x, FC_F32, 1, 2, 8);
    d.dropout = (fc_dropout){.keep_prob = 0.5, .generate = true, .keep_bits = bits, .keep_bits_bytes = sizeof bits};
    tc_context("keep_bits and generate together");
    TC_CHECK(fc_attention(&d) == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "desc.dropout"), "got: %s",
             fc_last_error());
    d.dropout = (fc_dropout){.keep_prob = 0.5, .generate = true};
    tc_context("generate without keep bits");
    TC_CHECK(fc_attention(&d) == FC_OK, "generated dropout alone must run: %s", fc_last_error());
}

static void body(void)
{
    known_answers();
    generated_equals_explicit();
    bad_input();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_dropout_philox", body); }
