"""The output spool: saved outputs handed to the parent once they reach the request's allowance."""

import pytest

from kforge_worker.protocol.channel import ProtocolError
from kforge_worker.protocol.output_spool import HandOverStopped, OutputSpool
from kforge_worker.protocol.request import parse_candidate_request


class ScriptedChannel:
    """Records what the role sends; answers each receive from a script."""

    def __init__(self, replies):
        self.sent = []
        self.replies = list(replies)

    def send(self, message_type, **fields):
        self.sent.append({"type": message_type, **fields})

    def receive(self):
        return self.replies.pop(0) if self.replies else None


def saved(tmp_path, name, size, seed):
    path = tmp_path / name
    path.write_bytes(b"x" * size)
    return {"seed": seed, "path": str(path), "input_digest": f"d{seed}"}


def test_outputs_are_handed_over_when_they_reach_the_allowance(tmp_path):
    channel = ScriptedChannel([{"type": "outputs-judged"}, {"type": "outputs-judged"}])
    spool = OutputSpool(channel, allowance_bytes=100)
    spool.saved(saved(tmp_path, "a.out", 60, 1))
    assert channel.sent == [], "below the allowance nothing is handed over"
    spool.saved(saved(tmp_path, "b.out", 40, 2))
    assert [message["type"] for message in channel.sent] == ["kept"]
    assert [output["seed"] for output in channel.sent[0]["outputs"]] == [1, 2]
    spool.saved(saved(tmp_path, "c.out", 500, 3))
    assert [output["seed"] for output in channel.sent[1]["outputs"]] == [3], "one output over the allowance goes alone"
    assert spool.handed_over == 3 and spool.pending == []


def test_the_cached_memory_is_given_back_before_each_hand_over_and_only_then(tmp_path):
    events = []

    class Recording(ScriptedChannel):
        def send(self, message_type, **fields):
            events.append(message_type)
            super().send(message_type, **fields)

    spool = OutputSpool(
        Recording([{"type": "outputs-judged"}]), allowance_bytes=100, release=lambda: events.append("release")
    )
    spool.saved(saved(tmp_path, "a.out", 60, 1))
    assert events == [], "nothing is released while the candidate goes on"
    spool.saved(saved(tmp_path, "b.out", 60, 2))
    assert events == ["release", "kept"], "released before the reference is asked to judge"
    spool.release = None
    spool.channel.replies.append({"type": "outputs-judged"})
    spool.saved(saved(tmp_path, "c.out", 200, 3))
    assert events == ["release", "kept", "kept"], "without a release hook (timing) the hand-over releases nothing"


def test_without_an_allowance_nothing_is_handed_over(tmp_path):
    channel = ScriptedChannel([])
    spool = OutputSpool(channel, allowance_bytes=None)
    spool.saved(saved(tmp_path, "a.out", 10_000, 1))
    assert channel.sent == []


def test_outputs_listed_in_a_message_are_no_longer_pending(tmp_path):
    channel = ScriptedChannel([{"type": "outputs-judged"}])
    spool = OutputSpool(channel, allowance_bytes=100)
    spool.saved(saved(tmp_path, "a.out", 60, 1))
    spool.listed()
    spool.saved(saved(tmp_path, "b.out", 60, 2))
    assert channel.sent == [], "the listed output no longer counts toward the allowance"


def test_a_stop_or_a_closed_channel_ends_the_role_and_anything_else_is_a_protocol_error(tmp_path):
    for reply in ({"type": "stop"}, None):
        spool = OutputSpool(ScriptedChannel([reply] if reply else []), allowance_bytes=1)
        with pytest.raises(HandOverStopped):
            spool.saved(saved(tmp_path, "a.out", 10, 1))
    spool = OutputSpool(ScriptedChannel([{"type": "continue"}]), allowance_bytes=1)
    with pytest.raises(ProtocolError, match="outputs-judged"):
        spool.saved(saved(tmp_path, "b.out", 10, 2))


def candidate_request(**fields):
    message = {
        "type": "candidate",
        "problem": "/p.py",
        "candidate": "/c.py",
        "backend": "cpu",
        "precision": "fp32",
        "preset": "cpu",
        "device": "cpu",
        "correctness_seeds": [1],
        "timing_seeds": [],
        "perf_trials": 0,
        "warmup_trials": 0,
        "output_dir": "/s/out",
        "build_dir": "/s/build",
    }
    message.update(fields)
    return message


def test_the_request_carries_the_allowance():
    assert parse_candidate_request(candidate_request()).output_allowance_bytes is None
    assert parse_candidate_request(candidate_request(output_allowance_bytes=4096)).output_allowance_bytes == 4096
    for bad in (0, -1, "1 GiB", True):
        with pytest.raises(ProtocolError, match="output_allowance_bytes"):
            parse_candidate_request(candidate_request(output_allowance_bytes=bad))
