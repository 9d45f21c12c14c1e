"""flashc.decode (KV cache: lengths, pages, int8) and flashc.sparse_attention against the reference."""
import numpy as np
import pytest

import flashc
import reference as ref
from cases import rand


def bsnd(x):
    return np.ascontiguousarray(x.transpose(0, 2, 1, 3))


@pytest.mark.parametrize("seed", range(6))
def test_decode_dense_cache(rng, seed):
    B, Nkv, G, S, D = 3, 2, int(rng.integers(1, 5)), 37, 32
    sq = int(rng.integers(1, 4))
    q, k, v = rand(rng, (B, Nkv * G, sq, D)), rand(rng, (B, Nkv, S, D)), rand(rng, (B, Nkv, S, D))
    lens = rng.integers(sq, S + 1, B)
    out = flashc.decode(bsnd(q), bsnd(k), bsnd(v), cache_seqlens=lens.astype(np.int32), causal=True)
    want, _, _ = ref.attention(q, k, v, kv_lens=lens, causal=True)
    np.testing.assert_allclose(out.transpose(0, 2, 1, 3), want, atol=1e-4)


@pytest.mark.parametrize("seed", range(6))
def test_decode_paged_cache(rng, seed):
    B, Nkv, N, D, bs, max_blocks = 2, 2, 4, 16, int(rng.choice([4, 8, 16])), 5
    num_blocks = B * max_blocks + 3
    pages_k, pages_v = rand(rng, (num_blocks, bs, Nkv, D)), rand(rng, (num_blocks, bs, Nkv, D))
    table = rng.permutation(num_blocks)[:B * max_blocks].reshape(B, max_blocks).astype(np.int32)
    lens = rng.integers(1, max_blocks * bs + 1, B)
    q = rand(rng, (B, N, 1, D))
    out = flashc.decode(bsnd(q), pages_k, pages_v, cache_seqlens=lens, block_table=table)
    dense_k = pages_k[table].reshape(B, max_blocks * bs, Nkv, D).transpose(0, 2, 1, 3)
    dense_v = pages_v[table].reshape(B, max_blocks * bs, Nkv, D).transpose(0, 2, 1, 3)
    want, _, _ = ref.attention(q, dense_k, dense_v, kv_lens=lens)
    np.testing.assert_allclose(out.transpose(0, 2, 1, 3), want, atol=1e-4)


def test_decode_int8_cache_and_int8_output(rng):
    B, Nkv, N, S, D = 2, 2, 4, 20, 16
    q = rand(rng, (B, N, 1, D), "float16")
    k8, v8 = (rng.integers(-127, 128, (B, S, Nkv, D)).astype(np.int8) for _ in range(2))
    k_scale, v_scale = rng.uniform(0.005, 0.02, (Nkv, D)).astype(np.float32), rng.uniform(0.005, 0.02, (D,)).astype(np.float32)
    k_off = rng.uniform(-2, 2, (Nkv, D)).astype(np.float32)
    out = flashc.decode(bsnd(q), k8, v8, k_scale=k_scale, k_offset=k_off, v_scale=v_scale)
    kd = ((k8.astype(np.float64) + k_off[None, None]) * k_scale[None, None]).transpose(0, 2, 1, 3)
    vd = (v8.astype(np.float64) * v_scale).transpose(0, 2, 1, 3)
    want, _, _ = ref.attention(q, kd, vd)
    np.testing.assert_allclose(out.transpose(0, 2, 1, 3), want, atol=3e-3, rtol=3e-3)
    qs = rng.uniform(50, 100, (N, D)).astype(np.float32)
    out8 = flashc.decode(bsnd(q), k8, v8, k_scale=k_scale, k_offset=k_off, v_scale=v_scale, out_scale=qs)
    assert out8.dtype == np.int8
    want8 = np.clip(np.round((want.transpose(0, 2, 1, 3) * qs).astype(np.float16)), -128, 127)
    assert np.abs(out8.astype(np.int32) - want8).max() <= 1


def sparse_reference(q, k, v, idx, block_size, causal):
    """Per row: softmax over the listed blocks' positions (a block listed twice counts twice)."""
    B, N, Sq, D = q.shape
    Nkv, Skv = k.shape[1], k.shape[2]
    G = N // Nkv
    out = np.zeros((B, N, Sq, v.shape[-1]))
    for b in range(B):
        for n in range(N):
            for i in range(Sq):
                pos = []
                for blk in idx[b, i, n // G]:
                    if blk < 0:
                        break
                    pos += [p for p in range(blk * block_size, (blk + 1) * block_size) if p < Skv]
                if causal:
                    pos = [p for p in pos if p < Skv - Sq + i + 1]
                if not pos:
                    continue
                s = k[b, n // G, pos].astype(np.float64) @ q[b, n, i].astype(np.float64) / np.sqrt(D)
                p = np.exp(s - s.max())
                out[b, n, i] = (p / p.sum()) @ v[b, n // G, pos].astype(np.float64)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_sparse_attention_and_backward(rng, seed):
    B, Nkv, N, Sq, Skv, D, bs, count = 2, 1, 2, int(rng.integers(1, 9)), 40, 16, 8, 3
    q, k, v = rand(rng, (B, N, Sq, D)), rand(rng, (B, Nkv, Skv, D)), rand(rng, (B, Nkv, Skv, D))
    idx = rng.integers(0, Skv // bs, (B, Sq, Nkv, count)).astype(np.int32)
    idx[rng.random(idx.shape) < 0.2] = -1
    causal = bool(seed % 2)
    out, lse = flashc.sparse_attention(bsnd(q), bsnd(k), bsnd(v), idx, block_size=bs, causal=causal, return_lse=True)
    want = sparse_reference(q, k, v, idx, bs, causal)
    np.testing.assert_allclose(out.transpose(0, 2, 1, 3), want, atol=1e-4)
    # gradients: finite differences of the reference along a random direction
    d_out = rand(rng, out.shape)
    dq, dk, dv = flashc.sparse_attention_backward(d_out, bsnd(q), bsnd(k), bsnd(v), out, lse, idx, block_size=bs,
                                                  causal=causal)
    do = d_out.transpose(0, 2, 1, 3).astype(np.float64)
    for name, x, g in (("q", q, dq), ("k", k, dk), ("v", v, dv)):
        dirn = rng.standard_normal(x.shape)
        eps = 1e-4
        args = {"q": q, "k": k, "v": v}
        hi = dict(args, **{name: x + eps * dirn})
        lo = dict(args, **{name: x - eps * dirn})
        fd = ((sparse_reference(hi["q"], hi["k"], hi["v"], idx, bs, causal) -
               sparse_reference(lo["q"], lo["k"], lo["v"], idx, bs, causal)) * do).sum() / (2 * eps)
        an = (g.transpose(0, 2, 1, 3).astype(np.float64) * dirn).sum()
        assert abs(fd - an) <= 1e-3 * (1 + abs(fd)), (name, fd, an)
