"""The run-time guard at the boundaries of the candidate's stages (a part of GuardRuntime,
guard_runtime.py): the role enters the guard here, once at each boundary, and the guard does what
that boundary asks of it.

- Before anything of the candidate runs (stage `build`, `before_candidate`): the problem's
  forbidden names (forbidden_names.py), the static guard's read of the source (static_stage.py),
  torch's global state (global_state.py) and the modules already loaded.
- After its import (`candidate_imported`): a forbidden module it loaded, its extension calls
  watched for the traced call (traced_call.py), the kernels its extensions hold where the backend
  lists them (`build-info`, build_info.py: on cuda what `own-kernel` counts as its own), and the
  libcudart copies mapped now.
- At the end of a stage (`check_after`): the timing and channel functions and the worker's own
  code unchanged (`timer-patched`: the timing routine's snapshot and integrity.py), then torch's
  global state.
"""

import sys
from typing import Any, Callable, Iterable, List, Optional

from . import integrity
from ..build.build import CANDIDATE_MODULE_NAME
from ..build.build_info import collect_build_info
from .candidate_kernels import sources as own_kernel_sources
from ..protocol.errors import StageFailure
from .forbidden_names import ForbiddenNames, check_loaded
from .static_stage import run_static_guard


class StageChecks:
    """The guard's checks between stages; GuardRuntime provides `device`, `enabled`, `forbidden`,
    `send`, `snapshot_state`, `check_state`, `watch_extensions`, `expect_own_kernels`,
    `refresh_runtime` and the attributes set in `_init_stage_checks`."""

    def _init_stage_checks(self, closures: Iterable[Callable], timer_targets: Iterable[tuple]) -> None:
        """`closures`: the channel's writer and reader; `timer_targets`: the timing routine's
        functions (timing.TIMER_TARGETS), whose objects are taken now and compared at each
        stage's end (integrity.changed_targets)."""
        self.closures = tuple(closures)
        self.timer_targets = tuple(timer_targets)
        self.timers = integrity.take_targets(self.timer_targets)
        self.code = integrity.take_snapshot(*self.closures)
        self.modules_before = set()

    def before_candidate(self, send: Callable[..., None], request: Any, folder: Optional[Any]) -> List[dict]:
        """Stage `build`, before the candidate's import: the static guard's findings."""
        run = request.run
        self.forbidden = ForbiddenNames.of(folder.forbidden if folder else [])
        findings = run_static_guard(send, request.candidate, request.guard, run.precision, run.problem, self.forbidden)
        self.snapshot_state()
        self.send = send
        self.modules_before = set(sys.modules)
        return findings

    def candidate_imported(self, built: Any, findings: Iterable[dict], lists_built_kernels: bool) -> None:
        """Right after the candidate's import (`built`: build.BuiltCandidate): its modules, its
        extensions to watch, and on a backend that `lists_built_kernels` its `build-info`."""
        self.check_modules("importing the candidate")
        self.watch_extensions(built.extensions, findings)
        build_info = collect_build_info(built.shared_objects) if lists_built_kernels else None
        if build_info is not None:
            self.send("build-info", **build_info)
        if self.device.type == "cuda" and self.enabled:
            self.expect_own_kernels(own_kernel_sources(built.shared_objects, build_info, CANDIDATE_MODULE_NAME))
        self.refresh_runtime()

    def check_modules(self, when: str) -> None:
        """Rejects (`forbidden`) a forbidden module loaded since the candidate's import began."""
        check_loaded(self.forbidden, self.modules_before, when)

    def check_after(self, when: str) -> None:
        """The checks that close a stage: the watched functions and code, then torch's state."""
        if self.enabled:
            changed = integrity.changed_targets(self.timers, self.timer_targets)
            changed += integrity.changed(self.code, *self.closures)
            if changed:
                raise StageFailure(
                    "rejected",
                    "timer-patched",
                    "the candidate replaced timing or channel functions or code of the worker: "
                    f"{', '.join(changed[:8])}",
                )
        self.check_state(when)
