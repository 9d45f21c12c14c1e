#!/usr/bin/env python3
"""An InfiniCore-style operator test of flashc's infiniop FlashAttention (semantics §7).

Like InfiniCore's own test/infiniop/*.py: ctypes over the built library, a table of test cases and
tensor dtypes, a tolerance per dtype, a reference written with the array library (numpy here,
in float64), descriptors destroyed right after the operator descriptor is created, a workspace of
exactly the reported size.  Layout ((batch,) heads, seq, head_dim); mask ((batch,) kv_len), nonzero
= key hidden; scale 1/sqrt(head_dim).

    test_flash_attention.py --lib build/libflashc.so

Exit status 0 on success, 1 on a failure, 77 (CTest "skipped") when numpy is missing.
"""
import argparse
import ctypes
import math
import os
import sys
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_ssize_t, c_void_p

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed for %s (tools/deps.sh installs python3-numpy)" % sys.executable)
    sys.exit(77)


class InfiniDtype:
    BYTE, BOOL, I8, I16, I32, I64, U8, U16, U32, U64 = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
    F16, F32, BF16 = 12, 13, 19


InfiniDtypeNames = {v: k for k, v in vars(InfiniDtype).items() if not k.startswith("_")}

SUCCESS, BAD_PARAM, NULL_POINTER, BAD_TENSOR_SHAPE, BAD_TENSOR_STRIDES, INSUFFICIENT_WORKSPACE = 0, 3, 4, 11, 12, 13
INFINI_DEVICE_CPU = 0

# ((batch,) heads, seq, head_dim) of q; (heads, seq) of k/v; v head_dim (None = q's); mask shape
# (None = no mask); layout of q/k/v/out ("contiguous", "transposed": heads and seq swapped in
# memory, "padded": rows padded, "negative": seq walked backwards).
_TEST_CASES = [
    ((2, 4, 16, 32), (4, 16), None, None, "contiguous"),
    ((2, 4, 16, 32), (4, 16), None, (2, 16), "contiguous"),
    ((4, 16, 32), (4, 16), None, (16,), "contiguous"),
    ((1, 10, 2, 4), (10, 2), None, (1, 2), "contiguous"),
    ((2, 8, 5, 64), (2, 40), None, (2, 40), "contiguous"),
    ((1, 6, 1, 128), (1, 100), None, (100,), "contiguous"),
    ((2, 4, 9, 16), (2, 9), 24, (2, 9), "contiguous"),
    ((2, 4, 70, 64), (4, 70), None, (2, 70), "transposed"),
    ((3, 12, 48), (3, 20), None, (20,), "padded"),
    ((2, 2, 33, 16), (1, 17), 8, (2, 17), "negative"),
]

_TENSOR_DTYPES = [InfiniDtype.F32, InfiniDtype.F16, InfiniDtype.BF16]

_MASK_DTYPES = [InfiniDtype.BOOL, InfiniDtype.BYTE, InfiniDtype.I8, InfiniDtype.I16, InfiniDtype.I32,
                InfiniDtype.I64, InfiniDtype.U8, InfiniDtype.U16, InfiniDtype.U32, InfiniDtype.U64]

# semantics §0.4
_TOLERANCE_MAP = {
    InfiniDtype.F32: {"atol": 1e-5, "rtol": 1e-4},
    InfiniDtype.F16: {"atol": 2e-3, "rtol": 2e-3},
    InfiniDtype.BF16: {"atol": 1e-2, "rtol": 1e-2},
}

_STORAGE = {
    InfiniDtype.F32: np.float32, InfiniDtype.F16: np.float16, InfiniDtype.BF16: np.uint16,
    InfiniDtype.BOOL: np.bool_, InfiniDtype.BYTE: np.uint8, InfiniDtype.I8: np.int8, InfiniDtype.I16: np.int16,
    InfiniDtype.I32: np.int32, InfiniDtype.I64: np.int64, InfiniDtype.U8: np.uint8, InfiniDtype.U16: np.uint16,
    InfiniDtype.U32: np.uint32, InfiniDtype.U64: np.uint64,
}


# --- the library ----------------------------------------------------------------------------------

