"""What the extension is built with (build_info), where it lets arrays go (host memory, or one CUDA
device: checked with a DLPack capsule relabelled as CUDA memory, no GPU needed), the plans it keeps
between calls, and the opt-in flash_attn alias."""
import ctypes
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import flashc
from flashc import _flashc
from flashc._describe import Problem

import cases
import reference as ref


def test_build_info_says_what_was_built():
    info = flashc.build_info()
    assert set(info) >= {"version", "cuda", "cuda_runtime", "cuda_runtime_version", "cuda_devices",
                         "cuda_unavailable", "cpu_isa"}
    assert info["cuda"] == _flashc.build_info()["cuda"]
    if info["cuda"]:
        assert info["cuda_runtime"] == "static" and info["cuda_runtime_version"]
        assert info["cuda_devices"] > 0 or info["cuda_unavailable"]
    else:
        assert info["cuda_runtime"] is None and info["cuda_devices"] == 0 and "no CUDA backend" in info["cuda_unavailable"]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype, _get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


class CudaLabelled:
    """A numpy array whose DLPack capsule says CUDA device memory (device type 2): what the
    extension does with device arrays, without a device.  Its data is never read as such here."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        capsule = self.a.__dlpack__()
        tensor = _get_pointer(capsule, b"dltensor")
        ctypes.c_int32.from_address(tensor + ctypes.sizeof(ctypes.c_void_p)).value = 2  # DLTensor.device.device_type
        return capsule

    def __dlpack_device__(self):
        return (2, 0)


def _desc(rng):
    q, k, v = (cases.rand(rng, (1, 2, 5, 8)) for _ in range(3))
    p = Problem(q, k, v)
    d = p.desc
    d["forward"] = True
    d["out"] = (np.empty_like(q), p.axes)
    return d


def test_device_arrays_go_to_the_cuda_backend_or_are_refused_by_name(rng):
    fake = CudaLabelled(cases.rand(rng, (1, 2, 5, 8)))
    d = _desc(rng)
    if not _flashc.build_info()["cuda"]:
        with pytest.raises(NotImplementedError, match="k is on CUDA device 0, and this flashc build has no CUDA backend"):
            _flashc.array_info(fake, "k")
        return
    assert _flashc.array_info(fake, "k") == ((1, 2, 5, 8), "float32")
    d["k"] = (fake, d["k"][1])  # one operand on a device, the others in host memory
    with pytest.raises(ValueError, match="k is on CUDA device 0 while q is in host memory"):
        _flashc.forward(d)
    d = _desc(rng)
    for key in ("q", "k", "v", "out"):  # all "device": the CUDA backend is asked (and fails: no GPU, or host data)
        d[key] = (CudaLabelled(d[key][0]), d[key][1])
    with pytest.raises((RuntimeError, ValueError), match="CUDA|device"):
        _flashc.forward(d, 0)


def test_lengths_must_be_host_memory(rng):
    if not _flashc.build_info()["cuda"]:
        pytest.skip("no CUDA backend: device arrays are refused before")
    d = _desc(rng)
    d["kv_lens"] = CudaLabelled(np.array([5], np.int64))
    with pytest.raises(ValueError, match="kv_lens must be in host memory"):
        _flashc.forward(d)


def _problems(rng):
    """Calls of a few shapes, repeated with new data: kept plans serve the repeats."""
    calls = []
    for rep in range(3):
        for B, N, Sq, Skv, causal in ((1, 2, 5, 9, True), (2, 4, 7, 7, False), (1, 2, 5, 9, False)):
            q, k, v = cases.rand(rng, (B, N, Sq, 8)), cases.rand(rng, (B, N, Skv, 8)), cases.rand(rng, (B, N, Skv, 8))
            lens = [Skv - rep] * B  # lengths differ between repeats: a new plan
            calls.append((q, k, v, dict(causal=causal, kv_lens=lens if rep % 2 else None)))
    return calls


def test_kept_plans_give_the_results_of_new_ones(rng):
    calls = _problems(rng)
    before = _flashc.plan_cache(0)
    try:
        fresh = [flashc.attention(q, k, v, return_lse=True, **kw) for q, k, v, kw in calls]
        _flashc.plan_cache(4)
        kept = [flashc.attention(q, k, v, return_lse=True, **kw) for q, k, v, kw in calls]
        kept_again = [flashc.attention(q, k, v, return_lse=True, **kw) for q, k, v, kw in calls]
        grads = [flashc.attention_backward(np.ones_like(o), q, k, v, o, lse, **kw)
                 for (q, k, v, kw), (o, lse) in zip(calls, kept)]
        _flashc.plan_cache(0)
        grads_fresh = [flashc.attention_backward(np.ones_like(o), q, k, v, o, lse, **kw)
                       for (q, k, v, kw), (o, lse) in zip(calls, fresh)]
    finally:
        _flashc.plan_cache(before)
    for a, b, c in zip(fresh, kept, kept_again):
        for x, y, z in zip(a, b, c):
            assert np.array_equal(x, y) and np.array_equal(x, z)
    for a, b in zip(grads_fresh, grads):
        for x, y in zip(a, b):
            assert np.array_equal(x, y)


def test_one_problem_is_planned_once(rng):
    """Repeated calls of one problem find its kept plan whatever options it has (the key holds no
    stray bytes: a window made by the library, compound literals).  On CUDA a miss plans and frees,
    which synchronises the device."""
    q, k, v = cases.rand(rng, (2, 4, 9, 8)), cases.rand(rng, (2, 2, 11, 8)), cases.rand(rng, (2, 2, 11, 8))
    slopes = cases.rand(rng, (4,))
    variants = [dict(causal=True), dict(window=(3, 1), alibi_slopes=slopes, alibi_align="bottom_right", softcap=5.0),
                dict(mask=np.tril(np.ones((9, 11), np.uint8)).astype(bool), sink=cases.rand(rng, (4,)), scale=0.3),
                dict(bias=cases.rand(rng, (1, 4, 9, 11)), bias_order="before_scale", q_start=2, kv_start=1)]
    for kw in variants:
        flashc.attention(q, k, v, **kw)  # planned (or kept from before)
        hits, misses = _flashc.plan_cache_counts()
        for _ in range(3):
            flashc.attention(cases.rand(rng, q.shape), k, v, **kw)
        hits2, misses2 = _flashc.plan_cache_counts()
        assert (hits2 - hits, misses2 - misses) == (3, 0), (kw.keys(), hits2 - hits, misses2 - misses)


def test_a_planning_switch_is_part_of_the_key(rng, monkeypatch):
    """A plan kept under one value of a switch the library reads while planning (fc_plan_switches)
    is not run under another: the CUDA switches pick kernels, so on a GPU a stale plan would run
    the path the caller just switched away from.  On the CPU the switch changes nothing but the key."""
    q, k, v = cases.rand(rng, (1, 2, 5, 8)), cases.rand(rng, (1, 2, 6, 8)), cases.rand(rng, (1, 2, 6, 8))
    for name, value in (("FLASHC_CUDA_BWD", "fused"), ("FLASHC_CUDA_FWD_D64", "wg3")):
        monkeypatch.delenv(name, raising=False)
        flashc.attention(q, k, v)  # planned (or kept from before) without the switch
        hits, misses = _flashc.plan_cache_counts()
        monkeypatch.setenv(name, value)
        flashc.attention(q, k, v)
        flashc.attention(q, k, v)
        hits2, misses2 = _flashc.plan_cache_counts()
        assert (hits2 - hits, misses2 - misses) == (1, 1), (name, hits2 - hits, misses2 - misses)
        monkeypatch.delenv(name)


def test_kept_plans_across_threads(rng):
    q, k, v = (cases.rand(rng, (2, 4, 33, 16)) for _ in range(3))
    want = flashc.attention(q, k, v, causal=True)
    results, errors = [], []

    def work(seed):
        try:
            r = np.random.default_rng(seed)
            for _ in range(20):
                qq = cases.rand(r, q.shape)
                got = flashc.attention(qq, k, v, causal=True, threads=1)
                w, _, _ = ref.attention(qq, k, v, causal=True)
                results.append(np.abs(got - w).max())
            results.append(np.abs(flashc.attention(q, k, v, causal=True, threads=1) - want).max())
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 84 and max(results) < 2e-4


def test_flash_attn_alias_is_opt_in_and_complete():
    torch = pytest.importorskip("torch")
    assert torch
    script = """
