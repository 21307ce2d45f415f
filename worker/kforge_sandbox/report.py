"""What isolation is in force around this worker: the `isolation` object of `hello.environment`.

```json
{"enabled": true, "user": "uid 61234 (no passwd entry)", "namespaces": ["user", "pid", "mount", ...],
 "seccomp": true, "no_new_privs": true, "cgroup": "v2", "filesystem": "read-only view",
 "network": "loopback only", "python": "isolated (-I)", "descriptors": "0-3 and the hand-over listener",
 "missing": ["cgroup: /sys/fs/cgroup is read-only"]}
```

`missing` names each layer that could not be put in place and why, in words a person can act on;
empty when everything is in force. The launcher fills one report per worker before the worker
code runs; `current()` hands it to the `hello` message.
"""

from dataclasses import asdict, dataclass, field
from typing import List, Optional


@dataclass
class IsolationReport:
    enabled: bool = True
    role: str = "candidate"
    user: str = "unchanged"
    #: The uid the candidate runs as, as the parent's filesystem sees it (null: the parent's own).
    uid: Optional[int] = None
    namespaces: List[str] = field(default_factory=list)
    seccomp: bool = False
    no_new_privs: bool = False
    cgroup: Optional[str] = None
    filesystem: str = "unchanged"
    network: str = "host"
    python: str = "isolated (-I)"
    descriptors: str = "inherited"
    missing: List[str] = field(default_factory=list)

    def lack(self, layer: str, why: str) -> None:
        """Records a layer that is not in force, with the reason."""
        self.missing.append(f"{layer}: {why}")

    def as_message(self) -> dict:
        return asdict(self)


_CURRENT: Optional[IsolationReport] = None


def set_current(report: IsolationReport) -> None:
    global _CURRENT
    _CURRENT = report


def current() -> Optional[dict]:
    """The report of the sandbox this process runs in, or None when it was started without one."""
    return None if _CURRENT is None else _CURRENT.as_message()