def load_library(path):
    lib = ctypes.CDLL(path)
    desc_p = POINTER(c_void_p)
    sigs = {
        "infiniopCreateHandle": [desc_p],
        "infiniopDestroyHandle": [c_void_p],
        "infiniopCreateTensorDescriptor": [desc_p, c_size_t, POINTER(c_size_t), POINTER(c_ssize_t), c_int],
        "infiniopDestroyTensorDescriptor": [c_void_p],
        "infiniopCreateFlashAttentionDescriptor": [c_void_p, desc_p] + [c_void_p] * 5,
        "infiniopGetFlashAttentionWorkspaceSize": [c_void_p, POINTER(c_size_t)],
        "infiniopFlashAttention": [c_void_p, c_void_p, c_size_t] + [c_void_p] * 6,
        "infiniopDestroyFlashAttentionDescriptor": [c_void_p],
        "infiniopDestoryFlashAttentionDescriptor": [c_void_p],
        "infiniopGetDescriptorDeviceType": [c_void_p, POINTER(c_int)],
        "infinirtMalloc": [POINTER(c_void_p), c_size_t],
        "infinirtFree": [c_void_p],
    }
    for name, args in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, c_int
    lib.fc_last_error.argtypes, lib.fc_last_error.restype = [], c_char_p
    return lib


LIB = None


def check_error(status, what=""):
    if status != SUCCESS:
        raise RuntimeError("%s returned status %d: %s" % (what, status, LIB.fc_last_error().decode()))


# --- tensors ---------------------------------------------------------------------------------------

