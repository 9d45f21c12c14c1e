"""A drop-in for the ``flash_attn`` 2.x functions on any CPU: change ``from flash_attn import ...`` to
``from flashc.flash_attn import ...``.

Same argument names, shapes ((batch, seqlen, nheads, headdim), packed (total, nheads, headdim)),
defaults and return values.  Causal and local windows are aligned to the bottom-right corner
(query i sees key j iff i + Sk − Sq − left ≤ j ≤ i + Sk − Sq + right); ALiBi adds
−slope·|i + Sk − Sq − j|.  ``deterministic`` is accepted and always true (the backward is
bit-reproducible).  Dropout masks come from torch's generator.
"""
from __future__ import annotations

from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from . import _api
from ._philox import keep_mask
from .torch import _fwd, draw_rng

__all__ = ["flash_attn_func", "flash_attn_qkvpacked_func", "flash_attn_kvpacked_func", "flash_attn_varlen_func",
           "flash_attn_varlen_qkvpacked_func", "flash_attn_varlen_kvpacked_func", "flash_attn_with_kvcache"]


def _rng(dropout_p: float) -> Optional[Tensor]:
    """(seed, offset) of the library-generated dropout mask, from torch's generator."""
    if not dropout_p > 0:
        return None
    if not dropout_p < 1:
        raise ValueError(f"flashc.flash_attn: dropout_p must be in [0, 1), got {dropout_p}")
    return draw_rng()


def _same_dtype(q, k, v) -> None:
    """flash_attn takes torch tensors q, k and v of one dtype (fp16 or bf16; fp32 here too)."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, Tensor):
            raise TypeError(f"flashc.flash_attn: {name} must be a torch.Tensor, got {type(x).__name__}")
    if not q.dtype == k.dtype == v.dtype:
        raise ValueError(f"flashc.flash_attn: q, k and v must have the same dtype (as in flash_attn), got "
                         f"{q.dtype}, {k.dtype} and {v.dtype}")


def _run(q, k, v, layout, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes, return_attn_probs,
         lens_q, lens_k, cu_q=None, cu_k=None, block_table=None):
    """Forward (differentiable through flashc::attention_fwd) with flash_attn's conventions."""
    _same_dtype(q, k, v)
    H = q.shape[-2]
    left, right = window_size
    offsets = {int(b) - int(a) for a, b in zip(lens_q, lens_k)}
    if alibi_slopes is not None and len(offsets) > 1:
        return _per_batch(q, k, v, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes,
                          return_attn_probs, cu_q, cu_k)
    rng = _rng(dropout_p)
    # ALiBi measures |i + Sk − Sq − j|: shift the rows by Sk − Sq and align the band top-left.
    shift = offsets.pop() if alibi_slopes is not None else 0
    align = "top_left" if alibi_slopes is not None else "bottom_right"
    if causal:
        right = 0 if right < 0 else min(right, 0)
    out, lse = _fwd(q, k, v, None, None, alibi_slopes, None, rng, cu_q, cu_k, layout, float(softmax_scale or 0.0),
                    False, int(left), int(right), align, float(softcap), 1.0 - float(dropout_p), int(shift))
    if not return_attn_probs:
        return out
    return out, lse, _attn_probs(q, k, v, lse, layout, softmax_scale, left, right, softcap, alibi_slopes, rng,
                                 dropout_p, lens_q, lens_k)


def _per_batch(q, k, v, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes, return_attn_probs,
               cu_q, cu_k):
    """Packed batches with different Sk − Sq and ALiBi: one call per batch (ALiBi's row shift is global)."""
    outs, lses, probs = [], [], []
    cq, ck = cu_q.tolist(), cu_k.tolist()
    for b in range(len(cq) - 1):
        sl_q, sl_k = slice(cq[b], cq[b + 1]), slice(ck[b], ck[b + 1])
        slopes = alibi_slopes[b] if alibi_slopes.dim() == 2 else alibi_slopes
        z = torch.zeros(1, dtype=torch.int32)
        r = _run(q[sl_q], k[sl_k], v[sl_k], "tnd", dropout_p, softmax_scale, causal, window_size, softcap, slopes,
                 return_attn_probs, [cq[b + 1] - cq[b]], [ck[b + 1] - ck[b]],
                 torch.cat([z, z + cq[b + 1] - cq[b]]), torch.cat([z, z + ck[b + 1] - ck[b]]))
        if return_attn_probs:
            outs.append(r[0]), lses.append(r[1]), probs.append(r[2])
        else:
            outs.append(r)
    out = torch.cat(outs, 0)
    if not return_attn_probs:
        return out
    return out, torch.cat(lses, 1), probs


