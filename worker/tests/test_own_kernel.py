"""`own-kernel` in process: kernel names (kernel_names.py), the judgement (own_kernel.py), what the
candidate built (candidate_kernels.py), the profiler's record (kernel_trace.py) and the guard's
wiring (guard_runtime.py), with recorded and made-up profiler events where no GPU is needed.

End to end on a GPU: test_guard_gpu.py (cuda/c06 rejected, cuda/h01 and cuda/h06 passed); the
all-threads half of `torch-fallback`: adversarial[cpu/c06e…] (torch 2.x), adversarial[cpu/h06e…].
"""

import math
import sys
import threading
import types
from types import SimpleNamespace

import pytest
import torch

from kforge_worker.guard import own_kernel, own_work
from kforge_worker.backends.registry import jit_kernel_names
from kforge_worker.guard.candidate_kernels import OwnKernelSources, sources
from kforge_worker.guard.dispatch_ops import COMPUTE, GLUE, glue_operators
from kforge_worker.guard.dispatch_ops import OWN as OWN_OPERATOR
from kforge_worker.protocol.errors import StageFailure
from kforge_worker.build.extension_calls import ExtensionCalls
from kforge_worker.guard.guard_runtime import GuardRuntime
from kforge_worker.guard.kernel_names import OwnKernels, display_name, qualified_name
from kforge_worker.guard import attribution
from kforge_worker.guard.kernel_trace import CALLER_MARKER, KernelTrace, _read, all_threads_config, profiled_call
from kforge_worker.guard.policy import POLICY_NAMES, load_policy
from kforge_worker.guard.policy_rejection import PolicyRejection
from kforge_worker.guard.candidate_calls import CandidateCalls

DEFAULT = load_policy("own-kernels")
GLUE_OPS = glue_operators(DEFAULT)
WHERE = "correctness trial 0 (seed 11)"
# As the profiler (torch 2.11, H200) and c++filt spell them.
RELU = "void kforge_relu_kernel<float>(float const*, float*, int)"
TORCH_RELU = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_"
    "scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::"
    "{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, "
    "std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::Tensor"
    "IteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()"
    "() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)"
)
GEMM = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel"
MARKER = "at::cuda::(anonymous namespace)::spin_kernel(long)"


# --- names --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, qualified",
    [
        (RELU, "kforge_relu_kernel"),
        ("kf::scale_kernel(float*, int)", "kf::scale_kernel"),
        ("(anonymous namespace)::tile_kernel(float*, int)", "(anonymous namespace)::tile_kernel"),
        ("plain_c_kernel", "plain_c_kernel"),
        ("void ns::gemm<(int)128, 64>(float const*, float*)", "ns::gemm"),
        (TORCH_RELU, "at::native::vectorized_elementwise_kernel"),
        (MARKER, "at::cuda::(anonymous namespace)::spin_kernel"),
        ("_Z18kforge_relu_kernelIfEvPKT_PS0_i", "kforge_relu_kernel"),
        ("_ZN2kf12scale_kernelEPfi", "kf::scale_kernel"),
        ("_ZN39_GLOBAL__N__c309c6c7_7_cuda_cu_e135ab9011anon_kernelEPfi", "(anonymous namespace)::anon_kernel"),
        ("_ZN2at6native12_GLOBAL__N_111fake_kernelEv", "at::native::(anonymous namespace)::fake_kernel"),
        ("_ZL12local_kernelPf", "local_kernel"),
        ("add_kernel", "add_kernel"),
    ],
)
def test_qualified_names_of_demangled_and_mangled_kernels(name, qualified):
    assert qualified_name(name) == qualified


def test_display_names_mark_template_instances():
    assert display_name(RELU) == "kforge_relu_kernel<…>"
    assert display_name(TORCH_RELU) == "at::native::vectorized_elementwise_kernel<…>"
    assert display_name("kf::scale_kernel(float*, int)") == "kf::scale_kernel"


