"""The public functions: attention, attention_backward, decode, sparse_attention and its backward."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

from . import _flashc
from ._describe import NOTHING_SEEN, Problem, integer
import numpy as np

from ._frameworks import as_array, as_optional, dtype_name, dtype_of, native, set_all, to_numpy

Array = Any  #: numpy.ndarray, torch.Tensor or any object with __dlpack__ / the buffer protocol
Window = Optional[Tuple[Optional[int], Optional[int]]]


def _empty_forward(p: Problem, out: Array, return_lse: bool):
    """No query row, or no key position (as torch's SDPA: empty outputs, or zeros: a row that sees
    nothing); the library itself needs both."""
    if not p.no_rows:
        set_all(out, 0, "out")
    lse = None
    if return_lse:
        raw, lse = p.lse_storage()
        if not p.no_rows:  # lse of a row that sees nothing, or only the sink: the sink's logit
            sink = np.zeros(p.q_heads, np.float32) + NOTHING_SEEN if p.sink is None else to_numpy(p.sink)
            for n, s in enumerate(sink.tolist()):
                if p.packed:
                    raw[:, n] = s
                else:
                    raw[:, n, :] = s
    out = p.fw.hand_back(out)
    return (out, p.fw.hand_back(lse)) if return_lse else out


def _zero_tail(p: Problem, x: Array, rows: int, name: str) -> None:
    """Packed: the rows of x past the batches' tokens (past cu_seqlens[-1]) belong to no batch; zeros."""
    if p.packed and rows < x.shape[0]:
        set_all(x, 0, name, start=rows)


def _forward(p: Problem, q: Array, out: Optional[Array], out_dtype: Any, out_scale: Any, out_offset: Any,
             return_lse: bool, threads: int):
    q = as_array(q, "q")
    dtype = dtype_name(out_dtype) if out_dtype is not None else dtype_of(q)
    out = p.fw.empty(p.out_shape(q), dtype) if out is None else as_array(out, "out")
    if p.no_rows or p.no_keys:
        return _empty_forward(p, out, return_lse)
    d = p.desc
    d["forward"] = True
    d["out"] = (native(out), p.axes)
    if out_scale is not None:
        d["out_quant"] = p.affine(out_scale, out_offset, "out_scale")
    lse, finish = None, lambda: None
    if return_lse:
        _, lse, finish = p.stats_storage(d)
    p.fw.launch(d)
    _flashc.forward(d, integer(threads, "threads", 0, 2**31 - 1))
    finish()
    _zero_tail(p, out, p.rows_q, "out")
    out = p.fw.hand_back(out)
    return (out, p.fw.hand_back(lse)) if return_lse else out