def _attn_probs(q, k, v, lse, layout, scale, left, right, softcap, alibi_slopes, rng, dropout_p, lens_q, lens_k):
    """S_dmask as flash_attn's tests read it: the softmax probabilities [B, H, Sq, Sk] (padded for
    varlen), negated where dropout removed them.  Computed with torch, for inspection only."""
    with torch.no_grad():
        B, H, D = len(lens_q), q.shape[-2], q.shape[-1]
        Sq, Sk = max(lens_q), max(lens_k)
        res = torch.zeros(B, H, Sq, Sk, dtype=torch.float32)
        starts_q = [0] + list(torch.tensor(lens_q).cumsum(0).tolist())
        starts_k = [0] + list(torch.tensor(lens_k).cumsum(0).tolist())
        bit = 0
        scale = scale or D ** -0.5
        keep = None
        if rng is not None:  # the kernels' mask: keep_prob as the op hands it to the library
            n_all = H * sum(int(a) * int(b) for a, b in zip(lens_q, lens_k))
            seed, offset = (int(x) for x in rng.tolist())
            keep = torch.from_numpy(keep_mask(n_all, seed, offset, 1.0 - (1.0 - (1.0 - dropout_p))))
        for b in range(B):
            sq, sk = int(lens_q[b]), int(lens_k[b])
            if layout == "tnd":
                qb, kb = q[starts_q[b]:starts_q[b] + sq], k[starts_k[b]:starts_k[b] + sk]
                lb = lse[:, starts_q[b]:starts_q[b] + sq]
            else:
                qb, kb, lb = q[b], k[b], lse[b]
            kb = kb.float().repeat_interleave(H // kb.shape[1], 1)
            s = torch.einsum("ihd,jhd->hij", qb.float(), kb) * scale
            if softcap:
                s = softcap * torch.tanh(s / softcap)
            rel = torch.arange(sk)[None, :] - torch.arange(sq)[:, None] - (sk - sq)
            if alibi_slopes is not None:
                sl = alibi_slopes[b] if alibi_slopes.dim() == 2 else alibi_slopes
                s = s - sl.float()[:, None, None] * rel.abs()
            vis = torch.ones(sq, sk, dtype=torch.bool)
            if left >= 0:
                vis &= rel >= -left
            if right >= 0:
                vis &= rel <= right
            p = torch.where(vis, torch.exp(s - lb[..., None]), torch.zeros(()))
            if keep is not None:
                n = H * sq * sk
                kept = keep[bit:bit + n].view(H, sq, sk)
                p = torch.where(kept, p, -p)
                bit += n
            res[b, :, :sq, :sk] = p
        return res


def flash_attn_func(q: Tensor, k: Tensor, v: Tensor, dropout_p: float = 0.0, softmax_scale: Optional[float] = None,
                    causal: bool = False, window_size: Tuple[int, int] = (-1, -1), softcap: float = 0.0,
                    alibi_slopes: Optional[Tensor] = None, deterministic: bool = False,
                    return_attn_probs: bool = False) -> Union[Tensor, Tuple[Tensor, Tensor, Tensor]]:
    """q (batch, seqlen_q, nheads, headdim), k/v (batch, seqlen_k, nheads_k, headdim) → out like q;
    with ``return_attn_probs`` ``(out, softmax_lse (batch, nheads, seqlen_q), S_dmask)``."""
    _same_dtype(q, k, v)
    B, Sq, Sk = q.shape[0], q.shape[1], k.shape[1]
    return _run(q, k, v, "bsnd", dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes,
                return_attn_probs, [Sq] * B, [Sk] * B)


def flash_attn_qkvpacked_func(qkv: Tensor, dropout_p: float = 0.0, softmax_scale: Optional[float] = None,
                              causal: bool = False, window_size: Tuple[int, int] = (-1, -1), softcap: float = 0.0,
                              alibi_slopes: Optional[Tensor] = None, deterministic: bool = False,
                              return_attn_probs: bool = False):
    """qkv (batch, seqlen, 3, nheads, headdim): q, k, v are read in place from it."""
    return flash_attn_func(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], dropout_p, softmax_scale, causal, window_size,
                           softcap, alibi_slopes, deterministic, return_attn_probs)


