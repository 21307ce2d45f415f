"""Tests of kforge_worker.guard.static and kforge_worker.guard.policy, and of the adversarial corpus."""

from __future__ import annotations

import importlib.util
import json
import re
import textwrap
from pathlib import Path

import pytest
import torch

from kforge_worker.guard.policy import PolicyError, load_policy, load_policy_file, policy_names
from kforge_worker.guard.static import CHECKS, analyze, analyze_file, rejections

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "adversarial"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
CASES = MANIFEST["cases"]


def run(source: str, policy=None, precision: str = "fp32"):
    return analyze(textwrap.dedent(source), policy, precision=precision)


def rejected(findings) -> set[str]:
    return {item["check"] for item in findings if item["severity"] == "reject"}


def noted(findings) -> set[str]:
    return {item["check"] for item in findings if item["severity"] == "note"}


def model(forward_body: str, init_body: str = "pass", header: str = "") -> str:
    """A candidate module: imports, optional header code, ModelNew with the given bodies."""
    init = textwrap.indent(textwrap.dedent(init_body), " " * 8)
    forward = textwrap.indent(textwrap.dedent(forward_body), " " * 8)
    return (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        + textwrap.dedent(header)
        + "\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        + init
        + "\n\n    def forward(self, x):\n"
        + forward
        + "\n"
    )


#: A problem file whose imports and `Model` a candidate may use without importing them.
_PROBLEM_WITH_IMPORTS = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.randn(8)]

def get_init_inputs():
    return []
