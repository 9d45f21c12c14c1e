"""The flash_attn functions under torch.compile(fullgraph=True) on the CPU (flash_attn_compile.py)."""
import pytest

torch = pytest.importorskip("torch")

import flash_attn_compile as fcc  # noqa: E402


@pytest.mark.parametrize("name", list(fcc.CASES))
def test_compile_fullgraph_cpu(name):
    fcc.CASES[name]("cpu", torch.float32)
