"""`--precision native` (the problem's own dtypes), what `fp32` casts, the error profile's float64
twin of bf16/fp16/fp8 problems (float32 where float64 cannot run), and a tolerance the problem
declares per dtype (`KFORGE_TOLERANCE`): parsed in every spelling, chosen by the reference role from
its output's dtype, reported and used by the judge (docs/spec.md section 4)."""

import textwrap

import pytest
import torch

from kforge_worker.guard.static import analyze
from kforge_worker.problem.declared_tolerance import DeclaredToleranceError, declared_tolerances, parse_tolerances
from kforge_worker.guard.input_digest import input_digest
from kforge_worker.problem.precision import PRECISIONS, cast_model, cast_value, run_dtype
from kforge_worker.problem.problem_loader import load_problem
from kforge_worker.protocol.channel import ProtocolError
from kforge_worker.protocol.errors import StageFailure
from kforge_worker.protocol.outputs import flatten
from kforge_worker.protocol.request import Tolerance, parse_reference_request
from kforge_worker.roles.reference_store import ReferenceStore
from kforge_worker.tolerance.compare import compare_outputs
from kforge_worker.tolerance.output_tolerance import choose_tolerance
from worker_process import evaluate

FP8 = hasattr(torch, "float8_e4m3fn")
needs_fp8 = pytest.mark.skipif(not FP8, reason=f"torch {torch.__version__} has no float8 dtypes (torch 2.1 on has)")
CPU = torch.device("cpu")


def _problem(dtype: str, *, declared: str = "", refuse_float64: bool = False) -> str:
    """`y = x * w` with x and w drawn in float32 and cast to `dtype` (fp8 has no random fill)."""
    refusal = "        if x.dtype == torch.float64:\n            raise TypeError('no float64 kernel here')\n"
    return f"""
import torch

{declared}
batch_size = 8
dim = 32


class Model(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(dim).to(torch.{dtype}), requires_grad=False)

    def forward(self, x):
{refusal if refuse_float64 else ""}        return x * self.weight


def get_inputs():
    return [torch.randn(batch_size, dim).to(torch.{dtype})]


def get_init_inputs():
    return [dim]
"""


def _candidate(offset: float) -> str:
    """The reference's computation in the same dtypes, off by `offset` everywhere."""
    return f"""
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(dim).to(torch.bfloat16))

    def forward(self, x):
        return x * self.weight + {offset}
"""


def _load(tmp_path, source: str, name: str = "problem.py"):
    path = tmp_path / name
    path.write_text(source)
    return load_problem(str(path), None)


# ----------------------------------------------------------------------------------------------
# precisions
# ----------------------------------------------------------------------------------------------


def test_native_is_a_precision_that_casts_nothing_and_fp64_is_refused():
    assert list(PRECISIONS) == ["fp32", "fp16", "bf16", "native"]
    assert run_dtype("native") is None and run_dtype("fp32") is torch.float32
    with pytest.raises(ProtocolError, match="one of fp32, fp16, bf16, native, got 'fp64'"):
        run_dtype("fp64")


def test_fp32_casts_other_floating_dtypes_and_native_keeps_them():
    values = [
        torch.ones(2, dtype=torch.bfloat16),
        torch.ones(2, dtype=torch.float64),
        torch.arange(3),
        (torch.ones(1),),
    ]
    values.append(torch.ones(2, dtype=torch.complex64))
    as_fp32 = [cast_value(value, CPU, run_dtype("fp32")) for value in values]
    assert [as_fp32[0].dtype, as_fp32[1].dtype, as_fp32[2].dtype, as_fp32[3][0].dtype, as_fp32[4].dtype] == [
        torch.float32,
        torch.float32,
        torch.int64,
        torch.float32,
        torch.complex64,
    ]
    native = [cast_value(value, CPU, run_dtype("native")) for value in values]
    assert [native[0].dtype, native[1].dtype] == [torch.bfloat16, torch.float64]
    assert native[0] is not values[0], "always a copy: each model gets its own inputs"


def test_fp32_leaves_a_float32_model_as_it_is_and_casts_only_real_floating_weights():
    plain = torch.nn.Linear(4, 4)
    weight = plain.weight
    assert cast_model(plain, CPU, torch.float32).weight is weight
    mixed = torch.nn.Linear(4, 4).to(torch.bfloat16)
    mixed.register_buffer("phase", torch.ones(2, dtype=torch.complex64))
    mixed.register_buffer("index", torch.arange(3))
    cast = cast_model(mixed, CPU, torch.float32)
    assert isinstance(cast.weight, torch.nn.Parameter) and cast.weight.dtype == torch.float32
    assert cast.phase.dtype == torch.complex64 and cast.index.dtype == torch.int64
    assert cast_model(mixed, CPU, None).weight.dtype == torch.float32, "native casts nothing"


