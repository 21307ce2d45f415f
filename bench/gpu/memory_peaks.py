"""The peak of a worker stage's CUDA allocations, and what was live at it, from the allocator history a
worker writes with KFORGE_WORKER_PROFILE_MEMORY=1 (`<role>-<pid>-<NN>-<stage>.pickle`, the output of
torch.cuda.memory._snapshot()).

    python3 bench/gpu/memory_peaks.py SNAPSHOT.pickle [...] [--min-mib 256] [--frames 7]

For each file: the history's events replayed in order (`alloc` adds a block, `free_completed` removes
it), the largest total allocated, and
the blocks of at least --min-mib live at that moment, each with the innermost --frames frames of
kforge's or the candidate's code that allocated it. The snapshot needs no torch to be read.
"""

import argparse
import os
import pickle
import sys

GIB = 1024**3


def _where(frames, count):
    """The allocating frames worth reading: kforge's worker and the candidate's files, innermost first."""
    kept = [
        frame
        for frame in frames
        if "/kforge_worker/" in frame["filename"] or not frame["filename"].startswith(("/usr/", "<", "/opt/"))
    ]
    kept = [frame for frame in kept if "site-packages" not in frame["filename"]]
    return " <- ".join(f"{os.path.basename(f['filename'])}:{f['line']} {f['name']}" for f in kept[:count])


def peak_of(snapshot):
    """(peak bytes, blocks live at the peak as (size, frames)), replaying the device's history."""
    # Replayed from an empty device: the history holds every allocation of the stage (the worker
    # starts recording before the stage), so blocks from before it are not in the total.
    live = {}
    total = peak = 0
    at_peak = {}
    for trace in snapshot.get("device_traces", []):
        for event in trace:
            if event["action"] == "alloc":
                live[event["addr"]] = (event["size"], event.get("frames", []))
                total += event["size"]
                if total > peak:
                    peak, at_peak = total, dict(live)
            elif event["action"] == "free_completed" and event["addr"] in live:
                total -= live.pop(event["addr"])[0]
    return peak, sorted(at_peak.values(), key=lambda block: -block[0])


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("snapshots", nargs="+")
    parser.add_argument("--min-mib", type=float, default=256)
    parser.add_argument("--frames", type=int, default=7)
    arguments = parser.parse_args(argv)
    for path in arguments.snapshots:
        with open(path, "rb") as handle:
            snapshot = pickle.load(handle)
        events = sum(len(trace) for trace in snapshot.get("device_traces", []))
        peak, blocks = peak_of(snapshot)
        print(f"== {os.path.basename(path)}: events {events}, traced peak {peak / GIB:.2f} GiB")
        for size, frames in blocks:
            if size >= arguments.min_mib * 1024**2:
                print(f"  {size / GIB:6.2f} GiB  {_where(frames, arguments.frames)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
