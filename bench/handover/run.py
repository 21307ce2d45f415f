"""How fast an output crosses the hand-over pipe (worker/kforge_worker/protocol/output_wire.py).

    python3 bench/handover/run.py [--mib 1024] [--repeats 5] [--device cpu|cuda]

A writer thread plays the candidate's worker (`write_tensor`) and the main thread the judge
(`read_tensor` into a fresh tensor), through a FIFO with the judge's pipe size, exactly as the two
processes do; with `--device cuda` both sides go through their pinned buffers. Prints one line per
repeat (seconds, GB/s) and the median. The judge's own clock bounds a hand-over at 2 s plus 1 ms per
100 kB (src/eval/run/output-handover.ts): the margin between that floor rate and this one is what
the bound leaves an honest hand-over.
"""

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "worker"))

import torch  # noqa: E402

from kforge_worker.protocol import output_wire  # noqa: E402
from kforge_worker.protocol.handover_receive import close_pipe, make_pipe  # noqa: E402


def once(tensor: torch.Tensor, path: str) -> float:
    read_fd = make_pipe(path)
    write_fd = os.open(path, os.O_WRONLY)
    output_wire.widen_pipe(write_fd)
    target = torch.empty_like(tensor)
    writer = threading.Thread(target=output_wire.write_tensor, args=(write_fd, tensor))
    started = time.perf_counter()
    writer.start()
    output_wire.read_tensor(read_fd, target, patience_s=30)
    elapsed = time.perf_counter() - started
    writer.join()
    os.close(write_fd)
    close_pipe(read_fd)
    assert torch.equal(target, tensor)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    tensor = torch.rand(args.mib * 1024 * 1024 // 4, device=args.device)
    seconds = []
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeats):
            seconds.append(once(tensor, os.path.join(folder, "handover")))
            print(
                f"repeat {repeat}: {seconds[-1]:.3f} s, {tensor.numel() * 4 / seconds[-1] / 1e9:.2f} GB/s", flush=True
            )
    median = statistics.median(seconds)
    print(f"median: {median:.3f} s for {args.mib} MiB on {args.device}, {tensor.numel() * 4 / median / 1e9:.2f} GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