def test_native_turns_off_the_static_cast_notes_and_fp32_keeps_them():
    candidate = textwrap.dedent(
        """
        import torch
        class ModelNew(torch.nn.Module):
            def forward(self, x):
                return (x.to(torch.bfloat16) * 2).to(torch.float32)
    """
    )

    def found(precision):
        return {item["severity"] for item in analyze(candidate, precision=precision) if item["check"] == "precision"}

    assert found("fp32") == {"note"}, "in fp32 a note: the measured error decides (issue 41)"
    assert found("native") == set(), "under native the problem's dtypes are the kernel's to handle"


# ----------------------------------------------------------------------------------------------
# the float64 twin
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_native_half_problem_runs_in_its_dtype_and_its_twin_in_float64(tmp_path, dtype):
    store = ReferenceStore(_load(tmp_path, _problem(dtype)), CPU, run_dtype("native"))
    record = store.compute(11)
    assert record.output.leaves[0].dtype == getattr(torch, dtype)
    assert record.output_fp64.leaves[0].dtype == torch.float64 and record.high_precision_dtype == "float64"
    exact = record.output_fp64.leaves[0]
    assert 0 < float((record.output.leaves[0].double() - exact).abs().max()) < 0.05, "the half run rounds"


def test_where_float64_cannot_run_a_half_problem_has_a_float32_twin_and_says_so(tmp_path):
    store = ReferenceStore(_load(tmp_path, _problem("bfloat16", refuse_float64=True)), CPU, None)
    record = store.compute(11)
    assert record.output_fp64.leaves[0].dtype == torch.float32 and record.high_precision_dtype == "float32"
    candidate = flatten(record.output.leaves[0].clone())
    trial = compare_outputs(record.output, candidate, 0.01, 0.01, record.output_fp64)
    assert trial["check"] is None and trial["fp64_max_abs_error"] is not None


def test_an_fp32_problem_gets_no_float32_twin_when_float64_cannot_run(tmp_path):
    store = ReferenceStore(_load(tmp_path, _problem("float32", refuse_float64=True)), CPU, run_dtype("fp32"))
    record = store.compute(11)
    assert record.output_fp64 is None and record.high_precision_dtype is None


# ----------------------------------------------------------------------------------------------
# declared tolerance
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key, dtype",
    [
        ("bfloat16", "bfloat16"),
        ("bf16", "bfloat16"),
        ("torch.bfloat16", "bfloat16"),
        ("BF16", "bfloat16"),
        ("float16", "float16"),
        ("fp16", "float16"),
        ("half", "float16"),
        ("float32", "float32"),
        ("fp32", "float32"),
        ("torch.float32", "float32"),
        ("fp64", "float64"),
        ("fp8_e4m3", "float8_e4m3fn"),
        ("fp8_e4m3fn", "float8_e4m3fn"),
        ("float8_e4m3fn", "float8_e4m3fn"),
        ("fp8_e5m2", "float8_e5m2"),
        ("float8_e5m2", "float8_e5m2"),
        ("int8", "int8"),
    ],
)
def test_every_spelling_of_a_dtype_is_accepted(key, dtype):
    assert list(parse_tolerances({key: 0.05})) == [dtype]


def test_a_number_is_both_tolerances_and_a_dict_gives_each():
    parsed = parse_tolerances({"bf16": 0.02, "fp32": {"atol": 1e-5, "rtol": 2e-5}, "float16": "5e-2"})
    assert (parsed["bfloat16"].atol, parsed["bfloat16"].rtol) == (0.02, 0.02)
    assert (parsed["float32"].atol, parsed["float32"].rtol) == (1e-5, 2e-5)
    assert (parsed["float16"].atol, parsed["float16"].rtol) == (0.05, 0.05), "PyYAML's 5e-2 is a string"


