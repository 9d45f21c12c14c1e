"""PyTorch integration: flashc kernels as torch operators with autograd and torch.compile support.

``flashc::attention_fwd`` / ``flashc::attention_bwd`` are registered with ``torch.library.custom_op``
(fake-tensor implementations included, so ``torch.compile(fullgraph=True)`` traces through them);
the forward's autograd formula runs the native backward kernel.  :func:`sdpa` has the meaning of
``torch.nn.functional.scaled_dot_product_attention``.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import torch
from torch import Tensor

from . import _api

__all__ = ["attention", "sdpa", "keep_bits"]

_OPTS = "layout, scale, causal, window_left, window_right, align, softcap, keep_prob, q_start"


def _kwargs(mask, bias, alibi_slopes, keep, cu_seqlens_q, cu_seqlens_k, layout, scale, causal, window_left,
            window_right, align, softcap, keep_prob, q_start) -> dict:
    """flashc.attention keywords from the operators' flat arguments (window sides < 0: unbounded)."""
    kw = dict(layout=layout, causal=causal, align=align, softcap=softcap, q_start=q_start, mask=mask, bias=bias,
              alibi_slopes=alibi_slopes, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k)
    if scale > 0:
        kw["scale"] = scale
    if window_left >= 0 or window_right >= 0:
        kw["window"] = (window_left if window_left >= 0 else None, window_right if window_right >= 0 else None)
    if keep is not None and keep_prob < 1:
        kw["dropout_mask"], kw["keep_prob"] = keep, keep_prob
    return kw


@torch.library.custom_op("flashc::attention_fwd", mutates_args=(), device_types="cpu")
def _fwd(q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor], bias: Optional[Tensor],
         alibi_slopes: Optional[Tensor], keep: Optional[Tensor], cu_seqlens_q: Optional[Tensor],
         cu_seqlens_k: Optional[Tensor], layout: str, scale: float, causal: bool, window_left: int,
         window_right: int, align: str, softcap: float, keep_prob: float, q_start: int) -> Tuple[Tensor, Tensor]:
    out, lse = _api.attention(q, k, v, return_lse=True, **_kwargs(
        mask, bias, alibi_slopes, keep, cu_seqlens_q, cu_seqlens_k, layout, scale, causal, window_left,
        window_right, align, softcap, keep_prob, q_start))
    return out, lse.contiguous()


@_fwd.register_fake
def _fwd_fake(q, k, v, mask, bias, alibi_slopes, keep, cu_seqlens_q, cu_seqlens_k, layout, scale, causal,
              window_left, window_right, align, softcap, keep_prob, q_start):
    out = q.new_empty(tuple(q.shape[:-1]) + (v.shape[-1],))
    if layout == "tnd":
        lse = q.new_empty((q.shape[1], q.shape[0]), dtype=torch.float32)
    else:
        axes = {"bnsd": (0, 1, 2), "bsnd": (0, 2, 1), "sbnd": (1, 2, 0)}[layout]
        lse = q.new_empty(tuple(q.shape[a] for a in axes), dtype=torch.float32)
    return out, lse


@torch.library.custom_op("flashc::attention_bwd", mutates_args=(), device_types="cpu")
def _bwd(d_out: Tensor, q: Tensor, k: Tensor, v: Tensor, out: Tensor, lse: Tensor, mask: Optional[Tensor],
         bias: Optional[Tensor], alibi_slopes: Optional[Tensor], keep: Optional[Tensor],
         cu_seqlens_q: Optional[Tensor], cu_seqlens_k: Optional[Tensor], layout: str, scale: float, causal: bool,
         window_left: int, window_right: int, align: str, softcap: float, keep_prob: float,
         q_start: int) -> Tuple[Tensor, Tensor, Tensor]:
    dq, dk, dv = _api.attention_backward(d_out, q, k, v, out, lse, **_kwargs(
        mask, bias, alibi_slopes, keep, cu_seqlens_q, cu_seqlens_k, layout, scale, causal, window_left,
        window_right, align, softcap, keep_prob, q_start))
    return dq, dk, dv


@_bwd.register_fake
def _bwd_fake(d_out, q, k, v, *rest):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _setup_context(ctx, inputs, output):
    q, k, v, mask, bias, alibi_slopes, keep, cu_q, cu_k = inputs[:9]
    ctx.options = inputs[9:]
    ctx.save_for_backward(q, k, v, output[0], output[1], mask, bias, alibi_slopes, keep, cu_q, cu_k)


