"""What a caller may hand the functions: any array protocol, empty problems, and clear errors
(naming the argument, in Python's terms) for everything else."""
import os
import subprocess
import sys

import numpy as np
import pytest

import flashc
import reference as ref
from cases import OnlyDLPack, cu, pack, rand


# -- array protocols ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_buffer_protocol_inputs(rng, dtype):
    q, k, v = (rand(rng, (1, 2, 6, 8), dtype) for _ in range(3))
    out, lse = flashc.attention(memoryview(q), memoryview(k), memoryview(v), causal=True, return_lse=True)
    want, want_lse, _ = ref.attention(q, k, v, causal=True)
    assert isinstance(out, np.ndarray) and out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(out, want, atol=6e-3 if dtype == "float16" else 1e-4)
    grads = flashc.attention_backward(memoryview(np.ones(out.shape, dtype)), memoryview(q), memoryview(k),
                                      memoryview(v), memoryview(out), memoryview(lse), causal=True)
    assert [g.shape for g in grads] == [q.shape, k.shape, v.shape]


def test_objects_with_only_dlpack(rng):
    q, k, v = (rand(rng, (2, 3, 5, 8)) for _ in range(3))
    mask = rng.random((5, 5)) < 0.3
    out = flashc.attention(OnlyDLPack(q), OnlyDLPack(k), OnlyDLPack(v), mask=OnlyDLPack(mask),
                           sink=OnlyDLPack(np.zeros(3, np.float32)))
    want, _, _ = ref.attention(q, k, v, mask=mask, sink=np.zeros(3))
    np.testing.assert_allclose(np.asarray(out), want, atol=1e-4)


@pytest.mark.parametrize("arg", ["q", "k", "v", "mask", "bias", "sink", "alibi_slopes"])
@pytest.mark.parametrize("bad", [None, "list"])
def test_non_arrays_give_a_type_error_naming_the_argument(rng, arg, bad):
    q = rand(rng, (1, 2, 4, 8))
    args = dict(q=q, k=q, v=q)
    value = None if bad is None else q.tolist()
    if arg in args:
        args[arg] = value
        call = lambda: flashc.attention(args["q"], args["k"], args["v"])  # noqa: E731
    elif bad is None:
        return  # None is "not given" for an option
    else:
        call = lambda: flashc.attention(q, q, q, **{arg: value})  # noqa: E731
    with pytest.raises(TypeError, match=f"flashc: {arg} must be an array"):
        call()


def test_other_objects_give_a_type_error():
    q = np.zeros((1, 1, 2, 8), np.float32)
    with pytest.raises(TypeError, match="flashc: k must be an array .* got object"):
        flashc.attention(q, object(), q)


@pytest.mark.parametrize("dtype, hint", [("int32", "got int32"), ("float64", "got float64"), ("int8", "got int8")])
def test_dtypes_flashc_does_not_read_are_named(dtype, hint):
    q = np.zeros((1, 1, 2, 8), np.float32)
    with pytest.raises(ValueError, match=f"flashc: q must be float32, float16 or bfloat16, {hint}") as e:
        flashc.attention(q.astype(dtype), q, q)
    assert "desc." not in str(e.value) and "FC_" not in str(e.value)
    with pytest.raises(ValueError, match=f"flashc: v must be float32.*{hint}"):
        flashc.attention(q, q, q.astype(dtype))


def test_unreadable_dtypes_of_other_arguments_are_named():
    q = np.zeros((1, 1, 2, 8), np.float32)
    with pytest.raises(ValueError, match="flashc: mask is float64"):
        flashc.attention(q, q, q, mask=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="flashc: bias must be float32, float16 or bfloat16, got int64"):
        flashc.attention(q, q, q, bias=np.zeros((2, 2), np.int64))


# -- empty problems: empty outputs (or zeros), as torch's SDPA --------------------------------------

@pytest.mark.parametrize("shapes", [
    ((0, 2, 4, 8), (0, 2, 5, 8)),   # batch 0
    ((1, 2, 0, 8), (1, 2, 5, 8)),   # no query rows
    ((2, 2, 3, 8), (2, 2, 0, 8)),   # no keys: every row sees nothing
])
def test_empty_problems(rng, shapes):
    qs, ks = shapes
    q, k, v = rand(rng, qs), rand(rng, ks), rand(rng, ks)
    out, lse = flashc.attention(q, k, v, return_lse=True)
    assert out.shape == qs and lse.shape == qs[:3]
    assert np.all(out == 0)
    assert np.all(lse == np.finfo(np.float32).min)  # as for a row that sees nothing
    dq, dk, dv = flashc.attention_backward(np.ones_like(out), q, k, v, out, lse)
    assert (dq.shape, dk.shape, dv.shape) == (q.shape, k.shape, v.shape)
    assert not dq.any() and not dk.any() and not dv.any()


def test_no_keys_with_a_sink_sees_the_sink():
    q, k = np.ones((1, 2, 3, 8), np.float32), np.ones((1, 2, 0, 8), np.float32)
    sink = np.array([0.5, -1.0], np.float32)
    out, lse = flashc.attention(q, k, k, sink=sink, return_lse=True)
    assert not out.any()
    np.testing.assert_array_equal(lse, np.broadcast_to(sink[None, :, None], (1, 2, 3)))


def test_empty_packed_batches(rng):
    t = rand(rng, (0, 2, 8))
    z = np.zeros(1, np.int32)
    out = flashc.attention(t, t, t, layout="tnd", cu_seqlens_q=z, cu_seqlens_k=z)
    assert out.shape == (0, 2, 8)


