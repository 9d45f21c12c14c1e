"""flashc.flash_attn conformance cases, each a function of (device, dtype), against flash_attn 2.x's
documented semantics written out here in torch (no code from flash_attn): query i sees key j iff
i + Sk − Sq − left ≤ j ≤ i + Sk − Sq + right (bottom-right, −1 = no limit, causal = right 0), ALiBi
adds −slope·|i + Sk − Sq − j|, softcap caps scaled scores; per batch its own Sq and Sk.

test_flash_attn.py runs them on the CPU in float32 (against float64, fixed tolerances);
test_flash_attn_gpu.py on a CUDA device in bf16 and fp16 with flash_attn's own criterion: the
error against float64 at most twice that of the same computation done by torch in the low dtype.
"""
import torch

from flashc.flash_attn import (FlashAttnError, flash_attn_func, flash_attn_kvpacked_func,  # noqa: E402
                               flash_attn_qkvpacked_func, flash_attn_varlen_func, flash_attn_varlen_kvpacked_func,
                               flash_attn_varlen_qkvpacked_func, flash_attn_with_kvcache)
from flashc.flash_attn import bert_padding  # noqa: E402
from flashc.flash_attn import flash_attn_interface as fai  # noqa: E402


def documented(q, k, v, scale=None, causal=False, window=(-1, -1), softcap=0.0, alibi=None):
    """One batch in q's dtype and device: q (Sq, H, D), k/v (Sk, Hk, D) → out (Sq, H, Dv), lse
    (H, Sq), probabilities (H, Sq, Sk); differentiable."""
    Sq, H, D = q.shape
    Sk, Hk = k.shape[0], k.shape[1]
    k, v = k.repeat_interleave(H // Hk, 1), v.repeat_interleave(H // Hk, 1)
    s = torch.einsum("ihd,jhd->hij", q, k) * (scale or D ** -0.5)
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(Sq, device=q.device)[:, None]
    j = torch.arange(Sk, device=q.device)[None, :]
    rel = j - (i + Sk - Sq)
    if alibi is not None:
        s = s - alibi.to(s.dtype)[:, None, None] * rel.abs().to(s.dtype)
    left, right = window
    if causal:
        right = 0
    vis = torch.ones(Sq, Sk, dtype=torch.bool, device=q.device)
    if left >= 0:
        vis &= rel >= -left
    if right >= 0:
        vis &= rel <= right
    s = s.masked_fill(~vis, float("-inf"))
    wide = s.to(torch.promote_types(s.dtype, torch.float32))  # the softmax in float32 at least
    lse = torch.logsumexp(wide, -1)
    p = torch.exp(wide - lse[..., None]).nan_to_num(0.0).to(q.dtype)
    return torch.einsum("hij,jhd->ihd", p, v), lse, p


def rnd(*shape, seed, dtype=torch.float32, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(*shape, generator=g) * 2 - 1).to(dtype).to(device)


class Tol:
    """Closeness for one device and dtype: fixed tolerances in float32, flash_attn's criterion
    (at most twice torch's own error in that dtype, against float64) in bf16/fp16."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.low = dtype in (torch.bfloat16, torch.float16)

    def check(self, got, want64, torch_low=None, grad=False, what=""):
        got = got.detach().double().cpu()
        want64 = want64.detach().double().cpu()
        assert got.shape == want64.shape, (what, got.shape, want64.shape)
        if not self.low:
            tol = 3e-4 if grad else 2e-4
            torch.testing.assert_close(got, want64, atol=tol, rtol=tol, msg=what)
            return
        err = (got - want64).abs().max().item()
        base = 0.0 if torch_low is None else (torch_low.detach().double().cpu() - want64).abs().max().item()
        floor = 2 * torch.finfo(self.dtype).eps * max(1.0, want64.abs().max().item())
        assert err <= 2 * base + floor, f"{what}: error {err:.3g} > 2 × torch's {base:.3g} + {floor:.3g}"


def _pair(x, dtype, device):
    """(the case's input in the tested dtype on the device, a float64 copy on the CPU)."""
    low = x.to(dtype).to(device)
    return low, low.detach().double().cpu()


FUNC_CASES = [
    dict(causal=True, Sq=5, Sk=12),         # bottom-right: the last query row sees every key
    dict(causal=True, Sq=12, Sk=5),         # early rows see nothing
    dict(window=(3, 2), Sq=9, Sk=9),
    dict(window=(4, 0), Sq=6, Sk=10),
    dict(softcap=2.0, causal=True),
    dict(alibi=True, Sq=7, Sk=11, causal=True),
    dict(gqa=True, causal=True),
    dict(scale=0.2, window=(-1, 3)),
]


def func_values_and_gradients(device, dtype, case):
    tol = Tol(dtype)
    B, H, D = 2, 4, 16
    Sq, Sk = case.get("Sq", 8), case.get("Sk", 8)
    Hk = 2 if case.get("gqa") else H
    (q, q64), (k, k64), (v, v64) = (_pair(rnd(B, s, h, D, seed=i), dtype, device)
                                    for i, (s, h) in enumerate(((Sq, H), (Sk, Hk), (Sk, Hk)), 1))
    alibi = torch.rand(H, generator=torch.Generator().manual_seed(4)) * 0.3 if case.get("alibi") else None
    kw = dict(softmax_scale=case.get("scale"), causal=case.get("causal", False),
              window_size=case.get("window", (-1, -1)), softcap=case.get("softcap", 0.0))
    for x in (q, k, v, q64, k64, v64):
        x.requires_grad_()
    out, lse, probs = flash_attn_func(q, k, v, return_attn_probs=True, deterministic=True,
                                      alibi_slopes=None if alibi is None else alibi.to(device), **kw)
    assert out.shape == (B, Sq, H, D) and lse.shape == (B, H, Sq) and probs.shape == (B, H, Sq, Sk)
    assert out.dtype == dtype and lse.dtype == torch.float32 and out.device == q.device
    d_out64 = rnd(B, Sq, H, D, seed=5).double()
    out.backward(d_out64.to(dtype).to(device))
    ref_kw = dict(scale=kw["softmax_scale"], causal=kw["causal"], window=kw["window_size"], softcap=kw["softcap"])
    for b in range(B):
        want, want_lse, want_p = documented(q64[b], k64[b], v64[b], alibi=None if alibi is None else alibi.double(),
                                            **ref_kw)
        want.backward(d_out64[b])
        low = None
        if tol.low:  # torch's own computation in the low dtype, on the device
            ql, kl, vl = (x[b].detach().clone().requires_grad_() for x in (q, k, v))
            low, _, _ = documented(ql, kl, vl, alibi=None if alibi is None else alibi.to(device).to(dtype), **ref_kw)
            low.backward(d_out64[b].to(dtype).to(device))
        tol.check(out[b], want, low, what="out")
        live = torch.isfinite(want_lse)
        torch.testing.assert_close(lse[b].double().cpu()[live], want_lse[live], atol=1e-2 if tol.low else 2e-4,
                                   rtol=1e-2 if tol.low else 2e-4)
        for name, g, w, lw in (("dq", q.grad[b], q64.grad[b], None if low is None else ql.grad),
                               ("dk", k.grad[b], k64.grad[b], None if low is None else kl.grad),
                               ("dv", v.grad[b], v64.grad[b], None if low is None else vl.grad)):
            tol.check(g, w, lw, grad=True, what=name)
        # the probabilities handed back for inspection are the softmax
        torch.testing.assert_close(probs[b].double().cpu(), want_p.detach(), atol=2e-2 if tol.low else 1e-4,
                                   rtol=0)


def packed_variants_read_the_packed_tensor(device, dtype):
    qkv = rnd(2, 9, 3, 4, 16, seed=1, dtype=dtype, device=device).requires_grad_()
    out = flash_attn_qkvpacked_func(qkv, causal=True)
    want = flash_attn_func(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], causal=True)
    torch.testing.assert_close(out, want)
    out.float().sum().backward()
    assert qkv.grad is not None and qkv.grad.abs().sum() > 0
    q, kv = rnd(2, 5, 4, 16, seed=2, dtype=dtype, device=device), rnd(2, 11, 2, 2, 16, seed=3, dtype=dtype,
                                                                         device=device)
    torch.testing.assert_close(flash_attn_kvpacked_func(q, kv, window_size=(2, 1)),
                               flash_attn_func(q, kv[:, :, 0], kv[:, :, 1], window_size=(2, 1)))
    cu = torch.tensor([0, 4, 9], dtype=torch.int32, device=device)
    qkv_t = qkv.detach()[0]  # 9 tokens, two batches of 4 and 5
    torch.testing.assert_close(flash_attn_varlen_qkvpacked_func(qkv_t, cu, 5, causal=True),
                               flash_attn_varlen_func(qkv_t[:, 0], qkv_t[:, 1], qkv_t[:, 2], cu, cu, 5, 5, causal=True))
    q_t, kv_t = torch.cat([q[0], q[1]])[:9], kv[0, :9]
    torch.testing.assert_close(flash_attn_varlen_kvpacked_func(q_t, kv_t, cu, cu, 5, 5),
                               flash_attn_varlen_func(q_t, kv_t[:, 0], kv_t[:, 1], cu, cu, 5, 5))


def _varlen_problem(device, dtype, H=4, Hk=2, D=16):
    lq, lk = [3, 7, 1], [9, 7, 4]  # Sk − Sq differs per batch: 6, 0, 3
    cu_q = torch.tensor([0, 3, 10, 11], dtype=torch.int32, device=device)
    cu_k = torch.tensor([0, 9, 16, 20], dtype=torch.int32, device=device)
    q, k, v = (rnd(n, h, D, seed=i, dtype=dtype, device=device) for i, (n, h) in enumerate(((11, H), (20, Hk), (20, Hk)), 1))
    return lq, lk, cu_q, cu_k, q, k, v


def varlen_matches_each_batch(device, dtype, alibi):
    tol = Tol(dtype)
    lq, lk, cu_q, cu_k, q, k, v = _varlen_problem(device, dtype)
    H = q.shape[1]
    slopes = torch.rand(3, H, generator=torch.Generator().manual_seed(4)) * 0.3 if alibi else None
    for x in (q, k, v):
        x.requires_grad_()
    out, lse, _ = flash_attn_varlen_func(q, k, v, cu_q, cu_k, 7, 9, causal=True, return_attn_probs=True,
                                         alibi_slopes=None if slopes is None else slopes.to(device))
    assert out.shape == q.shape and lse.shape == (H, 11)
    d_out = rnd(*out.shape, seed=8)
    out.backward(d_out.to(dtype).to(device))
    tq = tk = 0
    for b in range(3):
        sq, sk = slice(tq, tq + lq[b]), slice(tk, tk + lk[b])
        q64, k64, v64 = (x[s].detach().double().cpu().requires_grad_() for x, s in ((q, sq), (k, sk), (v, sk)))
        want, want_lse, _ = documented(q64, k64, v64, causal=True, alibi=None if slopes is None else slopes[b].double())
        want.backward(d_out[sq].double())
        low = None
        if tol.low:
            low, _, _ = documented(q[sq].detach(), k[sk].detach(), v[sk].detach(), causal=True,
                                   alibi=None if slopes is None else slopes[b].to(device).to(dtype))
        tol.check(out[sq], want, low, what=f"out batch {b}")
        live = torch.isfinite(want_lse)
        torch.testing.assert_close(lse[:, sq].detach().double().cpu()[live], want_lse[live],
                                   atol=1e-2 if tol.low else 2e-4, rtol=1e-2 if tol.low else 2e-4)
        if not tol.low:
            for g, w, s in ((q.grad, q64.grad, sq), (k.grad, k64.grad, sk), (v.grad, v64.grad, sk)):
                tol.check(g[s], w, grad=True, what=f"grad batch {b}")
        tq, tk = tq + lq[b], tk + lk[b]


def varlen_probs_are_one_padded_tensor(device, dtype):
    """return_attn_probs: one (batch, heads, max_seqlen_q, max_seqlen_k) tensor, zero outside each
    batch's (Sq_b, Sk_b) block, with ALiBi and Sk − Sq differing per batch."""
    lq, lk, cu_q, cu_k, q, k, v = _varlen_problem(device, dtype)
    H = q.shape[1]
    slopes = torch.rand(H, generator=torch.Generator().manual_seed(4)) * 0.3
    out, lse, probs = flash_attn_varlen_func(q, k, v, cu_q, cu_k, 7, 9, alibi_slopes=slopes.to(device),
                                             window_size=(5, 1), return_attn_probs=True)
    assert isinstance(probs, torch.Tensor) and probs.shape == (3, H, 7, 9) and probs.device == q.device
    tq = tk = 0
    for b in range(3):
        _, _, want_p = documented(q[tq:tq + lq[b]].double().cpu(), k[tk:tk + lk[b]].double().cpu(),
                                  v[tk:tk + lk[b]].double().cpu(), window=(5, 1), alibi=slopes.double())
        got = probs[b].double().cpu()
        torch.testing.assert_close(got[:, :lq[b], :lk[b]], want_p, atol=2e-2 if Tol(dtype).low else 1e-4, rtol=0)
        assert not got[:, lq[b]:, :].any() and not got[:, :, lk[b]:].any()
        tq, tk = tq + lq[b], tk + lk[b]


def varlen_rows_past_cu_seqlens_belong_to_no_batch(device, dtype):
    """Packed tensors longer than cu_seqlens[-1] (flash_attn's padded varlen): the rows past it belong
    to no batch.  out zero there, softmax_lse (nheads, total_q) with the lse of a row that sees
    nothing, dq / dk / dv zero there; the batches' rows as without the extra rows.  The same for
    the paged form (block_table), which gathered them by batch index past the last batch."""
    H, D = 2, 8
    cu_q = torch.tensor([0, 3, 10], dtype=torch.int32, device=device)
    cu_k = torch.tensor([0, 4, 9], dtype=torch.int32, device=device)
    q, k, v = (rnd(n, H, D, seed=i, dtype=dtype, device=device) for i, n in ((1, 12), (2, 11), (3, 11)))
    for x in (q, k, v):
        x.requires_grad_()
    out, lse, _ = flash_attn_varlen_func(q, k, v, cu_q, cu_k, 7, 5, causal=True, return_attn_probs=True)
    assert out.shape == q.shape and lse.shape == (H, 12), (out.shape, lse.shape)
    assert not out[10:].any() and bool((lse[:, 10:] == torch.finfo(torch.float32).min).all())
    qt, kt, vt = (x.detach()[:n].clone().requires_grad_() for x, n in ((q, 10), (k, 9), (v, 9)))
    want, want_lse, _ = flash_attn_varlen_func(qt, kt, vt, cu_q, cu_k, 7, 5, causal=True, return_attn_probs=True)
    assert torch.equal(out[:10], want) and torch.equal(lse[:, :10], want_lse)
    g = rnd(12, H, D, seed=4, dtype=dtype, device=device)
    out.backward(g)
    want.backward(g[:10])
    assert not q.grad[10:].any() and not k.grad[9:].any() and not v.grad[9:].any()
    assert torch.equal(q.grad[:10], qt.grad) and torch.equal(k.grad[:9], kt.grad) and torch.equal(v.grad[:9], vt.grad)
    # paged caches: one batch of 9 positions and one of 5, pages of 4
    dense_k, dense_v = (rnd(2, 12, H, D, seed=i, dtype=dtype, device=device) for i in (5, 6))
    k_cache, v_cache, table = _paged(dense_k, dense_v, 4, seed=7)
    with torch.no_grad():
        out, lse, _ = flash_attn_varlen_func(q, k_cache, v_cache, cu_q, cu_k, 7, 9, block_table=table,
                                             return_attn_probs=True)
        want, want_lse, _ = flash_attn_varlen_func(q[:10], k_cache, v_cache, cu_q, cu_k, 7, 9, block_table=table,
                                                   return_attn_probs=True)
    assert out.shape == q.shape and lse.shape == (H, 12)
    assert not out[10:].any() and bool((lse[:, 10:] == torch.finfo(torch.float32).min).all())
    assert torch.equal(out[:10], want) and torch.equal(lse[:, :10], want_lse)


def dropout_probs_encode_the_mask_and_the_output_uses_it(device, dtype):
    torch.manual_seed(7)
    p = 0.25
    q, k, v = (rnd(1, s, 2, 8, seed=i, dtype=dtype, device=device) for i, s in ((1, 6), (2, 10), (3, 10)))
    out, lse, probs = flash_attn_func(q, k, v, dropout_p=p, causal=True, return_attn_probs=True)
    want = torch.einsum("hij,jhd->ihd", probs[0].clamp(min=0).double() / (1 - p), v[0].double())
    torch.testing.assert_close(out[0].double(), want, atol=2e-2 if Tol(dtype).low else 1e-4, rtol=0)
    assert (probs < 0).any() and (probs > 0).any()
    # varlen: the same mask convention, the backward replays the forward's mask
    lq, lk, cu_q, cu_k, q, k, v = _varlen_problem(device, dtype)
    q.requires_grad_()
    torch.manual_seed(9)
    out, _, probs = flash_attn_varlen_func(q, k, v, cu_q, cu_k, 7, 9, dropout_p=p, return_attn_probs=True)
    tq = tk = 0
    for b in range(3):
        pb = probs[b, :, :lq[b], :lk[b]].clamp(min=0).double()
        vb = v[tk:tk + lk[b]].double().repeat_interleave(2, 1)
        torch.testing.assert_close(out[tq:tq + lq[b]].double(), torch.einsum("hij,jhd->ihd", pb / (1 - p), vb),
                                   atol=2e-2 if Tol(dtype).low else 1e-4, rtol=0)
        tq, tk = tq + lq[b], tk + lk[b]
    torch.manual_seed(9)
    out2 = flash_attn_varlen_func(q, k, v, cu_q, cu_k, 7, 9, dropout_p=p)
    torch.testing.assert_close(out2, out)  # the same seed: the same mask


def _paged(dense_k, dense_v, bs, seed, spare=2):
    """Paged copies of dense caches (B, S, Hk, D): blocks in a shuffled order, spare blocks unused."""
    B, S = dense_k.shape[0], dense_k.shape[1]
    nb = S // bs
    order = torch.randperm(B * nb + spare, generator=torch.Generator().manual_seed(seed))[:B * nb]
    table = order.view(B, nb).int().to(dense_k.device)
    k_cache = torch.zeros((B * nb + spare, bs) + tuple(dense_k.shape[2:]), dtype=dense_k.dtype, device=dense_k.device)
    v_cache = torch.zeros_like(k_cache)
    k_cache[table.long()] = dense_k.view((B, nb, bs) + tuple(dense_k.shape[2:]))
    v_cache[table.long()] = dense_v.view((B, nb, bs) + tuple(dense_v.shape[2:]))
    return k_cache, v_cache, table


def kvcache_updates_in_place_and_attends(device, dtype, paged):
    tol = Tol(dtype)
    B, H, Hk, D, S_cache, s_new = 2, 4, 2, 16, 24, 3
    lens = torch.tensor([5, 13], dtype=torch.int32, device=device)
    dense_k, dense_v = rnd(B, S_cache, Hk, D, seed=1, dtype=dtype, device=device), rnd(B, S_cache, Hk, D, seed=2,
                                                                                        dtype=dtype, device=device)
    k_new, v_new, q = (rnd(B, s, h, D, seed=i, dtype=dtype, device=device) for i, (s, h) in
                       ((3, (s_new, Hk)), (4, (s_new, Hk)), (5, (1, H))))
    if paged:
        k_cache, v_cache, table = _paged(dense_k, dense_v, 8, seed=6)
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
        kk, vv = torch.cat([dense_k[b, :n], k_new[b]]), torch.cat([dense_v[b, :n], v_new[b]])
        want, want_lse, _ = documented(q[b].double().cpu(), kk.double().cpu(), vv.double().cpu(), causal=True)
        low = documented(q[b], kk, vv, causal=True)[0] if tol.low else None
        tol.check(out[b], want, low, what=f"out batch {b}")
        torch.testing.assert_close(lse[b].double().cpu(), want_lse, atol=1e-2 if tol.low else 2e-4,
                                   rtol=1e-2 if tol.low else 2e-4)


def kvcache_alibi_with_per_batch_lengths(device, dtype, paged, append):
    """ALiBi measured from each batch's own bottom-right corner (cache lengths differ per batch)."""
    tol = Tol(dtype)
    B, H, Hk, D, S_cache, Sq = 3, 4, 2, 16, 32, 2
    lens = torch.tensor([3, 17, 30 - (2 if append else 0)], dtype=torch.int32, device=device)
    dense_k, dense_v = (rnd(B, S_cache, Hk, D, seed=i, dtype=dtype, device=device) for i in (1, 2))
    q = rnd(B, Sq, H, D, seed=3, dtype=dtype, device=device)
    slopes = torch.rand(B, H, generator=torch.Generator().manual_seed(4)) * 0.4
    k_new = v_new = None
    if append:
        k_new, v_new = (rnd(B, 2, Hk, D, seed=i, dtype=dtype, device=device) for i in (5, 6))
    if paged:
        k_cache, v_cache, table = _paged(dense_k, dense_v, 8, seed=7)
    else:
        k_cache, v_cache, table = dense_k.clone(), dense_v.clone(), None
    out = flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new, cache_seqlens=lens, block_table=table,
                                  causal=True, alibi_slopes=slopes.to(device))
    for b in range(B):
        n = int(lens[b])
        kk, vv = dense_k[b, :n], dense_v[b, :n]
        if append:
            kk, vv = torch.cat([kk, k_new[b]]), torch.cat([vv, v_new[b]])
        want, _, _ = documented(q[b].double().cpu(), kk.double().cpu(), vv.double().cpu(), causal=True,
                                alibi=slopes[b].double())
        low = documented(q[b], kk, vv, causal=True, alibi=slopes[b].to(device).to(dtype))[0] if tol.low else None
        tol.check(out[b], want, low, what=f"out batch {b}")


