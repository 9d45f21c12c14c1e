"""flash_attn 2.x's functions (``flash_attn.flash_attn_interface``) on flashc, for CPU and CUDA
tensors: same argument names, shapes ((batch, seqlen, nheads, headdim), packed (total, nheads,
headdim)), defaults and return values.

Causal and local windows are aligned to the bottom-right corner of each batch (query i sees key j
iff i + Sk − Sq − left ≤ j ≤ i + Sk − Sq + right); ALiBi adds −slope·|i + Sk − Sq − j|, each batch
with its own lengths.  ``deterministic`` is accepted and always true (the backward is
bit-reproducible).  Dropout masks come from torch's generator.  Bad arguments raise
:class:`FlashAttnError`, a ValueError that is also the RuntimeError flash_attn raises.
"""
from __future__ import annotations

from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from ._common import NOTHING_SEEN, band, check_cu_seqlens, check_tensors, forward
from ._errors import FlashAttnError
from ._ops import kvcache

__all__ = ["flash_attn_func", "flash_attn_qkvpacked_func", "flash_attn_kvpacked_func", "flash_attn_varlen_func",
           "flash_attn_varlen_qkvpacked_func", "flash_attn_varlen_kvpacked_func", "flash_attn_with_kvcache",
           "FlashAttnError"]


def _result(out, lse, probs, return_attn_probs: bool):
    return (out, lse, probs) if return_attn_probs else out


