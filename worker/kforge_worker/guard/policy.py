"""Guard policies: what a candidate may call, as plain data.

A policy is a JSON-compatible dict, so the TypeScript side and configuration files can pass one.
:func:`load_policy` accepts a policy name, a dict, or JSON text, and returns a complete, validated
dict with every field below. A partial dict may name a ``base`` policy whose fields it overrides
(``{"name": "mine", "base": "own-kernels", "vendor_libraries": ["cublas"]}``).

The shipped policies (:data:`POLICY_NAMES`, the same list as `src/core/guard-policies.ts`, checked by
a test on each side):

- ``kernelbench`` (the default, :data:`DEFAULT_POLICY`): KernelBench's rule. A candidate may leave
  any of the reference's operators to PyTorch, in ``forward`` or from inside its extension; what
  ran is reported (attribution), not rejected. Vendor libraries are allowed.
- ``own-kernels``: every compute operator that ran must be the candidate's own; PyTorch compute
  in ``forward`` or inside the extension is a ``torch-fallback`` rejection. Vendor libraries are
  allowed. (The policy called ``default`` before 2026-12-04; :data:`POLICY_ALIASES` maps that
  name here so stored runs and configuration files keep their meaning.)
- ``strict``: ``own-kernels`` without vendor libraries.
- ``permissive``: every static finding recorded, none rejected, and PyTorch compute that ran (beside
  a kernel of the candidate's own) reported, never rejected; the run-time checks still reject,
  the own-work rule below included.
- ``pytorch``: ``permissive`` without the own-work rule (``own_work: "note"``): for measuring a
  PyTorch program as a candidate (a PyTorch-level rewrite compared with its reference, the
  project's own fast tests and benchmarks, which build nothing). Every other run-time check
  (stale output, timing tampering, deferred work, input mutation, ...) still rejects.

Under every policy but ``pytorch`` (every policy whose ``own_work`` is ``"reject"``), a candidate
is rejected when no kernel of its own ran or a fallback path ran instead of its kernel; that is
decided from what ran (docs/guard.md, own_work.py, own_kernel.py).

Fields
------
name : str
    Identifier quoted in every message ("the policy `own-kernels` rejects ...").
enforce : bool
    ``False`` records every static finding as a ``note`` (``permissive`` and ``pytorch``); the
    run-time checks are unaffected, and whether the candidate's own work is required is
    ``own_work``'s to say.
own_work : "reject" | "note"
    Severity of the own-work rule (own_work.py, own_kernel.py): no kernel of the candidate's own
    ran during the traced call (``own-kernel``; on cpu also a candidate without native code whose
    forward handed the work to PyTorch, or whose output is PyTorch's computation from the inputs:
    ``torch-fallback``), or a fallback path ran instead of its kernel (``silent-fallback``).
    ``"reject"`` in every shipped policy but ``pytorch``. A ``severity`` override for one of those
    checks can still turn it into a note under ``"reject"``; under ``"note"`` they are notes. A
    complete policy without this field (one written before it existed) means ``"reject"``, the
    rule docs/spec.md section 8 sets for every policy.
forward_torch : "glue" | "any"
    ``"glue"``: ``forward`` (and what it calls) may use only the torch functions, namespaces and
    tensor methods listed below; any other torch compute is a ``torch-fallback`` rejection.
    ``"any"``: torch compute in ``forward`` is recorded as a note. Either way a rejection rests on
    the operators that ran (docs/guard.md); the static findings on the source are notes.
glue_torch_functions : list[str]
    Names ``N`` for which ``torch.N(...)`` is allowed in ``forward``: allocation, view and
    shape/dtype/device queries.
glue_torch_namespaces : list[str]
    Dotted prefixes (``"torch.cuda"``) whose calls are allowed in ``forward``, apart from the checks
    of their own (side streams, seeds, precision flags).
glue_tensor_methods : list[str]
    Tensor methods allowed in ``forward`` (``view``, ``contiguous``, ``size`` ...). Casts are listed
    here too; what a cast below the run precision costs is judged by the measured error (the
    judge's ``precision-loss``), under every policy.
vendor_libraries : list[str]
    Native libraries the C++/CUDA sources may call, each one of :data:`KNOWN_VENDOR_LIBRARIES`.
    A call into a library not listed is a ``library-policy`` rejection.
aten_compute_in_native : bool
    Whether C++ sources may call ATen/LibTorch compute ops (``at::matmul``, ``torch::softmax``,
    ``input.sum()``): ``True`` in ``kernelbench``, ``permissive`` and ``pytorch`` (reported), ``False`` in
    ``own-kernels`` and ``strict`` (the operator seen at run time is a ``torch-fallback``).
environment_keys : list[str]
    Build knobs the candidate may read or set (``TORCH_CUDA_ARCH_LIST``, ``CUDA_HOME``), noted as
    build settings. Any other variable read or set by name is a ``sandbox`` note too (the change
    stays inside the sandbox), except a name that looks like a credential (KEY, TOKEN, SECRET, ...)
    and a write that loads code into the build's processes or changes the harness's own settings
    (``LD_PRELOAD``, ``LD_AUDIT``, ``KFORGE_*``); those, and reads or writes of the whole
    environment or by a computed name, are ``sandbox`` rejections.
severity : dict[str, "reject" | "note"]
    Per-check overrides, applied after the defaults (``{"side-stream": "reject"}``).

Two former fields, ``precision_downgrade`` and ``native_low_precision`` (the severities of casts
below the run precision and of half/TF32 arithmetic in the source), are still accepted in a policy
object so that stored ones load, and change nothing: since issue 41 the precision checks judge
the measured error profile, never the casts in the source (docs/guard.md, `precision-loss`).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Mapping

from .policy_error import PolicyError
from .policy_lists import (
    DEFAULT_ENVIRONMENT_KEYS,
    GLUE_TENSOR_METHODS,
    GLUE_TORCH_FUNCTIONS,
    GLUE_TORCH_NAMESPACES,
    KNOWN_VENDOR_LIBRARIES,
)

SEVERITIES = ("reject", "note")

#: Fields a policy object may still carry from before issue 41, accepted and dropped (module docs).
FORMER_FIELDS = ("precision_downgrade", "native_low_precision")

_OWN_KERNELS: dict[str, Any] = {
    "name": "own-kernels",
    "enforce": True,
    "own_work": "reject",
    "forward_torch": "glue",
    "glue_torch_functions": list(GLUE_TORCH_FUNCTIONS),
    "glue_torch_namespaces": list(GLUE_TORCH_NAMESPACES),
    "glue_tensor_methods": list(GLUE_TENSOR_METHODS),
    "vendor_libraries": list(KNOWN_VENDOR_LIBRARIES),
    "aten_compute_in_native": False,
    "environment_keys": list(DEFAULT_ENVIRONMENT_KEYS),
    "severity": {},
}

_KERNELBENCH_OVERRIDES: dict[str, Any] = {
    "name": "kernelbench",
    "forward_torch": "any",
    "aten_compute_in_native": True,
}

_STRICT_OVERRIDES: dict[str, Any] = {"name": "strict", "vendor_libraries": []}

_PERMISSIVE_OVERRIDES: dict[str, Any] = {
    "name": "permissive",
    "enforce": False,
    "forward_torch": "any",
    "vendor_libraries": list(KNOWN_VENDOR_LIBRARIES),
    "aten_compute_in_native": True,
}

_PYTORCH_OVERRIDES: dict[str, Any] = {"name": "pytorch", "own_work": "note"}


def _merged(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(dict(base))
    for key, value in overrides.items():
        merged[key] = copy.deepcopy(value)
    return merged


#: The shipped policies' names, in the order they are listed to users (the same list as
#: `GUARD_POLICIES` in src/core/guard-policies.ts).
POLICY_NAMES = ("kernelbench", "own-kernels", "strict", "permissive", "pytorch")
#: The policy a request without one is judged under.
DEFAULT_POLICY = "kernelbench"
#: Former names still accepted, and the policy each now means (`default` was today's own-kernels).
POLICY_ALIASES = {"default": "own-kernels"}

BUILTIN_POLICIES: dict[str, dict[str, Any]] = {
    "kernelbench": _merged(_OWN_KERNELS, _KERNELBENCH_OVERRIDES),
    "own-kernels": copy.deepcopy(_OWN_KERNELS),
    "strict": _merged(_OWN_KERNELS, _STRICT_OVERRIDES),
    "permissive": _merged(_OWN_KERNELS, _PERMISSIVE_OVERRIDES),
    "pytorch": _merged(_merged(_OWN_KERNELS, _PERMISSIVE_OVERRIDES), _PYTORCH_OVERRIDES),
}


def policy_names() -> list[str]:
    """Names of the shipped policies, in POLICY_NAMES order."""
    return list(POLICY_NAMES)


def canonical_name(name: str) -> str:
    """The shipped policy a name means (an alias resolved), or the name unchanged."""
    return POLICY_ALIASES.get(name, name)


def rejects_pytorch_compute(policy: Mapping[str, Any]) -> bool:
    """Whether PyTorch compute that ran (in forward or inside the extension) is a rejection:
    `own-kernels` and `strict` yes; `kernelbench`, `permissive` and `pytorch` report it."""
    return (
        bool(policy.get("enforce", True))
        and policy.get("forward_torch") == "glue"
        and not policy.get("aten_compute_in_native", False)
    )


def requires_own_work(policy: Mapping[str, Any]) -> bool:
    """Whether a candidate is rejected when no kernel of its own ran or a fallback ran instead: the
    policy's `own_work` field (`"reject"` in every shipped policy but `pytorch`; a policy without
    the field means `"reject"`)."""
    return policy.get("own_work", "reject") == "reject"


def _require(condition: bool, field: str, expected: str, value: Any) -> None:
    if not condition:
        raise PolicyError(f"expected policy field `{field}` to be {expected}, got {value!r}", field=field)


def _string_list(policy: Mapping[str, Any], field: str) -> None:
    value = policy[field]
    _require(
        isinstance(value, list) and all(isinstance(item, str) for item in value), field, "a list of strings", value
    )


def validate_policy(policy: Mapping[str, Any]) -> dict[str, Any]:
    """Check every field of a complete policy; return a deep copy or raise :class:`PolicyError`."""
    _require(isinstance(policy, Mapping), "<policy>", "an object", policy)
    for field in FORMER_FIELDS:
        if field in policy:
            _require(policy[field] in SEVERITIES, field, '"reject" or "note"', policy[field])
    policy = {key: value for key, value in policy.items() if key not in FORMER_FIELDS}
    policy = {**policy, "own_work": policy.get("own_work", "reject")}
    missing = [key for key in _OWN_KERNELS if key not in policy]
    if missing:
        raise PolicyError(
            f"policy is missing field(s) {', '.join(missing)}; give a `base` policy " f"or set them", field=missing[0]
        )
    unknown = [key for key in policy if key not in _OWN_KERNELS]
    if unknown:
        raise PolicyError(
            f"unknown policy field `{unknown[0]}`; known fields: " f"{', '.join(sorted(_OWN_KERNELS))}",
            field=unknown[0],
        )
    _require(isinstance(policy["name"], str) and policy["name"] != "", "name", "a non-empty string", policy["name"])
    _require(isinstance(policy["enforce"], bool), "enforce", "true or false", policy["enforce"])
    _require(policy["forward_torch"] in ("glue", "any"), "forward_torch", '"glue" or "any"', policy["forward_torch"])
    for field in (
        "glue_torch_functions",
        "glue_torch_namespaces",
        "glue_tensor_methods",
        "vendor_libraries",
        "environment_keys",
    ):
        _string_list(policy, field)
    for library in policy["vendor_libraries"]:
        _require(
            library in KNOWN_VENDOR_LIBRARIES,
            "vendor_libraries",
            f"a list drawn from {', '.join(KNOWN_VENDOR_LIBRARIES)}",
            library,
        )
    _require(
        isinstance(policy["aten_compute_in_native"], bool),
        "aten_compute_in_native",
        "true or false",
        policy["aten_compute_in_native"],
    )
    _require(policy["own_work"] in SEVERITIES, "own_work", '"reject" or "note"', policy["own_work"])
    severity = policy["severity"]
    _require(isinstance(severity, Mapping), "severity", "an object of check id to severity", severity)
    for check, level in severity.items():
        _require(isinstance(check, str) and level in SEVERITIES, f"severity.{check}", '"reject" or "note"', level)
    return copy.deepcopy(dict(policy))


def load_policy(spec: str | Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Return a complete, validated policy.

    ``spec`` is ``None`` (the ``kernelbench`` policy), a shipped policy's name or alias, JSON text
    of a policy object, or a policy dict. A dict or JSON object with a ``base`` field is merged onto
    that shipped policy; one without ``base`` must be complete.
    """
    if spec is None:
        return copy.deepcopy(BUILTIN_POLICIES[DEFAULT_POLICY])
    if isinstance(spec, str):
        text = spec.strip()
        if text.startswith("{"):
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError as error:
                raise PolicyError(
                    f"policy JSON does not parse: {error.msg} at line {error.lineno}", cause=error
                ) from error
            return load_policy(parsed)
        text = canonical_name(text)
        if text not in BUILTIN_POLICIES:
            raise PolicyError(f"unknown policy `{text}`; choose one of {', '.join(policy_names())}", field="name")
        return copy.deepcopy(BUILTIN_POLICIES[text])
    _require(isinstance(spec, Mapping), "<policy>", "a name, JSON text or an object", spec)
    if "base" in spec:
        base_name = canonical_name(spec["base"]) if isinstance(spec["base"], str) else spec["base"]
        _require(base_name in BUILTIN_POLICIES, "base", f"one of {', '.join(policy_names())}", base_name)
        overrides = {key: value for key, value in spec.items() if key != "base"}
        return validate_policy(_merged(BUILTIN_POLICIES[base_name], overrides))
    return validate_policy(spec)


def load_policy_file(path: str) -> dict[str, Any]:
    """Read a policy from a JSON file holding a policy object or a shipped policy's name."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        raise PolicyError(f"cannot read policy file {path}: {error.strerror}", cause=error) from error
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as error:
        raise PolicyError(f"policy file {path} is not JSON: {error.msg} at line {error.lineno}", cause=error) from error
    return load_policy(parsed)
