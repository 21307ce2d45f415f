"""The warm start (docs/worker-protocol.md, Start-up): what a worker does before `hello` so that
the evaluation that later takes it waits for neither torch's imports nor a CUDA context."""

import importlib
import re
import sys
from typing import Optional

import torch

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
