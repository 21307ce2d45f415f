"""Findings of the static guard and their severities under a policy.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Mapping


# ---------------------------------------------------------------------------------------------
# Findings
# ---------------------------------------------------------------------------------------------


#: Checks whose static findings are notes unless definitive: what ran decides (docs/guard.md).
EVIDENCE_CHECKS = ("torch-fallback", "silent-fallback")


@dataclass
class _Report:
    policy: Mapping[str, Any]
    findings: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self,
        check: str,
        message: str,
        line: int | None,
        severity: str = "reject",
        definitive: bool = False,
        confined: bool = False,
    ) -> None:
        """`definitive`: a `torch-fallback` or `silent-fallback` finding that cannot be honest
        whatever runs (ModelNew is the reference, forward calls the reference Model; the
        reference is a `Model` the candidate imports or takes from the problem, never a class it
        defines itself); every other finding of those two checks is evidence for a person to read
        (a note), because a rejection for PyTorch use rests on what ran (torch.compile and
        torch.jit included). `confined`: a `sandbox` finding of something the sandbox confines
        (processes, network, files outside the scratch, the environment): a note where the
        candidate runs inside the sandbox with those layers in force (static_stage.py)."""
        finding = {"check": check, "severity": severity, "message": message, "line": line, "definitive": definitive}
        if confined:
            finding["confined"] = True
        self.findings.append(finding)

    def finish(self) -> list[dict[str, Any]]:
        policy = self.policy
        seen: set[tuple[Any, ...]] = set()
        out: list[dict[str, Any]] = []
        for finding in self.findings:
            definitive = finding.pop("definitive", False)
            severity = policy["severity"].get(finding["check"], finding["severity"])
            if finding["check"] in EVIDENCE_CHECKS and not definitive:
                severity = "note"
            if not policy["enforce"]:
                severity = "note"
            key = (finding["check"], finding["line"], finding["message"])
            if key in seen:
                continue
            seen.add(key)
            out.append({**finding, "severity": severity})
        out.sort(key=lambda item: (item["line"] if item["line"] is not None else 0, item["check"]))
        return out


def measured_precision_note(what: str, precision: str) -> str:
    """The message of a `precision` note: arithmetic below the run precision seen in the source
    (`what`, a sentence's start naming it and its line), which the measured error decides."""
    return (
        f"{what} while the run precision is {precision}: judged by the measured error, not the source "
        f"(an output within the tolerance passes; one whose error against the float64 reference shows "
        f"precision lost beyond it is incorrect, check `precision-loss`)"
    )


def _line(node: ast.AST | None) -> int | None:
    return getattr(node, "lineno", None)


def _at(node: ast.AST | None) -> str:
    line = _line(node)
    return f" (line {line})" if line is not None else ""
