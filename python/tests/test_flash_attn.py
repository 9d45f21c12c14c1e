"""flashc.flash_attn against flash_attn 2.x's documented semantics, written out here in float64 torch:
query i sees key j iff i + Sk − Sq − left ≤ j ≤ i + Sk − Sq + right (bottom-right alignment; −1 = no
limit; causal = right 0), ALiBi adds −slope·|i + Sk − Sq − j|, softcap caps scaled scores."""
import pytest

torch = pytest.importorskip("torch")

from flashc.flash_attn import (flash_attn_func, flash_attn_kvpacked_func, flash_attn_qkvpacked_func,  # noqa: E402
                               flash_attn_varlen_func, flash_attn_with_kvcache)


def documented(q, k, v, scale=None, causal=False, window=(-1, -1), softcap=0.0, alibi=None):
    """One batch: q (Sq, H, D), k/v (Sk, Hk, D) → out (Sq, H, Dv), lse (H, Sq); float64, differentiable."""
    Sq, H, D = q.shape
    Sk, Hk = k.shape[0], k.shape[1]
    k, v = k.repeat_interleave(H // Hk, 1), v.repeat_interleave(H // Hk, 1)
    s = torch.einsum("ihd,jhd->hij", q, k) * (scale or D ** -0.5)
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    i, j = torch.arange(Sq)[:, None], torch.arange(Sk)[None, :]
    rel = j - (i + Sk - Sq)
    if alibi is not None:
        s = s - alibi.double()[:, None, None] * rel.abs()
    left, right = window
    if causal:
        right = 0
    vis = torch.ones(Sq, Sk, dtype=torch.bool)
    if left >= 0:
        vis &= rel >= -left
    if right >= 0:
        vis &= rel <= right
    s = s.masked_fill(~vis, float("-inf"))
    lse = torch.logsumexp(s, -1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    return torch.einsum("hij,jhd->ihd", p, v), lse


def rnd(*shape, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(*shape, generator=g) * 2 - 1).to(dtype)


CASES = [
    dict(causal=True, Sq=5, Sk=12),         # bottom-right: the last query row sees every key
    dict(causal=True, Sq=12, Sk=5),         # early rows see nothing
    dict(window=(3, 2), Sq=9, Sk=9),
    dict(window=(4, 0), Sq=6, Sk=10),
    dict(softcap=2.0, causal=True),
    dict(alibi=True, Sq=7, Sk=11, causal=True),
    dict(gqa=True, causal=True),
    dict(scale=0.2, window=(-1, 3)),
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_flash_attn_func_values_and_gradients(case):
    B, H, D = 2, 4, 16
    Sq, Sk = case.get("Sq", 8), case.get("Sk", 8)
    Hk = 2 if case.get("gqa") else H
    q, k, v = rnd(B, Sq, H, D, seed=1), rnd(B, Sk, Hk, D, seed=2), rnd(B, Sk, Hk, D, seed=3)
    alibi = torch.rand(H, generator=torch.Generator().manual_seed(4)) * 0.3 if case.get("alibi") else None
    kw = dict(softmax_scale=case.get("scale"), causal=case.get("causal", False),
              window_size=case.get("window", (-1, -1)), softcap=case.get("softcap", 0.0), alibi_slopes=alibi)
    for x in (q, k, v):
        x.requires_grad_()
    out, lse, probs = flash_attn_func(q, k, v, return_attn_probs=True, deterministic=True, **kw)
    assert out.shape == (B, Sq, H, D) and lse.shape == (B, H, Sq) and probs.shape == (B, H, Sq, Sk)
    d_out = rnd(B, Sq, H, D, seed=5)
    out.backward(d_out)
    for b in range(B):
        q64, k64, v64 = (x[b].detach().double().requires_grad_() for x in (q, k, v))
        want, want_lse = documented(q64, k64, v64, case.get("scale"), kw["causal"], kw["window_size"],
                                    kw["softcap"], alibi)
        want.backward(d_out[b].double())
        live = torch.isfinite(want_lse)
        torch.testing.assert_close(out[b].detach().double(), want, atol=2e-4, rtol=2e-4)
        torch.testing.assert_close(lse[b].double()[live], want_lse[live], atol=2e-4, rtol=2e-4)
        for g, w in ((q.grad[b], q64.grad), (k.grad[b], k64.grad), (v.grad[b], v64.grad)):
            torch.testing.assert_close(g.double(), w, atol=3e-4, rtol=3e-4)
        # the probabilities returned for inspection are the softmax
        sums = probs[b].sum(-1).double()
        assert torch.allclose(sums[live], torch.ones_like(sums[live]), atol=1e-4) and not sums[~live].any()


def test_packed_variants_read_the_packed_tensor():
    qkv = rnd(2, 9, 3, 4, 16, seed=1).requires_grad_()
    out = flash_attn_qkvpacked_func(qkv, causal=True)
    want = flash_attn_func(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], causal=True)
    torch.testing.assert_close(out, want)
    out.sum().backward()
    assert qkv.grad is not None and qkv.grad.abs().sum() > 0
    q, kv = rnd(2, 5, 4, 16, seed=2), rnd(2, 11, 2, 2, 16, seed=3)
    torch.testing.assert_close(flash_attn_kvpacked_func(q, kv, window_size=(2, 1)),
                               flash_attn_func(q, kv[:, :, 0], kv[:, :, 1], window_size=(2, 1)))


@pytest.mark.parametrize("alibi", [False, True])
def test_varlen_matches_each_batch(alibi):
    lq, lk = [3, 7, 1], [9, 7, 4]
    H, Hk, D = 4, 2, 16
    cu_q = torch.tensor([0, 3, 10, 11], dtype=torch.int32)
    cu_k = torch.tensor([0, 9, 16, 20], dtype=torch.int32)
    q, k, v = rnd(11, H, D, seed=1), rnd(20, Hk, D, seed=2), rnd(20, Hk, D, seed=3)
    slopes = torch.rand(3, H, generator=torch.Generator().manual_seed(4)) * 0.3 if alibi else None
    q.requires_grad_()
    out, lse, _ = flash_attn_varlen_func(q, k, v, cu_q, cu_k, 7, 9, causal=True, alibi_slopes=slopes,
                                         return_attn_probs=True)
    assert out.shape == q.shape and lse.shape == (H, 11)
    out.sum().backward()
    for b in range(3):
        sq, sk = slice(int(cu_q[b]), int(cu_q[b + 1])), slice(int(cu_k[b]), int(cu_k[b + 1]))
        want, want_lse = documented(q[sq].detach().double(), k[sk].double(), v[sk].double(), causal=True,
                                    alibi=None if slopes is None else slopes[b])
        torch.testing.assert_close(out[sq].detach().double(), want, atol=2e-4, rtol=2e-4)
        live = torch.isfinite(want_lse)
        torch.testing.assert_close(lse[:, sq].detach().double()[live], want_lse[live], atol=2e-4, rtol=2e-4)


def test_dropout_probs_encode_the_mask_and_the_output_uses_it():
    torch.manual_seed(7)
    q, k, v = rnd(1, 6, 2, 8, seed=1), rnd(1, 10, 2, 8, seed=2), rnd(1, 10, 2, 8, seed=3)
    out, lse, probs = flash_attn_func(q, k, v, dropout_p=0.25, causal=True, return_attn_probs=True)
    want = torch.einsum("hij,jhd->ihd", probs[0].clamp(min=0) / 0.75, v[0])
    torch.testing.assert_close(out[0], want, atol=1e-4, rtol=1e-4)
    assert (probs < 0).any() and (probs > 0).any()


@pytest.mark.parametrize("paged", [False, True])
def test_kvcache_updates_in_place_and_attends(paged):
    B, H, Hk, D, S_cache, s_new = 2, 4, 2, 16, 24, 3
    lens = torch.tensor([5, 13], dtype=torch.int32)
    dense_k, dense_v = rnd(B, S_cache, Hk, D, seed=1), rnd(B, S_cache, Hk, D, seed=2)
    k_new, v_new, q = rnd(B, s_new, Hk, D, seed=3), rnd(B, s_new, Hk, D, seed=4), rnd(B, 1, H, D, seed=5)
    if paged:
        bs, nb = 8, S_cache // 8
        table = torch.randperm(B * nb + 2, generator=torch.Generator().manual_seed(6))[:B * nb].view(B, nb).int()
        k_cache = torch.zeros(B * nb + 2, bs, Hk, D)
        v_cache = torch.zeros_like(k_cache)
        k_cache[table.long()] = dense_k.view(B, nb, bs, Hk, D)
        v_cache[table.long()] = dense_v.view(B, nb, bs, Hk, D)
        out, lse = flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new, cache_seqlens=lens, block_table=table,
                                           causal=True, return_softmax_lse=True)
        got_k = k_cache[table.long()].view(B, S_cache, Hk, D)
    else:
        k_cache, v_cache = dense_k.clone(), dense_v.clone()
        out, lse = flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new, cache_seqlens=lens, causal=True,
                                           return_softmax_lse=True)
        got_k = k_cache
    assert out.shape == q.shape and lse.shape == (B, H, 1)
    for b in range(B):
        n = int(lens[b])
        torch.testing.assert_close(got_k[b, n:n + s_new], k_new[b])  # written in place
        torch.testing.assert_close(got_k[b, :n], dense_k[b, :n])      # the rest untouched
        kk = torch.cat([dense_k[b, :n], k_new[b]]).double()
        vv = torch.cat([dense_v[b, :n], v_new[b]]).double()
        want, want_lse = documented(q[b].double(), kk, vv, causal=True)
        torch.testing.assert_close(out[b].double(), want, atol=2e-4, rtol=2e-4)
        torch.testing.assert_close(lse[b].double(), want_lse, atol=2e-4, rtol=2e-4)


