"""Saved outputs handed to the parent before they pile up on the scratch disk.

The candidate saves the outputs the parent will judge (correctness trials, kept timed calls, the
batches' kept calls) as files in its output folder. At KernelBench's own sizes one output is
gigabytes, and an evaluation saves a dozen: kept until the end they filled a 64 GiB disk when a
few evaluations ran at once. The request's `output_allowance_bytes` bounds the bytes saved and not
yet judged: once they reach it, the candidate sends `kept` with those outputs' entries and waits
for `outputs-judged`, by which time the parent has judged them and deleted their files. The later
messages that list outputs (`correctness-outputs`, `timing`) still list every one; the parent
does not judge an output twice. Without an allowance, nothing is handed over early.
"""

import os
from typing import Callable, List, Optional

from .channel import Channel, ProtocolError


class HandOverStopped(Exception):
    """The parent answered `kept` with `stop` (or went away): the role ends without a message."""


class OutputSpool:
    def __init__(self, channel: Channel, allowance_bytes: Optional[int], release: Optional[Callable[[], None]] = None):
        self.channel = channel
        self.allowance_bytes = allowance_bytes
        #: Called before each hand-over, while the candidate waits for the judging: in the
        #: correctness trials it gives the allocator's cached blocks back (the trial's tensors are
        #: gone by then), so that the reference, which judges on the same device meanwhile, has
        #: the room. None in the timing stage, whose calls must not meet a cold allocator.
        self.release = release
        self.pending: List[dict] = []
        self.pending_bytes = 0
        self.handed_over = 0

    def saved(self, entry: dict) -> None:
        """Notes an output just saved (its entry names the file); hands the pending ones over when
        they reach the allowance."""
        if self.allowance_bytes is None:
            return
        self.pending.append(entry)
        self.pending_bytes += os.path.getsize(entry["path"])
        if self.pending_bytes >= self.allowance_bytes:
            self.hand_over()

    def listed(self) -> None:
        """The pending outputs went to the parent in a message that lists outputs: none is pending."""
        self.pending, self.pending_bytes = [], 0

    def hand_over(self) -> None:
        if not self.pending:
            return
        if self.release is not None:
            self.release()
        self.channel.send("kept", outputs=self.pending)
        reply = self.channel.receive()
        if reply is None or reply.get("type") == "stop":
            raise HandOverStopped()
        if reply.get("type") != "outputs-judged":
            raise ProtocolError(
                f"expected an 'outputs-judged' or 'stop' line after `kept`, got type {reply.get('type')!r}"
            )
        self.handed_over += len(self.pending)
        self.pending, self.pending_bytes = [], 0
