"""System call numbers of the two architectures kforge runs on, and what the seccomp filter denies.

Numbers from the kernel's `asm/unistd_64.h` (x86_64) and `asm-generic/unistd.h` (aarch64).
"""

import platform

#: AUDIT_ARCH_* values the seccomp filter compares `seccomp_data.arch` with.
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}

#: Denied with EPERM: reaching other processes (ptrace, process_vm_*, pidfd_getfd, kcmp,
#: process_madvise), observing the machine (perf_event_open, syslog, fanotify), changing the
#: filesystem view or the namespaces (mount family, pivot_root, chroot, unshare, setns), the kernel
#: keyring, BPF, kernel modules and kexec, io_uring (whose operations bypass seccomp), file handles
#: (open_by_handle_at escapes a mount view), userfaultfd, clocks and host settings.
DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "process_madvise",
    "perf_event_open", "syslog", "fanotify_init", "lookup_dcookie",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
    "fspick", "mount_setattr", "unshare", "setns", "name_to_handle_at", "open_by_handle_at",
    "keyctl", "add_key", "request_key", "bpf", "init_module", "finit_module", "delete_module", "kexec_load",
    "kexec_file_load", "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
    "swapon", "swapoff", "reboot", "acct", "quotactl", "vhangup", "iopl", "ioperm",
)

NUMBERS = {
    "x86_64": {
        "clone": 56, "ptrace": 101, "syslog": 103, "vhangup": 153, "pivot_root": 155, "adjtimex": 159, "chroot": 161,
        "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169,
        "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173, "init_module": 175,
        "delete_module": 176, "quotactl": 179, "lookup_dcookie": 212, "clock_settime": 227, "kexec_load": 246,
        "add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298,
        "fanotify_init": 300, "name_to_handle_at": 303, "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308,
        "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "kexec_file_load": 320,
        "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
        "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    },
    "aarch64": {
        "lookup_dcookie": 18, "umount2": 39, "mount": 40, "pivot_root": 41, "chroot": 51, "vhangup": 58,
        "quotactl": 60, "acct": 89, "unshare": 97, "kexec_load": 104, "init_module": 105, "delete_module": 106,
        "clock_settime": 112, "syslog": 116, "ptrace": 117, "reboot": 142, "sethostname": 161, "setdomainname": 162,
        "settimeofday": 170, "adjtimex": 171, "add_key": 217, "request_key": 218, "keyctl": 219, "clone": 220,
        "swapon": 224, "swapoff": 225, "perf_event_open": 241, "fanotify_init": 262, "name_to_handle_at": 264,
        "open_by_handle_at": 265, "clock_adjtime": 266, "setns": 268, "process_vm_readv": 270,
        "process_vm_writev": 271, "kcmp": 272, "finit_module": 273, "bpf": 280, "userfaultfd": 282,
        "kexec_file_load": 294, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
        "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    },
}

#: Syscall numbers at and above this on x86_64 are the x32 ABI, which the filter refuses outright.
X32_SYSCALL_BIT = 0x40000000


def machine() -> str:
    """`x86_64` or `aarch64` (`arm64` normalised), or what the platform says otherwise."""
    name = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(name, name)