def kvcache_leftpad_rotary_and_batch_idx(device, dtype):
    tol = Tol(dtype)
    B, H, D, S_cache = 2, 2, 32, 16
    k_cache, v_cache = (rnd(3, S_cache, H, D, seed=i, dtype=dtype, device=device) for i in (1, 2))
    before = k_cache.clone()
    q, k_new, v_new = (rnd(B, 2, H, D, seed=i, dtype=dtype, device=device) for i in (3, 4, 5))
    lens = torch.tensor([6, 9], dtype=torch.int32, device=device)
    leftpad = torch.tensor([2, 0], dtype=torch.int32, device=device)
    idx = torch.tensor([2, 0], dtype=torch.int32, device=device)
    cos, sin = (torch.rand(S_cache, 8, generator=torch.Generator().manual_seed(s)).to(device) for s in (6, 7))
    out = flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new, rotary_cos=cos, rotary_sin=sin,
                                  cache_seqlens=lens, cache_batch_idx=idx, cache_leftpad=leftpad, causal=True,
                                  rotary_interleaved=False)
    assert torch.equal(k_cache[1], before[1])  # the cache row no batch uses is untouched

    def rot(x, pos):  # non-interleaved rotary on the first 16 features, written independently
        x = x.double().cpu()
        c, s = cos.double().cpu()[pos][:, None, :], sin.double().cpu()[pos][:, None, :]
        x1, x2 = x[..., :8], x[..., 8:16]
        return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c, x[..., 16:]], -1)

    for b in range(B):
        n, r, pad = int(lens[b]), int(idx[b]), int(leftpad[b])
        pos = torch.arange(n, n + 2)
        torch.testing.assert_close(k_cache[r, n:n + 2].double().cpu(), rot(k_new[b], pos),
                                   atol=1e-2 if tol.low else 1e-6, rtol=1e-2 if tol.low else 1e-6)
        kk = torch.cat([before[r, pad:n].double().cpu(), rot(k_new[b], pos)])
        vv = torch.cat([v_cache[r, pad:n].double().cpu(), v_new[b].double().cpu()])
        want, _, _ = documented(rot(q[b], pos), kk, vv, causal=True)
        if tol.low:  # the rotation in the low dtype moves more than the attention: compare loosely
            torch.testing.assert_close(out[b].double().cpu(), want, atol=3e-2, rtol=3e-2)
        else:
            tol.check(out[b], want)


