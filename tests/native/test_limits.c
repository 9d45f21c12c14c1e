/* Numbers at the int64 limits.  Block sizes, which the rules allow (semantics §5.3, §4.3): a sparse
 * block of 2^62, INT64_MAX − 1 or INT64_MAX starting at column 0 covers every column, so the output
 * is bitwise that of block size kv_len (causal or not); a paged cache with such a block size still
 * has its one used block-table entry per batch checked before anything is read.  Strides: an
 * operand whose highest byte offset leaves int64 is refused (kernels form offsets as index·stride
 * sums), while a size-1 dimension's stride may be anything. */
#include <stdint.h>
#include <string.h>

#include "common/check.h"
#include "errors_common.h"
#include "harness.h"

static int32_t ind[B * S * NKV * 2];

static void fill(void)
{
    for (int e = 0; e < B * NQ * S * D; e++)
        q[e] = (float)((e * 37) % 23) / 23.0f - 0.5f;
    for (int e = 0; e < B * NKV * S * D; e++) {
        k[e] = (float)((e * 53) % 29) / 29.0f - 0.5f;
        v[e] = (float)((e * 71) % 31) / 31.0f - 0.5f;
    }
}

/* Every row lists block 0 and block 1 (which starts at or after the end for block sizes >= S). */
static fc_attention_desc sparse(int64_t block_size, bool causal)
{
    fc_attention_desc d = valid();
    for (int e = 0; e < B * S * NKV * 2; e++)
        ind[e] = e % 2 ? (e / 2) % 2 : !((e / 2) % 2);
    d.sparse = (fc_sparse){.indices = ind, .dtype = FC_I32, .count = 2, .block_size = block_size,
                           .stride_batch = S * NKV * 2, .stride_seq = NKV * 2, .stride_head = 2, .stride_entry = 1,
                           .causal = causal};
    return d;
}

static void sparse_blocks(void)
{
    static float want[B * NQ * S * D];
    const int64_t sizes[] = {(int64_t)1 << 62, INT64_MAX - 1, INT64_MAX};
    for (int causal = 0; causal < 2; causal++) {
        tc_context("sparse block size limits, causal %d", causal);
        fc_attention_desc d = sparse(S, causal);
        TC_CHECK(fc_attention(&d) == FC_OK, "block size S: %s", fc_last_error());
        memcpy(want, out, sizeof want);
        for (size_t n = 0; n < sizeof sizes / sizeof sizes[0]; n++) {
            memset(out, 0x7f, sizeof out);
            d = sparse(sizes[n], causal);
            TC_CHECK(fc_attention(&d) == FC_OK, "block size %lld: %s", (long long)sizes[n], fc_last_error());
            TC_CHECK(memcmp(out, want, sizeof want) == 0, "block size %lld differs from block size S",
                     (long long)sizes[n]);
        }
    }
}

static void paged_blocks(void)
{
    tc_context("paged block size INT64_MAX");
    static float pages[2 * S * NKV * D];
    static int32_t table[B];
    fc_attention_desc d = valid();
    const fc_tensor kv = {.data = pages, .dtype = FC_F32, .stride_batch = S * NKV * D, .stride_seq = NKV * D,
                          .stride_head = D, .stride_dim = 1};
    d.k = kv, d.v = kv, d.v.data = pages;
    d.kv.block_table = table, d.kv.table_stride = 1, d.kv.block_size = INT64_MAX, d.kv.num_blocks = 2;
    table[0] = 1, table[1] = 0;
    TC_CHECK(fc_attention(&d) == FC_OK, "a valid table: %s", fc_last_error());
    const int64_t big[] = {2, 1 << 30, -1};
    for (size_t n = 0; n < sizeof big / sizeof big[0]; n++) {
        table[1] = (int32_t)big[n];
        const fc_status st = fc_attention(&d);
        TC_CHECK(st == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "block table entry [1][0]"),
                 "entry %lld: status %s, message \"%s\"", (long long)big[n], fc_status_name(st), fc_last_error());
    }
    d.kv.table_stride = 0;
    TC_CHECK(fc_attention(&d) == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "desc.kv.table_stride"),
             "table_stride 0 must be refused: %s", fc_last_error());
}

static void stride_limits(void)
{
    tc_context("strides at the int64 limits");
    fc_attention_desc d = valid();
    d.q.stride_batch = INT64_MAX / 2; /* batch 1 starts beyond int64 byte offsets */
    TC_CHECK(fc_attention(&d) == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "desc.q strides"),
             "a q stride beyond int64 offsets must be refused: %s", fc_last_error());
    d = valid();
    d.v.stride_dim = INT64_MAX / 3;
    TC_CHECK(fc_attention(&d) == FC_ERR_INVALID_ARG && strstr(fc_last_error(), "desc.v strides"),
             "a v stride beyond int64 offsets must be refused: %s", fc_last_error());
    static float want[B * NQ * S * D];
    d = valid();
    TC_CHECK(fc_attention(&d) == FC_OK, "plain: %s", fc_last_error());
    memcpy(want, out, sizeof want);
    d.batch = 1, d.q.stride_batch = d.k.stride_batch = d.v.stride_batch = d.out.stride_batch = INT64_MAX;
    memset(out, 0x7f, sizeof out);
    TC_CHECK(fc_attention(&d) == FC_OK, "batch 1 with INT64_MAX batch strides: %s", fc_last_error());
    TC_CHECK(memcmp(out, want, sizeof want / B) == 0, "batch 1 with INT64_MAX batch strides differs");
}

static void body(void)
{
    fill();
    sparse_blocks();
    paged_blocks();
    stride_limits();
}

int main(int argc, char **argv) { return nt_main(argc, argv, "native_limits", body); }
