"""Array exchange (DLPack, buffer protocol, strides), errors with the library's message, the GIL."""
import threading
import time

import numpy as np
import pytest

import flashc
import reference as ref
from cases import rand


class DLPackOnly:
    """An array known only through __dlpack__ (as JAX or CuPy arrays are)."""

    def __init__(self, a):
        self.a = a
        self.shape, self.dtype = a.shape, a.dtype

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_dlpack_producers_are_read_in_place(rng):
    q, k, v = (rand(rng, (1, 2, 7, 8)) for _ in range(3))
    out = flashc.attention(DLPackOnly(q), DLPackOnly(k[:, :, ::1]), DLPackOnly(v), causal=True)
    want, _, _ = ref.attention(q, k, v, causal=True)
    np.testing.assert_allclose(np.asarray(out), want, atol=1e-4)


def test_broadcast_and_readonly_inputs(rng):
    q = rand(rng, (2, 2, 5, 8))
    k1 = rand(rng, (1, 2, 6, 8))
    k = np.broadcast_to(k1, (2, 2, 6, 8))  # read-only, batch stride 0
    assert not k.flags.writeable
    out = flashc.attention(q, k, k)
    want, _, _ = ref.attention(q, np.asarray(k), np.asarray(k))
    np.testing.assert_allclose(out, want, atol=1e-4)


def test_negative_strides_are_refused_with_the_library_message(rng):
    q = rand(rng, (1, 1, 4, 8))
    with pytest.raises(ValueError, match="negative stride"):
        flashc.attention(q[:, :, ::-1], q, q)


def test_misaligned_data_and_strides_are_refused():
    raw = np.zeros(1 + 4 * 8 * 4, np.uint8)[1:].view(np.float32).reshape(1, 1, 4, 8)
    with pytest.raises(ValueError, match="aligned"):
        flashc.attention(raw, raw, raw)
    packed = np.zeros((1, 1, 4, 8), dtype=[("a", np.uint8), ("x", np.float32)])["x"]  # 5-byte strides
    with pytest.raises(ValueError, match="whole number"):
        flashc.attention(packed, packed, packed)


@pytest.mark.parametrize("case, match", [
    (dict(kshape=(1, 3, 6, 8)), "not a multiple"),
    (dict(kshape=(1, 2, 6, 4)), "head_dim"),
    (dict(kshape=(2, 2, 6, 8)), "batch"),
    (dict(scale=-1.0), "scale"),
    (dict(layout="nope"), "layout"),
    (dict(window=(2, 1), align="diagonal"), "align"),
    (dict(kdtype="int32"), "k must be float32, float16 or bfloat16, got int32"),
    (dict(sink=np.zeros(1, np.float32)), "sink"),
])
def test_bad_input_raises(rng, case, match):
    q = rand(rng, (1, 4, 5, 8))
    k = rand(rng, case.pop("kshape", (1, 2, 6, 8))).astype(case.pop("kdtype", "float32"))
    with pytest.raises(ValueError, match=match):
        flashc.attention(q, k, k, **case)


def test_library_errors_carry_fc_messages(rng):
    q = rand(rng, (1, 2, 5, 8))
    with pytest.raises(ValueError, match="desc.dropout.keep_bits_bytes"):
        flashc.attention(q, q, q, dropout_mask=np.zeros(1, np.uint8), keep_prob=0.5)
    with pytest.raises(ValueError, match="FC_ERR_INVALID_ARG"):
        flashc.attention(q, q, q, kv_starts=np.array([9]))


def test_not_an_array():
    with pytest.raises(TypeError, match="q must be an array"):
        flashc.attention(object.__new__(type("Shape", (), {"shape": (1, 1, 1, 8), "dtype": "float32"})), np.zeros((1, 1, 1, 8), np.float32),
                         np.zeros((1, 1, 1, 8), np.float32))


def test_output_too_small_is_refused(rng):
    q = rand(rng, (1, 2, 5, 8))
    with pytest.raises(ValueError, match="extent"):
        flashc.attention(q, q, q, out=np.empty((1, 2, 4, 8), np.float32))


def test_gil_is_released_while_kernels_run(rng):
    q, k, v = (rand(rng, (4, 8, 1024, 64)) for _ in range(3))  # long enough for fast kernels
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    time.sleep(0.02)
    start = time.perf_counter()
    flashc.attention(q, k, v, threads=1)
    end = time.perf_counter()
    stop.set()
    t.join()
    during = [x for x in ticks if start < x < end]
    assert end - start > 0.02
    assert len(during) >= 3, f"no other thread ran during the {end - start:.3f}s call"