def flash_attn_kvpacked_func(q: Tensor, kv: Tensor, dropout_p: float = 0.0, softmax_scale: Optional[float] = None,
                             causal: bool = False, window_size: Tuple[int, int] = (-1, -1), softcap: float = 0.0,
                             alibi_slopes: Optional[Tensor] = None, deterministic: bool = False,
                             return_attn_probs: bool = False):
    """kv (batch, seqlen_k, 2, nheads_k, headdim)."""
    return flash_attn_func(q, kv[:, :, 0], kv[:, :, 1], dropout_p, softmax_scale, causal, window_size, softcap,
                           alibi_slopes, deterministic, return_attn_probs)


def flash_attn_varlen_func(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Tensor,
                           max_seqlen_q: int, max_seqlen_k: int, dropout_p: float = 0.0,
                           softmax_scale: Optional[float] = None, causal: bool = False,
                           window_size: Tuple[int, int] = (-1, -1), softcap: float = 0.0,
                           alibi_slopes: Optional[Tensor] = None, deterministic: bool = False,
                           return_attn_probs: bool = False, block_table: Optional[Tensor] = None):
    """q (total_q, nheads, headdim), k/v (total_k, nheads_k, headdim), cu_seqlens int32 (batch + 1);
    softmax_lse is (nheads, total_q)."""
    if block_table is not None:
        raise NotImplementedError("flashc.flash_attn: flash_attn_varlen_func with block_table; use "
                                  "flash_attn_with_kvcache for paged caches")
    _same_dtype(q, k, v)
    for name, c in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        if not isinstance(c, Tensor) or c.dtype not in (torch.int32, torch.int64):
            raise TypeError(f"flashc.flash_attn: {name} must be an int32 torch.Tensor, got "
                            f"{getattr(c, 'dtype', type(c).__name__)}")
    lq = (cu_seqlens_q[1:] - cu_seqlens_q[:-1]).tolist()
    lk = (cu_seqlens_k[1:] - cu_seqlens_k[:-1]).tolist()
    return _run(q, k, v, "tnd", dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes,
                return_attn_probs, lq, lk, cu_seqlens_q, cu_seqlens_k)


def flash_attn_varlen_qkvpacked_func(qkv: Tensor, cu_seqlens: Tensor, max_seqlen: int, dropout_p: float = 0.0,
                                     softmax_scale: Optional[float] = None, causal: bool = False,
                                     window_size: Tuple[int, int] = (-1, -1), softcap: float = 0.0,
                                     alibi_slopes: Optional[Tensor] = None, deterministic: bool = False,
                                     return_attn_probs: bool = False):
    """qkv (total, 3, nheads, headdim)."""
    return flash_attn_varlen_func(qkv[:, 0], qkv[:, 1], qkv[:, 2], cu_seqlens, cu_seqlens, max_seqlen, max_seqlen,
                                  dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes, deterministic,
                                  return_attn_probs)


def flash_attn_varlen_kvpacked_func(q: Tensor, kv: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Tensor,
                                    max_seqlen_q: int, max_seqlen_k: int, dropout_p: float = 0.0,
                                    softmax_scale: Optional[float] = None, causal: bool = False,
                                    window_size: Tuple[int, int] = (-1, -1), softcap: float = 0.0,
                                    alibi_slopes: Optional[Tensor] = None, deterministic: bool = False,
                                    return_attn_probs: bool = False):
    """kv (total_k, 2, nheads_k, headdim)."""
    return flash_attn_varlen_func(q, kv[:, 0], kv[:, 1], cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                  dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes, deterministic,
                                  return_attn_probs)


def _rotate(x: Tensor, cos: Tensor, sin: Tensor, pos: Tensor, interleaved: bool) -> Tensor:
    """Rotary embedding of the first 2·cos.shape[1] features of x (b, s, h, d) at positions pos (b, s)."""
    rd = cos.shape[-1] * 2
    c, s = cos[pos].unsqueeze(2).float(), sin[pos].unsqueeze(2).float()
    xr, rest = x[..., :rd].float(), x[..., rd:]
    if interleaved:
        x1, x2 = xr[..., 0::2], xr[..., 1::2]
        rot = torch.stack([x1 * c - x2 * s, x1 * s + x2 * c], -1).flatten(-2)
    else:
        x1, x2 = xr[..., :rd // 2], xr[..., rd // 2:]
        rot = torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], -1)
    return torch.cat([rot.to(x.dtype), rest], -1)


