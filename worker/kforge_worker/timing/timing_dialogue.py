"""The timing stage's requests from the parent (docs/worker-protocol.md, Candidate role, stage
`timing`): after every warm-up and timed call the worker writes `called` and the parent answers
with `step`; a trusted batch is `batch` … `go` … `batch-keep`. Which outputs are kept (judged) is
decided by the parent only after the call has returned, so nothing in this process knows it
beforehand (docs/timing.md, P2)."""

from dataclasses import dataclass
from typing import List

from ..protocol.channel import Channel, ProtocolError

NEXT_ACTIONS = ("call", "batch", "end")


@dataclass(frozen=True)
class Step:
    """keep: save the output of the call just made (timed calls only). next: `call` (the next call
    of this phase), `batch` (a trusted batch of `calls` calls, then another step), `end` (this
    phase is over)."""

    keep: bool
    next: str
    calls: int = 0
    reseed: bool = False


def _receive(channel: Channel, expected: str) -> dict:
    message = channel.receive()
    if message is None:
        raise ProtocolError(f"stdin closed while the timing stage waited for `{expected}`")
    if message.get("type") != expected:
        raise ProtocolError(f"expected a {expected!r} request in the timing stage, got type {message.get('type')!r}")
    return message


def receive_step(channel: Channel) -> Step:
    message = _receive(channel, "step")
    keep, action, calls = message.get("keep", False), message.get("next"), message.get("calls", 0)
    if not isinstance(keep, bool):
        raise ProtocolError(f"expected `keep` to be true or false, got {keep!r}")
    if action not in NEXT_ACTIONS:
        raise ProtocolError(f"expected `next` to be one of {', '.join(NEXT_ACTIONS)}, got {action!r}")
    if action == "batch" and (isinstance(calls, bool) or not isinstance(calls, int) or calls < 1):
        raise ProtocolError(f"expected `calls` of a batch step to be a positive integer, got {calls!r}")
    reseed = message.get("reseed", False)
    if not isinstance(reseed, bool):
        raise ProtocolError(f"expected `reseed` to be true or false, got {reseed!r}")
    return Step(keep=keep, next=action, calls=calls if action == "batch" else 0, reseed=reseed)


def receive_go(channel: Channel) -> None:
    _receive(channel, "go")


def receive_kept(channel: Channel, calls: int) -> List[int]:
    message = _receive(channel, "batch-keep")
    kept = message.get("calls")
    if not isinstance(kept, list) or not kept:
        raise ProtocolError(f"expected `calls` of `batch-keep` to be a non-empty list of call indices, got {kept!r}")
    for index in kept:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < calls:
            raise ProtocolError(f"expected every entry of `batch-keep.calls` to be in [0, {calls}), got {index!r}")
    return sorted(set(kept))
