"""Whether this platform lets a C++ exception cross from a candidate's extension into Python.

A case whose cheat relies on catching an error its extension raised (a `TORCH_CHECK` fired inside a
`load_inline` function, then an `except` that falls back to PyTorch) cannot show its cheat where
that exception kills the process instead: on the H200 host (torch 2.11, 2026-12-05, a probe
since removed: git show 34a21c1:bench/gpu/crash_probe.py) c07c died of SIGSEGV at the extension
call in a bare Python process with nothing of kforge loaded. The candidate then ends `crashed`,
which is its own verdict and no cheat passed; the test cannot tell more, so it skips, saying why,
once a minimal extension that raises in a process of its own confirms the platform does the same.

What kills it there is the message, not the exception. On the H100 host of 2026-12-06 (torch
2.11.0+cu130, g++ 13.3) a load_inline extension carries its own static copy of libstdc++ (no
libstdc++ among its NEEDED libraries, its own `num_put` facet), and writing an integer to a stream
inside it segfaults, raised or not: `TORCH_CHECK(false, "text")` reached Python's except while
`TORCH_CHECK(x.dim() == 1, "got ", x.dim())` and a bare `c10::str("n", x.dim())` killed the process.
c07c's message names the dimension count, so the probe's names a number too
(git show 34a21c1:bench/gpu/format_probe.py; docs/benchmarks/guard-h200.md, "2026-12-06, an H100").
"""

import functools
import subprocess
import sys
import tempfile
from typing import Optional

import torch

from verdicts import verdict
from worker_process import Evaluation

_PROBE = r"""
import sys
import torch
from torch.utils.cpp_extension import load_inline

source = 'torch::Tensor fail(torch::Tensor x) { TORCH_CHECK(x.dim() == 0, "raised on purpose: ", x.dim()); return x; }'
name = "kforge_exception_probe_int"
module = load_inline(name=name, cpp_sources=source, functions=["fail"], build_directory=sys.argv[1])
try:
    module.fail(torch.zeros(1))
except RuntimeError as error:
    print("caught:", str(error).splitlines()[0])
"""


@functools.lru_cache(maxsize=None)
def extension_exceptions_kill() -> Optional[str]:
    """Why a C++ exception raised in a load_inline extension, its message naming an integer, kills
    the process here, or None when Python catches it. A probe that fails any other way is an error of
    the test, not a skip."""
    with tempfile.TemporaryDirectory(prefix="kforge-exception-probe-") as build:
        probe = subprocess.run([sys.executable, "-c", _PROBE, build], capture_output=True, text=True, timeout=600)
    if probe.returncode == 0 and "caught:" in probe.stdout:
        return None
    if probe.returncode < 0:
        return (
            f"on torch {torch.__version__} a TORCH_CHECK naming an integer in a minimal load_inline extension killed "
            f"its process (signal {-probe.returncode}) instead of reaching Python's except"
        )
    raise AssertionError(f"the exception probe failed (exit {probe.returncode}): {probe.stderr[-2000:]}")


def platform_crash(case: dict, result: Evaluation) -> Optional[str]:
    """Why `result` cannot test `case` here: the case relies on an exception from its extension
    (`raises_in_extension` in the manifest), its candidate died of a signal (`crashed`), and this
    platform kills such a process whatever kforge does. None when the result is to be judged."""
    if not case.get("raises_in_extension") or verdict(result) != ("crashed", "crash"):
        return None
    return extension_exceptions_kill()
