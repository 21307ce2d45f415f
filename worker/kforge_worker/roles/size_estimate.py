"""An evaluation's peak memory, estimated from the problem's shapes without allocating them.

`measure_shapes` runs `get_inputs()`, `get_init_inputs()`, `Model(...)` and its forward under
torch's FakeTensorMode (torch 1.13 and 2.x): tensors have shapes and dtypes but no storage, so a
6 GiB input costs nothing. Inside the forward a TorchFunctionMode counts the bytes of the tensors
each operator returns while they are alive (a weak reference notices when one is dropped), which
gives the forward's own peak (its intermediates and output) beyond its inputs and weights. A
forward the fake mode cannot run (data-dependent shapes, `.item()`, host conversions) leaves the
forward's peak unknown; it is then taken as twice the largest input set (`forward_method`
`assumed`).

`evaluation_bytes` follows what the worker holds at each stage (docs/sizes.md, "What an evaluation
holds"): I input bytes of one set (D as `get_inputs()` draws it, before the cast), W weights, F the
forward's peak, O the output; the float64 twins (I64, W64, F64, O64) of the error profile; T timing
seeds; R = O + O64 one reference record.

- reference role: the records kept (as many whole records as fit KEEP_BYTES, of 5 + T) + the
  largest of computing a reference (W + the larger of D + I, the draw beside its cast, and I + F),
  its float64 twin beside the run's output (O + the larger of D + I64 and I64 + W64 + F64),
  judging (O + O64 + the candidate's output O + the comparison's chunk temporaries), and the
  baselines (T (W + I) + F + the batch's held outputs, within BATCH_POOL_BYTES, at least one);
- candidate role: correctness W + I + F + O (the copy saved) + the poison blocks (2 O, at most
  4 GiB; on the host only blocks of at most 32 MiB); timing T W + the live input sets (T I, or one
  I shared by the T models when no content set fits the pool) + the content sets held
  (within 1 GiB) + the larger of one set drawn again and run (I + F) and a trusted batch (its calls'
  fresh inputs and outputs within the parent's 512 MiB, at least one call, beside the output of the
  timed call it follows and a kept output's copy: 2 O);
- the evaluation: the larger of the reference role's peak, the candidate role's beside the
  reference's kept records, and the reference judging a timed call's output (its reference
  recomputed without the float64 twin: W + the larger of D + I and I + F, then O + the candidate's
  O + the chunks) beside the candidate's timing state (every output is handed over and judged the
  moment its call returns, handover.py; during the correctness trials after the candidate gave its
  cached blocks back), plus the two processes' fixed cost (CUDA contexts on a GPU, the
  interpreter and torch on the host).

It is an estimate (a forward's workspace inside a cuDNN or cuBLAS call is not seen, nor
torch.compile's), meant to refuse what cannot fit and to size what can, not to promise a byte count.
"""

import math
import random
import weakref
from typing import Any, Dict, Optional

import torch

from ..guard.poison import CPU_MAX_POISON_BLOCK_BYTES, MAX_POISON_BYTES
from ..problem.overrides import public_constants
from ..problem.precision import cast_module, cast_tensor, run_dtype
from ..timing.baselines import BATCH_POOL_BYTES as BASELINE_BATCH_POOL_BYTES
from ..timing.baselines import MAX_BATCH_CALLS as BASELINE_MAX_BATCH_CALLS
from ..timing.timing_inputs import CONTENT_POOL_BYTES, calls_of_model
from ..tolerance.chunking import DEVICE_CHUNK_ELEMENTS, HOST_CHUNK_ELEMENTS
from .reference_store import KEEP_BYTES

GIB = 1024**3
CANDIDATE_BATCH_POOL_BYTES = 512 * 1024**2  # BATCH_POOL_BYTES, candidate-timing-driver.ts
CANDIDATE_MAX_BATCH_CALLS = 5000  # MAX_BATCH_CALLS, candidate-timing-driver.ts
#: float64 temporaries of one chunk of a comparison alive at once (compare.py's _scan): six, and
#: the boolean masks, on a device, whose caching allocator reuses their blocks exactly; on the host,
#: glibc's heap holes add about as much again (a 32 MiB output's comparison peaked 97 MiB above its
#: start with 8 MiB chunks: twelve).
CHUNK_TEMPORARIES = {"cuda": 8, "cpu": 12}
#: Fixed cost of one worker process: a CUDA context on the device, or the interpreter with torch on the host.
DEVICE_PROCESS_BYTES = {"cuda": 768 * 1024**2, "cpu": 320 * 1024**2}
TIMING_SEEDS = 3
CORRECTNESS_TRIALS = 5
#: Content sets the busiest timing model needs with the default warm-up and timed calls (10 + 100
#: dealt over the 3 models: 4 + 34), as timing_inputs.content_count counts them.
CONTENTS_NEEDED = calls_of_model(0, TIMING_SEEDS, 10) + calls_of_model(0, TIMING_SEEDS, 100)