def flash_attn_with_kvcache(q: Tensor, k_cache: Tensor, v_cache: Tensor, k: Optional[Tensor] = None,
                            v: Optional[Tensor] = None, rotary_cos: Optional[Tensor] = None,
                            rotary_sin: Optional[Tensor] = None,
                            cache_seqlens: Optional[Union[int, Tensor]] = None,
                            cache_batch_idx: Optional[Tensor] = None, cache_leftpad: Optional[Tensor] = None,
                            block_table: Optional[Tensor] = None, softmax_scale: Optional[float] = None,
                            causal: bool = False, window_size: Tuple[int, int] = (-1, -1), softcap: float = 0.0,
                            rotary_interleaved: bool = True, alibi_slopes: Optional[Tensor] = None,
                            num_splits: int = 0, return_softmax_lse: bool = False):
    """Decoding over a KV cache, updating it in place when k/v are given.

    q (batch, seqlen, nheads, headdim); k_cache/v_cache (batch_cache, seqlen_cache, nheads_k,
    headdim), or pages (num_blocks, page_block_size, nheads_k, headdim) with ``block_table``
    (batch, max_blocks) int32.  k/v (batch, seqlen_new, nheads_k, headdim) are written into the
    cache at positions cache_seqlens[b], ... before attending; ``rotary_cos``/``rotary_sin``
    (seqlen_ro, rotary_dim / 2) rotate k and q first (q at cache_seqlens + i when causal or local,
    else at cache_seqlens).  ``cache_batch_idx`` picks the cache row of each batch;
    ``cache_leftpad`` hides the cache positions before it.  Returns out, or (out, softmax_lse).
    """
    _same_dtype(q, k_cache, v_cache)
    B, Sq = q.shape[0], q.shape[1]
    dev = q.device
    if cache_seqlens is None:
        n_cache = k_cache.shape[1] if block_table is None else block_table.shape[1] * k_cache.shape[1]
        lens = torch.full((B,), n_cache if k is None else n_cache - k.shape[1], dtype=torch.int64, device=dev)
    elif isinstance(cache_seqlens, int):
        lens = torch.full((B,), cache_seqlens, dtype=torch.int64, device=dev)
    else:
        lens = cache_seqlens.to(torch.int64)
    if cache_batch_idx is not None and block_table is not None:
        raise ValueError("flashc.flash_attn: cache_batch_idx cannot be used with block_table (as in flash_attn)")
    rows = cache_batch_idx.long() if cache_batch_idx is not None else torch.arange(B, device=dev)
    if k is not None:
        if v is None:
            raise ValueError("flashc.flash_attn: k and v go together")
        s_new = k.shape[1]
        pos = lens[:, None] + torch.arange(s_new, device=dev)[None, :]
        if rotary_cos is not None:
            k = _rotate(k, rotary_cos, rotary_sin, pos, rotary_interleaved)
        with torch.no_grad():
            if block_table is None:
                k_cache[rows[:, None], pos] = k.to(k_cache.dtype)
                v_cache[rows[:, None], pos] = v.to(v_cache.dtype)
            else:
                bs = k_cache.shape[1]
                blocks = block_table.long().gather(1, pos // bs)
                k_cache[blocks, pos % bs] = k.to(k_cache.dtype)
                v_cache[blocks, pos % bs] = v.to(v_cache.dtype)
        lens = lens + s_new
    if rotary_cos is not None and k is not None:
        local = causal or window_size != (-1, -1)
        qpos = (lens - k.shape[1])[:, None] + (torch.arange(Sq, device=dev)[None, :] if local else 0)
        q = _rotate(q, rotary_cos, rotary_sin, qpos.expand(B, Sq), rotary_interleaved)
    kc, vc = k_cache, v_cache
    if cache_batch_idx is not None:
        kc, vc = k_cache[rows], v_cache[rows]
    left, right = window_size
    if causal:
        right = 0 if right < 0 else min(right, 0)
    window = None if left < 0 and right < 0 else (None if left < 0 else left, None if right < 0 else right)
    options = dict(scale=softmax_scale, window=window, softcap=softcap, alibi_slopes=alibi_slopes)
    if alibi_slopes is not None:
        offsets = set((lens - Sq).tolist())
        if len(offsets) > 1:
            raise NotImplementedError("flashc.flash_attn: ALiBi with cache lengths that differ per batch")
        options.update(q_start=offsets.pop(), align="top_left")
    res = _api.decode(q, kc, vc, cache_seqlens=lens, block_table=block_table, layout="bsnd",
                      kv_starts=cache_leftpad, return_lse=return_softmax_lse, **options)
    return res