"""


# --------------------------------------------------------------------------------------------
# The corpus
# --------------------------------------------------------------------------------------------


def test_manifest_lists_every_corpus_file_once():
    listed = [case["file"] for case in CASES]
    on_disk = sorted(str(path.relative_to(CORPUS)) for path in CORPUS.glob("c*/*.py"))
    assert sorted(listed) == on_disk
    assert len(set(listed)) == len(listed)
    for case in CASES:
        assert (CORPUS / case["problem"]).is_file()
        # `incorrect`: a wrong kernel whose attack on the hand-over fails leaves its wrong answer judged.
        assert case["expected_verdict"] in ("rejected", "correct", "incorrect")
        if case["kind"] == "cheat":
            assert case["detected_by"] in ("static", "dynamic")
            if case["detected_by"] == "static":
                assert case["expected_check"] in CHECKS
            elif case.get("figure") == "trusted":
                # Defeated by the figure, not a verdict: the parent reports its own trusted time.
                assert case["expected_verdict"] == "correct" and case["expected_check"] is None
                assert (CORPUS / case["twin"]).is_file()
            else:
                assert case["expected_check"] in MANIFEST["dynamic_checks"]


def test_manifest_covers_every_class_with_a_cheat_and_an_honest_look_alike():
    cpu_classes = {1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 18, 19, 20, 21}
    cuda_classes = {1, 3, 6, 14, 15}
    expected = {
        ("cpu", "cheat"): cpu_classes,
        ("cpu", "honest"): cpu_classes,
        ("cuda", "cheat"): cuda_classes | {5, 7, 19},
        ("cuda", "honest"): cuda_classes,
    }
    for (backend, kind), classes in expected.items():
        covered = {case["class"] for case in CASES if case["backend"] == backend and case["kind"] == kind}
        assert covered == classes, (backend, kind)
    native_cpu = [case for case in CASES if case["backend"] == "cpu" and case["native"]]
    builds = {re.search(r'name="([^"]+)"', (CORPUS / case["file"]).read_text()).group(1) for case in native_cpu}
    # Each distinct load_inline build costs about 45 s here: the policy cases (c06f, c07c, h06f-h06h,
    # h07c, h08b) share one; c05f needs its own (a C++ static initialiser that patches the GOT); the
    # output hand-over's cases (c19*, h19) share one.
    assert len(builds) <= 7


@pytest.mark.parametrize("case", CASES, ids=[case["file"] for case in CASES])
def test_corpus_file_gets_the_expected_static_verdict(case):
    findings = analyze_file(str(CORPUS / case["file"]))
    reasons = rejections(findings)
    if case["kind"] == "honest":
        assert reasons == [], reasons
    elif case["detected_by"] == "static":
        assert case["expected_check"] in {reason["check"] for reason in reasons}, findings
    else:
        # The manifest says the dynamic checks must catch it: static analysis must not already.
        assert reasons == [], reasons
    assert set(case["static_notes"]) <= noted(findings), findings


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HONEST_PYTHON = [case for case in CASES if case["kind"] == "honest" and case["backend"] == "cpu" and not case["native"]]


@pytest.mark.parametrize("case", HONEST_PYTHON, ids=[case["file"] for case in HONEST_PYTHON])
def test_honest_python_look_alike_really_is_correct(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    problem = _load(CORPUS / case["problem"], "corpus_problem")
    candidate = _load(CORPUS / case["file"], "corpus_candidate")
    for seed in (11, 12):
        torch.manual_seed(seed)
        inputs = problem.get_inputs()
        expected = problem.Model(*problem.get_init_inputs())(*[t.clone() for t in inputs])
        given = [t.clone() for t in inputs]
        produced = candidate.ModelNew(*problem.get_init_inputs())(*given)
        assert type(produced) is torch.Tensor
        assert torch.allclose(produced, expected, atol=1e-5, rtol=1e-5)
        assert all(torch.equal(a, b) for a, b in zip(given, inputs))


# --------------------------------------------------------------------------------------------
# Policies
# --------------------------------------------------------------------------------------------


def test_shipped_policies_load_by_name_and_json(tmp_path):
    assert policy_names() == ["kernelbench", "own-kernels", "strict", "permissive", "pytorch"]
    assert load_policy()["name"] == "kernelbench"
    assert load_policy("strict")["vendor_libraries"] == []
    assert load_policy("permissive")["enforce"] is False
    assert {name: load_policy(name)["own_work"] for name in policy_names()} == {
        "kernelbench": "reject",
        "own-kernels": "reject",
        "strict": "reject",
        "permissive": "reject",
        "pytorch": "note",
    }
    assert load_policy("pytorch") == {**load_policy("permissive"), "name": "pytorch", "own_work": "note"}
    assert load_policy("kernelbench")["forward_torch"] == "any"
    assert load_policy("own-kernels")["forward_torch"] == "glue"
    custom = load_policy('{"name": "mine", "base": "own-kernels", "vendor_libraries": ["cublas"]}')
    assert custom["name"] == "mine" and custom["vendor_libraries"] == ["cublas"]
    assert custom["glue_tensor_methods"] == load_policy()["glue_tensor_methods"]
    assert load_policy("default") == load_policy("own-kernels")  # the former name of own-kernels
    assert load_policy({"base": "default", "name": "old"})["forward_torch"] == "glue"
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(load_policy("strict")))
    assert load_policy_file(str(path)) == load_policy("strict")


@pytest.mark.parametrize(
    "spec, field",
    [
        ("nonsense", "nonsense"),
        ({"base": "own-kernels", "vendor_libraries": ["cublas", "magic"]}, "vendor_libraries"),
        ({"base": "own-kernels", "forward_torch": "some"}, "forward_torch"),
        ({"base": "own-kernels", "colour": "red"}, "colour"),
        ({"base": "permissive", "own_work": "ignore"}, "own_work"),
        ({"base": "permissive", "own_work": False}, "own_work"),
        ({"name": "incomplete"}, None),
        ({"base": "strict", "native_low_precision": "ignore"}, "native_low_precision"),
    ],
)
def test_bad_policies_name_the_field(spec, field):
    with pytest.raises(PolicyError) as raised:
        load_policy(spec)
    if field:
        assert field in str(raised.value)


def test_a_policy_written_with_the_former_precision_fields_loads_and_they_change_nothing():
    """Issue 41: precision is judged by the measured error; `precision_downgrade` and
    `native_low_precision` (the severities of casts and half arithmetic in the source) are dropped."""
    written_before = {**load_policy("strict"), "precision_downgrade": "reject", "native_low_precision": "reject"}
    assert load_policy(written_before) == load_policy("strict")
    assert load_policy({"base": "own-kernels", "precision_downgrade": "reject"}) == load_policy("own-kernels")
    cast = model("return _ext.f(x.half()).float()")
    assert rejected(run(cast, written_before)) == set()


def test_a_complete_policy_written_before_own_work_existed_rejects_without_own_work():
    written_before = {key: value for key, value in load_policy("permissive").items() if key != "own_work"}
    assert load_policy({**written_before, "name": "older"})["own_work"] == "reject"


@pytest.mark.parametrize("policy", ["permissive", "pytorch"])
def test_permissive_policies_record_static_findings_but_reject_none(policy):
    findings = run(model("return torch.matmul(x, x)"), policy)
    assert findings and rejected(findings) == set()
    assert "torch-fallback" in noted(findings)


def test_severity_override_promotes_a_note():
    source = model("s = torch.cuda.Stream()\nreturn x")
    assert "side-stream" in noted(run(source))
    policy = {"base": "own-kernels", "name": "tight", "severity": {"side-stream": "reject"}}
    assert "side-stream" in rejected(run(source, policy))


# --------------------------------------------------------------------------------------------
# torch-fallback
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["kernelbench", "own-kernels", "strict"])
def test_forward_calling_torch_matmul_is_a_finding_with_line_and_policy_not_a_rejection(policy):
    findings = run(model("y = x.view(-1, 4)\nreturn torch.matmul(y, y.t())"), policy)
    (finding,) = [item for item in findings if item["check"] == "torch-fallback"]
    assert finding["line"] == 12 and finding["severity"] == "note"
    assert "torch.matmul (line 12)" in finding["message"]
    assert f"the policy `{policy}`" in finding["message"]


@pytest.mark.parametrize(
    "body",
    [
        "return F.softmax(x, dim=1)",
        "return torch.nn.functional.gelu(x)",
        "return x.sum(dim=1)",
        "return x.softmax(1)",
        "return x @ x.t()",
        "return x * 2",
        "y = torch.empty_like(x)\ny += x\nreturn y",
        "return torch.ops.aten.relu(x)",
        "return torch.nn.ReLU()(x)",
        "import torch.nn.functional as G\nreturn G.relu(x)",
        "relu = getattr(torch, 'rel' + 'u')\nreturn relu(x)",
        "return super().forward(x)",
        "return torch.where(x > 0, x, 0.0)",
    ],
)
def test_torch_compute_in_forward_is_found_as_a_note(body):
    findings = run(model(body), "own-kernels")
    assert "torch-fallback" in noted(findings) and "torch-fallback" not in rejected(findings)


_EVASIONS = {
    "self attribute alias": ("return self.mm(x, x)", "self.mm = torch.matmul", ""),
    "list of ops": ("return OPS[0](x)", "pass", "OPS = [torch.relu]\n"),
    "module __dict__": ("return F.__dict__['relu'](x)", "pass", ""),
    "module lambda": ("return _op(x)", "pass", "_op = lambda t: torch.relu(t)\n"),
    "functools.partial": ("return _op(x)", "pass", "import functools\n_op = functools.partial(F.softmax, dim=1)\n"),
    "autograd.Function": (
        "return Fn.apply(x)",
        "pass",
        "class Fn(torch.autograd.Function):\n    @staticmethod\n" "    def forward(ctx, t):\n        return t.exp()\n",
    ),
    "local module": (
        "return self.block(x)",
        "self.block = Block()",
        "class Block(nn.Module):\n    def forward(self, t):\n        return torch.tanh(t)\n",
    ),
    "ModuleList loop": (
        "for layer in self.layers:\n    x = layer(x)\nreturn x",
        "self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])",
        "",
    ),
    "Sequential": ("return self.net(x)", "self.net = nn.Sequential(nn.Linear(4, 4), nn.ReLU())", ""),
}


@pytest.mark.parametrize("name", sorted(_EVASIONS))
def test_indirect_torch_compute_is_still_found(name):
    body, init, header = _EVASIONS[name]
    assert "torch-fallback" in noted(run(model(body, init_body=init, header=header)))


def test_torch_compute_in_a_helper_called_from_forward_is_found():
    source = model("return _helper(x)", header="def _helper(t):\n    return t.clamp(min=0)\n")
    assert "torch-fallback" in noted(run(source))


def test_nn_modules_called_in_forward_are_found_and_their_weights_are_fine():
    called = model("return self.fc(x)", init_body="self.fc = nn.Linear(4, 4)")
    assert "torch-fallback" in noted(run(called))
    weights_only = model(
        "w = self.fc.weight.contiguous()\nreturn _ext.linear(x, w)",
        init_body="self.fc = nn.Linear(4, 4)",
        header="from torch.utils.cpp_extension import load_inline\n"
        "_ext = load_inline('k', cpp_sources='', functions=['linear'])\n",
    )
    assert rejected(run(weights_only)) == set()


def test_calling_the_reference_model_is_rejected():
    source = model(
        "return self.reference(x)", init_body="self.reference = Model()", header="from problem import Model\n"
    )
    assert "torch-fallback" in rejected(run(source))
    assert "torch-fallback" in rejected(run(model("return Ref()(x)", header="from problem import Model as Ref\n")))
    taken = model("return self.reference(x)", init_body="self.reference = Model()")
    reasons = rejections(analyze(taken, "kernelbench", problem_source=_PROBLEM_WITH_IMPORTS))
    assert "torch-fallback" in {reason["check"] for reason in reasons}


def test_a_model_class_of_the_candidates_own_is_walked_like_any_other_class():
    """A file's own definitions shadow the problem's names: its own `Model` is its code, judged by
    what its forward does (a note for PyTorch compute), never "the reference"."""
    source = model(
        "return self.reference(x)",
        init_body="self.reference = Model()",
        header="class Model(nn.Module):\n    def forward(self, x):\n        return x.relu()\n",
    )
    for problem_source in (None, _PROBLEM_WITH_IMPORTS):
        findings = analyze(source, "kernelbench", problem_source=problem_source)
        assert rejected(findings) == set(), findings
        assert any(item["check"] == "torch-fallback" and ".relu()" in item["message"] for item in findings)


def test_glue_in_forward_is_allowed():
    body = """
    n, d = x.shape
    flat = x.contiguous().view(-1)
    out = torch.empty_like(flat)
    scratch = torch.zeros(n, device=x.device)
    assert x.dim() == 2 and x.size(1) == d and x.numel() == n * d
    stream = torch.cuda.current_stream() if x.is_cuda else None
    out = out.reshape(n, d).transpose(0, 1).unsqueeze(0).squeeze(0).permute(1, 0)
    return out.to(x.device).contiguous()
    """
    assert rejected(run(model(body))) == set()


def test_extension_function_named_like_a_torch_op_is_a_kernel_call():
    header = (
        "from torch.utils.cpp_extension import load_inline\n"
        "_ext = load_inline(name='k', cpp_sources='', functions=['relu'])\n"
    )
    assert rejected(run(model("return _ext.relu(x)", header=header))) == set()
    assert "torch-fallback" in noted(run(model("return x.relu()", header=header)))


@pytest.mark.parametrize(
    "source",
    [
        model("return self.f(x)", init_body="self.f = torch.compile(F.relu)"),
        model("return self.f(x)", init_body="self.f = torch.jit.script(nn.ReLU())"),
        model("return self.f(x)", init_body="self.f = torch.jit.trace(nn.ReLU(), torch.ones(2))"),
        model("return _relu(x)", header="@torch.jit.script\ndef _relu(x):\n    return torch.relu(x)\n"),
        model("return _relu(x)", header="@torch.compile\ndef _relu(x):\n    return torch.relu(x)\n"),
    ],
    ids=["compile-call", "jit-script-call", "jit-trace", "jit-script-decorator", "compile-decorator"],
)
@pytest.mark.parametrize("policy", ["kernelbench", "own-kernels", "strict"])
def test_torch_compile_and_jit_are_notes_judged_by_what_runs(source, policy):
    """What a compiled graph runs is seen at run time (its operators reach the dispatch trace:
    test_guard_dynamic.py::test_a_jit_scripted_forward_is_judged_by_what_it_dispatched)."""
    findings = run(source, policy)
    assert rejected(findings) == set(), findings
    assert any(
        item["check"] == "torch-fallback" and "judged by what runs" in item["message"] for item in findings
    ), findings


def test_extension_built_but_never_called_is_noted():
    header = (
        "from torch.utils.cpp_extension import load_inline\n"
        "_ext = load_inline(name='k', cpp_sources='', functions=['relu_forward'])\n"
    )
    findings = run(model("return torch.empty_like(x)", header=header))
    assert "torch-fallback" in noted(findings)


# --------------------------------------------------------------------------------------------
# silent-fallback
# --------------------------------------------------------------------------------------------


def test_torch_in_an_except_handler_is_a_silent_fallback_note():
    body = "try:\n    return _ext.relu_forward(x)\nexcept RuntimeError:\n    return torch.relu(x)"
    findings = run(model(body))
    assert "silent-fallback" in noted(findings) and rejected(findings) == set()


def test_fallback_through_a_method_called_from_the_handler_is_silent_fallback_note():
    source = model("try:\n    return _ext.relu_forward(x)\nexcept Exception:\n    return self._slow(x)")
    source += "\n    def _slow(self, x):\n        return F.relu(x)\n"
    assert "silent-fallback" in noted(run(source))


@pytest.mark.parametrize(
    "source",
    [
        "import torch.nn as nn\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n",
        "import torch.nn as nn\nclass Model(nn.Module):\n    pass\nModelNew = Model\n",
        "import torch.nn as nn\nfrom problem import Model\nclass ModelNew(Model):\n    pass\n",
        "import torch.nn as nn\nfrom problem import Model as Reference\nclass ModelNew(Reference):\n    pass\n",
    ],
)
def test_model_new_without_its_own_forward_is_rejected(source):
    assert "silent-fallback" in rejected(run(source))


_OWN_MODEL = (
    "import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
    "        return torch.tensor([max(v, 0.0) for v in x.reshape(-1).tolist()]).view(x.shape) + x.relu()\n"
)


@pytest.mark.parametrize(
    "source",
    [_OWN_MODEL + "ModelNew = Model\n", _OWN_MODEL + "class ModelNew(Model):\n    pass\n"],
    ids=["alias", "subclass"],
)
@pytest.mark.parametrize("with_problem", [False, True])
def test_a_model_the_candidate_defines_is_its_own_class_not_the_reference(source, with_problem):
    """KernelBench-Hard solutions name their class `Model` and alias `ModelNew = Model`: the file's
    own definition shadows the problem's `Model`, and its forward is walked as ModelNew's."""
    findings = analyze(source, "kernelbench", problem_source=_PROBLEM_WITH_IMPORTS if with_problem else None)
    assert rejected(findings) == set(), findings
    assert any(item["check"] == "torch-fallback" and ".relu()" in item["message"] for item in findings), findings


@pytest.mark.parametrize(
    "source, problem_source",
    [
        ("from problem import Model\nModelNew = Model\n", None),
        ("import problem\nModelNew = problem.Model\n", None),
        ("ModelNew = Model\n", None),
        ("ModelNew = Model\n", _PROBLEM_WITH_IMPORTS),
    ],
    ids=["imported", "module-attribute", "unbound", "taken-from-the-problem"],
)
def test_model_new_aliased_to_the_problems_model_is_still_rejected(source, problem_source):
    findings = analyze(source, "kernelbench", problem_source=problem_source)
    assert any(
        item["check"] == "silent-fallback" and item["severity"] == "reject" and "reference" in item["message"]
        for item in findings
    ), findings


# --------------------------------------------------------------------------------------------
# timer-patch, harness-read, sandbox, deferred-work
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        "import time\ntime.perf_counter = lambda: 0.0\n",
        "from time import perf_counter\nimport time as t\nt.monotonic = perf_counter\n",
        "setattr(torch.cuda, 'synchronize', lambda: None)\n",
        "torch.cuda.Event.elapsed_time = lambda self, other: 0.0\n",
        "import sys\nsys.modules['time'] = None\n",
        "import builtins\nbuiltins.print = lambda *a: None\n",
        "torch.allclose = lambda *a, **k: True\n",
        "from unittest import mock\n",
    ],
)
def test_patching_timing_and_modules_is_rejected(header):
    assert "timer-patch" in rejected(run(model("return x", header=header)))


@pytest.mark.parametrize(
    "header",
    [
        "import gc\n_all = gc.get_objects()\n",
        "import inspect\n_frames = inspect.stack()\n",
        "import sys\n_caller = sys._getframe(1).f_locals\n",
        "import ctypes\n_peek = ctypes.string_at(1234, 8)\n",
        "_mem = open('/proc/self/mem', 'rb')\n",
        "import __main__\n",
        "import sys\n_harness = sys.modules['__main__']\n",
    ],
)
def test_reading_the_harness_is_rejected(header):
    assert "harness-read" in rejected(run(model("return x", header=header)))


@pytest.mark.parametrize(
    "header",
    [
        "import os\n_key = os.getenv('OPENAI_API_KEY')\n",
        "import os\n_token = os.environ['HF_TOKEN']\n",
        "import os\nos.environ['LD_PRELOAD'] = '/tmp/x.so'\n",
        "import os\nos.environ['KFORGE_GUARD_RUNTIME'] = 'off'\n",
        "import os\nos.environ['OPENAI_API_KEY'] = ''\n",
        "import os\nos.environ.clear()\n",
        "import os\n_name = 'PA' + 'TH'\nos.environ[_name] = '/x'\n",
        "from os import environ\n_all = dict(environ)\n",
        "import socket\n",
        "import urllib.request\n",
        "import subprocess\nsubprocess.run(['ls'])\n",
        "import os\nos.system('ls')\n",
        "open('/etc/kforge', 'w').write('x')\n",
        "open('../problems/relu.py').read()\n",
        "exec('x = 1')\n",
        "import os\nos.write(3, b'{}')\n",
        "import os, json\nopen(os.path.join(os.path.dirname(__file__), '../reference.py'))\n",
    ],
)
def test_sandbox_escapes_are_rejected(header):
    assert "sandbox" in rejected(run(model("return x", header=header)))


@pytest.mark.parametrize(
    "header",
    [
        "import os\nos.environ['PATH'] = '/usr/local/cuda/bin:' + os.environ.get('PATH', '')\n",
        "import os\nos.environ.setdefault('CUDA_HOME', '/usr/local/cuda')\n",
        "import os\nos.environ.update({'PATH': '/usr/local/cuda/bin', 'LD_LIBRARY_PATH': '/usr/local/cuda/lib64'})\n",
        "import os\nos.putenv('NVCC_APPEND_FLAGS', '-lineinfo')\n",
        "import os\n_nvcc = os.path.join(os.environ['CUDA_HOME'], 'bin', 'nvcc')\n",
    ],
    ids=["path-for-nvcc", "cuda-home-default", "update-with-names", "putenv", "read-cuda-home"],
)
def test_environment_changes_the_sandbox_confines_are_notes(header):
    """Setting PATH to find nvcc, or reading where CUDA lives: the change stays in the candidate's
    process and the processes its build starts, all inside the sandbox (docs/security.md)."""
    findings = run(model("return x", header=header))
    assert rejected(findings) == set(), findings
    assert "sandbox" in noted(findings)


def test_build_knobs_in_the_environment_are_notes():
    findings = run(model("return x", header="import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '9.0a'\n"))
    assert rejected(findings) == set() and "sandbox" in noted(findings)


@pytest.mark.parametrize(
    "header",
    [
        # KernelBench's own ThunderKittens prompt example finds its headers this way
        "import os\n_root = os.environ.get('THUNDERKITTENS_ROOT', '/root/ThunderKittens')\n",
        "import os\n_home = os.environ['HOME']\n",
    ],
)
def test_a_setting_read_by_name_is_a_note(header):
    findings = run(model("return x", header=header))
    assert rejected(findings) == set() and "sandbox" in noted(findings)


@pytest.mark.parametrize(
    "header",
    [
        "from concurrent.futures import ThreadPoolExecutor\n_pool = ThreadPoolExecutor(2)\n",
        "import multiprocessing\n_p = multiprocessing.Process(target=print)\n",
        "class Lazy(torch.Tensor):\n    pass\n",
        "class Hook:\n    @classmethod\n    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):\n"
        "        return func(*args)\n",
        "import atexit\natexit.register(print)\n",
    ],
)
def test_deferred_work_is_rejected(header):
    assert "deferred-work" in rejected(run(model("return x", header=header)))


# --------------------------------------------------------------------------------------------
# side-stream, result-cache, phase-detect
# --------------------------------------------------------------------------------------------


def test_side_streams_are_notes_that_say_whether_they_are_joined():
    joined = run(
        model(
            "s = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    y = _ext.f(x)\n"
            "torch.cuda.current_stream().wait_stream(s)\nreturn y"
        )
    )
    (note,) = [item for item in joined if item["check"] == "side-stream"]
    assert note["severity"] == "note" and "joined back" in note["message"]
    native = 'SRC = "#include <cuda_runtime.h>\\nvoid f() { cudaStream_t s; cudaStreamCreate(&s); }"\n'
    findings = run(model("return x", header=native))
    assert "side-stream" in noted(findings) and "side-stream" not in rejected(findings)


@pytest.mark.parametrize(
    "source",
    [
        model("k = (x[0, 0].item(), tuple(x.shape))\nreturn self.memo[k]", init_body="self.memo = {}"),
        model("k = (x.data_ptr(), x[0, 0].item())\nreturn self.memo[k]", init_body="self.memo = {}"),
        model(
            "import hashlib\nk = hashlib.sha1(x.numpy().tobytes()).hexdigest()\n"
            "if k in self.memo:\n    return self.memo[k]\nreturn x",
            init_body="self.memo = {}",
        ),
    ],
    ids=["sampled-values", "pointer-and-values", "content-digest"],
)
def test_caches_keyed_on_values_are_rejected(source):
    """A value-keyed cache answers right whenever contents repeat: nothing at run time tells it apart."""
    findings = run(source)
    assert "result-cache" in rejected(findings)
    assert any("keyed on the input's values" in item["message"] for item in findings)


@pytest.mark.parametrize(
    "source",
    [
        model("key = id(x)\nif key in self.memo:\n    return self.memo[key]\nreturn x", init_body="self.memo = {}"),
        model("return self.memo.get(x.data_ptr())", init_body="self.memo = {}"),
        model("if x.data_ptr() == self.last:\n    return self.out\nreturn x", init_body="self.last = 0"),
        model("k = hash(x)\nif k in self.plans:\n    return self.plans[k]\nreturn x", init_body="self.plans = {}"),
        # a CUDA graph captured once and replayed, keyed on the input's address
        model(
            "key = (x.data_ptr(), x.shape)\ngraph = self.graphs.get(key)\nif graph is None:\n"
            "    graph = torch.cuda.CUDAGraph()\n    self.graphs[key] = graph\ngraph.replay()\nreturn self.out",
            init_body="self.graphs = {}\nself.out = None",
        ),
        # a schedule keyed on id(offsets)
        model(
            "sched = self.schedules.get(id(x))\nif sched is None:\n    sched = self.schedules[id(x)] = _ext.plan(x)\n"
            "return _ext.run(x, sched)",
            init_body="self.schedules = {}",
        ),
        "import functools\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n"
        "    @functools.lru_cache(maxsize=None)\n    def forward(self, x):\n        return x\n",
    ],
    ids=["id", "data-ptr-get", "data-ptr-compare", "hash-of-tensor", "cuda-graph", "schedule-by-id", "lru-cache"],
)
def test_caches_keyed_on_identity_are_notes_judged_by_the_timed_outputs(source):
    """Timed calls refill the same buffers with new contents and their sampled outputs are judged
    (test_guard_dynamic.py, adversarial[cpu/c08…], [cpu/c08b…]): a stale answer is rejected there."""
    findings = run(source)
    assert rejected(findings) == set(), findings
    notes = [item for item in findings if item["check"] == "result-cache"]
    assert notes and all(item["severity"] == "note" for item in notes)
    assert all("judged at run time" in item["message"] for item in notes)


def test_a_hash_of_the_shape_is_not_a_result_cache():
    source = model(
        "k = hash(tuple(x.shape))\nif k not in self.plans:\n    self.plans[k] = 1\nreturn x",
        init_body="self.plans = {}",
    )
    assert not [item for item in run(source) if item["check"] == "result-cache"]


def test_caching_a_built_extension_is_not_a_result_cache():
    header = (
        "import functools\nfrom torch.utils.cpp_extension import load_inline\n"
        "@functools.lru_cache(maxsize=None)\ndef _ext():\n"
        "    return load_inline(name='k', cpp_sources='', functions=['relu_forward'])\n"
    )
    assert rejected(run(model("return _ext().relu_forward(x)", header=header))) == set()


@pytest.mark.parametrize(
    "source",
    [
        model("self.calls += 1\nif self.calls > 5:\n    return x\nreturn x", init_body="self.calls = 0"),
        model("global _N\n_N += 1\nreturn x if _N < 3 else x", header="_N = 0\n"),
        model(
            "self.calls = self.calls + 1\nwarm = self.calls\nif warm > 5:\n    return x\nreturn x",
            init_body="self.calls = 0",
        ),
        model("self.n += 1\nreturn self.k(x, self.n == 1)", init_body="self.n = 0"),
        model("self.n = (self.n + 1) % 2\nreturn self.paths[self.n](x)", init_body="self.n = 0"),
        model("if torch.is_grad_enabled():\n    return x\nreturn x"),
        model("import time\nstarted = time.perf_counter()\nreturn x"),
    ],
)
def test_phase_detection_is_rejected(source):
    assert "phase-detect" in rejected(run(source))


@pytest.mark.parametrize(
    "source",
    [
        model("self.calls += 1\nreturn x", init_body="self.calls = 0"),
        model("self.total = self.total + x.sum()\nreturn x * self.total", init_body="self.total = 0"),
        # nn.BatchNorm's own bookkeeping in training, as KernelBench's published BatchNorm kernels keep it
        model(
            "if self.training:\n    mean = x.mean(dim=(0, 2, 3))\n"
            "    self.running_mean = 0.9 * self.running_mean + 0.1 * mean\n"
            "    self.num_batches_tracked += 1\nelse:\n    mean = self.running_mean\nreturn x - mean",
            init_body="self.running_mean = None\nself.num_batches_tracked = 0",
        ),
    ],
)
def test_state_that_no_branch_reads_is_a_note(source):
    findings = run(source)
    assert "phase-detect" not in rejected(findings)
    assert any(item["check"] == "phase-detect" and item["severity"] == "note" for item in findings), findings


# --------------------------------------------------------------------------------------------
# precision, global-state
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        model("return _ext.f(x.half()).float()"),
        model("return _ext.f(x.to(torch.bfloat16))"),
        model("with torch.autocast('cuda'):\n    return _ext.f(x)"),
    ],
)
@pytest.mark.parametrize("policy", ["kernelbench", "own-kernels", "strict"])
def test_precision_downgrades_in_fp32_are_notes_the_measured_error_decides(source, policy):
    """Issue 41: the precision checks judge the measured error profile (the judge's
    `precision-loss`, test_precision_loss.py), never the casts in the source."""
    findings = run(source, policy)
    assert rejected(findings) == set(), findings
    notes = [item for item in findings if item["check"] == "precision"]
    assert notes and all("judged by the measured error" in item["message"] for item in notes), findings


def test_half_casts_are_not_noted_in_an_fp16_run_nor_inside_dtype_branches_in_fp32():
    assert "precision" not in noted(run(model("return _ext.f(x.half())"), precision="fp16"))
    branch = model("if x.dtype == torch.float16:\n    x = x.half()\nreturn _ext.f(x)")
    assert "precision" not in noted(run(branch))


@pytest.mark.parametrize(
    "body",
    [
        "out[i] = __half2float(__float2half(x[i]));",
        "nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half> a;",
        "cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH);",
        "auto y = x.to(torch::kHalf);",
    ],
)
@pytest.mark.parametrize("policy", ["kernelbench", "strict"])
def test_low_precision_in_native_code_is_a_note_under_every_policy(body, policy):
    findings = run(native(f"torch::Tensor run(torch::Tensor x) {{ {body} return x; }}"), policy)
    assert "precision" not in rejected(findings), findings
    assert any(item["check"] == "precision" and "measured error" in item["message"] for item in findings), findings


@pytest.mark.parametrize(
    "header, check",
    [
        ("torch.backends.cudnn.benchmark = True\n", "global-state"),
        ("torch.set_num_threads(1)\n", "global-state"),
        ("torch.backends.cudnn.enabled = False\n", "global-state"),
        ("setattr(torch.backends.mkldnn, 'enabled', False)\n", "global-state"),
        ("torch.use_deterministic_algorithms(True)\n", "global-state"),
        ("torch.set_flush_denormal(True)\n", "global-state"),
        ("torch.backends.cuda.matmul.allow_tf32 = True\n", "precision"),
        ("torch.set_float32_matmul_precision('high')\n", "precision"),
    ],
)
@pytest.mark.parametrize("policy", ["kernelbench", "strict"])
def test_switches_the_run_time_snapshot_reads_are_notes(header, check, policy):
    """The worker compares them before and after the import, the construction, the correctness trials
    and the timed calls (global_state.py; adversarial[cpu/c11b…], [cpu/c17…], [cpu/c17c…])."""
    findings = run(model("return x", header=header), policy)
    assert rejected(findings) == set(), findings
    assert any(item["check"] == check and "judged at run time" in item["message"] for item in findings), findings


@pytest.mark.parametrize(
    "header",
    [
        "torch.manual_seed(0)\n",
        "torch.cuda.manual_seed_all(1234)\n",
        "import random\nrandom.seed(0)\n",
        "import numpy as np\nnp.random.seed(0)\n",
    ],
)
def test_seeds_are_notes_because_the_worker_reseeds_before_every_call(header):
    findings = run(model("return x", header=header))
    assert rejected(findings) == set(), findings
    assert any(item["check"] == "global-state" and "reseeds" in item["message"] for item in findings), findings


def test_a_seed_in_the_constructor_is_a_note():
    findings = run(model("return x", init_body="torch.manual_seed(0)\nself.w = nn.Parameter(torch.randn(4))"))
    assert rejected(findings) == set() and "global-state" in noted(findings)


def test_a_memory_fraction_limits_only_the_candidates_own_process():
    findings = run(model("return x", header="torch.cuda.set_per_process_memory_fraction(0.5)\n"))
    assert rejected(findings) == set() and "global-state" in noted(findings)


def test_a_torch_switch_the_snapshot_does_not_read_is_still_rejected():
    findings = run(model("return x", header="torch.backends.opt_einsum.enabled = False\n"))
    assert "global-state" in rejected(findings)
    assert any("does not read back" in item["message"] for item in findings)


def test_the_static_tables_of_run_time_switches_match_the_snapshot():
    """Every call and switch the static guard leaves to the run time is read by global_state.py."""
    from kforge_worker.guard import global_state
    from kforge_worker.guard.static import names

    flags = {name for name, _, _ in global_state.FLAGS}
    assert {name for name in flags if name.startswith("torch.backends.")} == set(names._RUNTIME_STATE_FLAGS)
    for call, flag in names._RUNTIME_STATE_CALLS.items():
        if flag.startswith("torch.backends.cudnn.enabled/"):  # cudnn.flags(...) sets four switches
            head, *rest = flag.split("/")
            read = [head] + [f"torch.backends.cudnn.{name}" for name in rest]
        else:
            read = [flag]
        assert set(read) <= flags, (call, flag)


# --------------------------------------------------------------------------------------------
# library-policy and native sources
# --------------------------------------------------------------------------------------------

_NATIVE_TEMPLATE = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

HEADER = "#include <torch/extension.h>\\n"
BODY = """{body}"""
_ext = load_inline(name="k", cpp_sources=HEADER + BODY, functions=["run"])

class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.run(x)
'''


def native(body: str) -> str:
    return _NATIVE_TEMPLATE.format(body=body)


@pytest.mark.parametrize(
    "body",
    [
        "torch::Tensor run(torch::Tensor x) { return at::matmul(x, x); }",
        "torch::Tensor run(torch::Tensor x) { return torch::conv2d(x, x); }",
        "torch::Tensor run(torch::Tensor x) { return x.softmax(1); }",
        "torch::Tensor run(torch::Tensor x) { return torch::nn::functional::relu(x); }",
    ],
)
@pytest.mark.parametrize("policy", ["kernelbench", "own-kernels", "strict"])
def test_aten_compute_from_cpp_is_a_finding_that_the_run_decides(body, policy):
    findings = run(native(body), policy)
    assert "library-policy" in noted(findings) and rejected(findings) == set()


@pytest.mark.parametrize(
    "body",
    [
        "torch::Tensor run(torch::Tensor x) { return at::native::relu(x); }",
        "torch::Tensor run(torch::Tensor x) { return at::compositeexplicitautograd::add(x, x); }",
    ],
)
@pytest.mark.parametrize("policy", ["kernelbench", "own-kernels", "strict"])
def test_aten_kernels_called_past_the_dispatcher_are_rejected(body, policy):
    findings = run(native(body), policy)
    assert "library-policy" in rejected(findings)
    assert any("past PyTorch's dispatcher" in item["message"] for item in findings)


def test_aten_op_split_across_concatenated_strings_is_found():
    source = native("torch::Tensor run(torch::Tensor x) {{ return at::").replace(
        'BODY = """torch::Tensor run(torch::Tensor x) {{ return at::"""',
        'BODY = """torch::Tensor run(torch::Tensor x) { return at::""" + "softmax(x, 1); }"',
    )
    assert "at::softmax" in " ".join(item["message"] for item in run(source))


def test_commented_out_aten_calls_and_allocation_glue_are_fine():
    body = (
        "// at::matmul(x, x) was the slow version\\n"
        "torch::Tensor run(torch::Tensor x) {\\n  auto y = torch::empty_like(x);\\n"
        "  auto opts = x.options();\\n  return y.view({-1});\\n}"
    )
    assert rejected(run(native(body))) == set()


def test_vendor_gemm_with_custom_epilogue_is_allowed_by_default_and_rejected_by_strict():
    body = (
        "#include <cublas_v2.h>\\n#include <ATen/cuda/CUDAContext.h>\\n"
        "torch::Tensor run(torch::Tensor x) {\\n"
        "  auto handle = at::cuda::getCurrentCUDABlasHandle();\\n"
        "  auto y = torch::empty_like(x); float one = 1.f, zero = 0.f;\\n"
        "  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, x.data_ptr<float>(), 4,\\n"
        "              x.data_ptr<float>(), 4, &zero, y.data_ptr<float>(), 4);\\n"
        "  bias_relu_epilogue<<<1, 16, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>());\\n"
        "  return y;\\n}"
    )
    default = run(native(body))
    assert rejected(default) == set() and "library-policy" in noted(default)
    strict = run(native(body), "strict")
    assert "library-policy" in rejected(strict)
    assert any("cuBLAS" in item["message"] and "allows no vendor libraries" in item["message"] for item in strict)


def test_native_sandbox_threads_and_l2_windows_are_caught():
    assert "sandbox" in rejected(run(native('torch::Tensor run(torch::Tensor x) { system("ls"); return x; }')))
    # A persisting window is a note: the worker zeroes the persisting limit before timing (no line
    # can persist through a window) and rejects a limit changed afterwards (test_guard_gpu.py).
    window = run(
        native(
            "torch::Tensor run(torch::Tensor x) { cudaStreamAttrValue a; "
            "a.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting; return x; }"
        )
    )
    assert "global-state" not in rejected(window) and "global-state" in noted(window)
    assert "deferred-work" in rejected(
        run(native("torch::Tensor run(torch::Tensor x) { std::thread t([]{}); t.detach(); return x; }"))
    )
    assert "library-policy" in rejected(
        run(native('torch::Tensor run(torch::Tensor x) { auto m = py::module_::import("torch"); return x; }'))
    )


# --------------------------------------------------------------------------------------------
# syntax
# --------------------------------------------------------------------------------------------


def test_unparseable_python_is_a_single_syntax_finding():
    findings = analyze("class ModelNew(:\n    pass\n")
    assert len(findings) == 1 and findings[0]["check"] == "syntax" and findings[0]["line"] == 1
    assert rejections(findings) == []


@pytest.mark.parametrize(
    "source, check, text",
    [
        (  # a patch through the problem's `torch`, never imported by the candidate
            "torch.cuda.synchronize = lambda: None\n"
            "class ModelNew(nn.Module):\n"
            "    def forward(self, x):\n"
            "        return x\n",
            "timer-patch",
            "torch.cuda.synchronize",
        ),
        (  # the problem's reference, taken from the shared namespace
            "class ModelNew(Model):\n    pass\n",
            "silent-fallback",
            "inherits forward from the reference Model",
        ),
    ],
    ids=["patch-via-problem-torch", "subclass-of-problem-model"],
)
def test_names_taken_from_the_problem_are_checked_as_imported(source, check, text):
    def found(problem_source):
        reasons = rejections(analyze(source, "kernelbench", problem_source=problem_source))
        return any(reason["check"] == check and text in reason["message"] for reason in reasons)

    assert not found(None)
    assert found(_PROBLEM_WITH_IMPORTS)


def test_a_name_the_candidate_binds_itself_is_not_the_problems():
    source = (
        "nn = object()\nclass Model:\n    pass\nclass ModelNew(Model):\n    def forward(self, x):\n        return x\n"
    )
    findings = analyze(source, "kernelbench", problem_source=_PROBLEM_WITH_IMPORTS)
    assert "silent-fallback" not in {finding["check"] for finding in rejections(findings)}


def test_every_module_the_worker_imports_is_a_harness_module():
    """timer-patch notes an assignment to a module outside HARNESS_MODULES: the list must hold every
    module kforge's worker itself imports, or a patch of one would pass as the candidate's own."""
    import ast as syntax
    from pathlib import Path

    from kforge_worker.guard.static.patch_rules import HARNESS_MODULES

    imported = set()
    for path in (Path(__file__).resolve().parents[1] / "kforge_worker").rglob("*.py"):
        for node in syntax.walk(syntax.parse(path.read_text())):
            if isinstance(node, syntax.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, syntax.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    imported -= {"__future__", "kforge_worker", "kforge_sandbox"}
    assert imported <= HARNESS_MODULES, sorted(imported - HARNESS_MODULES)


def test_an_assignment_the_harness_cannot_see_is_a_note():
    """timer-patch rejects a replaced attribute of a module the worker calls, and notes one of a
    module it never calls, or one that only adds a missing attribute under `if not hasattr`."""

    def patched(header: str):
        return run(model("return x", header=header))

    added = patched('import datetime\nif not hasattr(datetime, "UTC"):\n    datetime.UTC = datetime.timezone.utc\n')
    assert "timer-patch" not in rejected(added) and "timer-patch" in noted(added)
    elsewhere = patched("def warm():\n    import reference as r\n    r.M = 3\n")
    assert "timer-patch" not in rejected(elsewhere) and "timer-patch" in noted(elsewhere)
    assert "timer-patch" in rejected(patched("torch.softmax = None\n"))
    # Guarded by another name's absence, it still replaces what the harness calls.
    assert "timer-patch" in rejected(patched('if not hasattr(torch, "foo"):\n    torch.softmax = None\n'))