PAGED_CASES = [dict(causal=True), dict(window=(3, 1)), dict(alibi=True, causal=True), dict(gqa=False)]


def paged_varlen_matches_each_batch(device, dtype, case):
    """flash_attn_varlen_func with block_table: packed queries over paged caches whose lengths
    come from cu_seqlens_k (each batch's own bottom-right corner)."""
    tol = Tol(dtype)
    H, Hk, D, bs = 4, (4 if case.get("gqa") is False else 2), 16, 4
    lq, lk = [3, 6, 1], [9, 6, 14]
    B, S_cache = 3, 16
    dense_k, dense_v = (rnd(B, S_cache, Hk, D, seed=i, dtype=dtype, device=device) for i in (1, 2))
    k_cache, v_cache, table = _paged(dense_k, dense_v, bs, seed=3)
    q = rnd(sum(lq), H, D, seed=4, dtype=dtype, device=device)
    cu_q = torch.tensor([0, 3, 9, 10], dtype=torch.int32, device=device)
    cu_k = torch.tensor([0, 9, 15, 29], dtype=torch.int32, device=device)
    slopes = torch.rand(H, generator=torch.Generator().manual_seed(5)) * 0.3 if case.get("alibi") else None
    kw = dict(causal=case.get("causal", False), window_size=case.get("window", (-1, -1)))
    out, lse, _ = flash_attn_varlen_func(q, k_cache, v_cache, cu_q, cu_k, 6, 14, block_table=table,
                                         alibi_slopes=None if slopes is None else slopes.to(device),
                                         return_attn_probs=True, **kw)
    assert out.shape == q.shape and lse.shape == (H, sum(lq))
    tq = 0
    for b in range(B):
        sq = slice(tq, tq + lq[b])
        kk, vv = dense_k[b, :lk[b]], dense_v[b, :lk[b]]
        want, want_lse, _ = documented(q[sq].double().cpu(), kk.double().cpu(), vv.double().cpu(),
                                       causal=kw["causal"], window=kw["window_size"],
                                       alibi=None if slopes is None else slopes.double())
        low = None
        if tol.low:
            low = documented(q[sq], kk, vv, causal=kw["causal"], window=kw["window_size"],
                             alibi=None if slopes is None else slopes.to(device).to(dtype))[0]
        tol.check(out[sq], want, low, what=f"out batch {b}")
        live = torch.isfinite(want_lse)
        torch.testing.assert_close(lse[:, sq].double().cpu()[live], want_lse[live], atol=1e-2 if tol.low else 2e-4,
                                   rtol=1e-2 if tol.low else 2e-4)
        tq += lq[b]