def test_a_kernel_is_own_by_its_full_name_or_its_qualified_name():
    demangled = OwnKernels.of(built=[RELU, "(anonymous namespace)::anon_kernel(float*, int)"])
    assert demangled.owns(RELU)
    assert demangled.owns("(anonymous namespace)::anon_kernel(float*, int)")
    assert demangled.owns("void kforge_relu_kernel<double>(double const*, double*, int)")  # qualified name
    mangled = OwnKernels.of(built=["_Z18kforge_relu_kernelIfEvPKT_PS0_i", "plain_c_kernel"])  # no c++filt
    assert mangled.owns(RELU) and mangled.owns("plain_c_kernel")
    assert not mangled.owns(TORCH_RELU) and not mangled.owns(GEMM)


def test_pytorchs_kernels_are_not_claimed_by_a_kernel_of_the_same_qualified_name():
    impostor = OwnKernels.of(
        built=["void at::native::vectorized_elementwise_kernel<int>(int)", "vectorized_elementwise_kernel(int)"]
    )
    assert not impostor.owns(TORCH_RELU)
    assert impostor.owns("void at::native::vectorized_elementwise_kernel<int>(int)")  # its own, exactly


def test_triton_kernels_are_own_by_their_function_name():
    own = OwnKernels.of(jit=["add_kernel", "triton_poi"])
    assert own.owns("add_kernel")
    assert own.owns("add_kernel_0d1d2d3de")  # Triton 2.x specialisation suffix
    assert not own.owns("add_kernel_fused") and not own.owns("kforge_add_kernel")
    assert not own.owns("triton_poi_fused_relu_0")  # Inductor's kernel, not the candidate's


# --- the judgement ------------------------------------------------------------------------------

OWN = OwnKernels.of(built=[RELU])


def test_an_own_kernel_beside_vendor_and_pytorch_kernels_passes():
    finding = own_kernel.judge({GEMM: 1, RELU: 2, TORCH_RELU: 1}, OWN, DEFAULT, WHERE)
    assert finding.status == "passed"
    assert finding.message.startswith(f"{WHERE}: its own kernel(s) ran: kforge_relu_kernel<…> ×2; beside them: ")
    assert "sm80_xmma_gemm" in finding.message


@pytest.mark.parametrize("policy", ["kernelbench", "own-kernels", "default", "strict", "permissive"])
def test_no_own_kernel_is_rejected_under_every_policy_but_pytorch(policy):
    finding = own_kernel.judge({TORCH_RELU: 1}, OWN, load_policy(policy), WHERE)
    assert finding.status == "reject"
    assert finding.message == (
        f"{WHERE}: launched no kernel of the candidate's own: only "
        f"at::native::vectorized_elementwise_kernel<…> ×1 ran; it builds "
        f"kforge_relu_kernel<…>, and forward must launch it (the guard policy `pytorch` would measure it "
        f"as a PyTorch program, no kernel of its own required)"
    )


@pytest.mark.parametrize(
    "policy",
    [
        load_policy("pytorch"),
        load_policy({"base": "permissive", "name": "plain-pytorch", "own_work": "note"}),
        load_policy({"base": "own-kernels", "severity": {"own-kernel": "note"}}),
    ],
)
def test_no_own_kernel_is_a_note_where_the_policy_does_not_require_own_work(policy):
    finding = own_kernel.judge({TORCH_RELU: 1}, OWN, policy, WHERE)
    assert finding.status == "note" and "recorded only" in finding.message
    assert f"the policy `{policy['name']}` does not reject it" in finding.message