def flash_attn_func(q: Tensor, k: Tensor, v: Tensor, dropout_p: float = 0.0, softmax_scale: Optional[float] = None,
                    causal: bool = False, window_size: Tuple[int, int] = (-1, -1), softcap: float = 0.0,
                    alibi_slopes: Optional[Tensor] = None, deterministic: bool = False,
                    return_attn_probs: bool = False) -> Union[Tensor, Tuple[Tensor, Tensor, Tensor]]:
    """q (batch, seqlen_q, nheads, headdim), k/v (batch, seqlen_k, nheads_k, headdim) → out like q;
    with ``return_attn_probs`` ``(out, softmax_lse (batch, nheads, seqlen_q), S_dmask)``."""
    check_tensors(q, k, v)
    out, lse, probs, _ = forward(q, k, v, "bsnd", None, None, q.shape[1], k.shape[1], dropout_p, softmax_scale, causal,
                                 window_size[0], window_size[1], softcap, alibi_slopes, return_attn_probs,
                                 want_lse=return_attn_probs)
    return _result(out, lse, probs, return_attn_probs)


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
    softmax_lse is (nheads, total_q), S_dmask (batch, nheads, max_seqlen_q, max_seqlen_k), zero past
    each batch's lengths.  With ``block_table`` (batch, max_blocks) int32, k and v are paged caches
    (num_blocks, page_block_size, nheads_k, headdim) and cu_seqlens_k gives each batch's cache
    length (a forward only, as in flash_attn)."""
    check_tensors(q, k, v)
    check_cu_seqlens(cu_seqlens_q, cu_seqlens_k)
    if block_table is not None:  # S_dmask: empty, as flash_attn's without dropout
        out, lse = _paged_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, dropout_p, softmax_scale, causal,
                                 window_size, softcap, alibi_slopes, block_table)
        return _result(out, lse, q.new_empty((0,)), return_attn_probs)
    out, lse, probs, _ = forward(q, k, v, "tnd", cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q), int(max_seqlen_k),
                                 dropout_p, softmax_scale, causal, window_size[0], window_size[1], softcap,
                                 alibi_slopes, return_attn_probs, want_lse=return_attn_probs)
    return _result(out, lse, probs, return_attn_probs)


def _paged_varlen(q, k_cache, v_cache, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, dropout_p, softmax_scale, causal,
                  window_size, softcap, alibi_slopes, block_table):
    """(out, lse) of packed queries over paged caches: the queries padded to (batch, max_seqlen_q)
    for the cache operator and the rows gathered back (torch indexing, no host round trip)."""
    if dropout_p > 0:
        raise FlashAttnError("flashc.flash_attn: dropout with block_table (paged KV): the cache operator has none")
    dev = q.device
    starts = cu_seqlens_q[:-1].long()
    if len(starts) == 0 or int(max_seqlen_q) == 0:  # no query row belongs to a batch
        return (q.new_zeros(tuple(q.shape[:-1]) + (v_cache.shape[-1],)),
                torch.full((q.shape[1], q.shape[0]), NOTHING_SEEN, dtype=torch.float32, device=dev))
    lens_q, lens_k = (cu_seqlens_q[1:] - cu_seqlens_q[:-1]), (cu_seqlens_k[1:] - cu_seqlens_k[:-1])
    last = max(int(q.shape[0]) - 1, 0)
    rows = (starts[:, None] + torch.arange(int(max_seqlen_q), device=dev)[None, :]).clamp(max=last)
    q_pad = q.detach()[rows]  # (B, max_seqlen_q, H, D); rows past a batch's length are not read; no gradient
    left, right = band(causal, window_size[0], window_size[1])
    out_pad, lse_pad = kvcache(q_pad, k_cache, v_cache, None, None, lens_k, None, block_table, None, lens_q,
                               alibi_slopes, float(softmax_scale or 0.0), left, right, float(softcap))
    token = torch.arange(int(q.shape[0]), device=dev)
    batch = torch.searchsorted(cu_seqlens_q[1:].long().contiguous(), token, right=True)
    inside = batch < len(starts)  # tokens past cu_seqlens_q[-1] belong to no batch: zeros, an lse that sees nothing
    batch = batch.clamp(max=len(starts) - 1)
    pos = (token - starts[batch]).clamp(0, int(max_seqlen_q) - 1)
    out, lse = out_pad[batch, pos], lse_pad[batch, :, pos].T
    return (torch.where(inside[:, None, None], out, out.new_zeros(())),
            torch.where(inside[None, :], lse, lse.new_full((), NOTHING_SEEN)))


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


def _check_rotary(cos: Optional[Tensor], sin: Optional[Tensor], k: Optional[Tensor], headdim: int,
                  positions: int) -> None:
    """flash_attn's conditions on the rotary tables (its RuntimeErrors there), checked from shapes."""
    if cos is None or sin is None:
        raise FlashAttnError("flashc.flash_attn: rotary_cos and rotary_sin go together")
    if k is None:
        raise FlashAttnError("flashc.flash_attn: rotary_cos/rotary_sin rotate the new keys and the queries, so "
                             "k and v must be given (as in flash_attn)")
    if cos.dim() != 2 or tuple(sin.shape) != tuple(cos.shape):
        raise FlashAttnError(f"flashc.flash_attn: rotary_cos and rotary_sin must both be (seqlen_ro, rotary_dim / 2), "
                             f"got {tuple(cos.shape)} and {tuple(sin.shape)}")
    if 2 * cos.shape[1] > headdim:
        raise FlashAttnError(f"flashc.flash_attn: rotary_dim {2 * cos.shape[1]} exceeds the head dimension {headdim}")
    if cos.shape[0] < positions:
        raise FlashAttnError(f"flashc.flash_attn: rotary_cos has {cos.shape[0]} positions; the cache holds "
                             f"{positions} (seqlen_ro must cover it, as in flash_attn)")


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
    check_tensors(q, k_cache, v_cache)
    B, Sq = q.shape[0], q.shape[1]
    dev = q.device
    if cache_batch_idx is not None and block_table is not None:
        raise FlashAttnError("flashc.flash_attn: cache_batch_idx cannot be used with block_table (as in flash_attn)")
    if (k is None) != (v is None):
        raise FlashAttnError("flashc.flash_attn: k and v go together")
    s_new = 0 if k is None else k.shape[1]
    n_cache = k_cache.shape[1] if block_table is None else block_table.shape[1] * k_cache.shape[1]
    if cache_seqlens is None or isinstance(cache_seqlens, int):  # on the host, where the lengths are read
        lens = torch.full((B,), n_cache - s_new if cache_seqlens is None else cache_seqlens, dtype=torch.int64)
    else:
        lens = cache_seqlens.to(torch.int64)
    if rotary_cos is not None or rotary_sin is not None:
        local = causal or tuple(window_size) != (-1, -1)
        _check_rotary(rotary_cos, rotary_sin, k, q.shape[-1], n_cache)
        if local and Sq > s_new:  # queries past the new keys: positions past the cache's (read once)
            last_q = int(lens.max()) + Sq - 1 if B else 0
            if last_q >= rotary_cos.shape[0]:
                raise FlashAttnError(f"flashc.flash_attn: rotary_cos has {rotary_cos.shape[0]} positions; the "
                                     f"queries reach position {last_q}")
        # Clamped positions change nothing for lengths the cache holds; the others are refused
        # after this (the lengths are read on the host), where a table index would fault on CUDA.
        start = lens.to(dev)[:, None]
        last = rotary_cos.shape[0] - 1
        pos = (start + torch.arange(s_new, device=dev)[None, :]).clamp(0, last)
        k = _rotate(k, rotary_cos, rotary_sin, pos, rotary_interleaved)
        qpos = (start + (torch.arange(Sq, device=dev)[None, :] if local else 0)).clamp(0, last)
        q = _rotate(q, rotary_cos, rotary_sin, qpos.expand(B, Sq), rotary_interleaved)
    left, right = band(causal, window_size[0], window_size[1])
    q, k, v = (None if x is None else x.detach() for x in (q, k, v))  # no gradient, as in flash_attn
    out, lse = kvcache(q, k_cache, v_cache, k, v, lens, cache_batch_idx, block_table, cache_leftpad, None,
                       alibi_slopes, float(softmax_scale or 0.0), left, right, float(softcap))
    return (out, lse) if return_softmax_lse else out


# flash_attn's private entry points, for code that imports them from here
from ._private import (_flash_attn_backward, _flash_attn_forward, _flash_attn_varlen_backward,  # noqa: E402,F401
                       _flash_attn_varlen_forward, flash_attn_gpu)
