"""A seccomp BPF filter built with ctypes: the system calls of syscalls.DENIED fail with EPERM.

Also refused: `clone` asking for new namespaces (EPERM), `clone3` (ENOSYS: its flags sit in memory
the filter cannot read, so the C library falls back to `clone`, which it can), other
architectures' system calls on the same kernel (i386 through int 0x80, x32), and Unix sockets
that could reach a socket file outside the sandbox (EPERM): `socket(AF_UNIX, …)` of any type (the
filter cannot read the address `connect` or `sendto` is given, so the socket is refused before it
exists; the network namespace already stops TCP and abstract Unix addresses, not path ones), and
`socketpair(AF_UNIX, …)` of a datagram type (an unconnected end can be bound and pointed at a
path). A stream or seqpacket `socketpair` stays allowed (multiprocessing, asyncio): both ends are
connected to each other and reach nothing else. The C library's own AF_UNIX attempts (nscd,
syslog) fail on EPERM and fall back. Everything else is allowed: compilers, ninja, nvcc, CUDA and
Triton run as they do outside. The filter needs `no_new_privs` (or CAP_SYS_ADMIN) and is inherited
by every child; it cannot be removed.

The filter comes in two parts. The launcher installs the `process` part before the worker starts.
The `sockets` part (the Unix socket rules) is installed by the worker itself once it has started
CUDA, on every thread at once (`seal_sockets`, with SECCOMP_FILTER_FLAG_TSYNC), and before any
problem or candidate code runs: the CUDA driver's initialisation opens Unix sockets of its own (an
abstract listening socket for its memory file descriptors, and the MPS control pipe), and refusing
them leaves a process that sees no device. A child process that starts CUDA afresh under the sealed
filter sees none either.
"""

import ctypes
import errno
from typing import List, Tuple

from . import libc
from .syscalls import AF_UNIX, AUDIT_ARCH, CONNECTED_SOCKET_TYPES, DENIED, NUMBERS, SOCK_TYPE_MASK, X32_SYSCALL_BIT

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

# Classic BPF opcodes.
BPF_LD_W_ABS = 0x20
BPF_JMP_JEQ_K = 0x15
BPF_JMP_JGE_K = 0x35
BPF_JMP_JSET_K = 0x45
BPF_RET_K = 0x06
BPF_ALU_AND_K = 0x54

SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000

OFFSET_NR = 0
OFFSET_ARCH = 4
OFFSET_ARG0_LOW = 16
OFFSET_ARG1_LOW = 24

#: CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET
CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


Instruction = Tuple[int, object, object, int]


#: The parts of the filter: `process` (installed by the launcher), `sockets` (installed by the
#: worker once CUDA has started), and `all` (both, in one program).
PARTS = ("process", "sockets", "all")

#: seccomp(2) operation and flag for a filter put on every thread of the process at once.
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1


def program(architecture: str, part: str = "all") -> List[Tuple[int, int, int, int]]:
    """The filter for `architecture` as (code, jt, jf, k) tuples: `part` is one of PARTS. Raises
    KeyError for an unknown architecture or part.

    Arguments are compared in their low 32 bits only, as the kernel reads them (`int` arguments:
    high bits set by the caller change nothing for the kernel, so they must not for the filter).
    """
    if part not in PARTS:
        raise KeyError(part)
    numbers = NUMBERS[architecture]
    denied = sorted({numbers[name] for name in DENIED if name in numbers})
    # Jump targets are labels (a string naming a place in `code`) or "next" (fall through);
    # they are resolved to relative jumps below.
    code: List[object] = [
        (BPF_LD_W_ABS, 0, 0, OFFSET_ARCH),
        (BPF_JMP_JEQ_K, "next", "eperm", AUDIT_ARCH[architecture]),
        (BPF_LD_W_ABS, 0, 0, OFFSET_NR),
    ]
    sockets = part in ("sockets", "all")
    if part in ("process", "all"):
        if architecture == "x86_64":
            code.append((BPF_JMP_JGE_K, "eperm", "next", X32_SYSCALL_BIT))
        for number in denied:
            code.append((BPF_JMP_JEQ_K, "eperm", "next", number))
        code.append((BPF_JMP_JEQ_K, "enosys", "next", numbers["clone3"]))
        if sockets:
            code += [
                (BPF_JMP_JEQ_K, "socket", "next", numbers["socket"]),
                (BPF_JMP_JEQ_K, "socketpair", "next", numbers["socketpair"]),
            ]
        code += [
            (BPF_JMP_JEQ_K, "next", "allow", numbers["clone"]),
            (BPF_LD_W_ABS, 0, 0, OFFSET_ARG0_LOW),
            (BPF_JMP_JSET_K, "eperm", "allow", CLONE_NAMESPACE_FLAGS),
        ]
    else:
        code += [
            (BPF_JMP_JEQ_K, "socket", "next", numbers["socket"]),
            (BPF_JMP_JEQ_K, "socketpair", "allow", numbers["socketpair"]),
        ]
    if sockets:
        code += _socket_rules()
    code += [
        (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM),
        "allow",
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
        "eperm",
        (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM),
        "enosys",
        (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS),
    ]
    return _assemble(code)