def to_bf16_bits(x):
    """float64 → bf16 bits, round to nearest even (through float32, like every bf16 producer)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def layout_strides(shape, layout):
    """Element strides of a view of `shape` stored in one of the test layouts (last stride 1)."""
    dims = list(shape)
    order = list(range(len(dims)))
    pad = [0] * len(dims)
    if layout == "transposed" and len(dims) >= 3:
        order[-3], order[-2] = order[-2], order[-3]
    if layout == "padded":
        pad = [1] * (len(dims) - 1) + [5]
    strides, run = [0] * len(dims), 1
    for k in reversed(order):
        strides[k] = run
        run *= dims[k] + pad[k]
    if layout == "negative" and len(dims) >= 2:
        strides[-2] = -strides[-2]
    return strides


class TestTensor:
    """A strided tensor in a numpy buffer, its logical float64 values and its descriptor."""

    def __init__(self, shape, dtype, layout="contiguous", values=None):
        self.shape, self.dtype = tuple(shape), dtype
        self.strides = layout_strides(self.shape, layout)
        lo = sum(min(0, (n - 1) * s) for n, s in zip(self.shape, self.strides))
        hi = sum(max(0, (n - 1) * s) for n, s in zip(self.shape, self.strides))
        self.storage = np.dtype(_STORAGE[dtype])
        fill = 0xA5 if values is None else 0xFF  # gaps of inputs hold NaN / "hidden"
        self.buffer = np.full((hi - lo + 1) * self.storage.itemsize, fill, dtype=np.uint8)
        self.offset = -lo
        self.view = np.lib.stride_tricks.as_strided(
            self.buffer.view(self.storage)[self.offset:],
            shape=self.shape, strides=[s * self.storage.itemsize for s in self.strides])
        if values is not None:
            self.store(values)
        self.descriptor = c_void_p()
        shape_arr = (c_size_t * len(self.shape))(*self.shape)
        strides_arr = (c_ssize_t * len(self.shape))(*self.strides)
        check_error(LIB.infiniopCreateTensorDescriptor(byref(self.descriptor), len(self.shape), shape_arr,
                                                       strides_arr, dtype), "infiniopCreateTensorDescriptor")

    def store(self, values):
        if self.dtype == InfiniDtype.BF16:
            self.view[...] = to_bf16_bits(values)
        else:
            self.view[...] = values.astype(self.storage)

    def values(self):
        """The logical values as float64 (what the library reads / wrote)."""
        if self.dtype == InfiniDtype.BF16:
            return from_bf16_bits(np.ascontiguousarray(self.view))
        return self.view.astype(np.float64)

    def data(self):
        return self.buffer.ctypes.data + self.offset * self.storage.itemsize

    def destroy_desc(self):
        if self.descriptor:
            check_error(LIB.infiniopDestroyTensorDescriptor(self.descriptor), "infiniopDestroyTensorDescriptor")
            self.descriptor = c_void_p()


class TestWorkspace:
    """Workspace in an infinirt allocation (tracked by the runtime, so overruns are caught)."""

    def __init__(self, size):
        self.size, self.ptr = size, c_void_p()
        if size:
            check_error(LIB.infinirtMalloc(byref(self.ptr), size), "infinirtMalloc")

    def data(self):
        return self.ptr.value

    def free(self):
        if self.ptr:
            check_error(LIB.infinirtFree(self.ptr), "infinirtFree")


def hidden_values(mask_dtype, hide):
    """Mask values: 0 where visible; nonzero where hidden, with a zero lowest byte when the type allows."""
    storage = np.dtype(_STORAGE[mask_dtype])
    if storage.itemsize == 1:
        big = 1
    elif storage.kind == "i":
        big = -(1 << (8 * storage.itemsize - 1))  # only the sign bit set
    else:
        big = 1 << (8 * storage.itemsize - 8)
    return np.where(hide, big, 0)


# --- the reference ---------------------------------------------------------------------------------

def attention(q, k, v, hidden):
    """softmax(q·kᵀ/sqrt(D)) · v over visible keys, float64; rows with no visible key are 0.
    q (B, Nq, Sq, D), k (B, Nkv, Skv, D), v (B, Nkv, Skv, Dv), hidden (B, Skv) or None."""
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if hidden is not None:
        s = np.where(hidden[:, None, None, :], -np.inf, s)
    m = s.max(axis=-1, keepdims=True)
    empty = np.isneginf(m)
    p = np.exp(s - np.where(empty, 0, m))
    out = (p @ v) / np.where(empty, 1, p.sum(axis=-1, keepdims=True))
    return np.where(empty, 0.0, out)


# --- the test --------------------------------------------------------------------------------------

def test(handle, device, q_shape, kv_hs, dv, mask_shape, layout, dtype, mask_dtype, rng, hide_batch0=False,
         mask_null=False):
    four = len(q_shape) == 4
    B = q_shape[0] if four else 1
    Nq, Sq, D = q_shape[-3:]
    Nkv, Skv = kv_hs
    Dv = dv or D
    lead = (B,) if four else ()
    print("Testing FlashAttention on CPU with q:%s kv:%s Dv:%d mask:%s(%s) layout:%s dtype:%s%s" % (
        q_shape, kv_hs, Dv, mask_shape, InfiniDtypeNames[mask_dtype] if mask_shape else "-", layout,
        InfiniDtypeNames[dtype], " (NULL mask at run time)" if mask_null else ""))

    def rand(shape):
        return rng.uniform(-1.0, 1.0, size=shape)

    q = TestTensor(lead + (Nq, Sq, D), dtype, layout, rand(lead + (Nq, Sq, D)))
    k = TestTensor(lead + (Nkv, Skv, D), dtype, layout, rand(lead + (Nkv, Skv, D)))
    v = TestTensor(lead + (Nkv, Skv, Dv), dtype, layout, rand(lead + (Nkv, Skv, Dv)))
    out = TestTensor(lead + (Nq, Sq, Dv), dtype, layout)
    mask = None
    hidden = None
    if mask_shape:
        hide = rng.random(mask_shape) < 0.3
        if hide_batch0:
            hide[0] = True
        mask = TestTensor(mask_shape, mask_dtype, "contiguous", hidden_values(mask_dtype, hide))
        if not mask_null:
            hidden = np.broadcast_to(hide.reshape((-1, Skv)), (B, Skv))

    def as4(t):
        x = t.values()
        return x if four else x[None]

    ans = attention(as4(q), as4(k), as4(v), hidden)

    descriptor = c_void_p()
    check_error(LIB.infiniopCreateFlashAttentionDescriptor(
        handle, byref(descriptor), out.descriptor, q.descriptor, k.descriptor, v.descriptor,
        mask.descriptor if mask else None), "infiniopCreateFlashAttentionDescriptor")
    # the operator descriptor copied what it needs
    for tensor in (out, q, k, v) + ((mask,) if mask else ()):
        tensor.destroy_desc()
    device_type = c_int(-1)
    check_error(LIB.infiniopGetDescriptorDeviceType(descriptor, byref(device_type)), "GetDescriptorDeviceType")
    assert device_type.value == device

    workspace_size = c_size_t(0)
    check_error(LIB.infiniopGetFlashAttentionWorkspaceSize(descriptor, byref(workspace_size)),
                "infiniopGetFlashAttentionWorkspaceSize")
    workspace = TestWorkspace(workspace_size.value)
    if workspace_size.value:
        status = LIB.infiniopFlashAttention(descriptor, workspace.data(), workspace_size.value - 1, out.data(),
                                            q.data(), k.data(), v.data(), mask.data() if mask else None, None)
        assert status == INSUFFICIENT_WORKSPACE, status

    def lib_flash_attention():
        check_error(LIB.infiniopFlashAttention(
            descriptor, workspace.data(), workspace_size.value, out.data(), q.data(), k.data(), v.data(),
            mask.data() if mask and not mask_null else None, None), "infiniopFlashAttention")

    lib_flash_attention()
    got = as4(out)
    tol = _TOLERANCE_MAP[dtype]
    close = np.abs(got - ans) <= tol["atol"] + tol["rtol"] * np.abs(ans)
    assert close.all(), "%d of %d values out of tolerance, worst |diff| %.3g" % (
        (~close).sum(), close.size, np.abs(got - ans).max())
    if hidden is not None:
        empty = hidden.all(axis=1)
        assert (got[empty] == 0).all(), "rows of fully hidden batches are not exactly 0"
    workspace.free()
    destroy = LIB.infiniopDestoryFlashAttentionDescriptor if mask_null else LIB.infiniopDestroyFlashAttentionDescriptor
    check_error(destroy(descriptor), "destroy")
    assert destroy(descriptor) == BAD_PARAM  # a second destroy


def test_operator(handle, device, cases, dtypes):
    rng = np.random.default_rng(2024)
    n = 0
    for c, case in enumerate(cases):
        for d, dtype in enumerate(dtypes):
            test(handle, device, *case, dtype, _MASK_DTYPES[(3 * c + d) % len(_MASK_DTYPES)], rng)
            n += 1
    # every mask dtype once, with a fully hidden batch; and a NULL mask pointer at run time
    for mask_dtype in _MASK_DTYPES:
        test(handle, device, (2, 2, 7, 16), (1, 67), None, (2, 67), "contiguous", InfiniDtype.F16, mask_dtype, rng,
             hide_batch0=True)
        n += 1
    test(handle, device, (2, 2, 7, 16), (2, 7), None, (2, 7), "contiguous", InfiniDtype.F32, InfiniDtype.I64, rng,
         mask_null=True)
    return n + 1


def test_bad_input(handle):
    """A few documented statuses through ctypes (tests/infiniop/test_errors.c has them all)."""
    def desc(shape, strides, dtype):
        d = c_void_p()
        check_error(LIB.infiniopCreateTensorDescriptor(
            byref(d), len(shape), (c_size_t * len(shape))(*shape),
            (c_ssize_t * len(shape))(*strides) if strides else None, dtype), "infiniopCreateTensorDescriptor")
        return d

    f16 = InfiniDtype.F16
    good = desc((2, 4, 8, 16), None, f16)
    strided = desc((2, 4, 8, 16), (1024, 256, 32, 2), f16)
    wrong = desc((2, 4, 8, 8), None, f16)
    fa = c_void_p()
    create = LIB.infiniopCreateFlashAttentionDescriptor
    assert create(None, byref(fa), good, good, good, good, None) == NULL_POINTER
    assert create(handle, byref(fa), good, strided, good, good, None) == BAD_TENSOR_STRIDES
    assert create(handle, byref(fa), good, good, wrong, good, None) == BAD_TENSOR_SHAPE
    assert create(handle, byref(fa), good, good, good, good, None) == SUCCESS
    assert LIB.infiniopFlashAttention(fa, None, 0, None, None, None, None, None, None) == NULL_POINTER
    check_error(LIB.infiniopDestroyFlashAttentionDescriptor(fa), "destroy")
    for d in (good, strided, wrong):
        check_error(LIB.infiniopDestroyTensorDescriptor(d), "infiniopDestroyTensorDescriptor")
    assert LIB.infiniopDestroyTensorDescriptor(good) == BAD_PARAM


def main():
    global LIB
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", default=os.environ.get("FLASHC_LIB", "libflashc.so"),
                        help="the flashc shared library (also libinfiniop.so when installed under that name)")
    args = parser.parse_args()
    LIB = load_library(args.lib)
    handle = c_void_p()
    check_error(LIB.infiniopCreateHandle(byref(handle)), "infiniopCreateHandle")
    n = test_operator(handle, INFINI_DEVICE_CPU, _TEST_CASES, _TENSOR_DTYPES)
    test_bad_input(handle)
    check_error(LIB.infiniopDestroyHandle(handle), "infiniopDestroyHandle")
    print("\033[92mTest passed!\033[0m (%d operator cases)" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