def test_empty_problems_match_torch_sdpa():
    torch = pytest.importorskip("torch")
    import flashc.torch as ft
    for qs, ks in (((0, 2, 4, 8), (0, 2, 5, 8)), ((1, 2, 0, 8), (1, 2, 5, 8)), ((2, 2, 3, 8), (2, 2, 0, 8))):
        q, k = torch.rand(qs, requires_grad=True), torch.rand(ks, requires_grad=True)
        want = torch.nn.functional.scaled_dot_product_attention(q, k, k)
        got = ft.sdpa(q, k, k)
        assert got.shape == want.shape
        torch.testing.assert_close(got, torch.zeros_like(want))
        got.sum().backward()
        assert q.grad.shape == q.shape and not q.grad.any()


# -- shapes: numpy's broadcasting, no larger operands ---------------------------------------------

@pytest.mark.parametrize("arg, shape", [
    ("mask", (9, 9)),            # 8 x 8 problem
    ("mask", (1, 3, 8, 8)),      # 2 heads
    ("mask", (2, 1, 8, 8)),      # 1 batch
    ("bias", (2, 3, 8, 8)),      # 2 heads, 1 batch
    ("bias", (1, 3, 8, 8)),
    ("alibi_slopes", (3,)),
    ("alibi_slopes", (2, 2)),
    ("sink", (3,)),
])
def test_operands_larger_than_the_problem_are_refused(rng, arg, shape):
    q = rand(rng, (1, 2, 8, 16))
    value = rng.random(shape) < 0.5 if arg == "mask" else rand(rng, shape)
    with pytest.raises(ValueError, match=f"flashc: {arg}"):
        flashc.attention(q, q, q, **{arg: value})


def test_broadcastable_operands_are_taken(rng):
    q = rand(rng, (2, 2, 8, 16))
    mask = rng.random((8, 1)) < 0.3
    bias = rand(rng, (2, 1, 8, 8))
    out = flashc.attention(q, q, q, mask=mask, bias=bias)
    want, _, _ = ref.attention(q, q, q, mask=np.broadcast_to(mask, (8, 8)), bias=bias)
    np.testing.assert_allclose(out, want, atol=1e-4)


@pytest.mark.parametrize("lens", [[0, 2.5, 8.0], [0.0, 4.0, 8.0], np.array([0, 4, 8], np.float32)])
def test_float_cu_seqlens_are_refused(rng, lens):
    t = rand(rng, (8, 2, 8))
    with pytest.raises(ValueError, match="cu_seqlens_q must hold integers"):
        flashc.attention(t, t, t, layout="tnd", cu_seqlens_q=lens, cu_seqlens_k=cu([4, 4]))


@pytest.mark.parametrize("scale", [1e39, 1e300, float("inf"), float("nan"), -1.0])
def test_scales_outside_float_are_refused(rng, scale):
    q = rand(rng, (1, 1, 4, 8))
    with pytest.raises(ValueError, match="flashc: scale must be"):
        flashc.attention(q, q, q, scale=scale)


def test_packed_mask_by_tokens_must_match_the_tokens(rng):
    lens = [3, 5]
    q = rand(rng, (2, 2, 5, 8))
    t = pack(q, lens)
    with pytest.raises(ValueError, match="flashc: mask"):
        flashc.attention(t, t, t, layout="tnd", cu_seqlens_q=cu(lens), cu_seqlens_k=cu(lens),
                         mask=np.zeros((9, 9), bool))


# -- FLASHC_ISA: one answer everywhere ------------------------------------------------------------

def _a_set_this_cpu_lacks():
    """A real kernel set's name this CPU cannot run (FLASHC_ISA=avx512 on an AVX2 CPU), by its
    /proc/cpuinfo flag; None where every set runs or the flags cannot be read."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), None)
    except OSError:
        return None
    if flags is None:
        return None
    needs = {"amx": "amx_tile", "avx512bf16": "avx512_bf16", "avx512": "avx512f", "avx2": "avx2"}
    return next((name for name, flag in needs.items() if flag not in flags), None)


@pytest.mark.parametrize("isa", ["no-such-isa", "a set this CPU lacks"])
def test_an_unavailable_isa_is_reported_by_cpu_isa_and_every_call(isa):
    if isa != "no-such-isa":
        isa = _a_set_this_cpu_lacks()
        if isa is None:
            pytest.skip("this CPU runs every kernel set (or has no /proc/cpuinfo)")
    code = (
        "import numpy as np, flashc\n"
        "msgs = []\n"
        "for f in (flashc.cpu_isa, lambda: flashc.attention(*(np.zeros((1, 1, 2, 8), np.float32),) * 3)):\n"
        "    try:\n"
        "        f(); msgs.append('no error')\n"
        "    except RuntimeError as e:\n"
        "        msgs.append(str(e))\n"
        "print(repr(msgs))\n")
    env = dict(os.environ, FLASHC_ISA=isa)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    cpu_isa_msg, call_msg = eval(r.stdout)
    assert f"FLASHC_ISA={isa}" in cpu_isa_msg
    assert cpu_isa_msg.split(": ", 1)[1] == call_msg.split(": ", 1)[1]


def test_cpu_isa_names_the_path():
    assert flashc.cpu_isa() in ("amx", "avx512bf16", "avx512", "avx2", "neonbf16", "neon", "scalar", "vec16")
