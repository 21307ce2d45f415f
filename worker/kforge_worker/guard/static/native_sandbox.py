"""What a C++/CUDA source reaches outside its kernel: processes, sockets, files, the harness's
memory, Python, threads, the timing functions (`sandbox`, `harness-read`, `library-policy`,
`deferred-work`, `timer-patch`), for _NativeScanner."""

from __future__ import annotations

from .native_patterns import (
    _CPP_DETACH,
    _CPP_FILE_WRITE,
    _CPP_HARNESS,
    _CPP_INTERPOSE,
    _CPP_PYTHON,
    _CPP_SANDBOX,
    _CPP_THREAD,
)
from .native_sources import _NativeSource


class _NativeSandboxRules:
    """Rules on what a native source reaches outside its kernel (a mixin of _NativeScanner)."""

    def _sandbox(self, source: _NativeSource, code: str, commentless: str) -> None:
        for match in _CPP_SANDBOX.finditer(code):
            self._add(
                "sandbox",
                source,
                match.start(1),
                f"the C++ source calls {match.group(1)}(){{at}}: candidates may not start processes, open "
                f"sockets, read the environment or signal processes; remove it",
                confined=True,
            )
        match = _CPP_FILE_WRITE.search(code)
        if match:
            self._add(
                "sandbox",
                source,
                match.start(),
                f"the C++ source opens files ({match.group(0).rstrip('( ')}){{at}}; writing outside the "
                f"working directory or reading the harness's files is rejected at run time",
                "note",
            )
        match = _CPP_HARNESS.search(commentless)
        if match:
            self._add(
                "harness-read",
                source,
                match.start(),
                f"the C++ source reads process memory ({match.group(0).rstrip('( ')}){{at}}: reading the "
                f"harness's state is rejected; remove it",
            )
        match = _CPP_PYTHON.search(code)
        if match:
            self._add(
                "library-policy",
                source,
                match.start(),
                f"the C++ source calls back into Python ({match.group(0).rstrip('( <')}){{at}}, out of the "
                f"guard's sight; pass what the kernel needs as arguments instead",
            )

    def _threads_and_timers(self, source: _NativeSource, code: str, commentless: str) -> None:
        match = _CPP_THREAD.search(code)
        if match:
            detached = _CPP_DETACH.search(code)
            self._add(
                "deferred-work",
                source,
                match.start(),
                f"the C++ source starts threads ({match.group(0)}){{at}}"
                + (
                    ": a detached thread or async task can finish after forward returns; join it before " "returning"
                    if detached
                    else "; they must be joined before forward returns"
                ),
                "reject" if detached else "note",
            )
        match = _CPP_INTERPOSE.search(commentless)
        if match:
            self._add(
                "timer-patch",
                source,
                match.start(),
                f"the C++ source defines or interposes a timing function ({match.group(0)[:60].strip()})"
                f"{{at}}: the harness's timing must stay untouched; remove it",
            )
