"""What the public and the private entry points share: argument checks, flash_attn's window and
dropout conventions, and the forward through flashc::attention_fwd."""
from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor

from ..torch import draw_rng, forward_maybe_lse
from ._errors import FlashAttnError
from ._ops import attn_probs

from .._describe import NOTHING_SEEN  # noqa: F401  (the lse of a row that sees nothing, for the interface)


def check_tensors(q, k, v) -> None:
    """flash_attn takes torch tensors q, k and v of one dtype (fp16 or bf16; fp32 here too)."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, Tensor):
            raise TypeError(f"flashc.flash_attn: {name} must be a torch.Tensor, got {type(x).__name__}")
    if not q.dtype == k.dtype == v.dtype:
        raise FlashAttnError(f"flashc.flash_attn: q, k and v must have the same dtype (as in flash_attn), got "
                             f"{q.dtype}, {k.dtype} and {v.dtype}")


def check_cu_seqlens(cu_seqlens_q, cu_seqlens_k) -> None:
    for name, c in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        if not isinstance(c, Tensor) or c.dtype not in (torch.int32, torch.int64):
            raise TypeError(f"flashc.flash_attn: {name} must be an int32 torch.Tensor, got "
                            f"{getattr(c, 'dtype', type(c).__name__)}")


def dropout_rng(dropout_p: float, q: Tensor, max_seqlen_k: int, generator=None) -> Optional[Tensor]:
    """(seed, offset) of the dropout mask over q's rows and heads × max_seqlen_k keys, drawn from
    torch's generator as flash_attn draws it (the device's for CUDA tensors); None without dropout."""
    if not dropout_p > 0:
        return None
    if not dropout_p < 1:
        raise FlashAttnError(f"flashc.flash_attn: dropout_p must be in [0, 1), got {dropout_p}")
    try:
        return draw_rng(q.device, q.numel() // max(1, q.shape[-1]) * max(0, int(max_seqlen_k)), generator)
    except ValueError as e:
        raise FlashAttnError(str(e)) from None


def band(causal: bool, left: int, right: int) -> Tuple[int, int]:
    """flash_attn's window sides (−1: unbounded) with causal folded in (right side 0)."""
    if causal:
        right = 0 if right < 0 else min(right, 0)
    return int(left), int(right)


def forward(q: Tensor, k: Tensor, v: Tensor, layout: str, cu_seqlens_q: Optional[Tensor],
            cu_seqlens_k: Optional[Tensor], max_seqlen_q: int, max_seqlen_k: int, dropout_p: float,
            softmax_scale: Optional[float], causal: bool, window_left: int, window_right: int, softcap: float,
            alibi_slopes: Optional[Tensor], return_probs: bool, rng: Optional[Tensor] = None,
            want_lse: bool = True, generator=None):
    """(out, softmax_lse, S_dmask or None, rng): differentiable in q, k, v through
    flashc::attention_fwd.  Causal, windows and ALiBi are bottom-right aligned per batch
    (query i sees key j iff i + Sk − Sq − left ≤ j ≤ i + Sk − Sq + right; ALiBi adds
    −slope·|i + Sk − Sq − j|).  softmax_lse is None when neither want_lse, return_probs nor a
    gradient needs it (the forward then writes no statistics)."""
    check_tensors(q, k, v)
    left, right = band(causal, window_left, window_right)
    if rng is None:
        rng = dropout_rng(dropout_p, q, max_seqlen_k, generator)
    scale = float(softmax_scale or 0.0)
    try:
        out, lse = forward_maybe_lse(want_lse or return_probs, q, k, v, None, None, alibi_slopes, None, rng,
                                     cu_seqlens_q, cu_seqlens_k, layout, scale, False, left, right, "bottom_right",
                                     "bottom_right", float(softcap), 1.0 - float(dropout_p), 0)
    except FlashAttnError:
        raise
    except ValueError as e:
        raise FlashAttnError(str(e)) from None
    probs = None
    if return_probs:  # for inspection: no gradient, as flash_attn's
        batch = q.shape[0] if cu_seqlens_q is None else cu_seqlens_q.shape[0] - 1
        probs = attn_probs(q.detach(), k.detach(), lse.detach(), alibi_slopes, rng, cu_seqlens_q, cu_seqlens_k, batch, max_seqlen_q, max_seqlen_k,
                           scale, left, right, float(softcap), 1.0 - float(dropout_p))
    return out, lse, probs, rng
