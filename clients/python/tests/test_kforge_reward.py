"""Tests of the reward client against a real HTTP server (the standard library's, in a thread)
that answers as scripted. The end-to-end test against `kforge serve --reward` itself is
`src/server/reward-client.e2e.test.ts`."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import kforge_reward  # noqa: E402
from kforge_reward import (  # noqa: E402
    KforgeConfigError,
    KforgeConnectionError,
    KforgeHTTPError,
    KforgeTimeoutError,
    RewardClient,
    extract_code,
    make_reward_func,
)

TOKEN = "test-token-0123456789"

Answer = Tuple[int, Dict[str, str], Any]


class FakeRewardServer:
    """Records each request; answers from a script (a list of answers, then `default`)."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []
        self.script: List[Answer] = []
        self.default: Callable[[Dict[str, Any]], Answer] = self._reward_answer
        self.delay_s = 0.0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                seen = {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}
                fake.requests.append(seen)
                if fake.delay_s:
                    time.sleep(fake.delay_s)
                status, headers, payload = fake.script.pop(0) if fake.script else fake.default(seen)
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = _answer
            do_POST = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @staticmethod
    def _reward_of(source: str) -> float:
        return float(source.split("reward=")[1].split()[0]) if "reward=" in source else 0.5

    def _reward_answer(self, seen: Dict[str, Any]) -> Answer:
        body = seen["body"] or {}
        if seen["path"] == "/api/reward/batch":
            return (
                200,
                {},
                {
                    "results": [
                        {"reward": self._reward_of(item["candidateSource"]), "verdict": "correct"}
                        for item in body["items"]
                    ],
                    "evaluated": len(body["items"]),
                    "cached": 0,
                },
            )
        return (
            200,
            {},
            {
                "reward": self._reward_of(body.get("candidateSource", "")),
                "verdict": "correct",
                "cached": False,
                "requestHash": "h",
            },
        )

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def fake():
    server = FakeRewardServer()
    yield server
    server.close()


@pytest.fixture()
def sleeps():
    return []


def client_for(fake: FakeRewardServer, sleeps: List[float], **options: Any) -> RewardClient:
    return RewardClient(fake.url, TOKEN, sleep=sleeps.append, **options)


def error(
    status: int, code: str, message: str, headers: Optional[Dict[str, str]] = None, field: Optional[str] = None
) -> Answer:
    body: Dict[str, Any] = {"code": code, "message": message}
    if field:
        body["field"] = field
    return status, headers or {}, {"error": body}


def test_reward_sends_the_token_and_the_options_in_api_spelling(fake, sleeps):
    client = client_for(fake, sleeps)
    value = client.reward(
        "level1/02_gelu",
        "# reward=1.25\n",
        backend="cpu",
        perf_trials=20,
        warmup_ms=250,
        skip_timing=False,
        guardPolicy="strict",
        shaping={"name": "tiered"},
    )
    assert value == 1.25
    request = fake.requests[0]
    assert request["path"] == "/api/reward"
    assert request["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert request["body"] == {
        "problem": "level1/02_gelu",
        "candidateSource": "# reward=1.25\n",
        "backend": "cpu",
        "perfTrials": 20,
        "warmupMs": 250,
        "skipTiming": False,
        "guardPolicy": "strict",
        "shaping": {"name": "tiered"},
    }


def test_a_problem_file_is_sent_as_problem_source(fake, sleeps):
    source = "import torch\nclass Model(torch.nn.Module):\n    pass\n"
    client_for(fake, sleeps).evaluate(source, "x", backend="cpu", problem_name="mine")
    assert fake.requests[0]["body"]["problemSource"] == source
    assert fake.requests[0]["body"]["problemName"] == "mine"
    assert "problem" not in fake.requests[0]["body"]


