"""Per-kernel resource usage, SASS and PTX of built extensions, read with `cuobjdump`.

The `build-info` message: `kernels` (registers, shared, stack and local memory per kernel and
architecture, parsed from `--dump-resource-usage`), `sass` and `ptx` (each capped at 512 KiB).
`collect_kernel_names` lists only the kernels (for `own-kernel` where no `build-info` is sent).
"""

import os
import re
import shutil
import subprocess
from typing import Iterable, List, Optional

TEXT_LIMIT_BYTES = 512 * 1024
TOOL_TIMEOUT_SECONDS = 120

_ARCH = re.compile(r"^\s*arch\s*=\s*(\S+)", re.MULTILINE)
_FUNCTION = re.compile(r"^\s*Function\s+(\S+?):\s*$")
_RESOURCES = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")


def find_cuobjdump() -> Optional[str]:
    found = shutil.which("cuobjdump")
    if found:
        return found
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    try:
        from torch.utils.cpp_extension import CUDA_HOME
        homes.insert(0, CUDA_HOME)
    except ImportError:
        pass
    for home in filter(None, homes):
        path = os.path.join(home, "bin", "cuobjdump")
        if os.path.isfile(path):
            return path
    return None


def run_capped(command: List[str], limit_bytes: int) -> str:
    """Stdout of `command`, at most `limit_bytes` (the rest is not read; the process is stopped)."""
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as process:
        data = process.stdout.read(limit_bytes + 1)
        truncated = len(data) > limit_bytes
        if truncated:
            process.kill()
        try:
            process.wait(timeout=TOOL_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    text = data[:limit_bytes].decode("utf-8", "replace")
    return text + ("\n[truncated]\n" if truncated else "")


def demangle(names: List[str]) -> List[str]:
    """C++ names through c++filt where it is installed; the names unchanged otherwise."""
    tool = shutil.which("c++filt")
    if not tool or not names:
        return names
    try:
        result = subprocess.run([tool], input="\n".join(names).encode(), stdout=subprocess.PIPE,
                                timeout=TOOL_TIMEOUT_SECONDS, check=True)
    except (OSError, subprocess.SubprocessError):
        return names
    lines = result.stdout.decode("utf-8", "replace").splitlines()
    return lines if len(lines) == len(names) else names


def parse_resource_usage(text: str) -> List[dict]:
    """Kernels from `cuobjdump --dump-resource-usage` output, one entry per (kernel, arch)."""
    kernels, arch, function = [], None, None
    for line in text.splitlines():
        arch_match = _ARCH.match(line)
        if arch_match:
            arch = arch_match.group(1)
            continue
        function_match = _FUNCTION.match(line)
        if function_match:
            function = function_match.group(1)
            continue
        resources = _RESOURCES.search(line)
        if resources and function:
            registers, stack, shared, local = (int(value) for value in resources.groups())
            kernels.append({"name": function, "mangled": function, "arch": arch, "registers": registers,
                            "shared_bytes": shared, "stack_bytes": stack, "local_bytes": local})
            function = None
    for kernel, name in zip(kernels, demangle([kernel["mangled"] for kernel in kernels])):
        kernel["name"] = name
    return kernels


def collect_kernel_names(shared_objects: Iterable[str]) -> dict:
    """`{"kernels": [...], "error"?: ...}` as in collect_build_info, without SASS and PTX."""
    tool = find_cuobjdump()
    if tool is None:
        return {"kernels": [], "error": "cuobjdump was not found (looked on PATH and in CUDA_HOME/bin)"}
    kernels = []
    for path in sorted(set(shared_objects)):
        kernels.extend(parse_resource_usage(run_capped([tool, "--dump-resource-usage", path], TEXT_LIMIT_BYTES)))
    return {"kernels": kernels}


def collect_build_info(shared_objects: Iterable[str]) -> dict:
    """The fields of the `build-info` message for the given shared objects."""
    paths = sorted(set(shared_objects))
    tool = find_cuobjdump()
    info = {"kernels": [], "sass": "", "ptx": "", "objects": paths}
    if tool is None:
        info["error"] = "cuobjdump was not found (looked on PATH and in CUDA_HOME/bin)"
        return info
    sass, ptx = [], []
    for path in paths:
        usage = run_capped([tool, "--dump-resource-usage", path], TEXT_LIMIT_BYTES)
        info["kernels"].extend(parse_resource_usage(usage))
        sass.append(run_capped([tool, "--dump-sass", path], TEXT_LIMIT_BYTES))
        ptx.append(run_capped([tool, "--dump-ptx", path], TEXT_LIMIT_BYTES))
    info["sass"] = "".join(sass)[:TEXT_LIMIT_BYTES]
    info["ptx"] = "".join(ptx)[:TEXT_LIMIT_BYTES]
    return info
