"""Arrays of the caller's framework: outputs are allocated where the inputs live.

numpy arrays give numpy outputs, torch tensors torch outputs (same device), and any other
``__dlpack__`` producer (JAX, CuPy, ...) gets numpy storage handed back through its framework's
``from_dlpack`` when it has one; buffer-protocol objects (memoryview, array.array, ...) get numpy.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np


def _is_torch(x: Any) -> bool:
    t = sys.modules.get("torch")
    return t is not None and isinstance(x, t.Tensor)


def dtype_name(dtype: Any) -> str:
    """'float16' for 'float16', np.float16, np.dtype('float16') or torch.float16."""
    if isinstance(dtype, str):
        return dtype
    text = str(dtype)
    if text.startswith("torch."):
        return text[len("torch."):]
    return np.dtype(dtype).name


def dtype_of(x: Any) -> str:
    return dtype_name(x.dtype)


class Foreign:
    """An array flashc knows only through ``__dlpack__`` or the buffer protocol: its shape and
    dtype as the extension reads them, and the object itself for the extension to read."""

    def __init__(self, obj: Any, name: str):
        from . import _flashc
        self.obj = obj
        self.shape, self.dtype = _flashc.array_info(obj, name)

    def numpy(self) -> np.ndarray:
        """A numpy view of it, where numpy can make one (reshaping and transposing need it)."""
        if hasattr(self.obj, "__dlpack__") and hasattr(np, "from_dlpack"):
            return np.from_dlpack(self.obj)
        return np.asarray(self.obj)


def as_array(x: Any, name: str) -> Any:
    """x when flashc can read it as an array (numpy and torch as they are, other producers as a
    Foreign); TypeError naming the argument otherwise (None, lists, ...)."""
    if isinstance(x, (np.ndarray, Foreign)) or _is_torch(x):
        return x
    if x is None or isinstance(x, (list, tuple, int, float, str, bytes)):
        raise TypeError(f"flashc: {name} must be an array (numpy, torch, or any object with __dlpack__ or the "
                        f"buffer protocol), got {'None' if x is None else type(x).__name__}")
    return Foreign(x, name)


def as_optional(x: Any, name: str) -> Any:
    return None if x is None else as_array(x, name)


class Framework:
    """Allocation in one framework; `like` fixes the device."""

    def __init__(self, like: Any):
        like = like.obj if isinstance(like, Foreign) else like
        self.like = like
        self.torch = sys.modules["torch"] if _is_torch(like) else None
        self.wrap = None
        if self.torch is None and not isinstance(like, np.ndarray) and hasattr(like, "__dlpack__"):
            root = sys.modules.get(type(like).__module__.split(".")[0])
            for space in (root, getattr(root, "numpy", None), getattr(root, "dlpack", None)):
                if space is not None and hasattr(space, "from_dlpack"):
                    self.wrap = space.from_dlpack
                    break

    def empty(self, shape: tuple, dtype: str) -> Any:
        if self.torch is not None:
            return self.torch.empty(shape, dtype=getattr(self.torch, dtype), device=self.like.device)
        if dtype == "bfloat16":
            try:
                import ml_dtypes
            except ImportError:
                raise ValueError("flashc: bfloat16 numpy outputs need the ml_dtypes package; "
                                 "use torch tensors or another out_dtype") from None
            return np.empty(shape, dtype=ml_dtypes.bfloat16)
        return np.empty(shape, dtype=np.dtype(dtype))

    def zeros(self, shape: tuple, dtype: str) -> Any:
        if self.torch is not None:
            return self.torch.zeros(shape, dtype=getattr(self.torch, dtype), device=self.like.device)
        return np.zeros(shape, dtype=np.dtype(dtype))

    def full(self, shape: tuple, dtype: str, value: Any) -> Any:
        x = self.zeros(shape, dtype)
        x[...] = value
        return x

    def hand_back(self, x: Any) -> Any:
        """An output in the caller's framework (numpy storage re-wrapped for other producers)."""
        return self.wrap(x) if self.wrap is not None else x


def to_numpy(x: Any) -> np.ndarray:
    """A host array as numpy (small metadata: sinks, lengths)."""
    if isinstance(x, Foreign):
        return x.numpy()
    if _is_torch(x):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def set_all(x: Any, value: float, name: str) -> None:
    """Writes value into every element of a caller's output array."""
    if isinstance(x, Foreign):
        try:
            x = np.asarray(x.obj)
        except Exception:
            raise ValueError(f"flashc: {name} ({type(x.obj).__name__}) cannot be written from Python") from None
    x[...] = value


def native(x: Any) -> Any:
    """What the extension reads: torch tensors leave autograd (DLPack refuses tensors that require
    grad); Foreign arrays are their object; everything else is passed as it is."""
    if isinstance(x, Foreign):
        return x.obj
    if _is_torch(x):
        if x.device.type != "cpu":
            raise NotImplementedError(
                f"flashc: a tensor on {x.device} was given; the Python package runs only on the CPU backend "
                "so far: move it to the CPU")
        if x.requires_grad:
            return x.detach()
    return x


def host_int64(x: Any, name: str) -> np.ndarray:
    """Small per-batch metadata (lengths, prefixes) as a contiguous int64 numpy vector; integers
    only (a float would be truncated)."""
    if _is_torch(x):
        if x.device.type != "cpu":
            raise NotImplementedError(f"flashc: {name} lives on {x.device}; the Python package runs only on the CPU "
                                      "backend so far")
        x = x.detach().numpy()
    if x is None:
        raise TypeError(f"flashc: {name} must be an array of integers, got None")
    a = np.asarray(x)
    if a.dtype.kind not in "iu" and a.size > 0:
        raise ValueError(f"flashc: {name} must hold integers, got {a.dtype.name} {a.tolist()!r:.80}")
    a = np.ascontiguousarray(a, dtype=np.int64)
    if a.ndim != 1:
        raise ValueError(f"flashc: {name} must be one-dimensional, got shape {a.shape}")
    return a