@pytest.mark.parametrize(
    "mapping, message",
    [
        ([("bf16", 0.1)], "it is a list; write a dict from dtype to tolerance"),
        ({"fp8": 0.1}, "the key 'fp8' names no dtype kforge knows; use one of"),
        ({3: 0.1}, "the key 3 is not a dtype name"),
        ({"bf16": -0.1}, "the tolerance of 'bf16' is -0.1; it must be a finite number, 0 or more"),
        ({"bf16": float("nan")}, "it must be a finite number"),
        ({"bf16": True}, "the tolerance of 'bf16' is True, not a number"),
        ({"bf16": "loose"}, "the tolerance of 'bf16' is 'loose', not a number"),
        ({"bf16": {"atol": 0.1}}, "give both 'atol' and 'rtol' and nothing else"),
        ({"bf16": {"atol": 0.1, "rtol": 0.1, "eps": 1}}, "give both 'atol' and 'rtol' and nothing else"),
        ({"bf16": {"atol": 0.1, "rtol": None}}, "the rtol of 'bf16' is None, not a number"),
        ({"bf16": 0.1, "bfloat16": 0.2}, "the keys 'bf16' and 'bfloat16' both name bfloat16"),
    ],
)
def test_a_tolerance_that_cannot_be_used_says_why(mapping, message):
    with pytest.raises(DeclaredToleranceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_tolerances(mapping)


def test_a_bad_module_constant_is_a_problem_load_failure(tmp_path):
    with pytest.raises(StageFailure) as raised:
        _load(tmp_path, _problem("bfloat16", declared="KFORGE_TOLERANCE = {'bf16': {'atol': 0.1}}"))
    failure = raised.value
    assert (failure.kind, failure.check) == ("invalid_input", "problem-load")
    assert failure.message.startswith("the problem's KFORGE_TOLERANCE cannot be used: the entry for 'bf16'")
    problem = _load(tmp_path, _problem("bfloat16", declared="KFORGE_TOLERANCE = {'bf16': 0.1}"), "good.py")
    assert declared_tolerances(problem)["bfloat16"].atol == 0.1


def test_the_declared_tolerance_for_the_outputs_dtype_wins_only_where_the_request_lets_it():
    declared = parse_tolerances({"bf16": 0.1, "fp32": 1e-5})
    profile = Tolerance(0.01, 0.01)
    bf16 = flatten((torch.ones(2, dtype=torch.bfloat16), torch.arange(2), 3))
    chosen = choose_tolerance(bf16, profile, {}, declared, True)
    assert chosen.fields() == {"atol": 0.1, "rtol": 0.1, "source": "problem", "dtype": "bfloat16"}
    assert choose_tolerance(bf16, profile, {}, declared, False).fields() == {
        "atol": 0.01,
        "rtol": 0.01,
        "source": "profile",
        "dtype": "bfloat16",
    }, "strict keeps its own values"
    float16 = flatten(torch.ones(2, dtype=torch.float16))
    by_dtype = {"float16": Tolerance(0.02, 0.03)}
    assert choose_tolerance(float16, profile, by_dtype, declared, True).fields()["atol"] == 0.02, "native's table"
    assert choose_tolerance(flatten(torch.arange(2)), profile, {}, declared, True).dtype == "int64"
    assert choose_tolerance(flatten(3.0), profile, {}, declared, True).fields()["dtype"] is None


def test_the_reference_request_carries_the_declared_flag_and_the_native_table():
    base = {
        "type": "reference",
        "problem": "/p.py",
        "backend": "cpu",
        "precision": "native",
        "device": "cpu",
        "correctness_seeds": [1],
        "timing_seeds": [],
        "baselines": None,
    }
    request = parse_reference_request(
        {
            **base,
            "atol": 1e-4,
            "rtol": 1e-4,
            "declared_tolerance": True,
            "dtype_tolerances": {"bfloat16": {"atol": 0.01, "rtol": 0.01}},
        }
    )
    assert request.declared_tolerance is True and request.dtype_tolerances == {"bfloat16": Tolerance(0.01, 0.01)}
    assert parse_reference_request(base).declared_tolerance is False
    with pytest.raises(ProtocolError, match="dtype_tolerances.bfloat16"):
        parse_reference_request({**base, "dtype_tolerances": {"bfloat16": 0.01}})


# ----------------------------------------------------------------------------------------------
# end to end: a bf16 problem with its own tolerance, through both roles on the cpu backend
# ----------------------------------------------------------------------------------------------

DECLARED = 'KFORGE_TOLERANCE = {"bf16": {"atol": 0.1, "rtol": 0.1}, "fp32": 1e-5}'


@pytest.fixture(scope="module")
def bf16_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("native")
    problem = root / "scale_bf16.py"
    problem.write_text(_problem("bfloat16", declared=DECLARED))
    off = root / "off_by_005.py"
    off.write_text(_candidate(0.05))
    return problem, off


def _native_run(tmp_path_factory, build_dir, files, **settings):
    problem, candidate = files
    return evaluate(
        problem, candidate, tmp_path_factory.mktemp("run"), build_dir, run_timing=False, precision="native", **settings
    )


def test_under_kernelbench_the_declared_tolerance_is_used_and_reported(tmp_path_factory, build_dir, bf16_files):
    result = _native_run(tmp_path_factory, build_dir, bf16_files, declared_tolerance=True)
    assert result.ready["trials"][0]["output"] == "[tensor bfloat16 (8, 32)]", "native keeps bf16"
    assert result.ready["tolerance"] == {"atol": 0.1, "rtol": 0.1, "source": "problem", "dtype": "bfloat16"}
    audit = result.message("reference", "audit")
    assert (audit["atol"], audit["rtol"]) == (0.1, 0.1), "the audit judges the tolerance the run uses"
    judgement = result.judgement
    assert judgement["passed"] is True, judgement
    for trial in judgement["trials"]:
        assert 0.04 < trial["max_abs_error"] < 0.1, "off by 0.05 in bf16: outside 1e-2, inside the declared 0.1"
        assert trial["high_precision_dtype"] == "float64" and trial["fp64_max_abs_error"] is not None
    assert result.exit_codes == {"reference": 0, "candidate": 0}


def test_under_strict_the_profiles_tolerance_judges_the_same_output(tmp_path_factory, build_dir, bf16_files):
    result = _native_run(
        tmp_path_factory,
        build_dir,
        bf16_files,
        atol=1e-4,
        rtol=1e-4,
        declared_tolerance=False,
        dtype_tolerances={"bfloat16": {"atol": 0.01, "rtol": 0.01}},
    )
    assert result.ready["tolerance"] == {"atol": 0.01, "rtol": 0.01, "source": "profile", "dtype": "bfloat16"}
    assert result.judgement["passed"] is False
    assert result.judgement["trials"][0]["check"] == "mismatch"


# ----------------------------------------------------------------------------------------------
# fp8 (torch 2.1 on: the GPU host's torch; skipped on torch 1.13)
# ----------------------------------------------------------------------------------------------


@needs_fp8
def test_fp8_travels_on_the_wire_and_is_compared_in_float64():
    from kforge_worker.protocol.output_wire import DTYPES, header_of

    assert DTYPES["float8_e4m3fn"] is torch.float8_e4m3fn and DTYPES["float8_e5m2"] is torch.float8_e5m2
    reference = torch.tensor([0.5, 1.0, -2.0, 448.0]).to(torch.float8_e4m3fn)
    assert header_of(flatten(reference))["leaves"][0]["tensor"] == {"dtype": "float8_e4m3fn", "shape": [4], "nbytes": 4}
    candidate = torch.tensor([0.5, 1.125, -2.0, 448.0]).to(torch.float8_e4m3fn)
    trial = compare_outputs(flatten(reference), flatten(candidate), 0.01, 0.01)
    assert trial["check"] == "mismatch" and trial["mismatch_count"] == 1
    assert trial["max_abs_error"] == pytest.approx(0.125) and trial["first_mismatch"]["actual"] == 1.125
    assert compare_outputs(flatten(reference), flatten(candidate), 0.15, 0.0)["check"] is None


@needs_fp8
def test_fp8_inputs_digest_refill_and_widen():
    from kforge_worker.timing.timing_inputs import refill

    values = torch.randn(4, 6).to(torch.float8_e5m2)
    assert input_digest([values]) == input_digest([values.clone()])
    assert input_digest([values]) != input_digest([(values.float() * 2).to(torch.float8_e5m2)])
    assert input_digest([values[:, 1:]]) == input_digest(
        [values[:, 1:].contiguous()]
    ), "a strided view digests its values"
    live = torch.zeros(4, 6).to(torch.float8_e5m2)
    pointer = live.data_ptr()
    assert refill(live, values) is live and live.data_ptr() == pointer
    assert torch.equal(live.view(torch.uint8), values.view(torch.uint8))
    wide = cast_value(values, CPU, torch.float64)
    assert wide.dtype == torch.float64 and torch.equal(wide, values.float().double())


@needs_fp8
def test_a_native_fp8_problem_has_a_float64_twin(tmp_path):
    # fp8 has no multiply (nor type promotion): the forward widens to float32, to float64 in the twin.
    widened = (
        "wide = torch.float64 if x.dtype == torch.float64 else torch.float32\n"
        "        return x.to(wide) * self.weight.to(wide)"
    )
    source = _problem("float8_e4m3fn").replace("return x * self.weight", widened)
    store = ReferenceStore(_load(tmp_path, source), CPU, run_dtype("native"))
    record = store.compute(11)
    assert record.output.leaves[0].dtype == torch.float32
    assert record.high_precision_dtype == "float64" and record.output_fp64.leaves[0].dtype == torch.float64
