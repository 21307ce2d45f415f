"""What an evaluation spends outside the kernel at GPU size, piece by piece (seconds, one process).

For each named problem at its gpu preset: drawing the inputs on the host (`get_inputs()` as
written, then moved) against drawing them on the GPU (the default device set while
`get_inputs()` runs); the SHA-256 input digest (device -> host copy + hashlib) against a digest
computed on the device (kforge_worker.problem.inputs, when present); constructing the model; the float32
and float64 forwards; torch.save and torch.load of the output (into the scratch folder's disk and
into /dev/shm). Every figure is a median of `--repeats` wall-clock runs after one untimed run,
with the device synchronized before each clock read.

    python3 bench/gpu/host_costs.py [--repeats 3] [PROBLEM.py ...]
"""

import argparse
import hashlib
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time

import torch

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPOSITORY, "worker"))

DEFAULT_PROBLEMS = [
    "level1/01_relu.py",
    "level1/07_layer_norm.py",
    "level1/09_matmul_square.py",
    "level2/02_conv_relu_maxpool.py",
    "level3/01_residual_mlp.py",
]


def load(path):
    spec = importlib.util.spec_from_file_location("problem", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, value in module.KFORGE_PRESETS.get("gpu", {}).items():
        setattr(module, name, value)
    return module


def timed(function, repeats):
    function()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        started = time.perf_counter()
        function()
        torch.cuda.synchronize()
        samples.append(time.perf_counter() - started)
    return round(statistics.median(samples), 4)


def sha256_digest(values):
    digest = hashlib.sha256()
    for value in values:
        digest.update(value.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8).numpy())
    return digest.hexdigest()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("problems", nargs="*")
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    device = torch.device("cuda", 0)
    rows = []
    cpu_flags = open("/proc/cpuinfo").read()
    print(
        json.dumps(
            {"sha_ni": " sha_ni" in cpu_flags, "torch": torch.__version__, "cpu_threads": torch.get_num_threads()}
        )
    )
    for relative in arguments.problems or DEFAULT_PROBLEMS:
        path = relative if os.path.isfile(relative) else os.path.join(REPOSITORY, "problems", relative)
        problem = load(path)
        row = {"problem": relative}

        def host_inputs():
            torch.manual_seed(1)
            return [value.to(device) for value in problem.get_inputs()]

        def device_inputs():
            torch.manual_seed(1)
            with torch.device(device):
                return list(problem.get_inputs())

        row["inputs_host_s"] = timed(host_inputs, arguments.repeats)
        row["inputs_device_s"] = timed(device_inputs, arguments.repeats)
        inputs = device_inputs()
        row["input_gib"] = round(sum(v.numel() * v.element_size() for v in inputs) / 2**30, 3)
        row["sha256_digest_s"] = timed(lambda: sha256_digest(inputs), arguments.repeats)
        try:
            from kforge_worker.problem import inputs as worker_inputs

            if hasattr(worker_inputs, "input_digest"):
                row["worker_digest_s"] = timed(lambda: worker_inputs.input_digest(inputs), arguments.repeats)
        except Exception as error:  # the worker's digest is optional here
            row["worker_digest_error"] = repr(error)

        def construct_host():
            torch.manual_seed(1)
            return problem.Model(*problem.get_init_inputs()).to(device)

        def construct_device():
            torch.manual_seed(1)
            with torch.device(device):
                return problem.Model(*problem.get_init_inputs())

        row["model_host_s"] = timed(construct_host, arguments.repeats)
        row["model_device_s"] = timed(construct_device, arguments.repeats)
        model = construct_host()
        with torch.no_grad():
            row["forward_fp32_s"] = timed(lambda: model(*inputs), arguments.repeats)
            model64 = construct_host().to(torch.float64)
            inputs64 = [v.to(torch.float64) if v.is_floating_point() else v for v in inputs]
            row["forward_fp64_s"] = timed(lambda: model64(*inputs64), arguments.repeats)
            output = model(*inputs)
        model64 = inputs64 = None
        for where, folder in (("disk", tempfile.gettempdir()), ("shm", "/dev/shm")):
            file_path = os.path.join(folder, "kforge-host-costs.pt")
            row[f"save_{where}_s"] = timed(
                lambda: torch.save({"leaves": [output.detach().cpu()]}, file_path), arguments.repeats
            )
            row[f"load_{where}_s"] = timed(
                lambda: torch.load(file_path, map_location="cpu", weights_only=True), arguments.repeats
            )
            os.remove(file_path)
        row["d2h_output_s"] = timed(lambda: output.detach().cpu(), arguments.repeats)
        rows.append(row)
        print(json.dumps(row), flush=True)
        inputs = model = output = None
        torch.cuda.empty_cache()
    keys = list(rows[0].keys())
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row.get(key, "")) for key in keys) + " |")


if __name__ == "__main__":
    main()