def test_url_and_token_come_from_the_environment(fake, monkeypatch):
    monkeypatch.setenv("KFORGE_URL", fake.url + "/")
    monkeypatch.setenv("KFORGE_TOKEN", "from-the-environment-0123")
    assert kforge_reward.reward("level1/01_relu", "# reward=0.75", backend="cpu") == 0.75
    assert fake.requests[0]["headers"]["Authorization"] == "Bearer from-the-environment-0123"


def test_a_missing_token_or_an_unknown_option_is_refused_before_any_request(fake, monkeypatch):
    monkeypatch.delenv("KFORGE_TOKEN", raising=False)
    with pytest.raises(KforgeConfigError, match="KFORGE_TOKEN"):
        RewardClient(fake.url)
    with pytest.raises(KforgeConfigError, match="unknown option 'perf_trails'"):
        RewardClient(fake.url, TOKEN).reward("level1/01_relu", "x", perf_trails=3)
    assert fake.requests == []


def test_429_is_retried_after_retry_after(fake, sleeps):
    fake.script = [
        error(429, "busy", "too many wait", {"Retry-After": "3"}),
        error(429, "busy", "still", {"Retry-After": "1"}),
    ]
    assert client_for(fake, sleeps).reward("level1/01_relu", "# reward=2", backend="cpu") == 2.0
    assert sleeps == [3.0, 1.0]
    assert len(fake.requests) == 3


def test_5xx_is_retried_with_growing_backoff_and_raised_once_retries_run_out(fake, sleeps):
    fake.script = [error(503, "evaluation-failed", "no torch")] * 3
    client = client_for(fake, sleeps, retries=2, backoff=1.0)
    with pytest.raises(KforgeHTTPError) as raised:
        client.reward("level1/01_relu", "x", backend="cpu")
    assert raised.value.status == 503
    assert raised.value.code == "evaluation-failed"
    assert raised.value.retryable
    assert "no torch" in str(raised.value)
    assert len(fake.requests) == 3
    assert len(sleeps) == 2 and 0.5 <= sleeps[0] <= 1.0 and 1.0 <= sleeps[1] <= 2.0


def test_a_4xx_is_raised_at_once_with_the_servers_code_message_and_field(fake, sleeps):
    fake.script = [
        error(400, "invalid-request", "`body.trials`: expected `trials` to be at least 1", field="body.trials")
    ]
    with pytest.raises(KforgeHTTPError) as raised:
        client_for(fake, sleeps).reward("level1/01_relu", "x", backend="cpu", trials=0)
    assert (raised.value.status, raised.value.code, raised.value.field) == (400, "invalid-request", "body.trials")
    assert not raised.value.retryable
    assert len(fake.requests) == 1 and sleeps == []


def test_a_slow_server_raises_a_timeout_after_the_retries(fake, sleeps):
    fake.delay_s = 0.5
    client = client_for(fake, sleeps, timeout=0.1, retries=1)
    with pytest.raises(KforgeTimeoutError, match="within 0.1 s"):
        client.reward("level1/01_relu", "x", backend="cpu")
    assert len(sleeps) == 1


def test_an_unreachable_server_raises_a_connection_error(sleeps):
    server = FakeRewardServer()
    url = server.url
    server.close()
    client = RewardClient(url, TOKEN, sleep=sleeps.append, retries=2)
    with pytest.raises(KforgeConnectionError, match="kforge serve --reward"):
        client.reward("level1/01_relu", "x", backend="cpu")
    assert len(sleeps) == 2


def test_a_body_that_is_not_json_is_a_clear_error(fake, sleeps):
    fake.script = [(200, {}, "<html>proxy login</html>")]
    with pytest.raises(kforge_reward.KforgeError, match="not JSON"):
        client_for(fake, sleeps).reward("level1/01_relu", "x", backend="cpu")


