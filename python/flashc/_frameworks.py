"""Arrays of the caller's framework: outputs are allocated where the inputs live.

numpy arrays give numpy outputs, torch tensors torch outputs (same device, CUDA included), and any
other ``__dlpack__`` producer (JAX, CuPy, ...) gets its outputs handed back through its framework's
``from_dlpack`` when it has one: numpy storage for host arrays, torch storage on the device for
CUDA arrays (which are read through ``torch.from_dlpack``, so torch is needed for them);
buffer-protocol objects (memoryview, array.array, ...) get numpy.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np


_torch_tensor = None  # torch.Tensor once torch is imported (flashc never imports it itself)


def _is_torch(x: Any) -> bool:
    global _torch_tensor
    if _torch_tensor is None:
        t = sys.modules.get("torch")
        if t is None or not hasattr(t, "Tensor"):  # not imported, or still importing
            return False
        _torch_tensor = t.Tensor
    return isinstance(x, _torch_tensor)


_DL_CUDA = (2, 13)  # DLPack device types: CUDA device memory, CUDA managed memory


def _on_cuda_device(x: Any) -> bool:
    """A non-torch array in CUDA memory (by its __dlpack_device__)."""
    probe = getattr(x, "__dlpack_device__", None)
    if probe is None or isinstance(x, np.ndarray):
        return False
    try:
        return int(probe()[0]) in _DL_CUDA
    except Exception:
        return False


def _torch_view(x: Any, name: str) -> Any:
    """A CUDA array of another framework as a torch tensor over the same memory (torch's current
    stream waits for the producer's, as the DLPack protocol has it)."""
    try:
        import torch
    except ImportError:
        raise NotImplementedError(f"flashc: {name} is a CUDA array ({type(x).__name__}); flashc reads device arrays "
                                  "of other frameworks through torch, which is not installed") from None
    return torch.from_dlpack(x)


_dtype_names: dict = {}  # dtype objects seen → their names (every call of every array asks)


def dtype_name(dtype: Any) -> str:
    """'float16' for 'float16', np.float16, np.dtype('float16') or torch.float16."""
    if isinstance(dtype, str):
        return dtype
    try:
        return _dtype_names[dtype]
    except (KeyError, TypeError):
        pass
    text = str(dtype)
    name = text[len("torch."):] if text.startswith("torch.") else np.dtype(dtype).name
    try:
        _dtype_names[dtype] = name
    except TypeError:  # unhashable: not kept
        pass
    return name


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
    """x when flashc can read it as an array (numpy and torch as they are, CUDA arrays of other
    frameworks as torch tensors, other producers as a Foreign); TypeError naming the argument
    otherwise (None, lists, ...)."""
    if _is_torch(x) and x.device.type not in ("cpu", "cuda"):
        raise NotImplementedError(f"flashc: {name} is on {x.device}; flashc runs on the CPU and on CUDA devices")
    if isinstance(x, (np.ndarray, Foreign)) or _is_torch(x):
        return x
    if _on_cuda_device(x):
        return _torch_view(x, name)
    if x is None or isinstance(x, (list, tuple, int, float, str, bytes)):
        raise TypeError(f"flashc: {name} must be an array (numpy, torch, or any object with __dlpack__ or the "
                        f"buffer protocol), got {'None' if x is None else type(x).__name__}")
    return Foreign(x, name)


def as_optional(x: Any, name: str) -> Any:
    return None if x is None else as_array(x, name)


class Framework:
    """Allocation in one framework; `like` (the caller's q) fixes the framework and the device."""

    def __init__(self, like: Any):
        like = like.obj if isinstance(like, Foreign) else like
        self.like = like
        self.wrap = None
        if not _is_torch(like) and not isinstance(like, np.ndarray) and hasattr(like, "__dlpack__"):
            root = sys.modules.get(type(like).__module__.split(".")[0])
            for space in (root, getattr(root, "numpy", None), getattr(root, "dlpack", None)):
                if space is not None and hasattr(space, "from_dlpack"):
                    self.wrap = space.from_dlpack
                    break
            if _on_cuda_device(like):  # device outputs are allocated by torch, handed back by from_dlpack
                self.like = _torch_view(like, "q")
        self.torch = sys.modules["torch"] if _is_torch(self.like) else None
        #: the CUDA device of a device problem (torch.device), else None
        self.device = self.like.device if self.torch is not None and self.like.device.type == "cuda" else None

    def launch(self, d: dict) -> None:
        """What a device run needs: torch's current stream on the device and a workspace allocator
        (torch's caching allocator, stream-ordered: no synchronisation)."""
        if self.device is None:
            return
        torch, dev = self.torch, self.device
        d["stream"] = torch.cuda.current_stream(dev).cuda_stream
        d["workspace"] = lambda nbytes: native(torch.empty(nbytes, dtype=torch.uint8, device=dev))

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
    """An array as host numpy (small metadata: sinks, lengths; device tensors are copied)."""
    if isinstance(x, Foreign):
        return x.numpy()
    if _is_torch(x):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def set_all(x: Any, value: float, name: str, start: int = 0) -> None:
    """Writes value into every element of a caller's output array (rows from start on)."""
    if isinstance(x, Foreign):
        try:
            x = np.asarray(x.obj)
        except Exception:
            raise ValueError(f"flashc: {name} ({type(x.obj).__name__}) cannot be written from Python") from None
    if start:
        x[start:] = value
    else:
        x[...] = value


def native(x: Any) -> Any:
    """What the extension reads: torch tensors as DLPack capsules (torch's own export, outside
    autograd: no stream synchronisation and no current-device requirement, as flashc runs on the
    tensor's device and torch's current stream there); Foreign arrays are their object; everything
    else is passed as it is.  The extension says which devices this build runs on."""
    if isinstance(x, Foreign):
        return x.obj
    if _is_torch(x):
        x = x.detach()
        if x.is_conj() or x.is_neg():
            x = x.resolve_conj().resolve_neg()
        return _to_dlpack(x)
    return x


_torch_to_dlpack = None


def _to_dlpack(x: Any) -> Any:
    global _torch_to_dlpack
    if _torch_to_dlpack is None:
        from torch.utils.dlpack import to_dlpack
        _torch_to_dlpack = to_dlpack
    return _torch_to_dlpack(x)


def host_int64(x: Any, name: str) -> np.ndarray:
    """Small per-batch metadata (lengths, prefixes) as a contiguous int64 numpy vector; integers
    only (a float would be truncated).  The library reads lengths from host memory while planning:
    a device tensor is copied to the host (which waits for the device)."""
    if _is_torch(x):
        x = x.detach().cpu().numpy()
    elif _on_cuda_device(x):
        x = _torch_view(x, name).cpu().numpy()
    if x is None:
        raise TypeError(f"flashc: {name} must be an array of integers, got None")
    a = np.asarray(x)
    if a.dtype.kind not in "iu" and a.size > 0:
        raise ValueError(f"flashc: {name} must hold integers, got {a.dtype.name} {a.tolist()!r:.80}")
    a = np.ascontiguousarray(a, dtype=np.int64)
    if a.ndim != 1:
        raise ValueError(f"flashc: {name} must be one-dimensional, got shape {a.shape}")
    return a
