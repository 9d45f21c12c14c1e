"""Python arguments → the dict that flashc._flashc turns into an fc_attention_desc.

One builder serves attention, decode and sparse attention, forward and backward, so the rules for
layouts, lengths, visibility and score modifiers live once.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ._frameworks import Foreign, Framework, as_array, as_optional, dtype_of, host_int64, native

#: lse of a row that sees nothing (what the library writes there)
NOTHING_SEEN = float(np.finfo(np.float32).min)

UNBOUNDED = 2**63 - 1
#: axes of (batch, head, position, feature) in each layout's array; -1: absent (packed batches)
LAYOUTS = {"bnsd": (0, 1, 2, 3), "bsnd": (0, 2, 1, 3), "sbnd": (1, 2, 0, 3), "tnd": (-1, 1, 0, 2)}
ALIGN = {"top_left": 0, "bottom_right": 1}
BIAS_ORDER = {"after_scale": 0, "before_scale": 1}
STATS_HEAD_MAJOR, STATS_TOKEN_MAJOR = 0, 1
FLOATS = ("float32", "float16", "bfloat16")
FLOAT32_MAX = float(np.finfo(np.float32).max)


def _layout(layout: str) -> tuple:
    if not isinstance(layout, str) or layout.lower() not in LAYOUTS:
        raise ValueError(f"flashc: layout must be one of {sorted(LAYOUTS)}, got {layout!r:.60}")
    return LAYOUTS[layout.lower()]


def _check_ndim(x: Any, ndim: int, name: str, what: str) -> None:
    if len(x.shape) != ndim:
        raise ValueError(f"flashc: {name} must be {what}, got shape {tuple(x.shape)}")


def _check_float(x: Any, name: str, int8_ok: bool = False) -> None:
    dt = dtype_of(x)
    if dt in FLOATS or (int8_ok and dt == "int8"):
        return
    hint = " (convert it: .astype(np.float32) / .float())" if dt == "float64" else ""
    also = ", or int8 with a dequantisation scale" if int8_ok else ""
    raise ValueError(f"flashc: {name} must be float32, float16 or bfloat16{also}, got {dt}{hint}")


def _check_broadcast(x: Any, name: str, target: tuple, what: str) -> None:
    """numpy's rule: aligned from the last axis, every extent equals the target's or is 1."""
    shape = tuple(x.shape)
    ok = len(shape) <= len(target) and all(e == t or e == 1 for e, t in zip(shape[::-1], target[::-1]))
    if not ok:
        raise ValueError(f"flashc: {name} of shape {shape} does not broadcast to {what} {tuple(target)}")


def integer(x: Any, name: str, lo: int = -2**63, hi: int = 2**63 - 1) -> int:
    """An integer option (Python or numpy int) within [lo, hi]; TypeError / ValueError naming it."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"flashc: {name} must be an integer, got {type(x).__name__} {x!r:.40}")
    if not lo <= int(x) <= hi:
        raise ValueError(f"flashc: {name} must be in [{lo}, {hi}], got {x}")
    return int(x)


