/*
 * The CUDA sparse kernels' walk over an index row (src/cuda/sparse_select.cuh), run on the host by
 * the warp emulator (warp_emu.h: the device source, 32 lanes in lock step): tile after tile of N
 * positions must concatenate to exactly the positions the definition gives (core/visibility.h's
 * fc_sparse_span entry by entry: −1 ends the list, blocks at or past the causal threshold are
 * skipped, repeated blocks count twice) — over block sizes from 1 to far past a tile, int32 and
 * int64 indices with strides, thresholds at and below zero, lists that end by −1 or by the count,
 * and indices far out of range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "warp_emu.h"

#include "cuda/sparse_select.cuh"

extern "C" {
#include "common/check.h"
}

static uint64_t state = 0x2545F4914F6CDD1Dull;
static int64_t rnd(int64_t lo, int64_t hi) /* uniform in [lo, hi] */
{
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return lo + (int64_t)(state % (uint64_t)(hi - lo + 1));
}

struct Row {
    std::vector<int64_t> i64;
    std::vector<int32_t> i32;
    fc_sparse_view sv;
    int64_t thr;
    const char *data() const { return sv.dtype == FC_I64 ? (const char *)i64.data() : (const char *)i32.data(); }
};

static Row random_row(int64_t skv)
{
    Row r;
    memset(&r.sv, 0, sizeof r.sv);
    const int64_t bs_choices[] = {1, 2, 3, 7, 16, 31, 64, 65, 100, 128, 1000, (int64_t)1 << 40};
    r.sv.block_size = bs_choices[rnd(0, 11)];
    r.sv.count = rnd(1, 120);
    r.sv.sk = rnd(1, 3);
    r.sv.dtype = rnd(0, 1) ? FC_I64 : FC_I32;
    r.sv.causal = rnd(0, 1);
    r.thr = rnd(0, 9) == 0 ? -rnd(0, 5) : rnd(0, 9) == 0 ? 0 : r.sv.causal ? rnd(1, skv) : skv;
    const int64_t nblk = (skv + r.sv.block_size - 1) / r.sv.block_size, n = r.sv.count * r.sv.sk;
    const int64_t end_at = rnd(0, 2) ? rnd(0, r.sv.count) : r.sv.count; /* −1 from here, or no −1 */
    r.i64.assign(n, 0x7777);
    r.i32.assign(n, 0x7777);
    for (int64_t k = 0; k < r.sv.count; k++) {
        int64_t v = rnd(0, nblk + 1); /* a few past the last block */
        if (rnd(0, 19) == 0)
            v = rnd(0, 1) ? INT64_MAX / 3 : INT32_MAX; /* far out of range */
        if (k > 0 && rnd(0, 9) == 0)
            v = r.sv.dtype == FC_I64 ? r.i64[(k - 1) * r.sv.sk] : r.i32[(k - 1) * r.sv.sk]; /* repeated */
        if (k >= end_at)
            v = rnd(0, 3) ? -1 : -rnd(2, 100); /* any negative ends the list */
        r.i64[k * r.sv.sk] = v;
        r.i32[k * r.sv.sk] = (int32_t)(v > INT32_MAX ? INT32_MAX : v);
    }
    return r;
}

/* The definition: every selected position in list order. */
static std::vector<int> expected(const Row &r)
{
    std::vector<int> out;
    int64_t a, z;
    int got;
    for (int64_t k = 0; r.thr > 0 && (got = fc_sparse_span(&r.sv, r.data(), k, r.thr, &a, &z)) >= 0; k++)
        for (int64_t p = a; got && p < z; p++)
            out.push_back((int)p);
    return out;
}

/* The device walk: tiles of N from sel_next until a tile comes back short. */
template <int N> static std::vector<int> walked(const Row &r, int *tiles)
{
    std::vector<int> out(2000 + 2 * N, -2);
    int count = 0, n_tiles = 0;
    warp_emu::run_warp([&](int lane) {
        fc_cuda::SelCursor cur = fc_cuda::sel_start(true, r.thr);
        int base = 0, t = 0;
        for (;;) {
            int pos[2];
            const int n = fc_cuda::sel_next<N>(r.sv, r.data(), r.thr, cur, lane, pos);
            for (int h = 0; h < 2; h++) {
                const int slot = lane + 32 * h;
                if (slot < n && base + slot < (int)out.size())
                    out[base + slot] = pos[h];
                if (slot >= n && slot < N && pos[h] != -1)
                    out[0] = -3; /* a slot past the count must stay −1 */
            }
            base += n, t += n > 0;
            if (n < N || base > 2000) /* a walk longer than any row here fails the comparison */
                break;
        }
        if (lane == 0)
            count = base, n_tiles = t;
    });
    out.resize(count < (int)out.size() ? count : out.size());
    *tiles = n_tiles;
    return out;
}

template <int N> static void sweep(int cases)
{
    int bad = 0, total = 0, tiles = 0;
    for (int c = 0; c < cases; c++) {
        const Row r = random_row(rnd(1, 2000));
        const std::vector<int> want = expected(r);
        if (want.size() > 1500) /* the emulator switches lanes per intrinsic: keep the walks short */
            continue;
        int t = 0;
        const std::vector<int> got = walked<N>(r, &t);
        tiles += t, total++;
        if (got != want) {
            if (bad++ < 5)
                printf("N=%d case %d: bs=%lld count=%lld thr=%lld: %zu positions, walked %zu\n", N, c, (long long)r.sv.block_size,
                       (long long)r.sv.count, (long long)r.thr, want.size(), got.size());
        }
    }
    TC_CHECK(bad == 0, "tiles of %d: %d of %d rows walked differently (%d tiles)", N, bad, total, tiles);
}

int main(void)
{
    sweep<64>(150);
    sweep<32>(100);
    sweep<16>(60);
    return tc_summary("unit_sparse_select");
}
