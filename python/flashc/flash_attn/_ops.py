"""The drop-in's torch operators beyond flashc.torch's: KV-cache attention, the in-place cache
append, and the attention probabilities flash_attn's ``return_attn_probs`` hands back.

Each reads its per-batch lengths from tensors inside the operator, so the Python functions around
them hold no ``.tolist()`` and ``torch.compile(fullgraph=True)`` traces them whole; each has a fake
(meta) implementation and runs on CPU and CUDA tensors.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import torch
from torch import Tensor

from .. import _api
from ..torch import keep_decisions
from ._errors import FlashAttnError, flash_attn_errors

_DEVICES = ("cpu", "cuda")


def _host_lengths(x: Tensor) -> List[int]:
    return [int(n) for n in x.detach().to("cpu", torch.int64).tolist()]


def _window(left: int, right: int) -> Optional[tuple]:
    return None if left < 0 and right < 0 else (None if left < 0 else left, None if right < 0 else right)


def _check_table(block_table: Tensor, block_size: int, lens: List[int], what: str) -> None:
    """flash_attn's error for a block table that does not cover the cache (a RuntimeError there)."""
    covered = int(block_table.shape[1]) * block_size
    for b, n in enumerate(lens):
        if n > covered:
            raise FlashAttnError(f"flashc.flash_attn: block_table has {block_table.shape[1]} blocks of {block_size} "
                                 f"positions per batch, {covered} positions, but batch {b} {what} {n}")


