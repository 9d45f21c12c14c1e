"""flashc.flash_attn and flashc.torch on a CUDA device (skipped without one, and without a build that
has the CUDA backend): the conformance cases of flash_attn_cases.py in bf16 and fp16 against float64
with flash_attn's criterion, the torch.compile cases, CuPy arrays through DLPack, no host
synchronisation in the dense path, and a caller's stream.  tools/gpu-check.sh runs this file."""
import pytest

torch = pytest.importorskip("torch")

import flashc  # noqa: E402

if not torch.cuda.is_available() or not flashc.build_info()["cuda"] or not flashc.build_info()["cuda_devices"]:
    pytest.skip("needs a CUDA device and a flashc build with the CUDA backend", allow_module_level=True)

import flash_attn_cases as fc  # noqa: E402
import flash_attn_compile as fcc  # noqa: E402
import flashc.torch as ft  # noqa: E402
from flashc.flash_attn import flash_attn_func  # noqa: E402

DTYPES = [torch.bfloat16, torch.float16]


def _on_the_backend(case, *args):
    """A case the CUDA backend refuses at planning (a feature it lacks, named in the message) is an
    expected failure with that reason (pytest -rx lists them); every other failure fails."""
    try:
        case(*args)
    except RuntimeError as e:
        if "backend cannot run this problem" in str(e):
            pytest.xfail(str(e))
        raise


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", list(fc.CASES))
def test_conformance_cuda(name, dtype):
    _on_the_backend(fc.CASES[name], "cuda", dtype)


@pytest.mark.parametrize("name", list(fcc.CASES))
def test_compile_fullgraph_cuda(name):
    _on_the_backend(fcc.CASES[name], "cuda", torch.bfloat16)


def test_results_match_the_cpu_backend():
    """The same bf16 problem on both backends, forward and backward, within bf16's tolerance."""
    q, k, v = (fc.rnd(2, s, 8, 64, seed=i, dtype=torch.bfloat16) for i, s in ((1, 200), (2, 333), (3, 333)))
    res = []
    for dev in ("cpu", "cuda"):
        xs = [x.detach().to(dev).requires_grad_() for x in (q, k, v)]  # leaves on each device
        out = flash_attn_func(*xs, causal=True, window_size=(100, 0))
        out.backward(torch.ones_like(out))
        res.append([out.detach().float().cpu()] + [x.grad.float().cpu() for x in xs])
    for a, b in zip(*res):
        torch.testing.assert_close(a, b, atol=2e-2, rtol=2e-2)


def test_dense_calls_do_not_synchronise():
    """flash_attn_func forward and backward on CUDA tensors: no torch operation that waits for the
    device (torch's sync debug mode turns one into an error).  The library's own plan is kept
    after the first call of a shape, so the second call is queued only."""
    q, k, v = (fc.rnd(2, 128, 8, 64, seed=i, dtype=torch.bfloat16, device="cuda").requires_grad_() for i in (1, 2, 3))
    flash_attn_func(q, k, v, causal=True).sum().backward()  # plans made
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        out = flash_attn_func(q, k, v, causal=True)
        out.backward(torch.ones_like(out))
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()


def test_repeated_calls_reuse_their_plans_on_cuda():
    """flash_attn_func forward (with and without grad) and backward, repeated on new CUDA tensors of
    one shape: every repeat finds its kept plan (a new CUDA plan uploads and frees device memory,
    which waits for the device)."""
    from flashc import _flashc

    def step(seed):
        leaves = [fc.rnd(2, 256, 4, 128, seed=seed + s, dtype=torch.bfloat16, device="cuda").requires_grad_()
                  for s in range(3)]
        out = flash_attn_func(*leaves, causal=True)
        out.backward(torch.ones_like(out))
        with torch.no_grad():
            flash_attn_func(*leaves, causal=True)

    step(0)
    hits, misses = _flashc.plan_cache_counts()
    for seed in (10, 20, 30):
        step(seed)
    hits2, misses2 = _flashc.plan_cache_counts()
    assert (hits2 - hits, misses2 - misses) == (9, 0)


