"""Operands read to their last byte and not one past it: each array here ends exactly where a
PROT_NONE guard page begins, so a read past its end stops the process (and AddressSanitizer, where
the extension is built with it, reports the same reads on ordinary heap arrays).

Runs under pytest, and standalone (``python test_bounds.py``) for the sanitizer build's ctest,
where the interpreter has no pytest.
"""
import ctypes
import mmap
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import flashc  # noqa: E402
import reference as ref  # noqa: E402
from cases import cu, pack, rand, unpack  # noqa: E402

_keep = []  # the mappings stay alive (and mapped) for the process
_mode = {"heap": False}


def guarded(a):
    """A copy of `a` whose last byte is the last byte before an inaccessible page (in heap mode, an
    ordinary heap copy: AddressSanitizer's redzones then guard it)."""
    if _mode["heap"]:
        return np.array(a, copy=True)
    a = np.ascontiguousarray(a)
    page = mmap.PAGESIZE
    size = max(page, -(-a.nbytes // page) * page)
    m = mmap.mmap(-1, size + page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mprotect(ctypes.c_void_p(base + size), ctypes.c_size_t(page), 0) != 0:
        raise OSError(ctypes.get_errno(), "mprotect")
    out = np.frombuffer(m, a.dtype, a.size, size - a.nbytes).reshape(a.shape)
    out[...] = a
    _keep.append(m)
    return out


def _packed_case(rng, B=3, N=2, D=8):
    lens_q = np.array([5, 3, 6])[:B]
    lens_kv = np.array([4, 6, 2])[:B]
    Sq, Skv = int(lens_q.max()), int(lens_kv.max())
    q, k, v = rand(rng, (B, N, Sq, D)), rand(rng, (B, N, Skv, D)), rand(rng, (B, N, Skv, D))
    return q, k, v, lens_q, lens_kv


def _packed_bias(rng, bias_batches):
    """Packed batches with a bias of `bias_batches` batches (1: broadcast), against the reference."""
    q, k, v, lens_q, lens_kv = _packed_case(rng)
    bias = guarded(rand(rng, (bias_batches, q.shape[1], q.shape[2], k.shape[2])))
    out = flashc.attention(pack(q, lens_q), pack(k, lens_kv), pack(v, lens_kv), layout="tnd",
                           cu_seqlens_q=cu(lens_q), cu_seqlens_k=cu(lens_kv), bias=bias)
    want, _, _ = ref.attention(q, k, v, q_lens=lens_q, kv_lens=lens_kv, bias=bias)
    np.testing.assert_allclose(unpack(out, lens_q, q), want, atol=1e-4)


def test_packed_bias_with_one_batch_broadcasts(rng=None):
    """A [1, N, Sq, Skv] bias with packed batches: broadcast over the batches as numpy would (it was
    read per batch from past its end)."""
    _packed_bias(rng or np.random.default_rng(16), 1)


def test_packed_bias_per_batch(rng=None):
    _packed_bias(rng or np.random.default_rng(17), 3)


def test_every_operand_at_a_page_end(rng=None):
    """Dense layout, every optional operand given, each ending at a guard page; forward and backward."""
    rng = rng or np.random.default_rng(18)
    B, N, Sq, Skv, D = 2, 2, 7, 9, 8
    q, k, v = (guarded(rand(rng, s)) for s in ((B, N, Sq, D), (B, N, Skv, D), (B, N, Skv, D)))
    kw = dict(mask=guarded(rng.random((1, N, Sq, Skv)) < 0.2), bias=guarded(rand(rng, (B, 1, Sq, Skv))),
              alibi_slopes=guarded(np.array([0.1, 0.2], np.float32)), sink=guarded(np.array([0.5, -0.5], np.float32)),
              prefix=guarded(np.array([2, 0])), causal=True)
    rkw = dict(kw, alibi=kw.pop("alibi_slopes"))
    kw["alibi_slopes"] = rkw["alibi"]
    out, lse = flashc.attention(q, k, v, return_lse=True, **kw)
    want, _, _ = ref.attention(q, k, v, **rkw)
    np.testing.assert_allclose(out, want, atol=1e-4)
    d_out = guarded(rand(rng, out.shape))
    dq, dk, dv, dsink = flashc.attention_backward(d_out, q, k, v, guarded(out), guarded(lse), **kw)
    _, _, wq, wk, wv, ws = ref.attention_grads(q, k, v, d_out, **rkw)
    for g, w in ((dq, wq), (dk, wk), (dv, wv), (dsink, ws)):
        np.testing.assert_allclose(g, w, atol=5e-4, rtol=5e-4)


def test_heap_copies(rng=None):
    """The same with ordinary heap arrays (what AddressSanitizer watches)."""
    _mode["heap"] = True
    try:
        for t in (test_packed_bias_with_one_batch_broadcasts, test_packed_bias_per_batch, test_every_operand_at_a_page_end):
            t()
    finally:
        _mode["heap"] = False


if __name__ == "__main__":
    tests = [f for name, f in sorted(globals().items()) if name.startswith("test_") and callable(f)]
    for t in tests:
        t()
        print(f"{t.__name__}: ok")
    print(f"test_bounds: {len(tests)} tests passed")