def _append(k_cache: Tensor, v_cache: Tensor, k: Tensor, v: Tensor, lens: List[int], cache_rows: Optional[Tensor],
            block_table: Optional[Tensor]) -> None:
    """k, v (B, s_new, Hk, D) written at positions lens[b] + 0..s_new-1 of cache row cache_rows[b]
    (dense) or of batch b's pages (block_table)."""
    s_new, dev = int(k.shape[1]), k.device
    ends = [n + s_new for n in lens]
    pos = torch.tensor(lens, dtype=torch.int64).to(dev)[:, None] + torch.arange(s_new, device=dev)[None, :]
    if block_table is None:
        room = int(k_cache.shape[1])
        if max(ends, default=0) > room:
            raise FlashAttnError(f"flashc.flash_attn: appending {s_new} positions needs a cache of {max(ends)} "
                                 f"positions; k_cache has {room}")
        rows = torch.arange(len(lens), device=dev) if cache_rows is None else cache_rows.long()
        k_cache[rows[:, None], pos] = k.to(k_cache.dtype)
        v_cache[rows[:, None], pos] = v.to(v_cache.dtype)
        return
    bs = int(k_cache.shape[1])
    _check_table(block_table, bs, ends, "appends up to position")
    blocks = block_table.long().gather(1, pos // bs)
    if dev.type == "cpu" and blocks.numel() and (int(blocks.min()) < 0 or int(blocks.max()) >= k_cache.shape[0]):
        raise FlashAttnError(f"flashc.flash_attn: block_table holds entries outside [0, {k_cache.shape[0]}) (the "
                             "blocks of k_cache) where k and v are appended")
    k_cache[blocks, pos % bs] = k.to(k_cache.dtype)
    v_cache[blocks, pos % bs] = v.to(v_cache.dtype)


@torch.library.custom_op("flashc::kvcache", mutates_args=("k_cache", "v_cache"), device_types=_DEVICES)
def kvcache(q: Tensor, k_cache: Tensor, v_cache: Tensor, k: Optional[Tensor], v: Optional[Tensor],
            cache_seqlens: Tensor, cache_batch_idx: Optional[Tensor], block_table: Optional[Tensor],
            cache_leftpad: Optional[Tensor], q_lens: Optional[Tensor], alibi_slopes: Optional[Tensor], scale: float,
            window_left: int, window_right: int, softcap: float) -> Tuple[Tensor, Tensor]:
    """flash_attn_with_kvcache's work: k, v appended to the cache in place at cache_seqlens (when
    given), then q (B, Sq, H, D) attends over each batch's cache (its own length; q_lens[b] rows
    of q when given); causal and windows bottom-right aligned per batch, ALiBi likewise.
    Returns (out, lse).  The lengths are read on the host (a device tensor is copied there)."""
    lens = _host_lengths(cache_seqlens)
    for b, n in enumerate(lens):  # before any append: a negative position would wrap or fault
        if n < 0:
            raise FlashAttnError(f"flashc.flash_attn: cache_seqlens[{b}] is {n}; cache lengths must be ≥ 0"
                                 + ("" if k is None else f" (appending {int(k.shape[1])} positions)"))
    if k is not None:
        _append(k_cache, v_cache, k, v, lens, cache_batch_idx, block_table)
        lens = [n + int(k.shape[1]) for n in lens]
    kc, vc = k_cache, v_cache
    if cache_batch_idx is not None:
        kc, vc = k_cache[cache_batch_idx.long()], v_cache[cache_batch_idx.long()]
    if block_table is not None:
        _check_table(block_table, int(k_cache.shape[1]), lens, "has a cache length of")
    with flash_attn_errors():
        return _api.decode(q, kc, vc, cache_seqlens=lens, block_table=block_table, layout="bsnd",
                           kv_starts=None if cache_leftpad is None else _host_lengths(cache_leftpad),
                           q_lens=None if q_lens is None else _host_lengths(q_lens), return_lse=True,
                           scale=scale if scale > 0 else None, window=_window(window_left, window_right),
                           softcap=softcap, alibi_slopes=alibi_slopes, align="bottom_right",
                           alibi_align="bottom_right")


@kvcache.register_fake
def _(q, k_cache, v_cache, k, v, cache_seqlens, cache_batch_idx, block_table, cache_leftpad, q_lens, alibi_slopes,
      scale, window_left, window_right, softcap):
    B, Sq, H = q.shape[0], q.shape[1], q.shape[2]
    return q.new_empty((B, Sq, H, v_cache.shape[-1])), q.new_empty((B, H, Sq), dtype=torch.float32)


@torch.library.custom_op("flashc::attn_probs", mutates_args=(), device_types=_DEVICES)
def attn_probs(q: Tensor, k: Tensor, lse: Tensor, alibi_slopes: Optional[Tensor], rng: Optional[Tensor],
               cu_seqlens_q: Optional[Tensor], cu_seqlens_k: Optional[Tensor], batch: int, max_seqlen_q: int,
               max_seqlen_k: int, scale: float, window_left: int, window_right: int, softcap: float,
               keep_prob: float) -> Tensor:
    """S_dmask as flash_attn's tests read it: the softmax probabilities, float32 (batch, heads,
    max_seqlen_q, max_seqlen_k), zero past each batch's lengths, negated where dropout removed them
    (the kernels' keep bits, drawn again from rng).  For inspection; computed with torch."""
    with torch.no_grad():
        H, D = q.shape[-2], q.shape[-1]
        dev = q.device
        if cu_seqlens_q is None:  # (B, S, H, D)
            lens_q, lens_k = [int(q.shape[1])] * batch, [int(k.shape[1])] * batch
        else:
            cq, ck = _host_lengths(cu_seqlens_q), _host_lengths(cu_seqlens_k)
            lens_q = [cq[b + 1] - cq[b] for b in range(batch)]
            lens_k = [ck[b + 1] - ck[b] for b in range(batch)]
        res = torch.zeros(batch, H, max_seqlen_q, max_seqlen_k, dtype=torch.float32, device=dev)
        keep = None
        if rng is not None and keep_prob < 1:  # bits in the kernels' order: per batch [H, Sq_b, Sk_b]
            keep = keep_decisions(rng, H * sum(a * b for a, b in zip(lens_q, lens_k)), keep_prob, dev)
        bit, tq, tk = 0, 0, 0
        for b in range(batch):
            sq, sk = lens_q[b], lens_k[b]
            if cu_seqlens_q is None:
                qb, kb, lb = q[b], k[b], lse[b]
            else:
                qb, kb, lb = q[tq:tq + sq], k[tk:tk + sk], lse[:, tq:tq + sq]
            kb = kb.float().repeat_interleave(H // kb.shape[1], 1)
            s = torch.einsum("ihd,jhd->hij", qb.float(), kb) * (scale if scale > 0 else D ** -0.5)
            if softcap > 0:
                s = softcap * torch.tanh(s / softcap)
            rel = torch.arange(sk, device=dev)[None, :] - torch.arange(sq, device=dev)[:, None] - (sk - sq)
            if alibi_slopes is not None:
                sl = alibi_slopes[b] if alibi_slopes.dim() == 2 else alibi_slopes
                s = s - sl.float()[:, None, None] * rel.abs()
            vis = torch.ones(sq, sk, dtype=torch.bool, device=dev)
            if window_left >= 0:
                vis &= rel >= -window_left
            if window_right >= 0:
                vis &= rel <= window_right
            p = torch.where(vis, torch.exp(s - lb[..., None].float()), torch.zeros((), device=dev))
            if keep is not None:
                kept = keep[bit:bit + H * sq * sk].view(H, sq, sk)
                p = torch.where(kept, p, -p)
                bit += H * sq * sk
            res[b, :, :sq, :sk] = p
            tq, tk = tq + sq, tk + sk
        return res


@attn_probs.register_fake
def _(q, k, lse, alibi_slopes, rng, cu_seqlens_q, cu_seqlens_k, batch, max_seqlen_q, max_seqlen_k, scale, window_left,
      window_right, softcap, keep_prob):
    return q.new_empty((batch, q.shape[-2], max_seqlen_q, max_seqlen_k), dtype=torch.float32)