def _socket_rules() -> List[object]:
    """The tests of socket() and socketpair(), from their labels on: no AF_UNIX socket but a
    connected pair."""
    code: List[object] = [
        "socket",  # socket(domain, type, protocol): no AF_UNIX socket at all
        (BPF_LD_W_ABS, 0, 0, OFFSET_ARG0_LOW),
        (BPF_JMP_JEQ_K, "eperm", "allow", AF_UNIX),
        "socketpair",  # socketpair(domain, type, protocol, sv): AF_UNIX only connected ones
        (BPF_LD_W_ABS, 0, 0, OFFSET_ARG0_LOW),
        (BPF_JMP_JEQ_K, "next", "allow", AF_UNIX),
        (BPF_LD_W_ABS, 0, 0, OFFSET_ARG1_LOW),
        (BPF_ALU_AND_K, 0, 0, SOCK_TYPE_MASK),
    ]
    for kind in CONNECTED_SOCKET_TYPES:
        code.append((BPF_JMP_JEQ_K, "allow", "next", kind))
    return code


def _assemble(code: List[object]) -> List[Tuple[int, int, int, int]]:
    """Instructions with their labels' jumps resolved to relative ones (labels are strings in
    `code`, naming the place of the instruction after them; "next" falls through)."""
    labels = {}
    instructions: List[Instruction] = []
    for item in code:
        if isinstance(item, str):
            labels[item] = len(instructions)
        else:
            instructions.append(item)

    def jump(index: int, target) -> int:
        if target == "next" or target == 0:
            return 0
        offset = labels[target] - index - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"seccomp jump of {offset} instructions does not fit")
        return offset

    return [(op, jump(i, jt), jump(i, jf), k) for i, (op, jt, jf, k) in enumerate(instructions)]


def _fprog(architecture: str, part: str):
    instructions = program(architecture, part)
    array = (SockFilter * len(instructions))(*[SockFilter(*item) for item in instructions])
    return SockFprog(len(instructions), ctypes.cast(array, ctypes.POINTER(SockFilter))), array


def install(architecture: str, part: str = "process") -> int:
    """Sets no_new_privs and installs `part` of the filter on this thread (and every child it starts
    later): the launcher's `process` part by default, `all` for a process that will never start CUDA.

    Returns the number of denied system calls. Raises OSError where the kernel refuses (no seccomp,
    or a sandbox such as gVisor without filter support) and KeyError for an unknown architecture.
    """
    fprog, _array = _fprog(architecture, part)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1)
    libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog))
    return sum(1 for name in DENIED if name in NUMBERS[architecture])


def seal_sockets(architecture: str) -> None:
    """Adds the `sockets` part on every thread of this process at once (seccomp(2) with
    SECCOMP_FILTER_FLAG_TSYNC), on top of the filter already there. Call it after CUDA has started
    and before any untrusted code runs. Raises OSError where the kernel refuses, naming the thread
    that could not be synchronised."""
    fprog, _array = _fprog(architecture, "sockets")
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1)
    answer = libc.syscall(
        NUMBERS[architecture]["seccomp"],
        ctypes.c_long(SECCOMP_SET_MODE_FILTER),
        ctypes.c_long(SECCOMP_FILTER_FLAG_TSYNC),
        ctypes.c_void_p(ctypes.addressof(fprog)),
    )
    if answer > 0:
        raise OSError(errno.EBUSY, f"thread {answer} of this process has a filter of its own")