def _backward(ctx, d_out, d_lse):
    q, k, v, out, lse, mask, bias, alibi_slopes, keep, cu_q, cu_k = ctx.saved_tensors
    dq, dk, dv = _bwd(d_out, q, k, v, out, lse, mask, bias, alibi_slopes, keep, cu_q, cu_k, *ctx.options)
    return (dq, dk, dv) + (None,) * 15


_fwd.register_autograd(_backward, setup_context=_setup_context)


def attention(q: Tensor, k: Tensor, v: Tensor, *, layout: str = "bnsd", scale: Optional[float] = None,
              causal: bool = False, window: Tuple[Optional[int], Optional[int]] = (None, None),
              align: str = "bottom_right", mask: Optional[Tensor] = None, bias: Optional[Tensor] = None,
              alibi_slopes: Optional[Tensor] = None, softcap: float = 0.0, dropout_mask: Optional[Tensor] = None,
              keep_prob: float = 1.0, cu_seqlens_q: Optional[Tensor] = None, cu_seqlens_k: Optional[Tensor] = None,
              q_start: int = 0) -> Tuple[Tensor, Tensor]:
    """Differentiable :func:`flashc.attention` on torch tensors: returns ``(out, lse)``.

    Gradients flow to q, k and v (the bias, mask and slopes are constants).  ``window`` sides are
    None (unbounded) or ≥ 0.  See :func:`flashc.attention` for every argument.
    """
    left, right = window
    return _fwd(q, k, v, mask, bias, alibi_slopes, dropout_mask, cu_seqlens_q, cu_seqlens_k, layout,
                float(scale or 0.0), bool(causal), -1 if left is None else int(left),
                -1 if right is None else int(right), align, float(softcap), float(keep_prob), int(q_start))


def keep_bits(shape: Tuple[int, ...], keep_prob: float, device=None, generator=None) -> Tensor:
    """A random dropout keep mask over ``shape`` (drawn with torch's generator, so torch.manual_seed
    reproduces it), packed as flashc reads it: bit e of byte e // 8, least significant first."""
    keep = torch.rand(shape, device=device, generator=generator) < keep_prob
    flat = keep.reshape(-1).to(torch.uint8)
    flat = torch.nn.functional.pad(flat, (0, (-flat.numel()) % 8))
    weights = torch.tensor([1, 2, 4, 8, 16, 32, 64, 128], dtype=torch.uint8, device=flat.device)
    return (flat.view(-1, 8) * weights).sum(-1, dtype=torch.uint8)


def sdpa(query: Tensor, key: Tensor, value: Tensor, attn_mask: Optional[Tensor] = None, dropout_p: float = 0.0,
         is_causal: bool = False, scale: Optional[float] = None, enable_gqa: bool = False) -> Tensor:
    """``torch.nn.functional.scaled_dot_product_attention`` computed by flashc.

    query [N, ..., L, E] (``[B, H, L, E]`` or ``[B, L, E]``), key [.., S, E], value [.., S, Ev].
    ``attn_mask``: boolean (True = takes part) or float (added to the scaled scores), broadcastable
    to [B, H, L, S].  ``is_causal``: the top-left-aligned lower triangle (as torch).  ``dropout_p``:
    dropout of the probabilities with a mask drawn from torch's generator (the backward reuses it).
    ``enable_gqa``: key/value may have fewer heads, a divisor of the query's.
    """
    if attn_mask is not None and is_causal:
        raise ValueError("flashc.torch.sdpa: attn_mask and is_causal cannot both be set (as in torch)")
    squeeze = query.dim() == 3
    if squeeze:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if attn_mask is not None and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(1)
    if query.dim() != 4:
        raise ValueError(f"flashc.torch.sdpa: query must be 3-D or 4-D, got {query.dim()} dimensions")
    hq, hkv = query.shape[1], key.shape[1]
    if hq != hkv and not enable_gqa:
        raise ValueError(f"flashc.torch.sdpa: query has {hq} heads and key {hkv}; pass enable_gqa=True for GQA")
    mask = bias = None
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            mask = ~attn_mask
        else:
            bias = attn_mask.to(torch.float32) if attn_mask.dtype != query.dtype else attn_mask
    keep = None
    if dropout_p > 0:
        if not dropout_p < 1:
            raise ValueError(f"flashc.torch.sdpa: dropout_p must be in [0, 1), got {dropout_p}")
        b, h, l, s = query.shape[0], hq, query.shape[2], key.shape[2]
        keep = keep_bits((b, h, l, s), 1.0 - dropout_p, device=query.device)
    out, _ = _fwd(query, key, value, mask, bias, None, keep, None, None, "bnsd", float(scale or 0.0),
                  bool(is_causal), -1, -1, "top_left", 0.0, 1.0 - float(dropout_p), 0)
    return out.squeeze(1) if squeeze else out