def block_table_past_the_cache_is_an_error_naming_it(device, dtype):
    """flash_attn raises RuntimeError for a block table that points past the cache; flashc's
    error names the block table and is caught by `except RuntimeError` (and ValueError)."""
    B, H, D, bs = 2, 2, 16, 8
    q = rnd(B, 1, H, D, seed=1, dtype=dtype, device=device)
    k_cache, v_cache = (rnd(4, bs, H, D, seed=i, dtype=dtype, device=device) for i in (2, 3))
    lens = torch.tensor([10, 12], dtype=torch.int32, device=device)
    calls = []
    if torch.device(device).type == "cpu":  # entries past the cache's blocks (a CUDA kernel reports them later)
        table = torch.tensor([[0, 1], [2, 7]], dtype=torch.int32, device=device)
        calls.append(lambda: flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lens, block_table=table))
    short = torch.tensor([[0], [1]], dtype=torch.int32, device=device)  # 8 positions for lengths 10 and 12
    calls.append(lambda: flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lens, block_table=short))
    k_new = rnd(B, 1, H, D, seed=4, dtype=dtype, device=device)
    full = torch.tensor([[0], [1]], dtype=torch.int32, device=device)
    calls.append(lambda: flash_attn_with_kvcache(q, k_cache, v_cache, k_new, k_new, cache_seqlens=8,
                                                 block_table=full))  # the append needs a ninth position
    cu_q = torch.tensor([0, 1, 2], dtype=torch.int32, device=device)
    cu_k = torch.tensor([0, 10, 22], dtype=torch.int32, device=device)
    calls.append(lambda: flash_attn_varlen_func(q[:, 0], k_cache, v_cache, cu_q, cu_k, 1, 12, block_table=short))
    for call in calls:
        try:
            call()
        except RuntimeError as e:
            assert isinstance(e, ValueError) and isinstance(e, FlashAttnError)
            assert "block table" in str(e) or "block_table" in str(e), str(e)
        else:
            raise AssertionError("a block table past the cache was accepted")


