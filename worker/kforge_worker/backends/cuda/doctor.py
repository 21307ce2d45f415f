"""The cuda backend needs nvcc to build its extensions: the `hello` environment's `nvcc`."""

import os
import re
import shutil
from typing import Dict, Optional

from ..backend import Doctor
from ..tools import run_tool


def nvcc_path() -> Optional[str]:
    found = shutil.which("nvcc")
    if found:
        return found
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    candidate = os.path.join(cuda_home, "bin", "nvcc")
    return candidate if os.path.isfile(candidate) else None


def nvcc_version() -> Optional[str]:
    path = nvcc_path()
    output = run_tool([path, "--version"]) if path else None
    if not output:
        return None
    match = re.search(r"release [\d.]+, V([\d.]+)", output) or re.search(r"release ([\d.]+)", output)
    return match.group(1) if match else None


def tool_versions() -> Dict[str, Optional[str]]:
    return {"nvcc": nvcc_version()}


DOCTOR = Doctor(tool_versions)
