"""Type hints of the C extension (python/src/module.c)."""
from typing import Any, Dict, Tuple

native_version: str

def forward(desc: Dict[str, Any], threads: int = 0) -> None:
    """Runs an attention forward described by `desc` (built by flashc._describe.Problem): host arrays
    on the CPU backend, CUDA arrays on the CUDA backend (desc["stream"], desc["workspace"]: an
    allocator of device bytes)."""

def backward(desc: Dict[str, Any], grads: Dict[str, Any], threads: int = 0) -> None:
    """Runs its backward, writing the gradient arrays in `grads`."""

def cpu_isa() -> str:
    """The CPU kernel path in use: "amx", "avx512bf16", "avx512", "avx2", "scalar" or "vec16".

    Raises RuntimeError, with the message every call would fail with, when FLASHC_ISA names a path
    this build lacks or this CPU cannot run."""

def array_info(obj: Any, name: str) -> Tuple[Tuple[int, ...], str]:
    """(shape, dtype name) of an object read through __dlpack__ or the buffer protocol."""

def build_info() -> Dict[str, Any]:
    """{"cuda": bool, "cuda_runtime_static": bool, "cuda_runtime_version": int (CUDART_VERSION, 0 without
    CUDA), "cuda_devices": int, "cuda_unavailable": str}."""

def plan_cache(slots: int) -> int:
    """Sets how many plans are kept for reuse (0: none); returns the previous count."""

def plan_cache_counts() -> Tuple[int, int]:
    """(hits, misses) since the module loaded: calls that found a kept plan, calls that planned."""
