/*
 * The CPU tile policy, in one table: which item rows, kv tile columns and kv item rows a plan's
 * items get.  A row matches on the operation, the kind of the problem's many-row forward items
 * (a fact of the kernel set, fc_kinds) and a few conditions; the first row that matches gives the
 * sizes it names, the defaults the others.  The measurements behind each row are in
 * docs/PERFORMANCE.md.
 */
#include "tiles.h"

enum {
    FC_IF_PARTS = 1,      /* fp16 operands as bf16 parts, and at least FC_PART_ITEMS items of the row's size */
    FC_IF_AVX512 = 2,     /* an AVX-512 kernel set */
    FC_IF_DENSE = 4,      /* no sparse selection */
    FC_IF_SPARSE = 8,     /* sparse selection */
    FC_IF_AVX2 = 16,      /* the AVX2 set */
    FC_IF_D128 = 32,      /* head dims up to 128 (Dqk + Dr and Dv) */
    FC_IF_STRIDED_KV = 64, /* key or value rows further apart than their width (BSND, TND) */
};

/* Items of fp16 parts: 1024 rows where the problem still has this many of them (two per thread
 * on 16 cores; fewer would leave threads idle, a causal problem unbalanced). */
#define FC_PART_ITEMS 32

typedef struct fc_tile_rule {
    fc_op op;
    unsigned kinds;         /* the many-row forward kinds it applies to (bits 1 << kind) */
    unsigned when;          /* FC_IF_* conditions, all of them */
    int rows, cols, kv_rows; /* 0: the default */
} fc_tile_rule;

#define FC_KIND(k) (1u << (k))
#define FC_TILE_KINDS (FC_KIND(FC_FWD_TILES_QK) | FC_KIND(FC_FWD_TILES) | FC_KIND(FC_FWD_FUSED))

/* Every row asks for head dims up to 256 (Dqk + Dr and Dv): larger ones keep the defaults. */
static const fc_tile_rule fc_cpu_tile_policy[] = {
    /* the fused bf16 pipeline packs Kᵀ and V once per item and kv tile: 512 × 512 shares a
     * packing among more rows and runs P·V over a longer K axis (−10 % CPU time at S = 4096
     * against 256 × 256); fp16's parts make a packing 3–4× bf16's: 1024-row items (−10..15 %) */
    {FC_OP_FORWARD, FC_KIND(FC_FWD_FUSED), FC_IF_PARTS, 1024, 512, 0},
    {FC_OP_FORWARD, FC_KIND(FC_FWD_FUSED), 0, 512, 512, 0},
    /* tile products want a long K axis for P·V: 256 kv columns */
    {FC_OP_FORWARD, FC_KIND(FC_FWD_TILES_QK) | FC_KIND(FC_FWD_TILES), 0, 128, 256, 0},
    /* the fp32 GEMM where kv rows are strided: they are copied for every item that reads them, and
     * a head's width apart (4 KB at 8 heads of 128) each lies in a page of its own, so those loads
     * cost a page walk per row; more rows per item share them (BSND, S = 4096, D = 128, 1 thread,
     * Zen 4: AVX-512 288 rows, 48 whole 6-row register tiles, +3 % against 192; avx2 192 rows
     * +5..8 % against 96, which its dense rule below now gives every layout) */
    {FC_OP_FORWARD, FC_KIND(FC_FWD_GEMM), FC_IF_AVX512 | FC_IF_D128 | FC_IF_STRIDED_KV, 288, 128, 0},
    /* the fp32 GEMM of an AVX-512 set: a long sequence's K and V exceed L2, and each kv tile read
     * from L3 then serves more rows (256 × 64: −13..20 % CPU time at S = 4096, D = 128 against
     * 64 × 64); up to 128 features 192 rows (32 whole 6-row register tiles) and 128 kv columns
     * (half the passes over the accumulator per FLOP) gain 5 % more, 5–9 % at D = 64 (Zen 5) */
    {FC_OP_FORWARD, FC_KIND(FC_FWD_GEMM), FC_IF_AVX512 | FC_IF_D128, 192, 128, 0},
    {FC_OP_FORWARD, FC_KIND(FC_FWD_GEMM), FC_IF_AVX512, 256, 0, 0},
    /* the fp32 GEMM of the AVX2 set: the AVX-512 sets' 192 × 128, the same bytes (≈ 420 KB of hot
     * buffers and kv tiles): each kv tile read from L3 or memory serves twice the rows of 96 × 128
     * (which had beaten 64 × 64 by 2..4 %); fewer than 16 such items now take kv slices.  On a
     * shared Zen 3 (512 KB L2), rates paired round by round against 96 rows, 1 thread, S = 4096,
     * D = 128: fp32 +5..11 % (medians of three sets), causal, bf16 and D = 64 +1 %; 240 rows gained
     * more at D = 128 but lost at D = 64 and S = 1024 (docs/PERFORMANCE.md); on Zen 4 (twice the L2)
     * 192 and 96 rows read the same within that host's noise */
    {FC_OP_FORWARD, FC_KIND(FC_FWD_GEMM), FC_IF_AVX2 | FC_IF_D128, 192, 128, 0},
    /* the fp32 backward of the AVX2 set: 128 × 128, four kv tiles per fused pass
     * (fc_cpu_bwd_fused_kv_rows); paired round by round against 64 × 64 on a shared Zen 3, 1
     * thread, D = 128: S = 4096 +5 % (medians of two sets), causal +2 %, S = 2048 +6 %; 64 or 96
     * rows of 128 columns gained as much at S = 4096 (64: nothing at 2048), 128 rows of 64
     * columns nothing, eight 128-column tiles per pass +3 %; on Zen 4 +13 % over 64 × 64 (medians
     * of six rounds), 192 × 128 the same */
    {FC_OP_BACKWARD, FC_KIND(FC_FWD_GEMM), FC_IF_AVX2 | FC_IF_DENSE | FC_IF_D128, 128, 128, 128},
    /* a set with tile products packs query rows and kv tiles as operands of the backward, shared
     * by more pairs in 128 × 128; sparse dk/dv items own wider kv ranges, whose tiles stay */
    {FC_OP_BACKWARD, FC_TILE_KINDS, FC_IF_DENSE, 128, 128, 128},
    {FC_OP_BACKWARD, FC_TILE_KINDS, FC_IF_SPARSE, 128, 0, 0},
};

