"""Static analysis of the candidate's source in stage `build`, before any of it runs.

Writes `{"type": "guard", "policy": NAME, "findings": [...]}` with every finding (notes
included) and fails the stage with kind `rejected` and the first `reject` finding's check when
there is one. An unreadable file is left to the build, which reports it as `candidate-load`; a
fault of the analyser itself is a `guard-error` rejection (a candidate must not pass unchecked).
"""

from typing import Any, Callable, Dict, List, Optional

from ..protocol.errors import StageFailure, describe_exception
from .guard_settings import GuardSettings
from .static import analyze_file, rejections


def analyse(
    path: str, guard: GuardSettings, precision: str, problem_path: Optional[str] = None
) -> List[Dict[str, Any]]:
    try:
        return analyze_file(path, guard.policy, precision=precision, problem_path=problem_path)
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
    send: Callable[..., None], path: str, guard: GuardSettings, precision: str, problem_path: Optional[str] = None
) -> List[dict]:
    """Analyses the candidate file (beside its problem's, whose names it may use), writes the `guard`
    message, raises on a rejection."""
    findings = analyse(path, guard, precision, problem_path)
    send("guard", policy=guard.policy_name, findings=findings)
    rejected = rejections(findings)
    if rejected:
        first = rejected[0]
        raise StageFailure("rejected", first["check"], first["message"])
    return findings
