"""Arrays of the caller's framework: outputs are allocated where the inputs live.

numpy arrays give numpy outputs, torch tensors torch outputs (same device), and any other
``__dlpack__`` producer (JAX, CuPy, ...) gets numpy storage handed back through its framework's
``from_dlpack`` when it has one.
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


class Framework:
    """Allocation in one framework; `like` fixes the device."""

    def __init__(self, like: Any):
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

    def hand_back(self, x: Any) -> Any:
        """An output in the caller's framework (numpy storage re-wrapped for other producers)."""
        return self.wrap(x) if self.wrap is not None else x


def native(x: Any) -> Any:
    """What the extension reads: torch tensors leave autograd (DLPack refuses tensors that require
    grad); everything else is passed as it is."""
    if _is_torch(x):
        if x.device.type != "cpu":
            raise NotImplementedError(
                f"flashc: a tensor on {x.device} was given; this build has only the CPU backend "
                "(CUDA tensors will go to the CUDA backend once it exists): move it to the CPU")
        if x.requires_grad:
            return x.detach()
    return x


def host_int64(x: Any, name: str) -> np.ndarray:
    """Small per-batch metadata (lengths, prefixes) as a contiguous int64 numpy vector."""
    if _is_torch(x):
        if x.device.type != "cpu":
            raise NotImplementedError(f"flashc: {name} lives on {x.device}; this build has only the CPU backend")
        x = x.detach().numpy()
    a = np.ascontiguousarray(np.asarray(x), dtype=np.int64)
    if a.ndim != 1:
        raise ValueError(f"flashc: {name} must be one-dimensional, got shape {a.shape}")
    return a