def private_entry_points_match_the_public_functions(device, dtype):
    tol = Tol(dtype)
    B, Sq, Sk, H, D = 2, 5, 9, 4, 16
    q, k, v = (rnd(B, s, H, D, seed=i, dtype=dtype, device=device) for i, s in ((1, Sq), (2, Sk), (3, Sk)))
    d_out = rnd(B, Sq, H, D, seed=4, dtype=dtype, device=device)
    out, lse, S_dmask, rng_state = fai._flash_attn_forward(q, k, v, 0.0, 0.3, True, 2, -1, 0.0, None, False)
    qq, kk, vv = (x.clone().requires_grad_() for x in (q, k, v))
    want, want_lse, _ = flash_attn_func(qq, kk, vv, softmax_scale=0.3, causal=True, window_size=(2, -1),
                                        return_attn_probs=True)
    want.backward(d_out)
    torch.testing.assert_close(out, want.detach())
    torch.testing.assert_close(lse, want_lse)
    assert S_dmask.numel() == 0 and rng_state.shape == (2,)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    delta = fai._flash_attn_backward(d_out, q, k, v, out, lse, dq, dk, dv, 0.0, 0.3, True, 2, -1, 0.0, None, False,
                                     rng_state)
    for got, exp in ((dq, qq.grad), (dk, kk.grad), (dv, vv.grad)):
        torch.testing.assert_close(got, exp)
    tol.check(delta, (d_out.double() * out.double()).sum(-1).transpose(1, 2), what="softmax_d")
    # the extension-module names, with flash_attn 2.7's positional signatures
    ext = fai.flash_attn_gpu
    o2, l2, _, _ = ext.fwd(q, k, v, None, None, 0.0, 0.3, True, 2, -1, 0.0, False, None)
    torch.testing.assert_close(o2, out)
    g = ext.bwd(d_out, q, k, v, out, lse, None, None, None, None, 0.0, 0.3, True, 2, -1, 0.0, False, None, rng_state)
    torch.testing.assert_close(g[0], dq)
    # varlen
    lq, lk, cu_q, cu_k, q, k, v = _varlen_problem(device, dtype)
    d_out = rnd(*q.shape, seed=5, dtype=dtype, device=device)
    out, lse, _, rng_state = fai._flash_attn_varlen_forward(q, k, v, cu_q, cu_k, 7, 9, 0.0, None, True)
    qq, kk, vv = (x.clone().requires_grad_() for x in (q, k, v))
    want = flash_attn_varlen_func(qq, kk, vv, cu_q, cu_k, 7, 9, causal=True)
    want.backward(d_out)
    torch.testing.assert_close(out, want.detach())
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    delta = fai._flash_attn_varlen_backward(d_out, q, k, v, out, lse, dq, dk, dv, cu_q, cu_k, 7, 9, 0.0, None, True,
                                            -1, -1, 0.0, None, False, rng_state)
    assert delta.shape == (q.shape[1], q.shape[0])
    for got, exp in ((dq, qq.grad), (dk, kk.grad), (dv, vv.grad)):
        torch.testing.assert_close(got, exp)
    o3 = ext.varlen_fwd(q, k, v, None, cu_q, cu_k, None, None, None, None, 7, 9, 0.0, 0.0, False, True, -1, -1, 0.0,
                        False, None)[0]
    torch.testing.assert_close(o3, out)
    # dropout: the backward given the forward's rng_state replays its mask
    torch.manual_seed(3)
    q, k, v = (rnd(B, s, H, D, seed=i, dtype=dtype, device=device) for i, s in ((1, Sq), (2, Sk), (3, Sk)))
    out, lse, _, rng_state = fai._flash_attn_forward(q, k, v, 0.3, None, False, -1, -1, 0.0, None, False)
    qq, kk, vv = (x.clone().requires_grad_() for x in (q, k, v))
    torch.manual_seed(3)
    want = flash_attn_func(qq, kk, vv, dropout_p=0.3)
    torch.testing.assert_close(out, want.detach())
    d_out = rnd(B, Sq, H, D, seed=6, dtype=dtype, device=device)
    want.backward(d_out)
    dq = torch.empty_like(q)
    fai._flash_attn_backward(d_out, q, k, v, out, lse, dq, None, None, 0.3, None, False, -1, -1, 0.0, None, False,
                             rng_state)
    torch.testing.assert_close(dq, qq.grad)


