"""Thin ctypes access to the C library calls Python 3.11 lacks (unshare, mount, prctl, syscall)."""

import ctypes
import os


def _load():
    """glibc by its usual name first: find_library would run ldconfig in a subprocess."""
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        from ctypes import util

        return ctypes.CDLL(util.find_library("c"), use_errno=True)


_LIBC = _load()

_LIBC.syscall.restype = ctypes.c_long
_LIBC.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p)
_LIBC.unshare.argtypes = (ctypes.c_int,)
_LIBC.setns.argtypes = (ctypes.c_int, ctypes.c_int)
_LIBC.prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)


def _check(result: int, what: str) -> int:
    if result < 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")
    return result


def _bytes(value):
    return None if value is None else os.fsencode(value)


def unshare(flags: int) -> None:
    """unshare(2); raises OSError with the kernel's errno."""
    _check(_LIBC.unshare(flags), "unshare")


def setns(descriptor: int, namespace_type: int) -> None:
    """setns(2); raises OSError."""
    _check(_LIBC.setns(descriptor, namespace_type), "setns")


def mount(source, target, filesystem, flags: int, data=None) -> None:
    """mount(2) with str or None arguments; raises OSError."""
    _check(_LIBC.mount(_bytes(source), _bytes(target), _bytes(filesystem), flags, _bytes(data)), f"mount {target}")


def prctl(option: int, argument2: int = 0, argument3: int = 0, argument4: int = 0, argument5: int = 0) -> int:
    """prctl(2) with integer arguments; raises OSError."""
    return _check(_LIBC.prctl(option, argument2, argument3, argument4, argument5), f"prctl {option}")


def syscall(number: int, *arguments) -> int:
    """A raw system call; raises OSError."""
    return _check(_LIBC.syscall(ctypes.c_long(number), *arguments), f"syscall {number}")
