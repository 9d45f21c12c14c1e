/* libFuzzer harness: the native API (flashc.h), forward and backward — padded or packed batches,
 * per-batch lengths and kv starts, windows and positions at the int64 limits, prefixes, masks,
 * biases, ALiBi, softcap, sinks, dropout, statistics orders, sparse selection, paged and int8
 * caches.  The native face takes raw pointers and cannot know their sizes, so here every buffer
 * is exactly what the description reaches (the harness computes it) and lies in host memory that
 * AddressSanitizer guards. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flashc.h"
#include "fz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("OMP_NUM_THREADS", "1", 0);
    return 0;
}

#define MAX_BUF 48

typedef struct bufs {
    void *p[MAX_BUF];
    int n;
} bufs;

static void *buf(bufs *b, fz *f, size_t bytes, bool ints)
{
    if (b->n >= MAX_BUF)
        return NULL;
    unsigned char *p = malloc(bytes ? bytes : 1);
    for (size_t k = 0; k < bytes; k++) /* small fp32 / fp16 / bf16 patterns; ints stay small */
        p[k] = ints ? 0 : (unsigned char)((unsigned)(fz_value(f) * 32.0f + 32.0f) & 0x3f);
    b->p[b->n++] = p;
    return p;
}

/* A tensor of extents [nb, heads, rows, width] in a layout the input picks, exactly allocated. */
static fc_tensor tensor(bufs *b, fz *f, fc_dtype dt, int64_t nb, int64_t heads, int64_t rows, int64_t width)
{
    int64_t ext[4] = {nb, heads, rows, width}, st[4];
    static const int orders[4][4] = {{0, 1, 2, 3}, {0, 2, 1, 3}, {2, 0, 1, 3}, {0, 1, 3, 2}}; /* BNSD BSND SBND, D outer */
    const int *o = orders[fz_chance(f, 30) ? fz_range(f, 1, 3) : 0];
    int64_t run = 1;
    const int64_t gap = fz_chance(f, 10) ? 2 : 1;
    for (int k = 3; k >= 0; k--)
        st[o[k]] = run, run *= gap * ext[o[k]];
    if (fz_chance(f, 8)) /* a size-1 dim with a huge stride, or a broadcast input dim */
        for (int k = 0; k < 4; k++)
            if (ext[k] == 1)
                st[k] = fz_int(f, INT64_MAX);
    int64_t hi = 0;
    for (int k = 0; k < 4; k++)
        if (ext[k] > 1)
            hi += (ext[k] - 1) * st[k];
    fc_tensor t = {.data = buf(b, f, (size_t)(hi + 1) * fc_dtype_size(dt), false), .dtype = dt,
                   .stride_batch = st[0], .stride_head = st[1], .stride_seq = st[2], .stride_dim = st[3]};
    return t;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f;
    fz_init(&f, data, size);
    bufs b = {0};
    fc_attention_desc d = fc_attention_desc_init();
    const int64_t B = fz_range(&f, 1, 3), Nkv = fz_range(&f, 1, 2), Nq = Nkv * fz_range(&f, 1, 3);
    const int64_t Sq = fz_range(&f, 1, 17), Skv = fz_range(&f, 1, 23), D = fz_range(&f, 1, 40);
    const int64_t Dv = fz_chance(&f, 80) ? D : fz_range(&f, 1, 40), Dr = fz_chance(&f, 15) ? fz_range(&f, 1, 16) : 0;
    const fc_dtype dt = (fc_dtype)fz_range(&f, 0, 2);
    const bool backward = fz_chance(&f, 30);
    d.batch = B, d.q_heads = Nq, d.kv_heads = Nkv, d.head_dim = D, d.v_head_dim = Dv, d.rope_dim = Dr;
    d.q_len = Sq, d.kv_len = Skv;
    d.packed = fz_chance(&f, 25);
    int64_t qlens[3], kvlens[3], kvstarts[3], prefix[3], Tq = 0, Tkv = 0;
    for (int64_t x = 0; x < B; x++) {
        qlens[x] = fz_range(&f, 0, Sq), kvlens[x] = fz_range(&f, 0, Skv);
        kvstarts[x] = fz_int(&f, fz_range(&f, 0, Skv));
        prefix[x] = fz_int(&f, fz_range(&f, 0, Skv));
        Tq += qlens[x], Tkv += kvlens[x];
    }
    if (d.packed || fz_chance(&f, 20))
        d.q_lens = qlens, d.kv_lens = kvlens;
    const int64_t nb = d.packed ? 1 : B, qrows = d.packed ? (Tq ? Tq : 1) : Sq, kvrows = d.packed ? (Tkv ? Tkv : 1) : Skv;
    const bool paged = !d.packed && !backward && fz_chance(&f, 15), i8kv = !backward && fz_chance(&f, 10);
    const fc_dtype kvdt = i8kv ? FC_I8 : dt;
    d.q = tensor(&b, &f, dt, nb, Nq, qrows, D);
    d.out = tensor(&b, &f, !backward && fz_chance(&f, 8) ? FC_I8 : dt, nb, Nq, qrows, Dv);
    int32_t *table = NULL;
    if (paged) {
        const int64_t bs = fz_chance(&f, 10) ? fz_int(&f, INT64_MAX) : fz_range(&f, 1, 8);
        const int64_t slots = bs < 1 ? 1 : bs < Skv ? bs : Skv, width = ceil_div(Skv, slots), blocks = B * width + 1;
        d.k = tensor(&b, &f, kvdt, blocks, Nkv, slots, D), d.v = tensor(&b, &f, kvdt, blocks, Nkv, slots, Dv);
        if (Dr)
            d.k_rope = tensor(&b, &f, dt, blocks, Nkv, slots, Dr);
        table = buf(&b, &f, (size_t)(B * width) * sizeof(int32_t), true);
        for (int64_t e = 0; e < B * width; e++)
            table[e] = (int32_t)fz_int(&f, (e * 5 + 1) % blocks);
        /* the table and the cache are the caller's memory: only ever described as smaller */
        d.kv.block_table = table, d.kv.table_stride = fz_chance(&f, 5) ? width - 1 : width, d.kv.block_size = bs;
        d.kv.num_blocks = fz_chance(&f, 5) ? fz_range(&f, 0, blocks) : blocks;
    } else {
        d.k = tensor(&b, &f, kvdt, nb, Nkv, kvrows, D), d.v = tensor(&b, &f, kvdt, nb, Nkv, kvrows, Dv);
        if (Dr)
            d.k_rope = tensor(&b, &f, dt, nb, Nkv, kvrows, Dr);
    }
    if (Dr)
        d.q_rope = tensor(&b, &f, dt, nb, Nq, qrows, Dr);
    if (i8kv) {
        const fc_affine a = {.scale = buf(&b, &f, (size_t)(Nkv * (D > Dv ? D : Dv)) * 4, false), .dtype = FC_F32,
                             .stride_head = D > Dv ? D : Dv, .stride_dim = 1};
        d.kv.k_dequant = d.kv.v_dequant = a;
    }
    if (d.out.dtype == FC_I8)
        d.out_quant = (fc_affine){.scale = buf(&b, &f, (size_t)(Nq * Dv) * 4, false), .dtype = FC_F32,
                                  .stride_head = Dv, .stride_dim = 1};
    if (!d.packed && fz_chance(&f, 10))
        d.kv_starts = kvstarts;
    d.scale = fz_real(&f, 0.0);
    d.softcap = fz_chance(&f, 10) ? (float)fz_real(&f, 5.0) : 0.0f;
    const bool sparse = !paged && fz_chance(&f, 15);
    if (sparse) {
        const int64_t count = fz_range(&f, 1, 5), bs = fz_chance(&f, 15) ? fz_int(&f, INT64_MAX) : fz_range(&f, 1, 8);
        const int64_t n = nb * qrows * Nkv * count;
        int32_t *ind = buf(&b, &f, (size_t)n * 4, true);
        for (int64_t e = 0; e < n; e++)
            ind[e] = (int32_t)fz_int(&f, (e * 7) % 5 - 1);
        d.sparse = (fc_sparse){.indices = ind, .dtype = FC_I32, .count = count, .block_size = bs,
                               .stride_batch = d.packed ? 0 : qrows * Nkv * count, .stride_seq = Nkv * count,
                               .stride_head = count, .stride_entry = 1, .causal = fz_chance(&f, 50)};
    } else {
        if (fz_chance(&f, 30))
            d.vis.window = (fc_window){.enabled = true, .left = fz_int(&f, fz_chance(&f, 50) ? FC_UNBOUNDED : 3),
                                       .right = fz_int(&f, fz_chance(&f, 50) ? 0 : 2),
                                       .align = (fc_align)fz_range(&f, 0, 1)};
        if (fz_chance(&f, 10))
            d.vis.prefix = prefix;
        d.vis.q_start = fz_chance(&f, 10) ? fz_int(&f, 5) : 0;
        d.vis.kv_start = fz_chance(&f, 10) ? fz_int(&f, 7) : 0;
        if (fz_chance(&f, 15)) {
            const int64_t rows = d.packed ? Tq : Sq, cols = d.packed ? Tkv : Skv;
            d.vis.mask = (fc_mask){.data = buf(&b, &f, (size_t)((rows ? rows : 1) * (cols ? cols : 1)), true),
                                   .dtype = FC_U8, .stride_row = cols, .stride_col = 1, .by_tokens = d.packed};
            memset((void *)d.vis.mask.data, 0, (size_t)((rows ? rows : 1) * (cols ? cols : 1)));
        }
        if (fz_chance(&f, 15)) {
            const int64_t rows = fz_chance(&f, 70) ? Sq : fz_range(&f, 1, Sq + 2), cols = Skv;
            d.bias = (fc_bias){.data = buf(&b, &f, (size_t)(B * Nq * rows * cols) * fc_dtype_size(dt), false),
                               .dtype = dt, .order = (fc_bias_order)fz_range(&f, 0, 1), .rows = rows, .cols = cols,
                               .stride_batch = Nq * rows * cols, .stride_head = rows * cols, .stride_row = cols,
                               .stride_col = 1, .bottom_right = fz_chance(&f, 50), .compressed = fz_chance(&f, 10)};
        }
        if (fz_chance(&f, 15))
            d.alibi = (fc_alibi){.slopes = buf(&b, &f, (size_t)Nq * 4, false), .stride_head = 1,
                                 .sqrt_distance = fz_chance(&f, 50),
                                 /* aligned as the window, as flash_attn aligns it: no input byte taken,
                                  * so the corpus's inputs keep their meaning */
                                 .bottom_right = d.vis.window.align == FC_ALIGN_BOTTOM_RIGHT};
        if (fz_chance(&f, 10))
            d.sink = buf(&b, &f, (size_t)Nq * 4, false);
        if (fz_chance(&f, 10)) {
            int64_t bits = 0;
            for (int64_t x = 0; x < B; x++)
                bits += Nq * (d.q_lens ? qlens[x] : Sq) * (d.kv_lens ? kvlens[x] : Skv);
            const size_t bytes = (size_t)(bits + 7) / 8;
            d.dropout = (fc_dropout){.keep_bits = buf(&b, &f, bytes, true), .keep_bits_bytes = bytes,
                                     .keep_prob = fz_real(&f, 0.8)};
        }
    }
    if (backward || fz_chance(&f, 30)) {
        const int64_t r = fz_range(&f, 1, 2), rows = d.packed ? qrows : nb * Sq;
        d.stats = (fc_stats){.max = buf(&b, &f, (size_t)(rows * Nq * r) * 4, false),
                             .sum = buf(&b, &f, (size_t)(rows * Nq * r) * 4, false),
                             .order = d.packed ? FC_STATS_TOKEN_MAJOR : FC_STATS_HEAD_MAJOR, .replicas = r};
        if (r == 1 && fz_chance(&f, 30))
            d.stats.order = d.packed ? FC_STATS_KV_TOKEN_GROUP : FC_STATS_KV_GROUP;
        for (int64_t e = 0; e < rows * Nq * r; e++)
            d.stats.sum[e] = 1.0f + (float)(e % 3);
    }
    const fc_options opt = {.threads = 1};
    if (!backward) {
        fc_plan *plan = NULL;
        if (fc_plan_create(&d, fz_chance(&f, 50) ? &opt : NULL, &plan) == FC_OK) {
            size_t ws = 0;
            fc_plan_workspace_size(plan, &ws);
            void *w = ws && ws < ((size_t)1 << 28) ? malloc(ws) : NULL;
            if (w || !ws)
                fc_plan_run(plan, NULL, w, ws);
            if (fc_plan_check_runs(plan, fz_chance(&f, 50)) != FC_OK) /* a CPU run leaves nothing to report */
                __builtin_trap();
            free(w);
            fc_plan_destroy(plan);
        }
    } else {
        fc_attention_grads g = {.d_out = tensor(&b, &f, dt, nb, Nq, qrows, Dv)};
        g.dq = tensor(&b, &f, dt, nb, Nq, qrows, D);
        g.dk = tensor(&b, &f, dt, nb, Nkv, kvrows, D), g.dv = tensor(&b, &f, dt, nb, Nkv, kvrows, Dv);
        if (Dr)
            g.dq_rope = tensor(&b, &f, dt, nb, Nq, qrows, Dr), g.dk_rope = tensor(&b, &f, dt, nb, Nkv, kvrows, Dr);
        if (d.sink)
            g.dsink = buf(&b, &f, (size_t)Nq * 4, false);
        fc_attention_backward(&d, &g);
    }
    for (int k = 0; k < b.n; k++)
        free(b.p[k]);
    return 0;
}