def bert_padding_round_trip_and_varlen(device, dtype):
    B, S, H, D = 3, 7, 2, 8
    lens = torch.tensor([5, 7, 2], device=device)
    mask = torch.arange(S, device=device)[None, :] < lens[:, None]
    x = rnd(B, S, H, D, seed=1, dtype=dtype, device=device).requires_grad_()
    tokens, indices, cu, max_len, used = bert_padding.unpad_input(x, mask)
    assert tokens.shape == (14, H, D) and cu.tolist() == [0, 5, 12, 14] and cu.dtype == torch.int32
    assert max_len == 7 and used.tolist() == [5, 7, 2]
    assert torch.equal(tokens, x.detach().reshape(B * S, H, D)[mask.flatten()])
    back = bert_padding.pad_input(tokens, indices, B, S)
    assert torch.equal(back, x.detach() * mask[:, :, None, None])
    back.sum().backward()
    assert torch.equal(x.grad, mask[:, :, None, None].expand_as(x).to(dtype))  # the gradient lands on real tokens
    # unused tokens are packed but not counted as used
    unused = torch.zeros_like(mask)
    unused[2, 2] = True
    tokens, _, cu, _, used = bert_padding.unpad_input(x.detach(), mask, unused)
    assert cu.tolist() == [0, 5, 12, 15] and used.tolist() == [5, 7, 2]
    # the varlen functions over unpadded tokens equal the padded function with the padding rows dropped
    q, k, v = (rnd(B, S, H, D, seed=i, dtype=dtype, device=device) for i in (2, 3, 4))
    qu, iq, cu, mx, _ = bert_padding.unpad_input(q, mask)
    ku, vu = bert_padding.unpad_input(k, mask)[0], bert_padding.unpad_input(v, mask)[0]
    out = bert_padding.pad_input(flash_attn_varlen_func(qu, ku, vu, cu, cu, mx, mx, causal=True), iq, B, S)
    for b in range(B):
        n = int(lens[b])
        want = flash_attn_func(q[b:b + 1, :n], k[b:b + 1, :n], v[b:b + 1, :n], causal=True)
        torch.testing.assert_close(out[b:b + 1, :n], want)
        assert not out[b, n:].any()
    # several sequences per row
    lengths = torch.tensor([[2, 3, 0, 0, 0, 0, 0], [7, 0, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0]], device=device)
    tokens, indices, cu, mx = bert_padding.unpad_input_for_concatenated_sequences(x.detach(), lengths)
    assert cu.tolist() == [0, 2, 5, 12, 13, 14] and mx == 7 and tokens.shape[0] == 14
    # the residual form: gradients of both outputs reach the input
    y = x.detach().reshape(B * S, H, D).clone().requires_grad_()
    rows, residual = bert_padding.index_first_axis_residual(y, indices)
    (rows.sum() + 2 * residual.sum()).backward()
    expect = torch.full_like(y, 2.0)
    expect[indices] += 1
    assert torch.equal(y.grad, expect)