def attention(q: Array, k: Array, v: Array, *, layout: str = "bnsd", scale: Optional[float] = None,
              causal: bool = False, window: Union[Window, Sequence[Window]] = None, align: str = "bottom_right",
              cu_seqlens_q: Optional[Array] = None, cu_seqlens_k: Optional[Array] = None,
              q_lens: Optional[Array] = None, kv_lens: Optional[Array] = None, kv_starts: Optional[Array] = None,
              prefix: Optional[Array] = None, q_start: int = 0, kv_start: int = 0,
              mask: Optional[Array] = None, mask_by_tokens: Optional[bool] = None,
              bias: Optional[Array] = None, bias_order: str = "after_scale", bias_align: str = "top_left",
              bias_compressed: bool = False, alibi_slopes: Optional[Array] = None, alibi_sqrt: bool = False,
              alibi_align: str = "top_left", softcap: float = 0.0, sink: Optional[Array] = None, dropout_p: float = 0.0,
              dropout_seed: int = 0, dropout_offset: int = 0, dropout_mask: Optional[Array] = None,
              keep_prob: float = 1.0, q_rope: Optional[Array] = None, k_rope: Optional[Array] = None,
              out: Optional[Array] = None, out_dtype: Any = None, return_lse: bool = False,
              threads: int = 0) -> Union[Array, Tuple[Array, Array]]:
    """Attention forward: ``softmax(softcap(scale·q·kᵀ) + bias − alibi, visible) · v``.

    Arrays are read in place (numpy, torch, anything with ``__dlpack__`` or the buffer protocol, such
    as a memoryview; any strides); the output is created in q's framework (numpy for buffer-protocol
    objects), or written into ``out``.  Operands broadcast as numpy's do (every extent equal to the
    problem's or 1).  An empty problem (batch 0, no query rows) gives empty outputs, and no key
    positions gives zeros (rows that see nothing), as torch's SDPA does.

    Args:
        q, k, v: ``layout`` arrays — ``"bnsd"`` [B, N, S, D], ``"bsnd"`` [B, S, N, D], ``"sbnd"``
            [S, B, N, D] or ``"tnd"`` [T, N, D] (packed batches, with ``cu_seqlens_q/k``).  k and v
            may have fewer heads (GQA/MQA: query head n uses kv head n // (Nq/Nkv)); v's feature size
            may differ from q's.  float32, float16 or bfloat16 (q, k and v may differ; the
            flash_attn and sdpa wrappers require one dtype, as their originals do).
        scale: score scale, positive and within float32's range; default 1/sqrt(D + rope features).
        causal: hide columns right of the diagonal (combined with ``window``).
        window: ``(left, right)`` band around the diagonal, None for an unbounded side; or one such
            pair (or None) per batch.
        align: where the diagonal sits when Sq != Skv: ``"bottom_right"`` (the last row sees the last
            column, FlashAttention 2.1+) or ``"top_left"``.
        cu_seqlens_q, cu_seqlens_k: cumulative lengths [B + 1] for the packed layout (integers).
        q_lens, kv_lens: per-batch lengths of padded batches; rows past a batch's length are
            written as zeros.
        kv_starts: per batch, columns before it are hidden (left padding).
        prefix: per batch, columns j < prefix[b] are always visible.
        q_start, kv_start: global position of row 0 / column 0 (context parallelism, ALiBi).
        mask: boolean (or uint8/int8) array broadcastable to [B, N, Sq, Skv]; nonzero = hidden.
            With the packed layout a 2-D mask is read per token ([Tq, Tkv], each batch its diagonal
            block) unless ``mask_by_tokens=False``.
        bias: additive float bias broadcastable to [B, N, rows, cols]; ``bias_order`` "after_scale"
            (x = s·scale + bias) or "before_scale" (x = (s + bias)·scale); ``bias_align``
            "bottom_right" aligns a larger bias block to the bottom-right; ``bias_compressed``: the
            CANN compressed-ALiBi form (semantics §2.4).
        alibi_slopes: float32 [N] or [B, N]: x −= slope·|Δ| (``alibi_sqrt``: ·sqrt|Δ|), Δ = j − i between
            global positions (``q_start``, ``kv_start``); ``alibi_align="bottom_right"`` measures Δ
            from the bottom-right diagonal, less Skv_b − Sq_b per batch (flash_attn's ALiBi).
        softcap: > 0 caps scaled scores to softcap·tanh(x / softcap).
        sink: float32 [N]: an extra logit in every row's softmax (attention sinks).
        dropout_p, dropout_seed, dropout_offset: dropout of the probabilities with keep bits generated
            by the library (Philox-4x32-10 over (seed, offset): the same mask for any thread count; pass
            the same three to :func:`attention_backward`).  Element e of [B, N, Sq, Skv] (per batch its
            real lengths) is kept iff word e % 4 of Philox(counter offset + e // 4, key seed) <
            (1 − dropout_p)·2^32.
        dropout_mask, keep_prob: or caller-supplied keep bits (uint8, bit e of byte e // 8, LSB first, over
            [B, N, Sq, Skv]) and the keep probability; kept probabilities are scaled by 1/keep_prob.
        q_rope, k_rope: extra rope features: q·k += q_rope·k_rope.
        out: output array to write (any strides); out_dtype: dtype of a created output.
        return_lse: also return the log-sum-exp of each row, float32 [B, N, Sq] ([N, T] packed).
        threads: CPU threads (0: OpenMP's default); results are identical for every count.

    Returns:
        ``out`` ([..., Dv] in q's layout), or ``(out, lse)``.

    Raises:
        TypeError: an argument that is no array (None, a list, ...) or an option of the wrong type;
            the message names it.
        ValueError: a shape, dtype, stride or option value flashc refuses (its message).
        NotImplementedError: arrays on a device flashc has no backend for (CUDA arrays where the build
            has no CUDA backend, ``build_info()``).  CUDA arrays run on the CUDA backend on torch's
            current stream; every operand of a call must live on the same device (ValueError).
        RuntimeError: FLASHC_ISA names a kernel path this build lacks or this CPU cannot run.
    """
    p = Problem(q, k, v, layout=layout, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k, q_lens=q_lens,
                kv_lens=kv_lens, kv_starts=kv_starts, scale=scale, causal=causal, window=window, align=align,
                prefix=prefix, q_start=q_start, kv_start=kv_start, mask=mask, mask_by_tokens=mask_by_tokens,
                bias=bias, bias_order=bias_order, bias_align=bias_align, bias_compressed=bias_compressed,
                alibi_slopes=alibi_slopes, alibi_sqrt=alibi_sqrt, alibi_align=alibi_align, softcap=softcap, sink=sink,
                dropout_mask=dropout_mask, keep_prob=keep_prob, dropout_p=dropout_p, dropout_seed=dropout_seed,
                dropout_offset=dropout_offset, q_rope=q_rope, k_rope=k_rope)
    return _forward(p, q, out, out_dtype, None, None, return_lse, threads)


