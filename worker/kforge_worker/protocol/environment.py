"""What the worker runs on: the `environment` object of the `hello` message.

Written before the request is read, so it describes the machine: the current CUDA device where one
is visible, `cpu` otherwise. Tools that are absent (nvidia-smi, nvcc, Triton) give null.
"""

import os
import platform
import re
import shutil
import subprocess
from typing import List, Optional

import torch

TOOL_TIMEOUT_SECONDS = 10
TOOL_OUTPUT_LIMIT_BYTES = 64 * 1024


def run_tool(command: List[str]) -> Optional[str]:
    """Runs a short diagnostic command; its stdout (capped) or None when it is absent or fails."""
    if shutil.which(command[0]) is None and not os.path.isfile(command[0]):
        return None
    try:
        result = subprocess.run(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=TOOL_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    return result.stdout[:TOOL_OUTPUT_LIMIT_BYTES].decode("utf-8", "replace")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def triton_version() -> Optional[str]:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:
        return None
    try:
        return version("triton")
    except PackageNotFoundError:
        return None


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


def l2_cache_bytes(device: torch.device) -> Optional[int]:
    """The L2 size of a CUDA device in bytes, or None (cpu, or a torch that does not report it)."""
    if device.type != "cuda":
        return None
    size = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", None)
    return int(size) if size else None


def _smi_selector(properties) -> List[str]:
    uuid = getattr(properties, "uuid", None)
    if uuid:
        text = str(uuid)
        return ["--id=" + (text if text.startswith("GPU-") else "GPU-" + text)]
    return ["--id=0"]


def _smi_number(text: str) -> Optional[int]:
    try:
        return int(float(text.strip()))
    except ValueError:
        return None


def gpu_driver_and_clocks(properties) -> tuple:
    """(driver version, clocks in MHz) read through nvidia-smi, or (None, None)."""
    fields = "driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem"
    output = run_tool(
        ["nvidia-smi", *_smi_selector(properties), f"--query-gpu={fields}", "--format=csv,noheader,nounits"]
    )
    if not output or not output.strip():
        return None, None
    values = [part.strip() for part in output.strip().splitlines()[0].split(",")]
    if len(values) != 5:
        return None, None
    clocks = {
        "sm_mhz": _smi_number(values[1]),
        "memory_mhz": _smi_number(values[2]),
        "sm_max_mhz": _smi_number(values[3]),
        "memory_max_mhz": _smi_number(values[4]),
    }
    return values[0] or None, clocks


def collect_environment(index: Optional[int] = None) -> dict:
    """The `hello` message's `environment` (docs/worker-protocol.md, Start-up): of CUDA device
    `index` (default: the current one; a worker started without its context has not made its
    device current yet)."""
    environment = {
        "device": "cpu",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "driver": None,
        "python": platform.python_version(),
        "cpu": cpu_model(),
        "threads": torch.get_num_threads(),
        "capability": None,
        "sm_count": None,
        "l2_bytes": None,
        "clocks": None,
        "triton": triton_version(),
        "nvcc": nvcc_version(),
    }
    if torch.cuda.is_available():
        device = torch.device("cuda", torch.cuda.current_device() if index is None else index)
        properties = torch.cuda.get_device_properties(device)
        driver, clocks = gpu_driver_and_clocks(properties)
        environment.update(
            device=properties.name,
            driver=driver,
            capability=f"{properties.major}.{properties.minor}",
            sm_count=properties.multi_processor_count,
            l2_bytes=l2_cache_bytes(device),
            clocks=clocks,
        )
    return environment
