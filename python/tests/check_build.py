"""python_build_info (ctest, the Release test build): the extension as the build made it says what it
has, and computes.  Usage: check_build.py cuda|cpu (whether the build configured the CUDA backend)."""
import sys

import numpy as np

import flashc

want_cuda = sys.argv[1] == "cuda"
info = flashc.build_info()
print("python_build_info:", info)
assert info["cuda"] == want_cuda, f"build_info says cuda={info['cuda']}, the build configured {want_cuda}"
assert (info["cuda_runtime"] == "static") == want_cuda
q = np.random.default_rng(0).uniform(-1, 1, (1, 2, 7, 8)).astype(np.float32)
out = flashc.attention(q, q, q, causal=True)
s = np.einsum("bnid,bnjd->bnij", q.astype(np.float64), q) / np.sqrt(8)
s = np.where(np.tril(np.ones((7, 7), bool)), s, -np.inf)
p = np.exp(s - s.max(-1, keepdims=True))
want = np.einsum("bnij,bnjd->bnid", p / p.sum(-1, keepdims=True), q)
assert np.abs(out - want).max() < 1e-5, np.abs(out - want).max()
print("python_build_info: ok")
