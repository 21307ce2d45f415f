"""What the worker runs on: the `environment` object of the `hello` message.

Written before the request is read, so it describes the machine: the current CUDA device where one
is visible, `cpu` otherwise. Tools that are absent (nvidia-smi, nvcc, Triton) give null.
"""

import importlib
import os
import platform
import re
import shutil
import subprocess
import sys
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


WARM_DEVICE_VARIABLE = "KFORGE_WARM_DEVICE"
#: `0`: the warm start makes no CUDA context (the worker will wait for the device; see `warm_up`).
WARM_CONTEXT_VARIABLE = "KFORGE_WARM_CONTEXT"


def warm_up(device: str, role: str, make_context: bool = True) -> Optional[int]:
    """The warm start (docs/worker-protocol.md, Start-up), before `hello`: a candidate worker
    imports torch's extension builder (it pulls in setuptools, about a second); on `cuda:N` the
    worker makes that device current and creates its context. So the evaluation that later takes
    this worker waits for neither. Without `make_context` (a worker that will wait for the device
    behind other evaluations) it touches no device: only the imports are done, and the context
    is made once its evaluation holds the device, so that a waiting worker holds no device memory.
    Returns the CUDA device's index (None for `cpu`), which `hello` describes. ValueError when
    `device` is not `cpu` or an existing `cuda:N`."""
    match = re.fullmatch(r"cuda:(\d+)", device)
    if device != "cpu" and match is None:
        raise ValueError(f"expected {WARM_DEVICE_VARIABLE} to be `cpu` or `cuda:N`, got {device!r}")
    if role == "candidate":
        importlib.import_module("torch.utils.cpp_extension")
    importlib.import_module(f"kforge_worker.roles.{role}_role")
    if match is None:
        return None
    index = int(match.group(1))
    if not torch.cuda.is_available() or index >= torch.cuda.device_count():
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        raise ValueError(f"{WARM_DEVICE_VARIABLE}={device} names no device: torch sees {count} CUDA devices")
    if not make_context:
        _warm_imports(role)
        return index
    torch.cuda.set_device(index)
    torch.empty(1, device=torch.device("cuda", index))
    torch.cuda.synchronize(index)
    _warm_lazy_paths(torch.device("cuda", index), role)
    return index


def _warm_imports(role: str) -> None:
    """The warm start's imports that need no device: torch._dynamo (torch 2.x imports it on first
    use of the profiler's trace and of module hooks) and, in the reference role, the FLOP counter's
    module (a large part of torch._decomp). A failure is said and left for the evaluation."""
    names = ["torch._dynamo"] + (["torch.utils.flop_counter"] if role == "reference" else [])
    for name in names:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError:
            pass  # torch 1.x has neither
        except Exception as error:  # noqa: BLE001 - a warm-up, never a verdict; said, since a failed
            # first import leaves torch._dynamo half registered and every later import of it fails too
            print(
                f"kforge worker: warm-up could not import {name}: {type(error).__name__}: {error}",
                file=sys.stderr,
                flush=True,
            )


def _warm_lazy_paths(device: torch.device, role: str) -> None:
    """Best effort, before the lease: what an evaluation would otherwise set up while it holds the
    GPU on first use: the device's random generator (inputs are drawn there), the word digest's
    kernels and, in the reference role, PyTorch's FLOP counter (torch 2.x imports a large part of
    torch._decomp for it); and torch._dynamo, which torch 2.x imports on first use of the profiler's
    trace (candidate role: `own-kernel`) and of the FLOP counter's module hooks (reference role:
    the roofline) - about 2 s and 2.4 s of those stages on the H200 host (sampled by
    bench/gpu/profile-worker.sh). A failure here only leaves that for the evaluation to do."""
    from ..device.device_digest import word_digest

    _warm_imports(role)
    try:
        with torch.random.fork_rng(devices=[device]):
            with device:
                word_digest(torch.randn(64))
            if role == "reference":
                from ..timing.roofline import run_and_count_flops

                run_and_count_flops(torch.nn.Identity(), [torch.ones(4, 4, device=device)])
        torch.cuda.synchronize(device)
    except Exception:  # noqa: BLE001 - a warm-up, never a verdict
        pass


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
