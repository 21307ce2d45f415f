"""Test support: `python3 walk_profiler.py OUT ROLE` runs the worker's `main` (as `python3 -m
kforge_worker ROLE` does) under a profile hook that records the walk of the candidate's message
(test_worker_walk.py): the first entry of each kforge_worker function on the main thread, in
order, from the entry of `roles.candidate_role.run_candidate` to its return, each with the module
of its caller (the nearest kforge_worker frame up the stack: frames of the standard library,
torch or the candidate in between are passed over). At that return the walk is written to OUT as
JSON lines of [module, function, first line, caller's module]. Nothing is added to the worker:
the hook is installed here, before the worker's `main` runs.
"""

import json
import sys

ENTRY = ("kforge_worker.roles.candidate_role", "run_candidate")


def caller_module(frame) -> str:
    """The module of the nearest kforge_worker frame above `frame` ("" when there is none)."""
    frame = frame.f_back
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("kforge_worker"):
            return module
        frame = frame.f_back
    return ""


class WalkRecorder:
    def __init__(self, out: str) -> None:
        self.out = out
        self.entry_frame = None
        self.seen = set()
        self.walk = []

    def __call__(self, frame, event, arg) -> None:
        if event not in ("call", "return"):
            return
        module = frame.f_globals.get("__name__", "")
        code = frame.f_code
        if self.entry_frame is None:
            if event == "call" and (module, code.co_name) == ENTRY:
                self.entry_frame = frame
                self._record(module, code, frame)
            return
        if event == "return" and frame is self.entry_frame:
            self._write()
            return
        if event == "call" and module.startswith("kforge_worker"):
            self._record(module, code, frame)

    def _record(self, module: str, code, frame) -> None:
        key = (module, code.co_name, code.co_firstlineno)
        if key not in self.seen:
            self.seen.add(key)
            self.walk.append(key + (caller_module(frame),))

    def _write(self) -> None:
        sys.setprofile(None)
        with open(self.out, "w", encoding="utf-8") as file:
            for step in self.walk:
                file.write(json.dumps(list(step)) + "\n")


def main() -> None:
    out, role = sys.argv[1], sys.argv[2]
    from kforge_worker.__main__ import main as worker_main

    sys.setprofile(WalkRecorder(out))
    worker_main(["kforge_worker", role])


if __name__ == "__main__":
    main()