def refusals(device, dtype):
    q, k = rnd(1, 4, 2, 8, seed=1, dtype=dtype, device=device), rnd(1, 4, 2, 8, seed=2, device=device,
                                                                    dtype=torch.float16 if dtype != torch.float16
                                                                    else torch.bfloat16)
    for call in (lambda: flash_attn_func(q, k, k), lambda: flash_attn_with_kvcache(q, k, k),
                 lambda: flash_attn_varlen_func(q[0], k[0], k[0], *(2 * [torch.tensor([0, 4], dtype=torch.int32,
                                                                                       device=device)]), 4, 4)):
        try:
            call()
        except ValueError as e:
            assert "same dtype" in str(e) and isinstance(e, RuntimeError)
        else:
            raise AssertionError("mixed dtypes were accepted")
    empty = rnd(0, 4, 2, 8, seed=3, dtype=dtype, device=device)
    assert flash_attn_func(empty, empty, empty).shape == (0, 4, 2, 8)


CASES = {}
for i, c in enumerate(FUNC_CASES):
    CASES[f"func[{i}:{c}]"] = lambda dev, dt, c=c: func_values_and_gradients(dev, dt, c)
CASES["packed_variants"] = packed_variants_read_the_packed_tensor
for flag in (False, True):
    CASES[f"varlen[alibi={flag}]"] = lambda dev, dt, f=flag: varlen_matches_each_batch(dev, dt, f)