def attention_backward(d_out: Array, q: Array, k: Array, v: Array, out: Array, lse: Array, *,
                       dq: Optional[Array] = None, dk: Optional[Array] = None, dv: Optional[Array] = None,
                       grad_dtype: Any = None, threads: int = 0, **options: Any) -> Tuple[Array, ...]:
    """Gradients of :func:`attention`.

    Takes the forward's inputs, its output ``out`` and ``lse`` (``return_lse=True``) and the same
    keyword options (layout, scale, causal, window, masks, bias, ALiBi, softcap, sink, dropout,
    rope, ...).  Deterministic: bit-identical for every thread count.

    Returns:
        ``(dq, dk, dv)``; with rope features ``(dq, dk, dv, dq_rope, dk_rope)``; with a sink the
        float32 ``dsink`` [N] is appended.  Key/value gradients are summed over the query heads that
        share a kv head.  Gradients have q's dtype unless ``grad_dtype`` is given.
    """
    p = Problem(q, k, v, **options)
    return _backward(p, d_out, q, k, v, out, lse, dq, dk, dv, grad_dtype, threads, options)


def _backward(p: Problem, d_out, q, k, v, out, lse, dq, dk, dv, grad_dtype, threads, options):
    q, k, v = as_array(q, "q"), as_array(k, "k"), as_array(v, "v")
    d_out, out, lse = as_array(d_out, "d_out"), as_array(out, "out"), as_array(lse, "lse")
    dtype = dtype_name(grad_dtype) if grad_dtype is not None else dtype_of(q)
    dq = p.fw.empty(tuple(q.shape), dtype) if dq is None else as_array(dq, "dq")
    dk = p.fw.empty(tuple(k.shape), dtype) if dk is None else as_array(dk, "dk")
    dv = p.fw.empty(tuple(v.shape), dtype) if dv is None else as_array(dv, "dv")
    d = p.desc
    result = [dq, dk, dv]
    if "q_rope" in d:
        q_rope, k_rope = as_array(options["q_rope"], "q_rope"), as_array(options["k_rope"], "k_rope")
        result += [p.fw.empty(tuple(q_rope.shape), dtype), p.fw.empty(tuple(k_rope.shape), dtype)]
    if "sink" in d:
        result.append(p.fw.empty((p.q_heads,), "float32"))
    if p.no_rows or p.no_keys:  # nothing reaches any gradient
        for name, x in zip(("dq", "dk", "dv", "dq_rope", "dk_rope", "dsink"), result):
            set_all(x, 0, name)
        return tuple(p.fw.hand_back(x) for x in result)
    d["out"] = (native(out), p.axes)
    d["lse"] = p.lse_input(lse)
    p.lse_input_sum(d)
    p.fw.launch(d)
    g = {"d_out": (native(d_out), p.axes), "dq": (native(dq), p.axes), "dk": (native(dk), p.kv_axes),
         "dv": (native(dv), p.kv_axes)}
    if "q_rope" in d:
        g["dq_rope"], g["dk_rope"] = (native(result[3]), p.axes), (native(result[4]), p.kv_axes)
    if "sink" in d:
        g["dsink"] = native(result[-1])
    _flashc.backward(d, g, integer(threads, "threads", 0, 2**31 - 1))
    _zero_tail(p, dq, p.rows_q, "dq"), _zero_tail(p, dk, p.rows_kv, "dk"), _zero_tail(p, dv, p.rows_kv, "dv")
    if "q_rope" in d:
        _zero_tail(p, result[3], p.rows_q, "dq_rope"), _zero_tail(p, result[4], p.rows_kv, "dk_rope")
    return tuple(p.fw.hand_back(x) for x in result)


