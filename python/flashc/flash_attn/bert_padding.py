"""flash_attn.bert_padding: between padded batches (batch, seqlen, ...) and the packed tokens
(total, ...) with cu_seqlens that the varlen functions take.

    x_unpad, indices, cu_seqlens, max_seqlen, seqused = unpad_input(x, attention_mask)
    out = flash_attn_varlen_func(q_unpad, k_unpad, v_unpad, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen)
    out_padded = pad_input(out, indices, batch, seqlen)

As flash_attn 2.6 and later: unpad_input returns five values (flash_attn before 2.6 returned the
first four).  Every function is differentiable.  unpad_input reads the lengths' maximum on the host
(``.item()``), as flash_attn's does.
"""
from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor

__all__ = ["index_first_axis", "index_put_first_axis", "index_first_axis_residual", "unpad_input", "pad_input",
           "unpad_input_for_concatenated_sequences"]


def index_first_axis(x: Tensor, indices: Tensor) -> Tensor:
    """x[indices] along the first axis (x has at least two dimensions); the gradient scatters back."""
    if x.dim() < 2:
        raise ValueError(f"flashc.flash_attn.bert_padding: index_first_axis needs at least 2 dimensions, got {x.dim()}")
    return x.index_select(0, indices.long())


def index_put_first_axis(values: Tensor, indices: Tensor, first_axis_dim: int) -> Tensor:
    """A (first_axis_dim, ...) tensor of zeros with values placed at rows indices (the inverse of
    index_first_axis)."""
    if indices.dim() != 1 or values.dim() < 2:
        raise ValueError("flashc.flash_attn.bert_padding: index_put_first_axis takes 1-D indices and values of at "
                         "least 2 dimensions")
    out = values.new_zeros((first_axis_dim,) + tuple(values.shape[1:]))
    return out.index_copy(0, indices.long(), values)


class _IndexWithResidual(torch.autograd.Function):
    """(x[indices], x): the residual shares x's storage without being a view autograd tracks, and
    the gradients of both outputs flow back into x."""

    @staticmethod
    def forward(ctx, x, indices):
        ctx.save_for_backward(indices)
        return x[indices], x.detach()

    @staticmethod
    def backward(ctx, grad_rows, grad_residual):
        (indices,) = ctx.saved_tensors  # unused outputs' gradients arrive as zeros
        return grad_residual.clone().index_add_(0, indices, grad_rows), None


def index_first_axis_residual(x: Tensor, indices: Tensor) -> Tuple[Tensor, Tensor]:
    """(x[indices], x) for layers that keep the full input as a residual."""
    if x.dim() < 2:
        raise ValueError("flashc.flash_attn.bert_padding: index_first_axis_residual needs at least 2 dimensions")
    return _IndexWithResidual.apply(x, indices.long())


def unpad_input(hidden_states: Tensor, attention_mask: Tensor, unused_mask: Optional[Tensor] = None):
    """hidden_states (batch, seqlen, ...), attention_mask (batch, seqlen), nonzero = a real token
    (unused_mask: allocated tokens that are not used; they are packed too but not counted in
    seqused).  Returns (tokens (total, ...), indices (total,) into the flattened (batch·seqlen),
    cu_seqlens int32 (batch + 1), max_seqlen_in_batch (int), seqused int32 (batch,))."""
    used = attention_mask.bool()
    kept = used if unused_mask is None else used | unused_mask.bool()
    seqused = used.sum(-1, dtype=torch.int32)
    seqlens = kept.sum(-1, dtype=torch.int32)
    indices = torch.nonzero(kept.flatten(), as_tuple=False).flatten()
    cu_seqlens = torch.nn.functional.pad(torch.cumsum(seqlens, 0, dtype=torch.int32), (1, 0))
    max_seqlen = int(seqlens.max().item()) if seqlens.numel() else 0
    tokens = index_first_axis(hidden_states.reshape((-1,) + tuple(hidden_states.shape[2:])), indices)
    return tokens, indices, cu_seqlens, max_seqlen, seqused


def unpad_input_for_concatenated_sequences(hidden_states: Tensor, attention_mask_in_length: Tensor):
    """Several short sequences packed into each row: attention_mask_in_length (batch, seqlen) holds
    the lengths of row b's sequences in its first entries (zeros after), e.g. [2, 3, 0, 0, 0, 0].
    Every sequence becomes its own entry of cu_seqlens.  Returns (tokens, indices, cu_seqlens,
    max_seqlen_in_batch)."""
    lengths = attention_mask_in_length
    batch, seqlen = lengths.shape
    used = torch.arange(seqlen, device=lengths.device)[None, :] < lengths.sum(-1, keepdim=True)
    seqlens = lengths.flatten()[lengths.flatten() > 0].to(torch.int32)
    indices = torch.nonzero(used.flatten(), as_tuple=False).flatten()
    cu_seqlens = torch.nn.functional.pad(torch.cumsum(seqlens, 0, dtype=torch.int32), (1, 0))
    max_seqlen = int(seqlens.max().item()) if seqlens.numel() else 0
    tokens = index_first_axis(hidden_states.reshape((-1,) + tuple(hidden_states.shape[2:])), indices)
    return tokens, indices, cu_seqlens, max_seqlen


def pad_input(hidden_states: Tensor, indices: Tensor, batch: int, seqlen: int) -> Tensor:
    """tokens (total, ...) back to (batch, seqlen, ...), zeros where no token was (the inverse of
    unpad_input)."""
    flat = index_put_first_axis(hidden_states, indices, batch * seqlen)
    return flat.reshape((batch, seqlen) + tuple(hidden_states.shape[1:]))
