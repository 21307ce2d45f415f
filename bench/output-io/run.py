#!/usr/bin/env python3
"""How fast an output moves through its file (worker/kforge_worker/protocol/output_file.py).

Saves and loads one float32 output of `--mib` MiB on `--device` (cpu, or cuda through the pinned
buffers), `--repeats` times, reading with output_file.py's threads (`--threads`, default its own
IO_THREADS; 1 is the single-thread path it replaced), in `--dir` (default: the system's temporary
folder, as an evaluation's scratch folder is). Prints one JSON line: the median seconds of a save
and of a load, and the GB/s they make. `--hold-device-lock` holds kforge's host-wide device lock
meanwhile (bench/gpu/timing_record.py), so that kforge runs beside it wait. `--host-side` also
times, on any machine, the host half of a cuda load: the file read chunk by chunk into one reused
buffer per thread (what the pinned buffers get), without the copies to the device.

    python3 bench/output-io/run.py --mib 1024 --device cpu --threads 1
    python3 bench/output-io/run.py --mib 1024 --device cpu
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "worker"))

import torch  # noqa: E402

from kforge_worker.protocol import output_file, outputs  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=output_file.IO_THREADS)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dir", default=tempfile.gettempdir())
    parser.add_argument("--hold-device-lock", action="store_true")
    parser.add_argument("--host-side", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gpu"))
    from device_lock import kforge_device_lock

    with kforge_device_lock(args.hold_device_lock):
        measure(args)


def measure(args):
    output_file.IO_THREADS = args.threads
    device = torch.device(args.device)
    tensor = torch.rand(args.mib * 2**20 // 4, device=device)
    flat = outputs.flatten(tensor, keep_device=True)
    saves, loads, host_side = [], [], []
    buffers = [torch.empty(output_file.STAGING_BYTES, dtype=torch.uint8) for _ in range(args.threads)]
    for buffer in buffers:
        buffer.fill_(0)  # touched once, as the pinned buffers are
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        path = os.path.join(folder, "output.out")
        for _ in range(args.repeats):
            began = time.perf_counter()
            outputs.save(flat, path)
            saves.append(time.perf_counter() - began)
            began = time.perf_counter()
            loaded = outputs.load(path, device)
            if device.type == "cuda":
                torch.cuda.synchronize()
            loads.append(time.perf_counter() - began)
            assert torch.equal(loaded.leaves[0], tensor)
            del loaded
            if args.host_side:
                nbytes = tensor.numel() * tensor.element_size()
                start_of_data = os.path.getsize(path) - nbytes
                with open(path, "rb") as handle:
                    began = time.perf_counter()
                    output_file.in_chunks(
                        nbytes,
                        lambda worker, start, count: output_file._pread_exact(
                            handle.fileno(), memoryview(buffers[worker][:count].numpy()), start_of_data + start
                        ),
                        args.threads,
                    )
                    host_side.append(time.perf_counter() - began)
            os.remove(path)
    gb = args.mib * 2**20 / 1e9
    save_s, load_s = statistics.median(saves), statistics.median(loads)
    print(
        json.dumps(
            {
                "mib": args.mib,
                "device": args.device,
                "threads": args.threads,
                "repeats": args.repeats,
                "save_s": round(save_s, 3),
                "load_s": round(load_s, 3),
                "save_gb_s": round(gb / save_s, 2),
                "load_gb_s": round(gb / load_s, 2),
                "host_side_s": round(statistics.median(host_side), 3) if host_side else None,
                "cpus": os.cpu_count(),
            }
        )
    )


if __name__ == "__main__":
    main()
