"""`python3 -m kforge_worker prime DIR`: bytecode for workers where the installed packages have none."""

import json
import os
import subprocess
import sys
from pathlib import Path

from worker_process import WORKER_ROOT

PACKAGE_SOURCE = "VALUE = 41 + 1\n"


def run(*arguments: str, path: Path, extra=None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": f"{WORKER_ROOT}:{path}", "PYTHONDONTWRITEBYTECODE": "1", **(extra or {})}
    return subprocess.run(
        [sys.executable, *arguments], cwd=path.parent, env=environment, capture_output=True, text=True, timeout=120
    )


def package_without_bytecode(tmp_path: Path) -> Path:
    packages = tmp_path / "site"
    (packages / "probepkg").mkdir(parents=True)
    (packages / "probepkg" / "__init__.py").write_text(PACKAGE_SOURCE)
    return packages


def prime(packages: Path, cache: Path) -> dict:
    result = run("-m", "kforge_worker", "prime", str(cache), "--modules", "probepkg", path=packages)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_package_without_bytecode_is_primed_read_only_and_workers_read_it(tmp_path):
    packages = package_without_bytecode(tmp_path)
    cache = tmp_path / "pycache"
    record = prime(packages, cache)
    assert record["needed"] is True and record["reused"] is False and record["failed"] == {}
    assert not list(packages.glob("**/__pycache__")), "nothing may be written beside the sources"
    compiled = list(cache.glob("**/probepkg/__init__.*.pyc"))
    assert len(compiled) == 1
    assert not os.access(compiled[0], os.W_OK) or os.geteuid() == 0
    assert oct(compiled[0].stat().st_mode & 0o777) == oct(0o444)

    # A worker reads the cache: the source is replaced by one that cannot compile, with the same size
    # and mtime, so an import that succeeds can only have come from the cached bytecode.
    source = packages / "probepkg" / "__init__.py"
    timestamps = (source.stat().st_atime_ns, source.stat().st_mtime_ns)
    source.write_text("VALUE = = 1\n".ljust(len(PACKAGE_SOURCE) - 1) + "\n")
    os.utime(source, ns=timestamps)
    imported = run(
        "-B", "-c", "import probepkg; print(probepkg.VALUE)", path=packages, extra={"PYTHONPYCACHEPREFIX": str(cache)}
    )
    assert imported.returncode == 0 and imported.stdout.strip() == "42", imported.stderr
    without = run("-B", "-c", "import probepkg", path=packages)
    assert without.returncode != 0 and "SyntaxError" in without.stderr


def test_a_primed_cache_is_reused_and_primed_again_when_the_source_changes(tmp_path):
    packages = package_without_bytecode(tmp_path)
    cache = tmp_path / "pycache"
    first = prime(packages, cache)
    assert prime(packages, cache)["reused"] is True
    source = packages / "probepkg" / "__init__.py"
    os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 10_000_000_000))
    again = prime(packages, cache)
    assert again["reused"] is False and again["fingerprint"] != first["fingerprint"]


def test_installed_bytecode_beside_the_source_makes_the_cache_unneeded(tmp_path):
    packages = package_without_bytecode(tmp_path)
    compiled = run("-c", "import py_compile; py_compile.compile('site/probepkg/__init__.py')", path=packages)
    assert compiled.returncode == 0, compiled.stderr
    cache = tmp_path / "pycache"
    record = prime(packages, cache)
    assert record["needed"] is False and record["prefix"] is None
    assert not cache.exists()


def test_a_bad_command_line_is_a_usage_error(tmp_path):
    result = run("-m", "kforge_worker", "prime", path=tmp_path)
    assert result.returncode == 2 and "usage" in result.stderr