def _extension(call_with=None) -> ExtensionCalls:
    """A real recorder around a module whose one function is a builtin (`math.sqrt`), called once
    in the traced window with `call_with` (None: not called; -1.0: it raises)."""
    calls = ExtensionCalls()
    module = types.ModuleType("kforge_ext")
    module.root = math.sqrt
    calls.adopt(module)
    calls.start()
    try:
        if call_with is not None:
            module.root(call_with)
    except ValueError:
        pass
    finally:
        calls.stop()
    return calls


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_the_own_work_rules_reject_under_every_shipped_policy_but_pytorch(name):
    """docs/spec.md section 8: no kernel of its own ran, or a fallback ran instead, is a rejection under
    every policy; only `pytorch` (for measuring PyTorch programs) records it."""
    policy = load_policy(name)
    level = "note" if name == "pytorch" else "reject"
    assert policy["own_work"] == level
    raised = own_work.fallback_raised(_extension(-1.0), policy, WHERE)
    assert (raised.check, raised.status) == ("silent-fallback", level)
    assert "kforge_ext.root raised (ValueError: math domain error)" in raised.message
    output = own_work.pytorch_output(["aten::relu"], policy, WHERE, [], [])
    assert (output.check, output.status) == ("torch-fallback", level)
    plain = own_work.no_native_code(["aten::relu"], policy, WHERE, [], [])
    assert (plain.check, plain.status) == ("torch-fallback", level)
    idle = own_work.cpu_kernel_ran(_extension(), [], policy, WHERE)
    assert (idle.check, idle.status) == ("own-kernel", level)
    assert ("recorded only" in idle.message) is (level == "note")
    measured = "(the guard policy `pytorch` would measure it as a PyTorch program, no kernel of its own required)"
    assert all(outcome.message.endswith(measured) is (level == "reject") for outcome in (raised, output, plain, idle))
    assert own_work.cpu_kernel_ran(_extension(4.0), [], policy, WHERE).status == "passed"


def test_a_severity_override_for_torch_fallback_does_not_change_own_kernel():
    policy = load_policy({"base": "own-kernels", "severity": {"torch-fallback": "note"}})
    assert own_kernel.severity(policy) == "reject"


def test_the_message_names_every_kernel_built():
    two = OwnKernels.of(built=[RELU, "kf::scale_kernel(float*, int)"])
    finding = own_kernel.judge({TORCH_RELU: 1}, two, DEFAULT, WHERE)
    assert "it builds kf::scale_kernel, kforge_relu_kernel<…>, and forward must launch one of them (" in finding.message


def test_a_call_with_no_kernel_or_no_built_kernel_is_rejected():
    nothing = own_kernel.judge({}, OWN, DEFAULT, WHERE, copies=2)
    assert nothing.status == "reject" and "no GPU kernel ran at all (2 device copies or fills)" in nothing.message
    vendor_only = own_kernel.judge({GEMM: 1}, OwnKernels(), DEFAULT, WHERE)
    assert vendor_only.status == "reject" and "it built no kernel kforge recognises" in vendor_only.message


def test_unknowns_are_skipped_never_rejected():
    blind = own_kernel.verdict(None, "no CUPTI", OWN, None, DEFAULT, WHERE)
    assert (blind.status, blind.message) == (
        "skipped",
        f"{WHERE}: whether the candidate's own kernel ran was not " f"checked: no CUPTI",
    )
    unlisted = own_kernel.verdict({TORCH_RELU: 1}, None, OwnKernels(), "cuobjdump was not found", DEFAULT, WHERE)
    assert unlisted.status == "skipped" and "vectorized_elementwise_kernel" in unlisted.message
    assert own_kernel.verdict({RELU: 1}, None, OWN, "partly listed", DEFAULT, WHERE).status == "passed"


# --- what the candidate built ---------------------------------------------------------------------


def test_sources_come_from_build_info_when_the_backend_sent_it():
    assert sources([], None, "kforge_candidate") == OwnKernelSources(module_name="kforge_candidate")
    info = {"kernels": [{"name": RELU, "mangled": "_Z…", "arch": "sm_90"}, {"name": RELU, "arch": "sm_90a"}]}
    assert sources(["/x.so"], info, "m").built == [RELU]
    missing = sources(["/x.so"], {"kernels": [], "error": "cuobjdump was not found"}, "m")
    assert missing.built == [] and "cuobjdump was not found" in missing.unknown


def test_triton_kernels_of_the_candidates_module_are_found(monkeypatch):
    class JITFunction:
        def __init__(self, fn):
            self.fn = fn

    def kernel():
        pass

    def foreign():
        pass

    kernel.__module__, foreign.__module__ = "kforge_candidate", "torch._inductor.generated"
    jit = types.ModuleType("triton.runtime.jit")
    jit.JITFunction = JITFunction
    for name, module in (
        ("triton", types.ModuleType("triton")),
        ("triton.runtime", types.ModuleType("triton.runtime")),
        ("triton.runtime.jit", jit),
    ):
        monkeypatch.setitem(sys.modules, name, module)
    kept = [JITFunction(kernel), JITFunction(foreign)]
    assert jit_kernel_names("kforge_candidate") == ["kernel"]
    assert jit_kernel_names(None) == [] and kept


