"""The backends (kforge_worker/backends/): one folder each with the same modules, listed by the
registry, named as the requests name them, and what each decides reached through the registry."""

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kforge_worker.backends import registry
from kforge_worker.backends.backend import Backend
from kforge_worker.protocol.channel import ProtocolError
from kforge_worker.protocol.errors import classify
from kforge_worker.protocol.request import parse_reference_request
from kforge_worker.protocol.run_device import backend_of_device, resolve_device

WORKER_ROOT = Path(__file__).resolve().parent.parent
BACKENDS_DIR = WORKER_ROOT / "kforge_worker" / "backends"
SRC = WORKER_ROOT.parent / "src"
#: What every backend folder holds (backends/__init__.py, CONTRIBUTING.md "Adding a backend").
MODULES = {"__init__", "build", "detect", "trace_names", "clock", "doctor"}
#: Each module's one object, gathered into the folder's `Backend`.
OBJECTS = {"build": "BUILD", "detect": "DETECT", "trace_names": "TRACE_NAMES", "clock": "CLOCK", "doctor": "DOCTOR"}


def _folders():
    return sorted(path.name for path in BACKENDS_DIR.iterdir() if (path / "__init__.py").is_file())


def test_every_backend_folder_has_the_same_modules():
    for folder in _folders():
        modules = {path.stem for path in (BACKENDS_DIR / folder).glob("*.py")}
        assert modules == MODULES, f"backends/{folder}: {sorted(modules ^ MODULES)}"


def test_the_registry_lists_exactly_the_folders():
    assert sorted(registry.NAMES) == _folders()
    assert len(set(registry.NAMES)) == len(registry.NAMES)


@pytest.mark.parametrize("name", registry.NAMES)
def test_a_folders_backend_is_made_of_its_own_modules(name):
    backend = importlib.import_module(f"kforge_worker.backends.{name}").BACKEND
    assert isinstance(backend, Backend) and backend.name == name
    assert registry.backend_for(name) is backend
    for module, constant in OBJECTS.items():
        own = getattr(importlib.import_module(f"kforge_worker.backends.{name}.{module}"), constant)
        assert getattr(backend, module) is own, f"{name}.{module}"


def test_the_requests_backends_are_the_registrys():
    """src/core's `BACKENDS` (what the parent sends as `backend`) names the registry's, in order."""
    found = []
    for path in SRC.rglob("*.ts"):
        match = re.search(r"export const BACKENDS = \[([^\]]*)\] as const", path.read_text(encoding="utf-8"))
        if match:
            found.append(tuple(re.findall(r"'([^']+)'", match.group(1))))
    assert found == [registry.NAMES]


def test_an_unknown_backend_is_the_requests_fault_and_names_the_registrys():
    with pytest.raises(ProtocolError, match="expected `backend` to be one of cuda, triton, cpu, got 'rocm'"):
        parse_reference_request({"type": "reference", "problem": "problem.py", "backend": "rocm"})
    assert registry.described() == "cuda, triton or cpu"


def test_each_backend_checks_its_device():
    cpu, cuda = registry.backend_for("cpu"), registry.backend_for("cuda")
    assert resolve_device(cpu, "cpu").type == "cpu"
    with pytest.raises(ProtocolError, match="the cpu backend runs on device `cpu`, got 'cuda:0'"):
        resolve_device(cpu, "cuda:0")
    for name in ("cuda", "triton"):
        with pytest.raises(ProtocolError, match=f"the {name} backend runs on `cuda:N`, got 'cpu'"):
            resolve_device(registry.backend_for(name), "cpu")
    with pytest.raises(ProtocolError, match="expected `device` to be `cpu` or `cuda:N`, got 'gpu'"):
        resolve_device(cuda, "gpu")


def test_a_device_named_alone_runs_its_types_first_backend():
    assert backend_of_device("cpu").name == "cpu"
    assert backend_of_device("cuda:1").name == "cuda"
    with pytest.raises(ProtocolError, match="expected `device` to be"):
        backend_of_device("gpu")
    assert registry.backend_for_device("meta") is None


def test_a_backends_compiler_error_is_a_compile_error():
    refusal = type("CompilationError", (Exception,), {"__module__": "triton.compiler.errors"})("at 3:4: bad index")
    failure = classify(refusal, "runtime_error", "forward", "the candidate's forward raised")
    assert (failure.kind, failure.check) == ("compile_error", "build")
    assert failure.message.startswith("the Triton kernel did not compile")
    other = classify(ValueError("no"), "runtime_error", "forward", "the candidate's forward raised")
    assert other.kind == "runtime_error" and registry.compile_error_subject(ValueError("no")) is None


def test_the_guards_names_come_from_the_backends():
    assert registry.JIT_DECORATORS == ("triton.",)
    assert registry.STREAM_CALLS == ("triton.runtime.driver.active.get_current_stream",)
    suffix = registry.JIT_LAUNCH_SUFFIXES[0]
    assert suffix.fullmatch("0d1d2de") and not suffix.fullmatch("fused")
    assert registry.backend_for("cuda").build.lists_built_kernels
    assert not registry.backend_for("triton").build.lists_built_kernels


def test_the_timing_routine_uses_events_where_the_backends_say():
    """timing.py branches on the device type (backend.py, `Clock`, says why); the backends whose
    clock has device events are those of that type, and no other."""
    events = {backend.detect.device_type for backend in registry.BACKENDS if backend.clock.device_events}
    hosts = {backend.detect.device_type for backend in registry.BACKENDS if not backend.clock.device_events}
    assert events == {"cuda"} and not events & hosts
    timing = (WORKER_ROOT / "kforge_worker" / "timing" / "timing.py").read_text(encoding="utf-8")
    assert 'device.type == "cuda"' in timing


def test_every_backends_tools_are_in_the_hello_environment():
    versions = registry.tool_versions()
    assert set(versions) == {"nvcc", "triton"}


def test_the_registry_imports_no_torch():
    """The static guard reads the backends' trace names without torch (backends/__init__.py)."""
    code = "import sys, kforge_worker.backends.registry as r; r.tool_versions(); print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], cwd=WORKER_ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
