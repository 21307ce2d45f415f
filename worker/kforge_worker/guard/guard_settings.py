"""The request's optional `guard` object: `{"policy": name-or-object, "gate_specialisation": false}`.

`policy` is a shipped policy's name (`kernelbench`, the default; `own-kernels`, `strict`,
`permissive`, `pytorch`; the former name `default` means `own-kernels`) or a policy object as
:func:`kforge_worker.guard.policy.load_policy` accepts it (a partial object names a `base`). A policy
that does not load, an unknown key or a value of the wrong type is the parent's fault
(ProtocolError, exit status 2).

`runtime_checks_enabled` reads KFORGE_GUARD_RUNTIME, the switch bench/guard/run.py uses to measure
what the run-time checks cost: `off` turns them off (guard_runtime.py), `on` or unset leaves them
on. It is not part of the protocol and never a way to a verdict: the TypeScript parent does not
pass the variable to workers (src/eval/process/worker-environment.ts allows a fixed list of names), and a
run with the checks off says so in every `guard-checks` message (check `guard-runtime`, a note).
"""

import os
from dataclasses import dataclass
from typing import Any, Dict, MutableMapping, Optional

from ..protocol.channel import ProtocolError
from .policy import DEFAULT_POLICY, PolicyError, load_policy

GUARD_KEYS = ("policy", "gate_specialisation")
RUNTIME_SWITCH = "KFORGE_GUARD_RUNTIME"


@dataclass(frozen=True)
class GuardSettings:
    policy: Dict[str, Any]
    gate_specialisation: bool

    @property
    def policy_name(self) -> str:
        return self.policy["name"]


def parse_guard(message: dict) -> GuardSettings:
    """The validated `guard` field of a request; defaults where it or its keys are absent."""
    raw = message.get("guard")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ProtocolError(f"expected `guard` to be an object, got {raw!r}")
    unknown = sorted(set(raw) - set(GUARD_KEYS))
    if unknown:
        raise ProtocolError(f"unknown key `guard.{unknown[0]}`; `guard` holds {', '.join(GUARD_KEYS)}")
    spec = raw.get("policy", DEFAULT_POLICY)
    if spec is None:
        spec = DEFAULT_POLICY
    if not isinstance(spec, (str, dict)):
        raise ProtocolError(f"expected `guard.policy` to be a policy name or object, got {spec!r}")
    try:
        policy = load_policy(spec)
    except PolicyError as error:
        raise ProtocolError(f"`guard.policy` cannot be used: {error}") from error
    gate = raw.get("gate_specialisation", False)
    if not isinstance(gate, bool):
        raise ProtocolError(f"expected `guard.gate_specialisation` to be true or false, got {gate!r}")
    return GuardSettings(policy=policy, gate_specialisation=gate)


def runtime_checks_enabled(environment: Optional[MutableMapping[str, str]] = None) -> bool:
    """False when KFORGE_GUARD_RUNTIME is `off` (benchmarks only); the variable is removed from the
    environment so the candidate does not see it. Any value but `on`/`off` is a ProtocolError."""
    environment = os.environ if environment is None else environment
    value = environment.pop(RUNTIME_SWITCH, "on").strip().lower()
    if value not in ("on", "off"):
        raise ProtocolError(f"expected {RUNTIME_SWITCH} to be `on` or `off`, got {value!r}")
    return value == "on"