def _nbytes(tensor: torch.Tensor, dtype: Optional[torch.dtype]) -> int:
    if dtype is not None and tensor.is_floating_point():
        return tensor.numel() * torch.empty((), dtype=dtype).element_size()
    return tensor.numel() * tensor.element_size()


def tree_bytes(value: Any, dtype: Optional[torch.dtype]) -> int:
    """Bytes of the tensors in a nested value, floating ones counted in `dtype` (when given)."""
    if isinstance(value, torch.Tensor):
        return _nbytes(value, dtype)
    if isinstance(value, dict):
        return sum(tree_bytes(item, dtype) for item in value.values())
    if isinstance(value, (list, tuple)):
        return sum(tree_bytes(item, dtype) for item in value)
    return 0


def module_bytes(model: torch.nn.Module, dtype: Optional[torch.dtype]) -> int:
    return sum(_nbytes(tensor, dtype) for tensor in list(model.parameters()) + list(model.buffers()))


class _LiveBytes(torch.overrides.TorchFunctionMode):
    """Counts the bytes of tensors returned by operators while they are alive; `peak` is the most."""

    def __init__(self):
        super().__init__()
        self.live = 0
        self.peak = 0
        self.seen = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        for tensor in result if isinstance(result, (list, tuple)) else (result,):
            if isinstance(tensor, torch.Tensor) and id(tensor) not in self.seen:
                size = tensor.numel() * tensor.element_size()
                self.seen.add(id(tensor))
                self.live += size
                self.peak = max(self.peak, self.live)
                weakref.finalize(tensor, self._dropped, id(tensor), size)
        return result

    def _dropped(self, identity: int, size: int) -> None:
        self.live -= size
        self.seen.discard(identity)


def _fake_mode():
    from torch._subclasses.fake_tensor import FakeTensorMode

    return FakeTensorMode()


def _seed(seed: int) -> None:
    torch.manual_seed(seed)
    random.seed(seed)


def _cast_inputs(values, dtype: Optional[torch.dtype]):
    if dtype is None:
        return values
    return [cast_tensor(value, dtype) if isinstance(value, torch.Tensor) else value for value in values]


def measure_shapes(problem, precision: str, seed: int = 11) -> Dict[str, Any]:
    """Bytes of one input set, the weights, the output and the forward's peak, in the run's
    precision, without allocating any of them (see the module docs). Raises what the problem's own
    functions raise under the fake mode when even its inputs cannot be made that way."""
    dtype = run_dtype(precision)
    with _fake_mode():
        _seed(seed)
        inputs = list(problem.get_inputs())
        _seed(seed)
        model = problem.Model(*problem.get_init_inputs())
        figures = {
            "input_bytes": tree_bytes(inputs, dtype),
            "input_bytes_drawn": tree_bytes(inputs, None),
            "parameter_bytes": module_bytes(model, dtype),
            "input_bytes_fp64": tree_bytes(inputs, torch.float64),
            "parameter_bytes_fp64": module_bytes(model, torch.float64),
        }
        try:
            model = cast_module(model, dtype)
            cast = _cast_inputs(inputs, dtype)
            tracker = _LiveBytes()
            with torch.no_grad(), tracker:
                output = model(*cast)
            figures.update(
                output_bytes=tree_bytes(output, None),
                output_bytes_fp64=tree_bytes(output, torch.float64),
                forward_peak_bytes=tracker.peak,
                forward_method="fake",
                forward_error=None,
            )
        except Exception as error:  # a forward the fake mode cannot follow
            largest = figures["input_bytes"]
            figures.update(
                output_bytes=largest,
                forward_peak_bytes=2 * largest,
                forward_method="assumed",
                forward_error=f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:300],
            )
    return figures


def _fp64_scale(precision: str, figures: Dict[str, Any]) -> float:
    """How much larger the float64 twin's output and forward are than the run's: 8 bytes over the
    run dtype's; under `native` (the problem's own dtypes) the output's own ratio where the fake
    forward ran, else the inputs'."""
    dtype = run_dtype(precision)
    if dtype is not None:
        return 8 / torch.empty((), dtype=dtype).element_size()
    output, output64 = figures.get("output_bytes"), figures.get("output_bytes_fp64")
    if output and output64:
        return max(1.0, output64 / output)
    inputs, inputs64 = figures.get("input_bytes"), figures.get("input_bytes_fp64")
    return max(1.0, inputs64 / inputs) if inputs and inputs64 else 2.0