CASES["varlen_probs_padded"] = varlen_probs_are_one_padded_tensor
CASES["varlen_rows_past_cu"] = varlen_rows_past_cu_seqlens_belong_to_no_batch
CASES["dropout_probs"] = dropout_probs_encode_the_mask_and_the_output_uses_it
for flag in (False, True):
    CASES[f"kvcache[paged={flag}]"] = lambda dev, dt, f=flag: kvcache_updates_in_place_and_attends(dev, dt, f)
for paged in (False, True):
    for append in (False, True):
        CASES[f"kvcache_alibi[paged={paged},append={append}]"] = (
            lambda dev, dt, p=paged, a=append: kvcache_alibi_with_per_batch_lengths(dev, dt, p, a))
CASES["kvcache_leftpad_rotary_idx"] = kvcache_leftpad_rotary_and_batch_idx
for i, c in enumerate(PAGED_CASES):
    CASES[f"paged_varlen[{i}:{c}]"] = lambda dev, dt, c=c: paged_varlen_matches_each_batch(dev, dt, c)
CASES["block_table_errors"] = block_table_past_the_cache_is_an_error_naming_it
CASES["private_entry_points"] = private_entry_points_match_the_public_functions
CASES["bert_padding"] = bert_padding_round_trip_and_varlen
CASES["refusals"] = refusals
