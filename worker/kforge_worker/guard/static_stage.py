"""Static analysis of the candidate's source in stage `build`, before any of it runs.

Writes `{"type": "guard", "policy": NAME, "findings": [...]}` with every finding (notes
included) and fails the stage with kind `rejected` and the first `reject` finding's check when
there is one. An unreadable file is left to the build, which reports it as `candidate-load`; a
fault of the analyser itself is a `guard-error` rejection (a candidate must not pass unchecked).
"""

from typing import Any, Callable, Dict, List, Optional

from ..problem.problem_folder import folder_of, read_folder
from ..protocol.errors import StageFailure, describe_exception
from .forbidden_names import CHECK as FORBIDDEN, ForbiddenNames
from .guard_settings import GuardSettings
from .static import analyze_file, rejections


#: The sandbox layers that confine what a `confined` finding does (docs/security.md).
CONFINING_NAMESPACES = {"pid", "mount", "network"}


def sandbox_in_force() -> Optional[str]:
    """How this worker is confined, in words, where the sandbox's processes, network, filesystem
    and seccomp layers are all in force; None otherwise (no sandbox, or a layer missing)."""
    try:
        from kforge_sandbox.report import current
    except ImportError:
        return None
    report = current()
    if not report or not report.get("enabled"):
        return None
    namespaces = set(report.get("namespaces") or [])
    missing = [entry for entry in report.get("missing") or [] if not entry.startswith("cgroup")]
    if not (report.get("seccomp") and CONFINING_NAMESPACES <= namespaces and not missing):
        return None
    if report.get("filesystem") != "read-only view":
        return None
    return f"{report.get('filesystem')}, {report.get('network')} network, own pid namespace, seccomp"


def confine(findings: List[Dict[str, Any]], confinement: Optional[str]) -> List[Dict[str, Any]]:
    """The static findings with each `confined` rejection made a note where the sandbox is in force
    (`confinement`, sandbox_in_force): what it would do outside the process, the sandbox refuses
    or keeps inside the scratch, and the candidate's verdict rests on what it computes."""
    out = []
    for finding in findings:
        confined = finding.pop("confined", False)
        if confined and confinement and finding.get("severity") == "reject":
            finding = {
                **finding,
                "severity": "note",
                "message": f"{finding['message']} (a note here: the sandbox confines it: {confinement})",
            }
        out.append(finding)
    return out


def forbidden_names(problem_path: Optional[str]) -> ForbiddenNames:
    """The forbidden names of the problem folder `problem_path` stands for (none for a single file),
    read from its files: for a caller that has the path alone (the candidate role takes them from
    the problem it loaded)."""
    if not problem_path or folder_of(problem_path) is None:
        return ForbiddenNames()
    return ForbiddenNames.of(read_folder(problem_path).forbidden)


def forbidden_in_source(path: str, names: ForbiddenNames) -> List[Dict[str, Any]]:
    """A `reject` finding for each forbidden name the candidate's source uses where nothing at run
    time could tell (forbidden_names.py)."""
    if not names:
        return []
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            source = handle.read()
    except OSError:
        return []
    return [
        {
            "check": FORBIDDEN,
            "severity": "reject",
            "line": line,
            "message": (
                f"line {line} uses `{written}`, which the problem forbids (its problem.yaml `forbidden`); "
                "whether it runs cannot be seen at run time, so the use is refused"
            ),
        }
        for written, line in names.in_source(source)
    ]


def analyse(
    path: str,
    guard: GuardSettings,
    precision: str,
    problem_path: Optional[str] = None,
    forbidden: Optional[ForbiddenNames] = None,
) -> List[Dict[str, Any]]:
    """The static findings: the guard's, the problem's `forbidden` names the source uses, and
    with the sandbox in force its confined findings as notes."""
    try:
        found = analyze_file(path, guard.policy, precision=precision, problem_path=problem_path)
        return forbidden_in_source(path, forbidden or ForbiddenNames()) + confine(found, sandbox_in_force())
    except OSError:
        return []
    except Exception as error:  # a fault of the analyser: reject rather than let the candidate pass
        return [
            {
                "check": "guard-error",
                "severity": "reject",
                "line": None,
                "message": f"the static guard failed on this candidate ({describe_exception(error)})",
            }
        ]


def run_static_guard(
    send: Callable[..., None],
    path: str,
    guard: GuardSettings,
    precision: str,
    problem_path: Optional[str] = None,
    forbidden: Optional[ForbiddenNames] = None,
) -> List[dict]:
    """Analyses the candidate file (beside its problem's, whose names it may use, and against the
    problem's `forbidden` names), writes the `guard` message, raises on a rejection."""
    findings = analyse(path, guard, precision, problem_path, forbidden)
    send("guard", policy=guard.policy_name, findings=findings)
    rejected = rejections(findings)
    if rejected:
        first = rejected[0]
        raise StageFailure("rejected", first["check"], first["message"])
    return findings
