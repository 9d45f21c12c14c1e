"""flashc.attention and attention_backward against the float64 reference, over random draws."""
import numpy as np
import pytest

import flashc
import reference as ref
from cases import TOL, cu, from_layout, pack, pad_zero, rand, to_layout, unpack


def draw(rng, *, backward=False):
    """One random problem: sizes, layout, and a random subset of the features."""
    B, Nkv, G = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.choice([1, 2, 3]))
    N = Nkv * G
    Sq, Skv = int(rng.integers(1, 33)), int(rng.integers(1, 41))
    D = int(rng.choice([8, 16, 32, 64]))
    Dv = D if rng.random() < 0.7 else int(rng.choice([8, 16, 32]))
    dtype = "float32" if backward or rng.random() < 0.6 else "float16"
    c = dict(B=B, N=N, Nkv=Nkv, Sq=Sq, Skv=Skv, D=D, Dv=Dv, dtype=dtype,
             layout=str(rng.choice(["bnsd", "bsnd", "sbnd", "tnd"])))
    c["q"], c["k"], c["v"] = rand(rng, (B, N, Sq, D), dtype), rand(rng, (B, Nkv, Skv, D), dtype), rand(rng, (B, Nkv, Skv, Dv), dtype)
    kw, rkw = {}, {}

    def both(key, value, rkey=None):
        kw[key] = value
        rkw[rkey or key] = value

    if c["layout"] == "tnd" or rng.random() < 0.3:
        c["q_lens"] = rng.integers(0 if rng.random() < 0.2 else 1, Sq + 1, B)
        c["kv_lens"] = rng.integers(1, Skv + 1, B)
        rkw["q_lens"], rkw["kv_lens"] = c["q_lens"], c["kv_lens"]
    if rng.random() < 0.5:
        both("causal", True)
    if rng.random() < 0.3:
        both("window", (int(rng.integers(0, 8)), int(rng.integers(0, 8)) if rng.random() < 0.5 else None))
    if rng.random() < 0.3:
        both("align", "top_left")
    if rng.random() < 0.2:
        both("scale", float(rng.uniform(0.05, 0.5)))
    if rng.random() < 0.2:
        both("softcap", float(rng.uniform(0.5, 3)))
    if c["layout"] != "tnd" and rng.random() < 0.25:
        shape = [(Sq, Skv), (N, Sq, Skv), (B, 1, Sq, Skv)][int(rng.integers(0, 3))]
        both("mask", rng.random(shape) < 0.3)
    if c["layout"] != "tnd" and rng.random() < 0.25:
        shape = [(1, N, Sq, Skv), (B, N, 1, Skv), (Sq, Skv)][int(rng.integers(0, 3))]
        both("bias", rand(rng, shape, "float32"))
        if rng.random() < 0.5 and not kw.get("softcap"):
            both("bias_order", "before_scale")
    if rng.random() < 0.2:
        both("alibi_slopes", rng.uniform(0.01, 0.3, N).astype(np.float32), "alibi")
    if rng.random() < 0.2:
        both("sink", rng.uniform(-1, 1, N).astype(np.float32))
    if c["layout"] != "tnd" and rng.random() < 0.15:
        both("prefix", rng.integers(0, Skv + 1, B))
    if c["layout"] != "tnd" and rng.random() < 0.15:
        both("kv_starts", rng.integers(0, Skv // 2 + 1, B))
    if rng.random() < 0.15:
        lens_q = c.get("q_lens", [Sq] * B)
        lens_kv = c.get("kv_lens", [Skv] * B)
        nbits = N * sum(int(a) * int(b) for a, b in zip(lens_q, lens_kv))
        bits = rng.integers(0, 256, (nbits + 7) // 8 + 1, dtype=np.uint8)
        kw["dropout_mask"], rkw["keep_bits"] = bits, bits
        both("keep_prob", float(rng.uniform(0.5, 0.95)))
    return c, kw, rkw


def call_args(c, rng):
    """q, k, v in the case's layout and the length keywords."""
    if c["layout"] == "tnd":
        ql, kl = c["q_lens"], c["kv_lens"]
        return (pack(c["q"], ql), pack(c["k"], kl), pack(c["v"], kl)), dict(
            layout="tnd", cu_seqlens_q=cu(ql), cu_seqlens_k=cu(kl))
    kw = dict(layout=c["layout"])
    if "q_lens" in c:
        kw["q_lens"], kw["kv_lens"] = c["q_lens"], c["kv_lens"]
    return tuple(to_layout(c[x], c["layout"], rng) for x in "qkv"), kw


def result_bnsd(c, out):
    if c["layout"] == "tnd":
        return unpack(out, c["q_lens"], c["q"])
    return pad_zero(from_layout(out, c["layout"]), c.get("q_lens"))


@pytest.mark.parametrize("seed", range(40))
def test_forward_matches_reference(rng, seed):
    c, kw, rkw = draw(rng)
    (q, k, v), lkw = call_args(c, rng)
    out, lse = flashc.attention(q, k, v, return_lse=True, **lkw, **kw)
    want, want_lse, _ = ref.attention(c["q"], c["k"], c["v"], **rkw)
    assert out.dtype == np.dtype(c["dtype"])
    tol = TOL[c["dtype"]]
    np.testing.assert_allclose(result_bnsd(c, out), pad_zero(want, c.get("q_lens")), atol=tol, rtol=tol)
    if c["layout"] == "tnd":
        got = unpack(np.asarray(lse).T[:, :, None], c["q_lens"], c["q"])[..., 0]
        want_lse = pad_zero(want_lse[..., None], c["q_lens"])[..., 0]
    else:
        got = np.asarray(lse, np.float64)
        if "q_lens" in c:
            got, want_lse = (pad_zero(x[..., None], c["q_lens"])[..., 0] for x in (got, want_lse))
    live = want_lse > -1e38
    np.testing.assert_allclose(got[live], want_lse[live], atol=1e-4, rtol=1e-4)
    assert np.all(got[~live] < -1e38)


@pytest.mark.parametrize("seed", range(25))
def test_backward_matches_reference(rng, seed):
    c, kw, rkw = draw(rng, backward=True)
    (q, k, v), lkw = call_args(c, rng)
    out, lse = flashc.attention(q, k, v, return_lse=True, **lkw, **kw)
    d_out_bnsd = rand(rng, c["q"].shape[:3] + (c["Dv"],))
    if c["layout"] == "tnd":
        d_out = pack(d_out_bnsd, c["q_lens"])
    else:
        d_out = to_layout(d_out_bnsd, c["layout"], rng)
    grads = flashc.attention_backward(d_out, q, k, v, out, lse, **lkw, **kw)
    _, _, dq, dk, dv, dsink = ref.attention_grads(c["q"], c["k"], c["v"], d_out_bnsd, **rkw)
    if c["layout"] == "tnd":
        got = [unpack(grads[0], c["q_lens"], c["q"]), unpack(grads[1], c["kv_lens"], c["k"]),
               unpack(grads[2], c["kv_lens"], c["v"])]
    else:
        got = [from_layout(g, c["layout"]) for g in grads[:3]]
        got = [pad_zero(got[0], c.get("q_lens")), pad_zero(got[1], c.get("kv_lens")), pad_zero(got[2], c.get("kv_lens"))]
    want = [pad_zero(dq, c.get("q_lens")), pad_zero(dk, c.get("kv_lens")), pad_zero(dv, c.get("kv_lens"))]
    for name, g, w in zip(("dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(g, w, atol=5e-4, rtol=5e-4, err_msg=name)
    if "sink" in kw:
        np.testing.assert_allclose(grads[3], dsink, atol=5e-4, rtol=5e-4, err_msg="dsink")


def test_bfloat16_needs_ml_dtypes_or_torch():
    q = np.zeros((1, 1, 2, 8), np.float32)
    try:
        import ml_dtypes  # noqa: F401
        pytest.skip("ml_dtypes installed: numpy bfloat16 outputs are available")
    except ImportError:
        with pytest.raises(ValueError, match="bfloat16"):
            flashc.attention(q, q, q, out_dtype="bfloat16")


def test_out_argument_is_written_in_place(rng):
    q, k, v = (rand(rng, (2, 3, 5, 16)) for _ in range(3))
    storage = np.full((2, 5, 3, 32), 7.0, np.float32)
    out = storage[..., :16].transpose(0, 2, 1, 3)  # a strided view in BNSD order
    got = flashc.attention(q, k, v, out=out)
    assert got is out
    want, _, _ = ref.attention(q, k, v)
    np.testing.assert_allclose(out, want, atol=1e-4)
    assert np.all(storage[..., 16:] == 7.0)  # nothing written outside the view


def test_threads_give_identical_bits(rng):
    q, k, v = (rand(rng, (2, 4, 70, 32)) for _ in range(3))
    one = flashc.attention(q, k, v, causal=True, threads=1)
    two = flashc.attention(q, k, v, causal=True, threads=2)
    assert np.array_equal(one.view(np.uint32), two.view(np.uint32))


def test_rope_features(rng):
    q, k, v = rand(rng, (1, 2, 6, 16)), rand(rng, (1, 2, 9, 16)), rand(rng, (1, 2, 9, 16))
    qr, kr = rand(rng, (1, 2, 6, 8)), rand(rng, (1, 2, 9, 8))
    out = flashc.attention(q, k, v, q_rope=qr, k_rope=kr, causal=True)
    want, _, _ = ref.attention(q, k, v, q_rope=qr, k_rope=kr, causal=True)
    np.testing.assert_allclose(out, want, atol=1e-4)


def test_per_batch_windows(rng):
    q, k, v = (rand(rng, (3, 2, 12, 8)) for _ in range(3))
    windows = [(2, 0), None, (None, 3)]
    out = flashc.attention(q, k, v, window=windows)
    want, _, _ = ref.attention(q, k, v, batch_window=windows)
    np.testing.assert_allclose(out, want, atol=1e-4)


def test_global_positions_shift_windows_and_alibi(rng):
    q, k, v = rand(rng, (1, 2, 5, 8)), rand(rng, (1, 2, 9, 8)), rand(rng, (1, 2, 9, 8))
    slopes = np.array([0.1, 0.25], np.float32)
    kw = dict(window=(3, 1), align="top_left", q_start=4, kv_start=1)
    out = flashc.attention(q, k, v, alibi_slopes=slopes, **kw)
    want, _, _ = ref.attention(q, k, v, alibi=slopes, **kw)
    np.testing.assert_allclose(out, want, atol=1e-4)
