"""Check that the CUDA corpus files behave as manifest.json says (run on a GPU machine).

    python tests/adversarial/verify_cuda.py [OUT_DIR]

Builds every ``cuda/`` case in its own process (in parallel), runs it on the problem's ``gpu``
preset, and prints one JSON line per case with what a dynamic guard would see:

- ``poisoned_fraction``: share of output elements still holding the poison bit pattern written
  into the allocator's freed block before the call (``stale-output``);
- ``launch_error``: the CUDA error pending right after the call (``device-error``);
- ``matches_reference``: the output against ``Model`` after a device-wide synchronize;
- ``event_ms`` / ``wall_ms``: medians of CUDA-event time on the current stream and host time
  around the call plus a device-wide synchronize (``side-stream``);
- ``persisting_l2_bytes``: the device's persisting-L2 limit after the calls (``global-state``).

It is a prototype of the worker's dynamic checks, not part of the pytest suite.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
POISON_BITS = 0x7FA5A5A5  # a signalling-NaN float32 pattern no kernel produces by accident


def _load(path: Path, name: str, globals_override: dict | None = None):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for key, value in (globals_override or {}).items():
        setattr(module, key, value)
    return module


def _cudart():
    """libcudart as loaded by torch, for cudaGetLastError / cudaDeviceGetLimit."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "libcudart" in path and os.path.exists(path):
                return ctypes.CDLL(path)
    return None


def _run_case(case: dict) -> dict:
    import torch

    problem_module = _load(HERE / case["problem"], "problem")
    presets = getattr(problem_module, "KFORGE_PRESETS", {}).get("gpu", {})
    for key, value in presets.items():
        setattr(problem_module, key, value)
    started = time.perf_counter()
    candidate = _load(HERE / case["file"], "candidate")
    build_s = time.perf_counter() - started
    cudart = _cudart()
    device = torch.device("cuda")
    torch.manual_seed(11)
    inputs = [t.to(device) for t in problem_module.get_inputs()]
    reference = problem_module.Model(*problem_module.get_init_inputs()).to(device)(*inputs)
    torch.cuda.synchronize()
    model = candidate.ModelNew(*problem_module.get_init_inputs()).to(device)

    poison = torch.empty_like(reference).view(torch.int32).fill_(POISON_BITS)
    del poison  # the block returns to the caching allocator still holding the pattern
    output = model(*inputs)
    launch_error = int(cudart.cudaGetLastError()) if cudart is not None else None
    torch.cuda.synchronize()
    poisoned = float((output.detach().view(torch.int32) == POISON_BITS).float().mean())
    matches = bool(torch.allclose(output.float(), reference, atol=1e-5, rtol=1e-5))

    event_ms, wall_ms = [], []
    for _ in range(20):
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        host_start = time.perf_counter()
        start.record()
        model(*inputs)
        end.record()
        torch.cuda.synchronize()
        wall_ms.append((time.perf_counter() - host_start) * 1e3)
        event_ms.append(start.elapsed_time(end))
    if cudart is not None:
        cudart.cudaGetLastError()
    persisting = None
    if cudart is not None:
        value = ctypes.c_size_t(0)
        if cudart.cudaDeviceGetLimit(ctypes.byref(value), 0x06) == 0:  # cudaLimitPersistingL2CacheSize
            persisting = int(value.value)
    return {
        "file": case["file"], "kind": case["kind"], "expected_check": case["expected_check"],
        "build_s": round(build_s, 1), "poisoned_fraction": poisoned, "launch_error": launch_error,
        "matches_reference": matches, "event_ms": round(statistics.median(event_ms), 4),
        "wall_ms": round(statistics.median(wall_ms), 4), "persisting_l2_bytes": persisting,
        "torch": torch.__version__, "device": torch.cuda.get_device_name(),
    }


def main() -> int:
    manifest = json.loads((HERE / "manifest.json").read_text())
    cases = [case for case in manifest["cases"] if case["backend"] == "cuda"]
    if len(sys.argv) > 2 and sys.argv[1] == "--case":
        case = next(item for item in cases if item["file"] == sys.argv[2])
        try:
            print(json.dumps(_run_case(case)))
        except Exception as error:  # report the failure as data, like the worker would
            print(json.dumps({"file": case["file"], "error": f"{type(error).__name__}: {error}"[:2000]}))
        return 0
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/kforge-verify-cuda")
    out_dir.mkdir(parents=True, exist_ok=True)
    processes = []
    for case in cases:
        env = dict(os.environ, TORCH_EXTENSIONS_DIR=str(out_dir / "build" / Path(case["file"]).stem),
                   MAX_JOBS="2")
        env.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
        processes.append(subprocess.Popen([sys.executable, __file__, "--case", case["file"]], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for process in processes:
        stdout, stderr = process.communicate()
        lines = [line for line in stdout.splitlines() if line.startswith("{")]
        print(lines[-1] if lines else json.dumps({"error": stderr[-2000:]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