static bool fc_rule_matches(const fc_tile_rule *r, const fc_problem *p, fc_op op, const fc_kinds *kinds,
                            const fc_cpu_kernels *k)
{
    const unsigned when = r->when;
    if (r->op != op || !(r->kinds & FC_KIND(kinds->many)) || p->Dqk + p->Dr > 256 || p->Dv > 256)
        return false;
    if ((when & FC_IF_PARTS) && !(kinds->parts && p->B * p->Nq * p->max_sq >= (int64_t)FC_PART_ITEMS * r->rows))
        return false;
    if ((when & FC_IF_AVX512) && !k->avx512)
        return false;
    if ((when & FC_IF_AVX2) && !k->avx2)
        return false;
    if ((when & FC_IF_D128) && (p->Dqk + p->Dr > 128 || p->Dv > 128))
        return false;
    if ((when & FC_IF_STRIDED_KV) && p->k.ss == p->Dqk && p->v.ss == p->Dv)
        return false;
    return !((when & FC_IF_DENSE) && p->sparse.data) && !((when & FC_IF_SPARSE) && !p->sparse.data);
}

fc_tiles fc_cpu_tiles(const fc_problem *p, fc_op op, const fc_kinds *kinds, const fc_cpu_kernels *k)
{
    /* the defaults: 64 × 64 (32 past 256 and 512 features), whose fp32 working set fits L1/L2;
     * sparse dk/dv items scan every query's index row, so they own wider kv ranges */
    const int64_t d = p->Dqk + p->Dr > p->Dv ? p->Dqk + p->Dr : p->Dv;
    fc_tiles t = {.rows = d > 256 ? 32 : 64, .cols = d > 512 ? 32 : 64};
    t.kv_rows = p->sparse.data ? 8 * t.cols : t.cols;
    for (size_t i = 0; i < sizeof fc_cpu_tile_policy / sizeof fc_cpu_tile_policy[0]; i++) {
        const fc_tile_rule *r = &fc_cpu_tile_policy[i];
        if (!fc_rule_matches(r, p, op, kinds, k))
            continue;
        t.rows = r->rows ? r->rows : t.rows;
        t.cols = r->cols ? r->cols : t.cols;
        t.kv_rows = r->kv_rows ? r->kv_rows : t.kv_rows;
        break;
    }
    return t;
}

/* The fused backward (one item per kv head: dQ, dK, dV in one pass) where there are at least two
 * heads per thread and the head's dQ accumulators stay small.  Its pairs and sums are those of
 * the two passes (kernels/backward.c), so results are the same for any thread count. */
#define FC_BWD_FUSED_MAX_BYTES ((int64_t)16 << 20)

bool fc_cpu_bwd_fuses(const fc_problem *p, fc_tiles t, int threads)
{
    const int64_t tiles = (p->max_sq + t.rows - 1) / t.rows, ldq = p->Dqk + p->Dr + 32; /* ≥ the kernels' row stride */
    const int64_t bytes = p->G * (tiles > 1 ? tiles : 1) * (t.rows + 16) * ldq * (int64_t)sizeof(float);
    return !p->sparse.data && p->B * p->Nkv >= 2 * (int64_t)threads && bytes <= FC_BWD_FUSED_MAX_BYTES;
}

/* The fused backward's items are the kv heads, so the kv rows it takes at a time cost no
 * parallelism: eight kv tiles of fp32 products, each query item's rows loaded once for them
 * (kernels/backward.c) and served from cache to the others, where one tile read them back from
 * memory for every tile (eight of 64 columns against one: fp32, S = 4096, D = 128, 1 thread, CPU
 * time: avx2 +12 %, avx512bf16 +21 %; the same pairs and sums).  The GEMM-only sets' wider tiles
 * (avx2's 128 columns) take the same 512 rows, four of them (over 64 × 64: 1.047, eight 1.034,
 * docs/PERFORMANCE.md).  Products on tiles pack one kv tile per item. */
int fc_cpu_bwd_fused_kv_rows(fc_tiles t, const fc_kinds *kinds)
{
    const int tiles = kinds->many == FC_FWD_GEMM && t.cols > 64 ? (512 + t.cols - 1) / t.cols : 8;
    return kinds->bwd == FC_BWD_FP32 ? tiles * t.cols : t.kv_rows;
}
