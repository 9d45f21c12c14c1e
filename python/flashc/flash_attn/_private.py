"""flash_attn's private entry points that user code imports from ``flash_attn.flash_attn_interface``
(custom autograd functions, ring and context-parallel attention built on the raw forward and
backward): ``_flash_attn_forward``, ``_flash_attn_varlen_forward``, ``_flash_attn_backward``,
``_flash_attn_varlen_backward``, with flash_attn 2.7's signatures, and ``flash_attn_gpu``, the
extension module's ``fwd``, ``varlen_fwd``, ``bwd``, ``varlen_bwd`` and ``fwd_kvcache`` with
flash_attn 2.7's positional signatures (earlier releases return more values from ``fwd``).

Differences: ``rng_state`` is flashc's (seed, offset) pair, a CPU int64 tensor, to be handed back
to the backward unchanged; S_dmask and softmax_d are not padded to multiples of 128; ``gen``
(a generator for the extension functions) is not supported (dropout draws from torch's default
generator).
"""
from __future__ import annotations

import types
from typing import Optional

import torch
from torch import Tensor

from ..torch import _bwd
from ._common import band, check_tensors, forward
from ._errors import FlashAttnError


def _empty_probs(q: Tensor) -> Tensor:
    return torch.empty((0,), dtype=q.dtype, device=q.device)


def _flash_attn_forward(q: Tensor, k: Tensor, v: Tensor, dropout_p: float, softmax_scale: float, causal: bool,
                        window_size_left: int = -1, window_size_right: int = -1, softcap: float = 0.0,
                        alibi_slopes: Optional[Tensor] = None, return_softmax: bool = False):
    """(out, softmax_lse (B, H, Sq), S_dmask (empty unless return_softmax), rng_state)."""
    with torch.no_grad():
        out, lse, probs, rng = forward(q, k, v, "bsnd", None, None, q.shape[1], k.shape[1], dropout_p, softmax_scale,
                                       causal, window_size_left, window_size_right, softcap, alibi_slopes,
                                       return_softmax)
    return out, lse, probs if return_softmax else _empty_probs(q), _rng_state(rng)


def _flash_attn_varlen_forward(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Tensor,
                               max_seqlen_q: int, max_seqlen_k: int, dropout_p: float, softmax_scale: float,
                               causal: bool, window_size_left: int = -1, window_size_right: int = -1,
                               softcap: float = 0.0, alibi_slopes: Optional[Tensor] = None,
                               return_softmax: bool = False, block_table: Optional[Tensor] = None,
                               leftpad_k: Optional[Tensor] = None, seqused_k: Optional[Tensor] = None,
                               zero_tensors: bool = False):
    """(out, softmax_lse (H, total_q), S_dmask, rng_state).  ``leftpad_k`` and ``seqused_k`` are
    refused (NotImplementedError)."""
    if leftpad_k is not None or seqused_k is not None:
        raise NotImplementedError("flashc.flash_attn: _flash_attn_varlen_forward with leftpad_k or seqused_k")
    with torch.no_grad():
        if block_table is not None:
            from .flash_attn_interface import flash_attn_varlen_func
            out, lse, _ = flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                                 dropout_p, softmax_scale, causal,
                                                 (window_size_left, window_size_right), softcap, alibi_slopes,
                                                 return_attn_probs=True, block_table=block_table)
            return out, lse, _empty_probs(q), _rng_state(None)
        out, lse, probs, rng = forward(q, k, v, "tnd", cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                       dropout_p, softmax_scale, causal, window_size_left, window_size_right, softcap,
                                       alibi_slopes, return_softmax)
    return out, lse, probs if return_softmax else _empty_probs(q), _rng_state(rng)


def _rng_state(rng: Optional[Tensor]) -> Tensor:
    return rng if rng is not None else torch.zeros(2, dtype=torch.int64)


def _gradients(dout, q, k, v, out, softmax_lse, dq, dk, dv, layout, cu_seqlens_q, cu_seqlens_k, dropout_p,
               softmax_scale, causal, window_size_left, window_size_right, softcap, alibi_slopes, rng_state):
    check_tensors(q, k, v)
    left, right = band(causal, window_size_left, window_size_right)
    rng = rng_state if dropout_p > 0 else None
    if dropout_p > 0 and rng is None:
        raise FlashAttnError("flashc.flash_attn: a backward with dropout needs the forward's rng_state")
    with torch.no_grad():
        try:
            gq, gk, gv = _bwd(dout, q, k, v, out, softmax_lse, None, None, alibi_slopes, None, rng, cu_seqlens_q,
                              cu_seqlens_k, layout, float(softmax_scale or 0.0), False, left, right, "bottom_right",
                              "bottom_right", float(softcap), 1.0 - float(dropout_p), 0)
        except FlashAttnError:
            raise
        except ValueError as e:
            raise FlashAttnError(str(e)) from None
        grads = []
        for given, got in ((dq, gq), (dk, gk), (dv, gv)):
            if given is not None:
                given.copy_(got)
            grads.append(got if given is None else given)
        delta = (dout.float() * out.float()).sum(-1)  # rowsum(dO ∘ O), flash_attn's softmax_d
    return grads, delta


def _flash_attn_backward(dout: Tensor, q: Tensor, k: Tensor, v: Tensor, out: Tensor, softmax_lse: Tensor,
                         dq: Optional[Tensor], dk: Optional[Tensor], dv: Optional[Tensor], dropout_p: float,
                         softmax_scale: float, causal: bool, window_size_left: int = -1, window_size_right: int = -1,
                         softcap: float = 0.0, alibi_slopes: Optional[Tensor] = None, deterministic: bool = False,
                         rng_state: Optional[Tensor] = None) -> Tensor:
    """Writes dq, dk, dv (when given) and returns softmax_d (B, H, Sq)."""
    _, delta = _gradients(dout, q, k, v, out, softmax_lse, dq, dk, dv, "bsnd", None, None, dropout_p, softmax_scale,
                          causal, window_size_left, window_size_right, softcap, alibi_slopes, rng_state)
    return delta.transpose(1, 2).contiguous()


