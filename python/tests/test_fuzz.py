"""A seeded fuzz / property test of the Python face.

Each case draws a valid problem (test_attention.draw), then, most of the time, breaks one thing
about it: an argument replaced by None, a list, a scalar or an unrelated object; a dtype flashc does
not read; an extent one off, a dimension too many or too few, an empty one; a scale, softcap,
window, dropout or position out of range; lengths and cu_seqlens that are float, negative,
decreasing or too long; strides reversed; arrays handed over as memoryviews or DLPack-only objects.

Properties, for every case:
  - the call returns, or raises ValueError / TypeError / NotImplementedError carrying flashc's
    message — never another exception (AttributeError, IndexError, KeyError, OverflowError,
    SystemError, ...) and never a crash;
  - an unbroken case matches the float64 reference, its backward too, with identical bits for one
    and two threads.
FLASHC_PY_FUZZ_CASES (default 400) and FLASHC_PY_FUZZ_SEED (default 2024) choose the run.
"""
import os

import numpy as np
import pytest

import flashc
import reference as ref
from cases import TOL, OnlyDLPack, pack, pad_zero
from test_attention import call_args, draw, result_bnsd

CASES = int(os.environ.get("FLASHC_PY_FUZZ_CASES", "400"))
SEED = int(os.environ.get("FLASHC_PY_FUZZ_SEED", "2024"))
ALLOWED = (ValueError, TypeError, NotImplementedError)


def _weird_value(rng):
    return [None, [1.0, 2.0], 3, "q", object(), (1, 2), float("nan"), {"a": 1}][int(rng.integers(0, 8))]


def _weird_number(rng):
    return [float("nan"), float("inf"), -float("inf"), -1.0, 0.0, 1e39, 1e300, -5, 2**63, 2**70,
            -2**63 - 1, 0.5, 7][int(rng.integers(0, 13))]


def _reshape(rng, a):
    a = np.asarray(a)
    kind = int(rng.integers(0, 5))
    if kind == 0 and a.ndim:
        shape = list(a.shape)
        ax = int(rng.integers(0, a.ndim))
        shape[ax] = max(0, shape[ax] + int(rng.choice([-1, 1])))
        return np.resize(a, shape)
    if kind == 1:
        return a[None]
    if kind == 2 and a.ndim:
        return a.reshape(a.shape[1:]) if a.shape[0] == 1 else a[0]
    if kind == 3 and a.ndim:
        shape = list(a.shape)
        shape[int(rng.integers(0, a.ndim))] = 0
        return np.zeros(shape, a.dtype)
    return a[..., ::-1] if a.ndim else a


def _retype(rng, a):
    dt = ["float64", "int32", "int8", "bool", "complex64", "uint16", "int64", "float16"][int(rng.integers(0, 8))]
    return np.asarray(a).astype(dt)


def _wrap(rng, a):
    a = np.ascontiguousarray(a)
    return memoryview(a) if rng.random() < 0.5 else OnlyDLPack(a)


def break_one(rng, args, kw):
    """Breaks one thing about the call (args: [q, k, v]; kw: keywords).  Returns its description."""
    arrays = [k for k, v in kw.items() if isinstance(v, np.ndarray)]
    choice = int(rng.integers(0, 7))
    if choice == 0:  # an operand replaced
        i = int(rng.integers(0, 3))
        args[i] = _weird_value(rng)
        return f"arg {i} replaced"
    if choice == 1:  # an operand reshaped, retyped or wrapped
        i = int(rng.integers(0, 3))
        f = [_reshape, _retype, _wrap][int(rng.integers(0, 3))]
        args[i] = f(rng, args[i])
        return f"arg {i} through {f.__name__}"
    if choice == 2 and arrays:  # an optional array broken
        key = arrays[int(rng.integers(0, len(arrays)))]
        f = [_reshape, _retype, _wrap, lambda r, a: _weird_value(r)][int(rng.integers(0, 4))]
        kw[key] = f(rng, kw[key])
        return f"{key} broken"
    if choice == 3:  # a scalar option out of range
        key = str(rng.choice(["scale", "softcap", "dropout_p", "q_start", "kv_start", "keep_prob", "threads",
                              "dropout_seed"]))
        kw[key] = _weird_number(rng)
        return f"{key}={kw[key]!r}"
    if choice == 4:  # a window or a string option broken
        key = str(rng.choice(["window", "layout", "align", "bias_order"]))
        kw[key] = [(-3, 2), (2**70, 0), ("a", 1), (1, 2, 3), "causal", 5, [(1, 1)] * 9, None][int(rng.integers(0, 8))]
        return f"{key}={kw[key]!r}"
    if choice == 5:  # lengths broken
        key = str(rng.choice(["cu_seqlens_q", "cu_seqlens_k", "q_lens", "kv_lens", "prefix", "kv_starts"]))
        base = np.asarray(kw.get(key, [0, 1, 2]))
        kw[key] = [base.astype(np.float64) + 0.5, base[::-1].copy(), -base - 1, np.append(base, 10**6),
                   base[:1], list(base), None, base.astype(np.float32)][int(rng.integers(0, 8))]
        return f"{key} broken"
    args[0] = args[0][..., ::-1] if isinstance(args[0], np.ndarray) else args[0]  # reversed strides
    return "q reversed"