def decode(q: Array, k_cache: Array, v_cache: Array, *, cache_seqlens: Optional[Array] = None,
           block_table: Optional[Array] = None, layout: str = "bsnd", kv_starts: Optional[Array] = None,
           k_scale: Optional[Array] = None, k_offset: Optional[Array] = None, v_scale: Optional[Array] = None,
           v_offset: Optional[Array] = None, out_scale: Optional[Array] = None, out_offset: Optional[Array] = None,
           out_dtype: Any = None, out: Optional[Array] = None, return_lse: bool = False, threads: int = 0,
           **options: Any) -> Union[Array, Tuple[Array, Array]]:
    """Attention of a few new query rows over a KV cache (incremental decoding).

    Args:
        q: [B, Sq, N, D] (``layout="bsnd"``) or [B, N, Sq, D] (``"bnsd"``), Sq small (1 for decode).
        k_cache, v_cache: dense [B, S_cache, Nkv, D] in ``layout``, or, with ``block_table``, pages
            [num_blocks, block_size, Nkv, D] (``"bnsd"``: [num_blocks, Nkv, block_size, D]).
            float32/float16/bfloat16, or int8 with ``k_scale``/``v_scale`` (and optional offsets):
            x → (x + offset)·scale per (kv head, feature), arrays broadcastable to [Nkv, D].
        cache_seqlens: int [B], the valid cache length of each batch (default: all of it).
        block_table: int32 [B, max_blocks]: position s of batch b is in block
            block_table[b, s // block_size], slot s % block_size.
        kv_starts: per batch, cache positions before it are hidden (left padding).
        out_scale, out_offset: quantise the output to int8 (``out_dtype="int8"``):
            y = saturate(round(x·scale + offset)) per (head, feature).
        **options: every keyword of :func:`attention` (scale, causal, window, align, mask, bias,
            alibi_slopes, softcap, sink, q_rope/k_rope, ...).

    Returns:
        ``out`` (q's layout, or int8), or ``(out, lse)``.
    """
    if out_scale is not None and out_dtype is None:
        out_dtype = "int8"
    p = Problem(q, k_cache, v_cache, layout=layout, kv_lens=cache_seqlens, block_table=block_table,
                kv_starts=kv_starts, k_scale=k_scale, k_offset=k_offset, v_scale=v_scale, v_offset=v_offset,
                **options)
    return _forward(p, q, out, out_dtype, out_scale, out_offset, return_lse, threads)


def sparse_attention(q: Array, k: Array, v: Array, indices: Array, *, block_size: int, causal: bool = False,
                     layout: str = "bsnd", cu_seqlens_q: Optional[Array] = None,
                     cu_seqlens_k: Optional[Array] = None, scale: Optional[float] = None,
                     q_rope: Optional[Array] = None, k_rope: Optional[Array] = None, out: Optional[Array] = None,
                     out_dtype: Any = None, return_lse: bool = False,
                     threads: int = 0) -> Union[Array, Tuple[Array, Array]]:
    """Top-k block-sparse attention (DeepSeek-style): each query row sees only the kv blocks listed
    for it.

    Args:
        indices: int32/int64 [B, Sq, Nkv, count] ([T, Nkv, count] packed): block numbers (units of
            ``block_size``) per query row and kv head; a row's list ends at its first negative
            entry; a block listed twice counts twice.
        causal: drop positions after the row's bottom-right diagonal.
        Other arguments as in :func:`attention`.
    """
    p = Problem(q, k, v, layout=layout, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k, scale=scale,
                q_rope=q_rope, k_rope=k_rope, indices=indices, block_size=block_size, sparse_causal=causal)
    return _forward(p, q, out, out_dtype, None, None, return_lse, threads)


def sparse_attention_backward(d_out: Array, q: Array, k: Array, v: Array, out: Array, lse: Array,
                              indices: Array, *, block_size: int, causal: bool = False, layout: str = "bsnd",
                              cu_seqlens_q: Optional[Array] = None, cu_seqlens_k: Optional[Array] = None,
                              scale: Optional[float] = None, q_rope: Optional[Array] = None,
                              k_rope: Optional[Array] = None, grad_dtype: Any = None,
                              threads: int = 0) -> Tuple[Array, ...]:
    """Gradients of :func:`sparse_attention`: ``(dq, dk, dv)`` (with rope ``(.., dq_rope, dk_rope)``)."""
    options = dict(layout=layout, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k, scale=scale,
                   q_rope=q_rope, k_rope=k_rope)
    p = Problem(q, k, v, indices=indices, block_size=block_size, sparse_causal=causal, **options)
    return _backward(p, d_out, q, k, v, out, lse, None, None, None, grad_dtype, threads, options)
