"""The worker's warm start (roles/warm_start.py `warm_up`): what it does before `hello`."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kforge_worker.roles import warm_start as environment

WORKER_ROOT = Path(__file__).resolve().parent.parent


def _pretend_one_gpu(monkeypatch, touched):
    """torch says it has one CUDA device; anything that would make a context records itself."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    for name in ("set_device", "synchronize", "init"):
        monkeypatch.setattr(torch.cuda, name, lambda *args, name=name, **kwargs: touched.append(name))
    monkeypatch.setattr(environment, "_warm_lazy_paths", lambda *args: touched.append("lazy paths on the device"))


def test_a_worker_started_without_a_context_touches_no_device(monkeypatch):
    touched = []
    _pretend_one_gpu(monkeypatch, touched)
    assert environment.warm_up("cuda:0", "reference", make_context=False) == 0, "the index hello describes"
    assert touched == [], "no device call before its request"
    assert "kforge_worker.roles.reference_role" in sys.modules, "the imports are done all the same"


def test_a_worker_started_with_a_context_makes_it_current(monkeypatch):
    touched = []
    _pretend_one_gpu(monkeypatch, touched)
    monkeypatch.setattr(torch, "empty", lambda *args, **kwargs: touched.append("allocation"))
    environment.warm_up("cuda:0", "reference")
    assert touched[:2] == ["set_device", "allocation"] and "lazy paths on the device" in touched


def test_a_device_that_does_not_exist_is_refused_either_way(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for make_context in (True, False):
        with pytest.raises(ValueError, match="names no device"):
            environment.warm_up("cuda:0", "candidate", make_context=make_context)


def test_the_worker_reads_the_variable_and_leaves_it_out_of_the_candidates_environment(tmp_path):
    """`KFORGE_WARM_CONTEXT=0` reaches warm_up and, like KFORGE_WARM_DEVICE, is removed before any
    problem or candidate code could read it (on the cpu, where the device half is skipped)."""
    probe = (
        "import os, sys\n"
        "from kforge_worker import __main__ as main\n"
        "seen = {}\n"
        "import kforge_worker.protocol.environment as env\n"
        "import kforge_worker.roles.warm_start as warm\n"
        "warm.warm_up = lambda device, role, make_context=True: seen.update(device=device, make_context=make_context)\n"
        "class Stop(Exception): pass\n"
        "def collect(index=None):\n"
        "    seen['left'] = [n for n in ('KFORGE_WARM_DEVICE', 'KFORGE_WARM_CONTEXT') if n in os.environ]\n"
        "    raise Stop()\n"
        "env.collect_environment = collect\n"
        "try:\n"
        "    main._serve('reference', None)\n"
        "except Stop:\n"
        "    pass\n"
        "print(seen)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=WORKER_ROOT,
        env={"PATH": "/usr/bin:/bin", "KFORGE_WARM_DEVICE": "cpu", "KFORGE_WARM_CONTEXT": "0"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "'make_context': False" in done.stdout and "'left': []" in done.stdout, done.stdout