def test_reward_batch_with_one_problem_sends_it_once(fake, sleeps):
    rewards = client_for(fake, sleeps).reward_batch(
        "level1/01_relu", ["# reward=1", "# reward=-1", "# reward=0.5"], backend="cpu"
    )
    assert rewards == [1.0, -1.0, 0.5]
    body = fake.requests[0]["body"]
    assert fake.requests[0]["path"] == "/api/reward/batch"
    assert body["problem"] == "level1/01_relu"
    assert [item for item in body["items"]] == [
        {"candidateSource": "# reward=1"},
        {"candidateSource": "# reward=-1"},
        {"candidateSource": "# reward=0.5"},
    ]


def test_reward_batch_with_a_problem_per_candidate_splits_long_lists_and_keeps_order(fake, sleeps):
    candidates = [f"# reward={index}" for index in range(5)]
    problems = ["level1/01_relu", "level1/02_gelu"] * 2 + ["level1/01_relu"]
    rewards = client_for(fake, sleeps, max_batch=2).reward_batch(problems, candidates, backend="cpu")
    assert rewards == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert [len(request["body"]["items"]) for request in fake.requests] == [2, 2, 1]
    assert fake.requests[0]["body"]["items"][1] == {"problem": "level1/02_gelu", "candidateSource": "# reward=1"}
    with pytest.raises(KforgeConfigError, match="one problem per candidate"):
        client_for(fake, sleeps).reward_batch(["level1/01_relu"], candidates)
    assert client_for(fake, sleeps).reward_batch("level1/01_relu", []) == []


def test_extract_code_picks_the_candidate_from_a_completion():
    reply = (
        "Plan first.\n```cuda\n__global__ void k() {}\n```\n"
        "Then:\n```python\nimport torch\nclass ModelNew(torch.nn.Module):\n    pass\n```\n"
        "and a test:\n```python\nprint(1)\n```\n"
    )
    assert extract_code(reply) == "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"
    assert extract_code("```\nx = 1\n```") == "x = 1\n"
    assert (
        extract_code("```python\nclass ModelNew: pass\n# cut off by the token limit")
        == "class ModelNew: pass\n# cut off by the token limit\n"
    )
    assert extract_code("class ModelNew: pass") == "class ModelNew: pass\n"
    assert extract_code("") == ""
    conversation = [
        {"role": "user", "content": "write it"},
        {"role": "assistant", "content": "```py\nclass ModelNew: pass\n```"},
    ]
    assert extract_code(conversation) == "class ModelNew: pass\n"
    assert (
        extract_code({"role": "assistant", "content": [{"type": "text", "text": "```python\na = 2\n```"}]}) == "a = 2\n"
    )


def test_make_reward_func_has_trls_signature_and_reads_the_problem_column(fake, sleeps):
    func = make_reward_func(client=client_for(fake, sleeps), backend="cpu", shaping="binary")
    completions = [
        "```python\n# reward=1\nclass ModelNew: pass\n```",
        [{"role": "assistant", "content": "```python\n# reward=0\n```"}],
    ]
    rewards = func(
        prompts=["p1", "p2"],
        completions=completions,
        problem=["level1/01_relu", "level1/02_gelu"],
        completion_ids=[[1], [2]],
    )
    assert rewards == [1.0, 0.0]
    assert func.__name__ == "kforge_reward"
    body = fake.requests[0]["body"]
    assert body["shaping"] == "binary" and body["backend"] == "cpu"
    assert body["items"][0] == {"problem": "level1/01_relu", "candidateSource": "# reward=1\nclass ModelNew: pass\n"}
    fixed = make_reward_func("level1/05_softmax", client=client_for(fake, sleeps), backend="cpu")
    assert fixed(["p"], ["```python\n# reward=0.25\n```"]) == [0.25]
    assert fake.requests[1]["body"]["problem"] == "level1/05_softmax"
    with pytest.raises(KforgeConfigError, match="'problem' column"):
        make_reward_func(client=client_for(fake, sleeps), backend="cpu")(["p"], ["x"])
    with pytest.raises(KforgeConfigError, match="unknown option"):
        make_reward_func(client=client_for(fake, sleeps), bakend="cpu")