# --- the profiler's record ------------------------------------------------------------------------


def _event(name, thread=1, device="DeviceType.CPU", parent=None, shapes=None):
    return SimpleNamespace(name=name, thread=thread, device_type=device, cpu_parent=parent, input_shapes=shapes)


def _recorded(events, kernels=True, threads=True, called=True):
    trace = KernelTrace(kernels={} if kernels else None, other_threads=[] if threads else None)
    _read(SimpleNamespace(events=lambda: events), trace, GLUE_OPS, called)
    return trace


def test_marker_kernels_are_required_and_not_counted():
    cuda = "DeviceType.CUDA"
    trace = _recorded(
        [
            _event(CALLER_MARKER),
            _event(MARKER, device=cuda),
            _event(RELU, device=cuda),
            _event("Memcpy DtoD (Device -> Device)", device=cuda),
            _event(MARKER, device=cuda),
        ]
    )
    assert trace.kernels == {RELU: 1} and trace.copies == 1
    stopped = _recorded([_event(CALLER_MARKER), _event(MARKER, device=cuda), _event(RELU, device=cuda)])
    assert stopped.kernels is None and "1 of the worker's 2 marker" in stopped.kernels_unavailable
    assert _recorded([_event(CALLER_MARKER)]).kernels_unavailable.startswith("the profiler recorded 0")


def _timed(name, us, device="DeviceType.CUDA", annotation=False, parent=None, kernels=()):
    """A profiler event with a duration, as torch 2.x's FunctionEvent has it."""
    event = _event(name, device=device, parent=parent)
    event.time_range = SimpleNamespace(elapsed_us=lambda: us)
    event.is_user_annotation = annotation
    event.kernels = [SimpleNamespace(name=kernel, duration=duration) for kernel, duration in kernels]
    return event


def test_device_copies_of_record_function_ranges_are_not_kernels():
    """torch 2.x puts a device-side event of a `record_function` range's name beside every kernel
    launched inside it, with that kernel's duration (seen on an H200, torch 2.11: an own kernel's
    1.4725 ms was counted again as `library`, own share exactly 0.5). Only the kernel counts."""
    caller = _timed(CALLER_MARKER, 1500.0, device="DeviceType.CPU", annotation=True)
    relu_op = _timed("aten::relu", 40.0, device="DeviceType.CPU", parent=caller, kernels=[(TORCH_RELU, 30.0)])
    events = [
        caller,
        relu_op,
        _timed(MARKER, 1.0),
        _timed(RELU, 1472.5),
        _timed(CALLER_MARKER, 1472.5, annotation=True),  # the range's device-side copy of the own kernel
        _timed(TORCH_RELU, 30.0),
        _timed(CALLER_MARKER, 30.0, annotation=True),
        _timed("mylib::step", 30.0, annotation=True),  # a candidate's own range
        _timed(MARKER, 1.0),
    ]
    trace = _recorded(events)
    assert trace.kernels == {RELU: 1, TORCH_RELU: 1}
    assert sorted((launch.name, launch.duration_us, launch.operators) for launch in trace.launches) == sorted(
        [(TORCH_RELU, 30.0, ["aten::relu"]), (RELU, 1472.5, [])]
    )
    assert trace.unlinked_us == 1472.5
    assert all(entry.name != "mylib::step" for entry in trace.other_threads)
    measured = attribution.device(
        trace.launches, lambda name: name == RELU, frozenset({"aten::relu"}), trace.unlinked_us
    )
    assert (
        measured.library_ms == 0
        and measured.own_ms == pytest.approx(1.4725)
        and measured.torch_ms == pytest.approx(0.03)
    )
    assert measured.own_share() == pytest.approx(1.4725 / 1.5025)