def test_a_forward_without_grad_queues_one_kernel():
    """flash_attn_func without a gradient to take queues the attention kernel and nothing else (no
    statistics to combine, no fills, copies or casts)."""
    try:
        from torch.profiler import ProfilerActivity, profile
    except ImportError:
        pytest.skip("no torch.profiler")
    q, k, v = (fc.rnd(2, 512, 8, 128, seed=i, dtype=torch.bfloat16, device="cuda") for i in (1, 2, 3))
    flash_attn_func(q, k, v, causal=True)  # planned
    torch.cuda.synchronize()
    try:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(4):
                flash_attn_func(q, k, v, causal=True)
            torch.cuda.synchronize()
        events = [(e.key, e.count) for e in prof.key_averages()  # per call (not the profiler's own buffers)
                  if getattr(e, "self_device_time_total", 0) > 0 and e.count >= 4]
    except Exception as e:  # no CUPTI here: the profiler cannot say
        pytest.skip(f"torch.profiler: {e}")
    if not events:
        pytest.skip("the profiler recorded no device activity")
    assert len(events) == 1 and events[0][1] == 4, events


def test_a_bad_block_table_entry_found_on_the_gpu_is_raised_by_a_later_call():
    """A paged decode whose block table holds an entry past the cache: the GPU finds it after the
    call returned (no host round trip per call) and leaves that batch's rows unwritten.  The report
    is raised once, by the next call whatever its shape (the faulting call's plan is not called
    again), by the call that evicts the plan, or, with no plans kept, by the call itself."""
    from flashc import _flashc
    from flashc.flash_attn import flash_attn_with_kvcache
    B, H, D, page = 2, 4, 64, 16
    kc, vc = (fc.rnd(8, page, H, D, seed=s, dtype=torch.bfloat16, device="cuda") for s in (1, 2))
    q = fc.rnd(B, 1, H, D, seed=3, dtype=torch.bfloat16, device="cuda")
    bad = torch.tensor([[0, 1, 2], [3, 4, 99]], dtype=torch.int32, device="cuda")  # batch 1 reads entry [1][2]
    good = torch.tensor([[0, 1, 2], [3, 4, 5]], dtype=torch.int32, device="cuda")

    def call(table, n):
        lens = torch.tensor([40, n], dtype=torch.int32, device="cuda")
        return flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens, block_table=table)

    reported = r"block table entry \[1\]\[2\] was 99"
    call(bad, 40)  # queued
    torch.cuda.synchronize()
    with pytest.raises(ValueError, match=reported):
        call(good, 41)  # another plan: the kept plans' finished runs are looked at first
    call(good, 41)  # reported once
    slots = _flashc.plan_cache(1)
    try:
        call(bad, 40)
        with pytest.raises(ValueError, match=reported):
            call(good, 42)  # no synchronisation: seen finished, or waited for when the plan is evicted
        _flashc.plan_cache(0)
        with pytest.raises(ValueError, match=reported):
            call(bad, 40)  # a plan not kept is asked before it is destroyed
        call(good, 43)
    finally:
        _flashc.plan_cache(slots)


def test_runs_on_the_callers_stream():
    q, k, v = (fc.rnd(1, 256, 4, 64, seed=i, dtype=torch.float16, device="cuda") for i in (1, 2, 3))
    want = flash_attn_func(q, k, v)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        big = torch.randn(4096, 4096, device="cuda")
        for _ in range(4):  # keep the stream busy: a kernel queued elsewhere would read q too early
            big = big @ big / 64
        q2 = q * 1
        got = flash_attn_func(q2, k, v)
    torch.cuda.current_stream().wait_stream(s)
    torch.testing.assert_close(got, want)


def test_sdpa_and_attention_on_cuda():
    q, k, v = (fc.rnd(2, 4, 77, 32, seed=i, dtype=torch.bfloat16, device="cuda") for i in (1, 2, 3))
    want = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
    torch.testing.assert_close(ft.sdpa(q, k, v, is_causal=True).double(), want, atol=2e-2, rtol=2e-2)
    out = flashc.attention(q, k, v, causal=True)
    assert out.device.type == "cuda" and out.dtype == torch.bfloat16


def test_cupy_arrays_through_dlpack():
    cp = pytest.importorskip("cupy")
    q = cp.random.rand(1, 2, 33, 16, dtype=cp.float32).astype(cp.float16)
    out = flashc.attention(q, q, q, causal=True)
    assert isinstance(out, cp.ndarray)
    want = flashc.attention(torch.from_dlpack(q).cpu().float(), torch.from_dlpack(q).cpu().float(),
                            torch.from_dlpack(q).cpu().float(), causal=True)
    torch.testing.assert_close(torch.from_dlpack(out).cpu().float(), want, atol=3e-3, rtol=3e-3)


def test_jax_arrays_through_dlpack():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("jax sees no GPU")
    q = jnp.ones((1, 2, 17, 16), dtype=jnp.bfloat16)
    out = flashc.attention(q, q, q)
    assert "jax" in type(out).__module__ or hasattr(out, "device")
