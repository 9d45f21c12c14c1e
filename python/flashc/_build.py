"""What this build of flashc has (build_info), and the opt-in flash_attn alias."""
from __future__ import annotations

import sys
import types
from typing import Any, Dict

from . import _flashc


def build_info() -> Dict[str, Any]:
    """How this flashc was built and what it sees here:

    ``cuda``: the CUDA backend is built in (``pip install .`` builds it where nvcc is found; CUDA
    tensors then run on it); ``cuda_runtime``: how its CUDA runtime is linked (``"static"``: inside
    the extension, no CUDA package needed at run time) or None; ``cuda_runtime_version``: e.g.
    ``"13.0"``; ``cuda_devices``: the CUDA devices it sees now, and ``cuda_unavailable`` why none
    ("" when some); ``cpu_isa``: the CPU kernel path (or the error FLASHC_ISA causes)."""
    raw = _flashc.build_info()
    rt = raw["cuda_runtime_version"]
    try:
        isa = _flashc.cpu_isa()
    except RuntimeError as e:
        isa = f"error: {e}"
    return {"version": _flashc.native_version, "cuda": raw["cuda"],
            "cuda_runtime": "static" if raw["cuda_runtime_static"] else None,
            "cuda_runtime_version": f"{rt // 1000}.{rt % 1000 // 10}" if rt else None,
            "cuda_devices": raw["cuda_devices"], "cuda_unavailable": raw["cuda_unavailable"], "cpu_isa": isa}


def install_flash_attn_alias(replace: bool = False) -> types.ModuleType:
    """Opt-in, for this process: ``import flash_attn`` (and ``flash_attn.flash_attn_interface``,
    ``flash_attn.bert_padding``, ``flash_attn_2_cuda``) then gives flashc.flash_attn, so code
    written for FlashAttention runs unchanged.  Call it before that code imports flash_attn; a
    flash_attn already imported is a RuntimeError unless ``replace`` (its modules are then
    dropped from sys.modules; objects imported from it stay what they were).  Returns the
    package."""
    from . import flash_attn as fa
    current = sys.modules.get("flash_attn")
    if current is not None and current is not fa:
        if not replace:
            raise RuntimeError(f"flashc: flash_attn is already imported ({getattr(current, '__file__', current)}); "
                               "call install_flash_attn_alias() before importing it, or pass replace=True")
        for name in [n for n in sys.modules if n == "flash_attn" or n.startswith("flash_attn.")]:
            del sys.modules[name]
    ext = types.ModuleType("flash_attn_2_cuda", "flashc's stand-in for flash_attn's extension module")
    ext.__dict__.update(vars(fa.flash_attn_interface.flash_attn_gpu))
    sys.modules.update({"flash_attn": fa, "flash_attn.flash_attn_interface": fa.flash_attn_interface,
                        "flash_attn.bert_padding": fa.bert_padding, "flash_attn_2_cuda": ext})
    return fa