def test_outermost_operators_of_other_threads_are_counted():
    relu = _event("aten::relu", thread=3, shapes=[[512]])
    events = [
        _event(CALLER_MARKER),
        _event("aten::empty_like", parent=object()),
        _event("aten::sigmoid", shapes=[[512]]),
        relu,
        _event("aten::clamp_min", thread=3, parent=relu, shapes=[[512], []]),
        _event("aten::fill_", thread=5, shapes=[[8, 8], []]),
        _event("cuLaunchKernelEx", thread=5),
    ]
    hidden = _event("mylib::annotation", thread=7)
    events += [hidden, _event("aten::mm", thread=7, parent=hidden, shapes=[[8, 8], [8, 8]])]
    trace = _recorded(events, kernels=False)
    found = {entry.name: (entry.kind, entry.count, entry.largest) for entry in trace.other_threads}
    assert found == {
        "aten::relu": (COMPUTE, 1, 512),
        "aten::fill_": (GLUE, 1, 64),
        "mylib::annotation": (OWN_OPERATOR, 1, 0),
        "aten::mm": (COMPUTE, 1, 64),
    }  # ranges hide nothing


def test_without_an_all_threads_profiler_the_cpu_call_runs_unprofiled():
    output, trace = profiled_call(lambda: 7, torch.device("cpu"), GLUE_OPS)
    assert output == 7 and trace.kernels is None and "no GPU kernels" in trace.kernels_unavailable
    if all_threads_config()[0] is None:
        assert trace.other_threads is None and "all-threads" in trace.threads_unavailable


def test_exceptions_of_the_call_propagate():
    def broken():
        raise ValueError("the candidate's own error")

    with pytest.raises(ValueError, match="own error"):
        profiled_call(broken, torch.device("cpu"), GLUE_OPS)


@pytest.mark.skipif(all_threads_config()[0] is None, reason="this torch's profiler records only its own thread")
def test_the_all_threads_profiler_sees_a_joined_helper_thread():
    values = torch.randn(512)

    def forward():
        result = []
        worker = threading.Thread(target=lambda: result.append(torch.relu(values)))
        worker.start()
        worker.join()
        return torch.sigmoid(values)  # the caller's own operator is the dispatch trace's, not listed here

    _, trace = profiled_call(forward, torch.device("cpu"), GLUE_OPS)
    assert [(entry.name, entry.kind, entry.largest) for entry in trace.other_threads] == [("aten::relu", COMPUTE, 512)]


# --- the guard's wiring ---------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["kernelbench", "own-kernels", "strict"])
def test_no_own_kernel_is_rejected_under_every_enforcing_policy(policy):
    finding = own_kernel.judge({TORCH_RELU: 1}, OWN, load_policy(policy), WHERE)
    assert finding.status == "reject"


def test_cpu_guard_without_native_code_takes_its_python_as_its_kernel():
    guard = GuardRuntime(torch.device("cpu"), DEFAULT)
    values = torch.randn(64)
    output = guard.forward(lambda: values.clone(), traced=True, sources=[values])
    guard.check_dispatch(output, WHERE)
    guard.check_own_kernel(WHERE)
    entries = {entry["check"]: entry for entry in guard.log.take()}
    assert entries["own-kernel"]["status"] == "passed"
    assert "its Python is its kernel" in entries["own-kernel"]["message"]
    assert entries["torch-fallback"]["status"] == "passed"
    assert "other thread" in entries["torch-fallback"]["message"]


def _cuda_guard(policy, kernels):
    guard = GuardRuntime(torch.device("cpu"), policy)
    guard.is_cuda = True  # the judgement alone: no device is touched
    guard.expect_own_kernels(OwnKernelSources(built=[RELU], module_name="kforge_candidate"))
    guard.kernels = KernelTrace(kernels=kernels)
    return guard


def test_cuda_guard_rejects_a_call_without_its_own_kernel():
    with pytest.raises(StageFailure) as raised:
        _cuda_guard(DEFAULT, {TORCH_RELU: 1}).check_own_kernel(WHERE)
    assert (raised.value.kind, raised.value.check) == ("rejected", "own-kernel")
    assert "only at::native::vectorized_elementwise_kernel<…> ×1 ran" in raised.value.message


