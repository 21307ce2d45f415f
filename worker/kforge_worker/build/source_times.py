"""Build-cache support for PyTorch before 2.1: keep the times of unchanged inline sources.

`load_inline` of those versions rewrites `main.cpp` and `cuda.cu` in the build folder on every call
(later versions write them only when their text changed), so ninja sees a newer source and
rebuilds an extension whose folder already holds it. Around torch's `_jit_compile`, this puts the
modification time of a source inside the build folder back to the one recorded after its last
build when its bytes are the same (`<source>.kforge-stamp`), and records it again afterwards.
Sources outside the build folder (`load(sources=[...])`) are left alone. Newer torch: no-op.
"""

import hashlib
import inspect
import json
import os

STAMP_SUFFIX = ".kforge-stamp"


def _digest(path: str) -> str:
    with open(path, "rb") as source:
        return hashlib.sha256(source.read()).hexdigest()


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.abspath(path), os.path.abspath(folder)
    return os.path.commonpath([path, folder]) == folder


def _restore(path: str) -> None:
    try:
        with open(path + STAMP_SUFFIX, encoding="utf-8") as stamp_file:
            stamp = json.load(stamp_file)
        if stamp.get("sha256") == _digest(path):
            os.utime(path, ns=(int(stamp["mtime_ns"]), int(stamp["mtime_ns"])))
    except (OSError, ValueError, KeyError, TypeError):
        pass


def _record(path: str) -> None:
    try:
        stamp = {"sha256": _digest(path), "mtime_ns": os.stat(path).st_mtime_ns}
        with open(path + STAMP_SUFFIX, "w", encoding="utf-8") as stamp_file:
            json.dump(stamp, stamp_file)
    except OSError:
        pass


def keep_unchanged_source_times() -> None:
    """Wraps torch.utils.cpp_extension._jit_compile where this torch rewrites unchanged sources."""
    import torch.utils.cpp_extension as cpp_extension

    if hasattr(cpp_extension, "_maybe_write"):
        return
    original = cpp_extension._jit_compile
    if getattr(original, "kforge_keeps_times", False):
        return
    signature = inspect.signature(original)

    def jit_compile(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        folder = bound.arguments.get("build_directory")
        sources = [path for path in bound.arguments.get("sources") or []
                   if isinstance(folder, str) and isinstance(path, str) and _inside(path, folder)]
        for path in sources:
            _restore(path)
        result = original(*args, **kwargs)
        for path in sources:
            _record(path)
        return result

    jit_compile.kforge_keeps_times = True
    cpp_extension._jit_compile = jit_compile
