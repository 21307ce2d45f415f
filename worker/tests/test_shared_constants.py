"""Values the parent (TypeScript) owns and the worker repeats: the numbers its memory estimate
uses (if one side changes, the estimate would size an evaluation the parent no longer runs) and the
folder a sandboxed worker's profile goes to. Read from the parent's sources, so a change on either
side fails here."""

import ast
import re
from pathlib import Path

from kforge_worker.roles import size_estimate
from kforge_worker.protocol import sampling_profile
from kforge_worker.timing import timing_inputs

SRC = Path(__file__).resolve().parents[2] / "src"


def _number(expression: str) -> int:
    """The value of a constant integer expression (digits, + - * / ** and parentheses only)."""
    tree = ast.parse(expression.replace("_", ""), mode="eval")
    allowed = (ast.Expression, ast.BinOp, ast.Constant, ast.Add, ast.Sub, ast.Mult, ast.Pow, ast.FloorDiv)
    assert all(isinstance(node, allowed) for node in ast.walk(tree)), expression
    return eval(compile(tree, "<ts constant>", "eval"))  # noqa: S307 -- checked above: integers and arithmetic only


def _exported(relative: str, name: str) -> int:
    text = (SRC / relative).read_text()
    found = re.search(rf"export const {name} = ([^;]+);", text)
    assert found, f"{relative} no longer exports {name}"
    return _number(found.group(1))


def _default(name: str) -> int:
    text = (SRC / "eval/run/evaluation-settings.ts").read_text()
    block = re.search(r"export const EVALUATION_DEFAULTS = \{(.*?)\} as const;", text, re.S)
    assert block, "evaluation-settings.ts no longer has EVALUATION_DEFAULTS"
    found = re.search(rf"^\s*{name}: (\d+),", block.group(1), re.M)
    assert found, f"EVALUATION_DEFAULTS has no {name}"
    return int(found.group(1))


def test_the_candidates_trusted_batches_are_held_within_the_parents_limits():
    driver = "eval/run/candidate-timing-driver.ts"
    assert size_estimate.CANDIDATE_BATCH_POOL_BYTES == _exported(driver, "BATCH_POOL_BYTES")
    assert size_estimate.CANDIDATE_MAX_BATCH_CALLS == _exported(driver, "MAX_BATCH_CALLS")


def test_the_warmup_call_limit_is_the_parents():
    from kforge_worker.timing import timing

    assert timing.WARMUP_CALL_LIMIT == _exported("eval/timing/timing-budget.ts", "WARMUP_CALL_LIMIT")


def test_the_content_pool_is_the_parents():
    assert timing_inputs.CONTENT_POOL_BYTES == _exported("eval/timing/timed-contents.ts", "CONTENT_POOL_BYTES")


def test_the_estimate_counts_the_parents_default_calls():
    assert size_estimate.TIMING_SEEDS == _default("timingSeeds")
    assert size_estimate.CORRECTNESS_TRIALS == _default("trials")
    seeds, warmup, timed = _default("timingSeeds"), _default("warmupTrials"), _default("perfTrials")
    expected = timing_inputs.calls_of_model(0, seeds, warmup) + timing_inputs.calls_of_model(0, seeds, timed)
    assert size_estimate.CONTENTS_NEEDED == expected


def test_the_profile_fallback_folder_is_the_one_the_parent_copies_out():
    text = (SRC / "eval/process/scratch-directory.ts").read_text()
    found = re.search(r"export const PROFILE_FALLBACK = '([^']+)';", text)
    assert found, "scratch-directory.ts no longer exports PROFILE_FALLBACK"
    assert sampling_profile.PROFILE_FALLBACK == found.group(1)


def test_the_parent_reads_the_policy_a_rejection_names():
    """The parent finds the policy that would measure a rejected candidate in the reason's words
    (src/core/measuring-policy.ts, MEASURED_UNDER_PATTERN): the worker's must match it."""
    from kforge_worker.guard import policy_rejection

    text = (SRC / "core/measuring-policy.ts").read_text()
    found = re.search(r"export const MEASURED_UNDER_PATTERN = /(.+)/;", text)
    assert found, "measuring-policy.ts no longer exports MEASURED_UNDER_PATTERN"
    pattern = re.compile(found.group(1))
    for clause, policy in (
        (policy_rejection.own_work_waived(), "pytorch"),
        (policy_rejection.pytorch_allowed(), "kernelbench"),
    ):
        matched = pattern.search(clause)
        assert matched and matched.group(1) == policy, clause
        words = re.search(rf"{policy}: '([^']+)'", text)
        assert words and clause.endswith(words.group(1)), f"the parent's words for `{policy}` differ from {clause!r}"
