"""What the worker runs on: the `environment` object of the `hello` message.

Written before the request is read, so it describes the machine: the current CUDA device where one
is visible, `cpu` otherwise. Tools that are absent (nvidia-smi, and the tools each backend reports:
nvcc, Triton; backends/*/doctor.py) give null.
"""

import platform
from typing import List, Optional

import torch

from ..backends.registry import tool_versions
from ..backends.tools import run_tool


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


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
        **tool_versions(),
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