def _check_error(e, what):
    assert isinstance(e, ALLOWED), f"{what}: {type(e).__name__}: {e}"
    text = str(e)
    assert "flashc" in text or "fc_" in text, f"{what}: a message without flashc's name: {text}"
    assert "internal" not in text, f"{what}: an internal message reached the user: {text}"


def _run_valid(rng, c, kw, rkw, lkw, args):
    out, lse = flashc.attention(*args, return_lse=True, threads=1, **lkw, **kw)
    out2 = flashc.attention(*args, threads=2, **lkw, **kw)
    assert np.array_equal(np.asarray(out).view(np.uint8), np.asarray(out2).view(np.uint8)), "threads changed bits"
    want, _, _ = ref.attention(c["q"], c["k"], c["v"], **rkw)
    tol = TOL[c["dtype"]]
    np.testing.assert_allclose(result_bnsd(c, out), pad_zero(want, c.get("q_lens")), atol=tol, rtol=tol)
    if c["dtype"] == "float32" and kw.get("dropout_mask") is None and rng.random() < 0.5:
        d_out = np.ones(np.shape(out), np.float32)
        grads = flashc.attention_backward(d_out, *args, out, lse, **lkw, **kw)
        assert all(np.all(np.isfinite(np.asarray(g))) for g in grads), "non-finite gradients"


@pytest.mark.parametrize("chunk", range(8))
def test_fuzz(chunk):
    rng = np.random.default_rng([SEED, chunk])
    for case in range(CASES // 8):
        c, kw, rkw = draw(rng)
        args, lkw = call_args(c, rng)
        args = list(args)
        what = f"seed {SEED} chunk {chunk} case {case}"
        if rng.random() < 0.15:
            _run_valid(rng, c, kw, rkw, lkw, args)
            continue
        kw = dict(kw, **lkw)
        what += ": " + break_one(rng, args, kw)
        try:
            out = flashc.attention(*args, **kw)
        except Exception as e:  # noqa: BLE001 - the property is about which exceptions escape
            _check_error(e, what)
            continue
        if not isinstance(out, tuple):
            assert hasattr(out, "shape"), what


def test_fuzz_backward_and_decode():
    rng = np.random.default_rng([SEED, 99])
    for case in range(CASES // 8):
        B, N, S, D = 1 + int(rng.integers(0, 3)), 2, 1 + int(rng.integers(0, 9)), 8
        q, k, v = (rng.uniform(-1, 1, (B, N, S, D)).astype(np.float32) for _ in range(3))
        out, lse = flashc.attention(q, k, v, return_lse=True)
        args = [np.ones_like(out), q, k, v, out, lse]
        i = int(rng.integers(0, 6))
        args[i] = [_weird_value(rng), _reshape(rng, args[i]), _retype(rng, args[i]), _wrap(rng, args[i])][
            int(rng.integers(0, 4))]
        what = f"backward case {case}: arg {i}"
        try:
            flashc.attention_backward(*args)
        except Exception as e:  # noqa: BLE001
            _check_error(e, what)
        cache = rng.uniform(-1, 1, (B, S, N, D)).astype(np.float32)
        kwargs = dict(cache_seqlens=rng.integers(-1, S + 2, B), kv_starts=rng.integers(-1, S + 1, B))
        key = str(rng.choice(list(kwargs)))
        if rng.random() < 0.5:
            kwargs[key] = _weird_value(rng) if rng.random() < 0.5 else np.asarray(kwargs[key], np.float64) + 0.5
        try:
            flashc.decode(q.transpose(0, 2, 1, 3)[:, :1], cache, cache, **kwargs)
        except Exception as e:  # noqa: BLE001
            _check_error(e, f"decode case {case}: {key}")


def test_fuzz_packed_lengths():
    rng = np.random.default_rng([SEED, 7])
    for case in range(CASES // 8):
        lens = rng.integers(0, 6, int(rng.integers(1, 4)))
        x = rng.uniform(-1, 1, (len(lens), 2, 6, 8)).astype(np.float32)
        t = pack(x, lens)
        cq = np.concatenate([[0], np.cumsum(lens)])
        mutated = [cq, cq.astype(np.float64), cq[::-1].copy(), cq + 1, cq[:-1], list(cq), cq * 100][int(rng.integers(0, 7))]
        try:
            flashc.attention(t, t, t, layout="tnd", cu_seqlens_q=mutated, cu_seqlens_k=cq, causal=bool(rng.random() < 0.5))
        except Exception as e:  # noqa: BLE001
            _check_error(e, f"packed case {case}")