def _flash_attn_varlen_backward(dout: Tensor, q: Tensor, k: Tensor, v: Tensor, out: Tensor, softmax_lse: Tensor,
                                dq: Optional[Tensor], dk: Optional[Tensor], dv: Optional[Tensor], cu_seqlens_q: Tensor,
                                cu_seqlens_k: Tensor, max_seqlen_q: int, max_seqlen_k: int, dropout_p: float,
                                softmax_scale: float, causal: bool, window_size_left: int = -1,
                                window_size_right: int = -1, softcap: float = 0.0,
                                alibi_slopes: Optional[Tensor] = None, deterministic: bool = False,
                                rng_state: Optional[Tensor] = None, zero_tensors: bool = False) -> Tensor:
    """Writes dq, dk, dv (when given) and returns softmax_d (H, total_q)."""
    _, delta = _gradients(dout, q, k, v, out, softmax_lse, dq, dk, dv, "tnd", cu_seqlens_q, cu_seqlens_k, dropout_p,
                          softmax_scale, causal, window_size_left, window_size_right, softcap, alibi_slopes, rng_state)
    return delta.T.contiguous()


def _ext_fwd(q, k, v, out, alibi_slopes, p_dropout, softmax_scale, is_causal, window_size_left, window_size_right,
             softcap, return_softmax, gen=None):
    _no_generator(gen)
    res = _flash_attn_forward(q, k, v, p_dropout, softmax_scale, is_causal, window_size_left, window_size_right,
                              softcap, alibi_slopes, return_softmax)
    return _into(out, res[0]), res[1], res[2], res[3]


def _ext_varlen_fwd(q, k, v, out, cu_seqlens_q, cu_seqlens_k, seqused_k, leftpad_k, block_table, alibi_slopes,
                    max_seqlen_q, max_seqlen_k, p_dropout, softmax_scale, zero_tensors, is_causal, window_size_left,
                    window_size_right, softcap, return_softmax, gen=None):
    _no_generator(gen)
    res = _flash_attn_varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, p_dropout,
                                     softmax_scale, is_causal, window_size_left, window_size_right, softcap,
                                     alibi_slopes, return_softmax, block_table, leftpad_k, seqused_k)
    return _into(out, res[0]), res[1], res[2], res[3]


def _ext_bwd(dout, q, k, v, out, softmax_lse, dq, dk, dv, alibi_slopes, p_dropout, softmax_scale, is_causal,
             window_size_left, window_size_right, softcap, deterministic, gen=None, rng_state=None):
    _no_generator(gen)
    grads, delta = _gradients(dout, q, k, v, out, softmax_lse, dq, dk, dv, "bsnd", None, None, p_dropout,
                              softmax_scale, is_causal, window_size_left, window_size_right, softcap, alibi_slopes,
                              rng_state)
    return grads[0], grads[1], grads[2], delta.transpose(1, 2).contiguous()


def _ext_varlen_bwd(dout, q, k, v, out, softmax_lse, dq, dk, dv, cu_seqlens_q, cu_seqlens_k, alibi_slopes,
                    max_seqlen_q, max_seqlen_k, p_dropout, softmax_scale, zero_tensors, is_causal, window_size_left,
                    window_size_right, softcap, deterministic, gen=None, rng_state=None):
    _no_generator(gen)
    grads, delta = _gradients(dout, q, k, v, out, softmax_lse, dq, dk, dv, "tnd", cu_seqlens_q, cu_seqlens_k,
                              p_dropout, softmax_scale, is_causal, window_size_left, window_size_right, softcap,
                              alibi_slopes, rng_state)
    return grads[0], grads[1], grads[2], delta.T.contiguous()


def _ext_fwd_kvcache(q, kcache, vcache, k, v, seqlens_k, rotary_cos, rotary_sin, cache_batch_idx, leftpad_k,
                     block_table, alibi_slopes, out, softmax_scale, is_causal, window_size_left, window_size_right,
                     softcap, is_rotary_interleaved, num_splits):
    from .flash_attn_interface import flash_attn_with_kvcache
    res, lse = flash_attn_with_kvcache(q, kcache, vcache, k, v, rotary_cos, rotary_sin, seqlens_k, cache_batch_idx,
                                       leftpad_k, block_table, softmax_scale, is_causal,
                                       (window_size_left, window_size_right), softcap, is_rotary_interleaved,
                                       alibi_slopes, num_splits, return_softmax_lse=True)
    return _into(out, res), lse


def _into(out: Optional[Tensor], result: Tensor) -> Tensor:
    if out is None:
        return result
    out.copy_(result)
    return out


def _no_generator(gen) -> None:
    if gen is not None:
        raise NotImplementedError("flashc.flash_attn: a generator argument (dropout draws from torch's default "
                                  "generator)")


#: flash_attn's extension module (``flash_attn_2_cuda``, imported as ``flash_attn_gpu``), its
#: functions with flash_attn 2.7's positional signatures
flash_attn_gpu = types.SimpleNamespace(fwd=_ext_fwd, varlen_fwd=_ext_varlen_fwd, bwd=_ext_bwd,
                                       varlen_bwd=_ext_varlen_bwd, fwd_kvcache=_ext_fwd_kvcache)
