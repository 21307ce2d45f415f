#!/usr/bin/env python3
"""What kills a load_inline extension's process on this host: the exception, or the message?

Each variant builds a one-function extension (C++ only, or its function in nvcc's host code) and
calls it once in a process of its own, faulthandler on. Variants differ in one thing each: whether
the function raises, whether its message writes an integer to a stream, whether the tensor is on
the GPU. c07c of the adversarial corpus (a fallback that runs) raises `TORCH_CHECK(x.dim() == 1,
"...", x.dim(), "...")`; where that kills the process, this names the ingredient.

    python3 bench/gpu/format_probe.py            # every variant, at once
    python3 bench/gpu/format_probe.py NAME ...   # some of them

Prints where the compiler finds libstdc++ (a link that finds no `libstdc++.so` takes the static
archive), then each variant's exit status (a negative status is the signal), whether its built
extension lists libstdc++ among its NEEDED libraries, and its last output lines.
"""

import subprocess
import sys

CHILD = r"""
import faulthandler, subprocess, sys
faulthandler.enable()
import torch
from torch.utils.cpp_extension import load_inline

name, body, device, nvcc = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "nvcc"
headers = "#include <torch/extension.h>\n#include <sstream>\n"
function = "torch::Tensor probe(torch::Tensor x) { " + body + " }"
if nvcc:
    module = load_inline(name="format_probe_" + name, cpp_sources="torch::Tensor probe(torch::Tensor x);",
                         cuda_sources=headers + function, functions=["probe"])
else:
    module = load_inline(name="format_probe_" + name, cpp_sources=headers + function, functions=["probe"])
try:
    dynamic = subprocess.run(["readelf", "-d", module.__file__], capture_output=True, text=True).stdout
    print(name, "libstdc++ among NEEDED:", "libstdc++" in dynamic, flush=True)
except OSError as error:
    print(name, "readelf:", error, flush=True)
try:
    module.probe(torch.zeros(2, 2, device=device))
    print(name, "returned")
except RuntimeError as error:
    print(name, "caught:", str(error).splitlines()[0])
"""

#: name -> (function body, tensor's device, compiler of the function)
VARIANTS = {
    "check_text_cpu": ('TORCH_CHECK(false, "raised on purpose"); return x;', "cpu", "c++"),
    "check_text_cuda": ('TORCH_CHECK(false, "raised on purpose"); return x;', "cuda", "c++"),
    "check_text_nvcc": ('TORCH_CHECK(x.dim() == 1, "expects 1-D"); return x;', "cuda", "nvcc"),
    "runtime_error_cuda": ('throw std::runtime_error("plain"); return x;', "cuda", "c++"),
    "check_integer_cpu": ('TORCH_CHECK(x.dim() == 1, "got ", x.dim(), " dims"); return x;', "cpu", "c++"),
    "check_integer_nvcc": ('TORCH_CHECK(x.dim() == 1, "got ", x.dim(), " dims"); return x;', "cuda", "nvcc"),
    "format_integer_only": (
        'std::string s = c10::str("n", x.dim()); if (s.empty()) throw std::runtime_error("empty"); return x;',
        "cpu",
        "c++",
    ),
    "ostream_integer_only": (
        'std::ostringstream s; s << x.dim(); if (s.str().empty()) throw std::runtime_error("empty"); return x;',
        "cpu",
        "c++",
    ),
}


def main(names: list) -> int:
    chosen = names or list(VARIANTS)
    unknown = [name for name in chosen if name not in VARIANTS]
    if unknown:
        print(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}", file=sys.stderr)
        return 2
    if "cuda" in {VARIANTS[name][1] for name in chosen}:
        import torch

        if not torch.cuda.is_available():
            print("a variant wants a CUDA device and this torch sees none", file=sys.stderr)
            return 2
    for library in ("libstdc++.so", "libstdc++.a"):
        try:
            found = subprocess.run(["c++", f"-print-file-name={library}"], capture_output=True, text=True).stdout
        except OSError as error:
            print(f"c++ could not be asked where {library} is: {error}")
            continue
        # a bare name back means the compiler's search path has no such file
        print(f"c++ finds {library}: {found.strip() if found.strip() != library else 'none'}")
    processes = {
        name: subprocess.Popen(
            [sys.executable, "-c", CHILD, name, *VARIANTS[name]],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name in chosen
    }
    for name, process in processes.items():
        try:
            out, _ = process.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            process.kill()
            out = process.communicate()[0] + "\n(killed after 600 s: its build or call hung)"
        lines = [line for line in out.splitlines() if line and not line.startswith("Extension modules")]
        print(f"== {name} rc {process.returncode}")
        print("\n".join(lines[-4:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