def test_cuda_guard_records_passes_and_notes():
    passing = _cuda_guard(DEFAULT, {RELU: 1})
    passing.check_own_kernel(WHERE)
    assert passing.log.take() == [
        {
            "check": "own-kernel",
            "status": "passed",
            "message": f"{WHERE}: its own kernel(s) ran: kforge_relu_kernel<…> ×1",
        }
    ]
    noting = _cuda_guard(load_policy("pytorch"), {TORCH_RELU: 1})
    noting.check_own_kernel(WHERE)
    assert noting.log.take()[0]["status"] == "note"
    with pytest.raises(StageFailure) as raised:
        _cuda_guard(load_policy("permissive"), {TORCH_RELU: 1}).check_own_kernel(WHERE)
    assert (raised.value.kind, raised.value.check) == ("rejected", "own-kernel")
    untraced = _cuda_guard(DEFAULT, None)
    untraced.kernels = None
    untraced.check_own_kernel(WHERE)
    assert untraced.log.take() == []


# --- the policy that would measure a rejected candidate (policy_rejection.py) -----------------------

WAIVED_FOR_PYTORCH = "(the guard policy `pytorch` would measure it as a PyTorch program, no kernel of its own required)"
PYTORCH_BESIDE = (
    "(the guard policy `kernelbench` would measure it with PyTorch operators beside its kernels reported, not rejected)"
)


def _library():
    """A custom operator of the candidate's own whose kernel writes through numpy (past the
    dispatcher, as a C++ loop would): `kforge_measure::twice`."""
    library = torch.library.Library("kforge_measure", "DEF")
    library.define("twice(Tensor x) -> Tensor")

    def twice(x):
        out = torch.empty_like(x)
        out.numpy()[:] = x.numpy() * 2
        return out

    library.impl("twice", twice, "CPU")
    return library


LIBRARY = _library()


def _rejection(policy, forward, values):
    guard = GuardRuntime(torch.device("cpu"), load_policy(policy))
    output = guard.forward(forward, traced=True, sources=[values])
    with pytest.raises(PolicyRejection) as raised:
        guard.check_dispatch(output, WHERE)
        guard.check_own_kernel(WHERE)
    return raised.value


def test_a_plain_pytorch_program_is_rejected_naming_the_pytorch_policy():
    values = torch.randn(4096)
    for policy in ("kernelbench", "own-kernels"):
        rejection = _rejection(policy, lambda: torch.relu(values), values)
        assert (rejection.kind, rejection.check) == ("rejected", "torch-fallback")
        assert rejection.message.endswith(WAIVED_FOR_PYTORCH), rejection.message


def test_pytorch_compute_beside_its_own_operator_names_the_kernelbench_policy():
    values = torch.randn(4096)
    rejection = _rejection("own-kernels", lambda: torch.relu(torch.ops.kforge_measure.twice(values)), values)
    assert (rejection.kind, rejection.check) == ("rejected", "torch-fallback")
    assert "forward dispatched aten::relu ×1 to PyTorch" in rejection.message
    assert rejection.message.endswith(PYTORCH_BESIDE), rejection.message
    guard = GuardRuntime(torch.device("cpu"), load_policy("kernelbench"))
    output = guard.forward(lambda: torch.relu(torch.ops.kforge_measure.twice(values)), traced=True, sources=[values])
    guard.check_dispatch(output, WHERE)
    guard.check_own_kernel(WHERE)  # what it names measures it: nothing is rejected under `kernelbench`


def test_a_policy_rejection_carries_the_output_for_the_judge():
    values = torch.randn(4096)
    guard = GuardRuntime(torch.device("cpu"), load_policy("kernelbench"))

    class PlainRelu(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x)

    with pytest.raises(PolicyRejection) as raised:
        calls = CandidateCalls(None, PlainRelu, torch.device("cpu"), None, guard, None)
        calls.call(PlainRelu(), [values], 11, WHERE, traced=True)
    assert torch.equal(raised.value.output, torch.relu(values))