def _whole(pool: int, size: int, most: int) -> int:
    """How many blocks of `size` bytes fit `pool`, at most `most` (`most` when size is 0)."""
    return most if size <= 0 else min(most, pool // size)


def roles(figures: Dict[str, Any], precision: str, device_type: str, timing: bool = True) -> Dict[str, int]:
    """Peak bytes of each role and of the whole evaluation (see the module docs)."""
    inputs, weights = figures["input_bytes"], figures["parameter_bytes"]
    drawn = figures.get("input_bytes_drawn", inputs)
    output, forward = figures["output_bytes"], figures["forward_peak_bytes"]
    scale = _fp64_scale(precision, figures)
    inputs64, weights64 = figures["input_bytes_fp64"], figures["parameter_bytes_fp64"]
    forward64, output64 = int(forward * scale), int(output * scale)
    cuda = device_type == "cuda"
    record = output + output64
    kept = _whole(KEEP_BYTES, record, CORRECTNESS_TRIALS + TIMING_SEEDS) * record
    chunk = DEVICE_CHUNK_ELEMENTS if cuda else HOST_CHUNK_ELEMENTS
    temporaries = CHUNK_TEMPORARIES["cuda" if cuda else "cpu"]
    chunks = min(temporaries * chunk * 8, temporaries * output64)
    compute = weights + max(drawn + inputs, inputs + forward)
    twin = output + max(drawn + inputs64, inputs64 + weights64 + forward64)
    judging = output + output64 + output + chunks
    reference = kept + max(compute, twin, judging)
    # A timed call's output is judged against a reference recomputed without its float64 twin.
    timed_judging = kept + max(compute, output + output + chunks)
    if timing:
        batch = max(1, _whole(BASELINE_BATCH_POOL_BYTES, output, BASELINE_MAX_BATCH_CALLS)) * output
        reference = max(reference, kept + TIMING_SEEDS * (weights + inputs) + forward + batch)
    poison_cap = MAX_POISON_BYTES if cuda else (2 * output if output <= CPU_MAX_POISON_BLOCK_BYTES else 0)
    correctness = weights + inputs + forward + output + min(2 * output, poison_cap)
    candidate = correctness
    # Outputs handed over during the timed calls are judged while the candidate waits with its timing
    # state held (its allocator stays warm for the calls); those of the correctness trials after it
    # gave its cached blocks back (handover.py), so only the timing state adds to the judging.
    judged_beside = 0
    if timing:
        sets = TIMING_SEEDS * inputs
        held = _whole(CONTENT_POOL_BYTES, sets, CONTENTS_NEEDED) * sets
        live = sets if held else inputs  # no content set held: the timing models share one live set
        calls = max(1, _whole(CANDIDATE_BATCH_POOL_BYTES, inputs + output, CANDIDATE_MAX_BATCH_CALLS))
        trusted_batch = calls * (inputs + output) + 2 * output
        judged_beside = TIMING_SEEDS * weights + live + held + max(inputs + forward, trusted_batch)
        candidate = max(correctness, judged_beside)
    fixed = 2 * DEVICE_PROCESS_BYTES["cuda" if cuda else "cpu"]
    evaluation = max(reference, candidate + kept, timed_judging + judged_beside) + fixed
    return {
        "reference_bytes": int(reference),
        "reference_kept_bytes": int(kept),
        "candidate_bytes": int(candidate),
        "evaluation_bytes": int(evaluation),
        "fixed_bytes": fixed,
    }


def size_constants(problem) -> Dict[str, int]:
    """The problem's module-level integer constants (what `--set` can change), upper case included
    (KernelBench's `N`, `M`, `K`): overrides.public_constants."""
    names = public_constants(vars(problem))
    return {name: vars(problem)[name] for name in names if type(vars(problem)[name]) is int}


def shrink_order(constants: Dict[str, int]):
    """Constants to halve when sizing down, best first: `batch_size` (or a name like it), then the
    largest of the others (at least 2)."""
    names = [name for name, value in constants.items() if value >= 2]
    batch = [name for name in names if name in ("batch_size", "batch", "N", "n", "B")]
    rest = sorted((name for name in names if name not in batch), key=lambda name: -constants[name])
    return batch + rest


def human(size: Optional[float]) -> str:
    if size is None or (isinstance(size, float) and math.isnan(size)):
        return "unknown"
    return f"{size / GIB:.2f} GiB" if size >= 0.1 * GIB else f"{size / 1024 ** 2:.1f} MiB"