def test_kvcache_leftpad_rotary_and_batch_idx():
    B, H, D, S_cache = 2, 2, 32, 16
    k_cache, v_cache = rnd(3, S_cache, H, D, seed=1), rnd(3, S_cache, H, D, seed=2)
    before = k_cache.clone()
    q, k_new, v_new = rnd(B, 2, H, D, seed=3), rnd(B, 2, H, D, seed=4), rnd(B, 2, H, D, seed=5)
    lens = torch.tensor([6, 9], dtype=torch.int32)
    leftpad = torch.tensor([2, 0], dtype=torch.int32)
    idx = torch.tensor([2, 0], dtype=torch.int32)
    cos, sin = torch.rand(S_cache, 8) , torch.rand(S_cache, 8)
    out = flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new, rotary_cos=cos, rotary_sin=sin,
                                  cache_seqlens=lens, cache_batch_idx=idx, cache_leftpad=leftpad, causal=True,
                                  rotary_interleaved=False)
    assert torch.equal(k_cache[1], before[1])  # the cache row no batch uses is untouched

    def rot(x, pos):  # non-interleaved rotary on the first 16 features, written independently
        c, s = cos[pos][:, None, :], sin[pos][:, None, :]
        x1, x2 = x[..., :8], x[..., 8:16]
        return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c, x[..., 16:]], -1)

    for b in range(B):
        n, r, pad = int(lens[b]), int(idx[b]), int(leftpad[b])
        pos = torch.arange(n, n + 2)
        torch.testing.assert_close(k_cache[r, n:n + 2], rot(k_new[b], pos), atol=1e-6, rtol=1e-6)
        kk = torch.cat([before[r, pad:n], rot(k_new[b], pos)]).double()
        vv = torch.cat([v_cache[r, pad:n], v_new[b]]).double()
        want, _ = documented(rot(q[b], pos).double(), kk, vv, causal=True)
        torch.testing.assert_close(out[b].double(), want, atol=2e-4, rtol=2e-4)