import sys, torch, flashc
assert "flash_attn" not in sys.modules
fa = flashc.install_flash_attn_alias()
import flash_attn
from flash_attn import flash_attn_func, flash_attn_varlen_func, flash_attn_with_kvcache
from flash_attn.bert_padding import unpad_input, pad_input, index_first_axis
from flash_attn.flash_attn_interface import _flash_attn_forward, _flash_attn_varlen_forward, flash_attn_gpu
import flash_attn_2_cuda
assert flash_attn is fa and flash_attn.__version__.startswith("2.")
q = torch.rand(1, 4, 2, 8)
out, lse, _, _ = flash_attn_2_cuda.fwd(q, q, q, None, None, 0.0, None, True, -1, -1, 0.0, False, None)
torch.testing.assert_close(out, flash_attn_func(q, q, q, causal=True))
sys.modules["flash_attn"] = type(sys)("flash_attn")  # another flash_attn already imported
try:
    flashc.install_flash_attn_alias()
except RuntimeError as e:
    assert "already imported" in str(e)
else:
    raise SystemExit("no error for a flash_attn already imported")
assert flashc.install_flash_attn_alias(replace=True) is sys.modules["flash_attn"]
print("alias ok")
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and "alias ok" in r.stdout, r.stdout + r.stderr