def real(x: Any, name: str) -> float:
    """A float option (any real number; the callers check its range)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"flashc: {name} must be a number, got {type(x).__name__} {x!r:.40}")
    return float(x)


def _bound(x: Optional[int]) -> int:
    return UNBOUNDED if x is None else integer(x, "window", -UNBOUNDED, UNBOUNDED)


def _window(causal: bool, window: Any, align: str) -> tuple:
    """(left, right) with None = unbounded, combined with causal; None when every column is visible."""
    if window is None and not causal:
        return None
    if window is not None and (not isinstance(window, (list, tuple)) or len(window) != 2):
        raise TypeError(f"flashc: window must be (left, right) with None for an unbounded side, or one such pair "
                        f"(or None) per batch; got {window!r:.60}")
    left, right = (None, None) if window is None else window
    left, right = _bound(left), _bound(right)
    if causal:
        right = min(right, 0)
    return (left, right, ALIGN[align])


def _broadcast_axes(x: Any, name: str, ndim_max: int) -> tuple:
    """Axes for an operand broadcast numpy-style against ndim_max logical axes (missing leading
    axes are absent)."""
    nd = len(x.shape)
    if nd < 1 or nd > ndim_max:
        raise ValueError(f"flashc: {name} must have 1 to {ndim_max} dimensions, got shape {tuple(x.shape)}")
    return tuple([-1] * (ndim_max - nd) + list(range(nd)))


class Problem:
    """Sizes and the description dict of one attention problem."""

    def __init__(self, q: Any, k: Any, v: Any, *, layout: str = "bnsd", kv_layout: Optional[str] = None,
                 cu_seqlens_q: Any = None, cu_seqlens_k: Any = None, q_lens: Any = None, kv_lens: Any = None,
                 kv_starts: Any = None, block_table: Any = None, scale: Optional[float] = None,
                 causal: bool = False, window: Any = None, align: str = "bottom_right", prefix: Any = None,
                 q_start: int = 0, kv_start: int = 0, mask: Any = None, mask_by_tokens: Optional[bool] = None,
                 bias: Any = None, bias_order: str = "after_scale", bias_align: str = "top_left",
                 bias_compressed: bool = False, alibi_slopes: Any = None, alibi_sqrt: bool = False,
                 alibi_align: str = "top_left", softcap: float = 0.0, sink: Any = None, dropout_mask: Any = None, keep_prob: float = 1.0,
                 dropout_p: float = 0.0, dropout_seed: int = 0, dropout_offset: int = 0, q_rope: Any = None, k_rope: Any = None, k_scale: Any = None, k_offset: Any = None,
                 v_scale: Any = None, v_offset: Any = None, indices: Any = None, block_size: int = 0,
                 sparse_causal: bool = False):
        self.fw = Framework(q)  # the caller's framework (before device arrays are read through torch)
        q, k, v = as_array(q, "q"), as_array(k, "k"), as_array(v, "v")
        mask, bias, sink = as_optional(mask, "mask"), as_optional(bias, "bias"), as_optional(sink, "sink")
        alibi_slopes, dropout_mask = as_optional(alibi_slopes, "alibi_slopes"), as_optional(dropout_mask, "dropout_mask")
        q_rope, k_rope = as_optional(q_rope, "q_rope"), as_optional(k_rope, "k_rope")
        k_scale, k_offset = as_optional(k_scale, "k_scale"), as_optional(k_offset, "k_offset")
        v_scale, v_offset = as_optional(v_scale, "v_scale"), as_optional(v_offset, "v_offset")
        indices, block_table = as_optional(indices, "indices"), as_optional(block_table, "block_table")
        self.layout = layout.lower() if isinstance(layout, str) else layout
        axes = _layout(layout)
        kv_axes = _layout(kv_layout or layout)
        self.packed = axes[0] < 0
        nd = 3 if self.packed else 4
        shape = "[T, N, D]" if self.packed else f"a {nd}-D {layout.upper()} array"
        _check_ndim(q, nd, "q", shape)
        for name, x in (("k", k), ("v", v)):
            _check_ndim(x, 3 if kv_axes[0] < 0 else 4, name, "laid out like q")
        _check_float(q, "q")
        _check_float(k, "k", int8_ok=k_scale is not None)
        _check_float(v, "v", int8_ok=v_scale is not None)
        self.axes, self.kv_axes = axes, kv_axes
        qs, ks, vs = tuple(q.shape), tuple(k.shape), tuple(v.shape)
        self.q_heads, self.head_dim = qs[axes[1]], qs[axes[3]]
        self.kv_heads, self.v_head_dim = ks[kv_axes[1]], vs[kv_axes[3]]
        if ks[kv_axes[3]] != self.head_dim:
            raise ValueError(f"flashc: k has head_dim {ks[kv_axes[3]]}, q has {self.head_dim}")
        if vs[kv_axes[1]] != self.kv_heads or vs[kv_axes[2]] != ks[kv_axes[2]]:
            raise ValueError(f"flashc: v has shape {vs}, which does not match k's {ks}")
        if self.kv_heads == 0 or self.q_heads % self.kv_heads:
            raise ValueError(f"flashc: q has {self.q_heads} heads, not a multiple of k's {self.kv_heads}")
        d = {"q_heads": self.q_heads, "kv_heads": self.kv_heads, "head_dim": self.head_dim,
             "v_head_dim": self.v_head_dim, "packed": self.packed, "q_start": integer(q_start, "q_start"),
             "kv_start": integer(kv_start, "kv_start")}
        if self.packed:
            if cu_seqlens_q is None or cu_seqlens_k is None:
                raise ValueError("flashc: the packed (tnd) layout needs cu_seqlens_q and cu_seqlens_k")
            cq, ck = host_int64(cu_seqlens_q, "cu_seqlens_q"), host_int64(cu_seqlens_k, "cu_seqlens_k")
            if len(cq) != len(ck) or len(cq) < 1:
                raise ValueError("flashc: cu_seqlens_q and cu_seqlens_k must have batch + 1 entries each")
            for name, c, total in (("cu_seqlens_q", cq, qs[0]), ("cu_seqlens_k", ck, ks[0])):
                if c[0] != 0 or np.any(np.diff(c) < 0) or c[-1] > total:
                    raise ValueError(f"flashc: {name} must start at 0, never decrease and end at most at "
                                     f"{total} (the packed length), got {c.tolist()}")
            self.batch = len(cq) - 1
            q_lens, kv_lens = np.diff(cq), np.diff(ck)
            self.q_len, self.kv_len = int(q_lens.max(initial=0)), int(kv_lens.max(initial=0))
            self.rows_q, self.rows_kv = int(cq[-1]), int(ck[-1])
            self.total_q, self.total_kv = int(qs[0]), int(ks[0])  # rows past cu_seqlens[-1] belong to no batch
        else:
            self.batch = qs[axes[0]]
            self.q_len = qs[axes[2]]
            if block_table is None:
                if ks[kv_axes[0]] != self.batch:
                    raise ValueError(f"flashc: k has batch {ks[kv_axes[0]]}, q has {self.batch}")
                self.kv_len = ks[kv_axes[2]]
            self.rows_q = self.q_len
        d["batch"] = self.batch
        self._keep = []  # host metadata the dict points into
        if block_table is not None:
            bt = native(block_table)
            bs = ks[kv_axes[2]]
            self.kv_len = int(block_table.shape[1]) * bs if len(block_table.shape) == 2 else 0
            d["block_table"] = (bt, bs, ks[kv_axes[0]])
        d["q_len"], d["kv_len"] = self.q_len, self.kv_len
        if not self.packed:
            self.rows_kv = self.kv_len
        for key, lens in (("q_lens", q_lens), ("kv_lens", kv_lens), ("kv_starts", kv_starts), ("prefix", prefix)):
            if lens is not None:
                a = host_int64(lens, key)
                if len(a) != self.batch:
                    raise ValueError(f"flashc: {key} must have {self.batch} entries (one per batch), got {len(a)}")
                d[key] = a
        if scale is not None:
            scale = real(scale, "scale")
            if not 0 < scale <= FLOAT32_MAX:  # the scores are float32: a larger scale would be inf
                raise ValueError(f"flashc: scale must be positive and finite in float32 (at most {FLOAT32_MAX:.7g}), "
                                 f"got {scale}")
            d["scale"] = float(scale)
        softcap = real(softcap, "softcap")
        if not 0 <= softcap <= FLOAT32_MAX:
            raise ValueError(f"flashc: softcap must be finite and >= 0 (0 = off), got {softcap}")
        d["softcap"] = softcap
        d["q"], d["k"], d["v"] = (native(q), axes), (native(k), kv_axes), (native(v), kv_axes)
        if q_rope is not None or k_rope is not None:
            if q_rope is None or k_rope is None:
                raise ValueError("flashc: q_rope and k_rope go together")
            d["rope_dim"] = q_rope.shape[-1]
            d["q_rope"], d["k_rope"] = (native(q_rope), axes), (native(k_rope), kv_axes)
        self._visibility(d, causal, window, align, mask, mask_by_tokens)
        self._modifiers(d, bias, bias_order, bias_align, bias_compressed, alibi_slopes, alibi_sqrt, alibi_align,
                        sink, dropout_mask, keep_prob)
        dropout_p = real(dropout_p, "dropout_p")
        if dropout_p:
            if dropout_mask is not None or not 0 <= dropout_p < 1:
                raise ValueError(f"flashc: dropout_p must be in [0, 1) and not combined with dropout_mask, "
                                 f"got {dropout_p}")
            d["dropout"] = (None, 1.0 - dropout_p, integer(dropout_seed, "dropout_seed", -2**64, 2**64) % 2**64,
                            integer(dropout_offset, "dropout_offset", -2**64, 2**64) % 2**64)
        for key, sc, off, heads in (("k_dequant", k_scale, k_offset, self.kv_heads),
                                    ("v_dequant", v_scale, v_offset, self.kv_heads)):
            if sc is not None:
                d[key] = self.affine(sc, off, key)
            elif off is not None:
                raise ValueError(f"flashc: {key} offset given without a scale")
        if indices is not None:
            ind_axes = (-1, 0, 1, 2) if self.packed else (0, 1, 2, 3)
            _check_ndim(indices, 3 if self.packed else 4, "indices",
                        "[T, kv_heads, count]" if self.packed else "[B, Sq, kv_heads, count]")
            d["sparse"] = (native(indices), ind_axes, integer(block_size, "block_size"), bool(sparse_causal))
        self.desc = d

    @property
    def no_rows(self) -> bool:
        """No query row at all (batch 0, no heads or no positions): the outputs are empty."""
        return self.batch == 0 or self.q_heads == 0 or self.rows_q == 0

    @property
    def no_keys(self) -> bool:
        """No key position (kv length 0): every row sees nothing (out 0, as for a fully hidden row)."""
        return self.kv_len == 0

    # -- pieces ---------------------------------------------------------------------------------

    def _visibility(self, d: dict, causal: bool, window: Any, align: str, mask: Any,
                    mask_by_tokens: Optional[bool]) -> None:
        if not isinstance(align, str) or align not in ALIGN:
            raise ValueError(f"flashc: align must be 'top_left' or 'bottom_right', got {align!r:.60}")
        # one (left, right) pair, or per batch a pair or None ((None, None) reads the same either way)
        per_batch = isinstance(window, (list, tuple)) and any(isinstance(w, (list, tuple)) for w in window) and all(
            w is None or isinstance(w, (list, tuple)) for w in window)
        if per_batch:
            if len(window) != self.batch:
                raise ValueError(f"flashc: per-batch windows need {self.batch} entries, got {len(window)}")
            entries = []
            for w in window:
                t = _window(causal, w, align)
                entries.append((False, 0, 0, 0) if t is None else (True,) + t)
            d["batch_window"] = entries
        else:
            t = _window(causal, window, align)
            if t is not None:
                d["window"] = t
        if mask is not None:
            by_tokens = self.packed and len(mask.shape) == 2 if mask_by_tokens is None else bool(mask_by_tokens)
            if by_tokens:
                _check_broadcast(mask, "mask", (mask.shape[0] if len(mask.shape) == 4 else 1, self.q_heads,
                                                self.rows_q, self.rows_kv), "[1, N, Tq, Tkv] =")
            else:
                _check_broadcast(mask, "mask", (self.batch, self.q_heads, self.q_len, self.kv_len), "[B, N, Sq, Skv] =")
            d["mask"] = (native(mask), _broadcast_axes(mask, "mask", 4), by_tokens)

    def _modifiers(self, d: dict, bias: Any, bias_order: str, bias_align: str, bias_compressed: bool,
                   alibi_slopes: Any, alibi_sqrt: bool, alibi_align: str, sink: Any, dropout_mask: Any,
                   keep_prob: float) -> None:
        if bias is not None:
            if not isinstance(bias_order, str) or not isinstance(bias_align, str) or bias_order not in BIAS_ORDER or \
                    bias_align not in ALIGN:
                raise ValueError("flashc: bias_order must be 'after_scale' or 'before_scale' and bias_align "
                                 "'top_left' or 'bottom_right'")
            if len(bias.shape) < 2:
                raise ValueError(f"flashc: bias must have at least 2 dimensions (rows, cols), got {tuple(bias.shape)}")
            _check_float(bias, "bias")
            flags = (1 if bias_align == "bottom_right" else 0) | (2 if bias_compressed else 0)
            rows = bias.shape[-2] if bias.shape[-2] != 1 else self.q_len  # one row broadcast to all
            cols = bias.shape[-1] if bias.shape[-1] != 1 else self.kv_len
            # batch and head extents broadcast as numpy's do; rows and cols may exceed the problem's
            # (the block is placed by bias_align), so they are checked by the library
            _check_broadcast(bias, "bias", (self.batch, self.q_heads, bias.shape[-2], bias.shape[-1]),
                             "[B, N, rows, cols] =")
            d["bias"] = (native(bias), _broadcast_axes(bias, "bias", 4), BIAS_ORDER[bias_order], rows, cols, flags)
        if alibi_slopes is not None:
            _check_broadcast(alibi_slopes, "alibi_slopes", (self.batch, self.q_heads), "[B, N] =")
            if not isinstance(alibi_align, str) or alibi_align not in ALIGN:
                raise ValueError(f"flashc: alibi_align must be 'top_left' or 'bottom_right', got {alibi_align!r:.60}")
            d["alibi"] = (native(alibi_slopes), _broadcast_axes(alibi_slopes, "alibi_slopes", 2), bool(alibi_sqrt),
                          ALIGN[alibi_align])
        self.sink = sink
        if sink is not None:
            if tuple(sink.shape) != (self.q_heads,):
                raise ValueError(f"flashc: sink must have shape ({self.q_heads},) (one logit per query head), "
                                 f"got {tuple(sink.shape)}")
            d["sink"] = native(sink)
        if dropout_mask is not None:
            keep_prob = real(keep_prob, "keep_prob")
            if not 0 < keep_prob <= 1:
                raise ValueError(f"flashc: keep_prob must be in (0, 1], got {keep_prob}")
            d["dropout"] = (native(dropout_mask), keep_prob, 0, 0)

    def affine(self, scale: Any, offset: Any, name: str) -> tuple:
        scale, offset = as_array(scale, name), as_optional(offset, name + " offset")
        axes = _broadcast_axes(scale, name, 2)
        return (native(scale), None if offset is None else native(offset), axes)

    # -- outputs --------------------------------------------------------------------------------

    def out_shape(self, q: Any) -> tuple:
        return tuple(q.shape[:-1]) + (self.v_head_dim,)

    def stats_storage(self, d: dict) -> tuple:
        """lse for the forward to fill: (raw array, the view returned, finish).  On the host the
        extension combines max + log(sum) itself; a device problem gets a sum array too, and
        finish() combines them on the device (torch, the current stream)."""
        raw, lse = self.lse_storage()
        filled = raw[:self.rows_q] if self.packed else raw  # packed: the batches' tokens; the rest see nothing
        d["lse"] = (native(filled.reshape(-1)), STATS_TOKEN_MAJOR if self.packed else STATS_HEAD_MAJOR)
        if self.fw.device is None:
            return raw, lse, lambda: None
        total = self.fw.empty(tuple(filled.shape), "float32")
        d["lse_sum"] = native(total.reshape(-1))
        return raw, lse, lambda: filled.add_(total.log_())

    def lse_storage(self) -> tuple:
        """(array the kernels fill, the lse view returned): [B, N, Sq] dense, [N, T] packed (T the
        packed length; tokens past cu_seqlens_q[-1] belong to no batch and hold NOTHING_SEEN)."""
        if self.packed:
            if self.total_q > self.rows_q:
                raw = self.fw.full((self.total_q, self.q_heads), "float32", NOTHING_SEEN)
            else:
                raw = self.fw.empty((self.rows_q, self.q_heads), "float32")
            return raw, raw.T
        raw = self.fw.empty((self.batch, self.q_heads, self.q_len), "float32")
        return raw, raw

    def lse_input(self, lse: Any) -> tuple:
        """A given lse ([B, N, Sq] or [N, T]) as the flat vector the extension reads."""
        lse = as_array(lse, "lse")
        lse = lse.numpy() if isinstance(lse, Foreign) else lse
        want = (self.q_heads, self.rows_q) if self.packed else (self.batch, self.q_heads, self.q_len)
        if self.packed and tuple(lse.shape) == (self.q_heads, self.total_q):  # the forward's [N, T]
            lse = lse[:, :self.rows_q]
        if tuple(lse.shape) != want:
            if self.packed and self.total_q != self.rows_q:
                want = f"{want} or {(self.q_heads, self.total_q)}"
            raise ValueError(f"flashc: lse must have shape {want}, got {tuple(lse.shape)}")
        if dtype_of(lse) != "float32":
            raise ValueError("flashc: lse must be float32")
        flat = (lse.T if self.packed else lse).reshape(-1)
        return (native(flat), STATS_TOKEN_MAJOR if self.packed else STATS_HEAD_MAJOR)

    def lse_input_sum(self, d: dict) -> None:
        """A device backward reads the statistics as (max = lse, sum = 1), both device arrays."""
        if self.fw.device is not None:
            d["lse_sum"] = native(self.fw.torch.ones(self.rows_q * self.q_heads if self.packed else
                                                     self.batch * self.q_heads * self.q_len,
                                                     dtype=self.fw.torch.float32, device=self.fw.device))