@pytest.mark.parametrize("dtypes", [(torch.float32, torch.bfloat16, torch.bfloat16),
                                    (torch.bfloat16, torch.bfloat16, torch.float16)])
def test_mixed_dtypes_are_refused(dtypes):
    q, k, v = (rnd(1, 4, 2, 8, seed=i, dtype=t) for i, t in enumerate(dtypes))
    with pytest.raises(ValueError, match="q, k and v must have the same dtype"):
        flash_attn_func(q, k, v)
    cu = torch.tensor([0, 4], dtype=torch.int32)
    with pytest.raises(ValueError, match="same dtype"):
        flash_attn_varlen_func(q[0], k[0], v[0], cu, cu, 4, 4)
    with pytest.raises(ValueError, match="same dtype"):
        flash_attn_with_kvcache(q, k, v)


def test_empty_batches_give_empty_outputs():
    q = rnd(0, 4, 2, 8, seed=1)
    assert flash_attn_func(q, q, q).shape == (0, 4, 2, 8)
    q = rnd(2, 0, 2, 8, seed=2)
    assert flash_attn_func(q, rnd(2, 3, 2, 8, seed=3), rnd(2, 3, 2, 8, seed=4), causal=True).shape == (2, 0, 2, 8)


def test_non_tensors_are_refused_by_name():
    q = rnd(1, 4, 2, 8, seed=5)
    with pytest.raises(TypeError, match="k must be a torch.Tensor, got NoneType"):
        flash_attn_func(q, None, q)
    with pytest.raises(TypeError, match="cu_seqlens_q must be an int32"):
        flash_attn_varlen_func(q[0], q[0], q[0], [0, 4], torch.tensor([0, 4], dtype=torch.int32), 4, 4)
    with pytest.raises(TypeError, match="cu_seqlens_k must be an int32"):
        cu = torch.tensor([0, 4], dtype=torch.int32)
        flash_attn_varlen_func(q[0], q[0], q[0], cu, cu.float(), 4, 4)
