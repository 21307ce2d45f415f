"""A client for the kforge reward API (``kforge serve --reward``), standard library only.

Every reward is the shaped verdict of a full kforge evaluation: the candidate is built, checked
against the PyTorch reference on fresh inputs, run through the guard (reward hacks are
``rejected``) and timed against eager and ``torch.compile`` baselines. Identical requests are
answered from the server's store, so calling the same candidate twice costs nothing and returns
the same number. See ``docs/reward.md`` in the kforge repository.

    from kforge_reward import reward, reward_batch, make_reward_func

    r = reward("level1/02_gelu", candidate_source, backend="cuda")          # one float
    rs = reward_batch("level1/02_gelu", [src_a, src_b], backend="cuda")     # one per candidate
    trainer = GRPOTrainer(..., reward_funcs=[make_reward_func(backend="cuda")])  # TRL

The server's address and token come from ``url=``/``token=`` or the environment variables
``KFORGE_URL`` (default ``http://127.0.0.1:4319``) and ``KFORGE_TOKEN`` (required: the server
prints it). Options use Python or API spelling: ``perf_trials=20`` or ``perfTrials=20``.
"""

from __future__ import annotations

import json
import os
import random
import re
import socket
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

__all__ = [
    "DEFAULT_URL",
    "KforgeError",
    "KforgeConfigError",
    "KforgeHTTPError",
    "KforgeTimeoutError",
    "KforgeConnectionError",
    "RewardClient",
    "evaluate",
    "reward",
    "evaluate_batch",
    "reward_batch",
    "extract_code",
    "make_reward_func",
]

__version__ = "1.0.0"

DEFAULT_URL = "http://127.0.0.1:4319"
#: Most candidates the server takes in one batch (its default); longer lists are sent in chunks.
DEFAULT_MAX_BATCH = 256

_OPTION_NAMES = {
    "backend": "backend",
    "precision": "precision",
    "tolerance": "tolerance",
    "preset": "preset",
    "trials": "trials",
    "perf_trials": "perfTrials",
    "warmup_trials": "warmupTrials",
    "warmup_ms": "warmupMs",
    "guard_policy": "guardPolicy",
    "shapes": "shapes",
    "shapes_gate": "shapesGate",
    "skip_timing": "skipTiming",
    "shaping": "shaping",
    "problem_name": "problemName",
}
_API_NAMES = set(_OPTION_NAMES.values())
_RETRYABLE_STATUSES = {429, 500, 502, 503, 504}


class KforgeError(Exception):
    """Base class of every error this client raises."""


class KforgeConfigError(KforgeError):
    """The client is missing something it needs (a token) or was given a bad argument."""


class KforgeHTTPError(KforgeError):
    """The server answered with an error.

    ``status`` is the HTTP status, ``code`` the API's stable error code (``invalid-request``,
    ``unknown-problem``, ``busy``, ``evaluation-failed``, ...), ``field`` the request field at
    fault where the server names one, ``retry_after`` the seconds the server asked to wait.
    """

    def __init__(
        self, status: int, code: str, message: str, field: Optional[str] = None, retry_after: Optional[float] = None
    ):
        super().__init__(f"kforge reward API answered {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        """True for answers a retry may fix (429 and 5xx)."""
        return self.status in _RETRYABLE_STATUSES


class KforgeTimeoutError(KforgeError):
    """No answer within the timeout (every attempt)."""


class KforgeConnectionError(KforgeError):
    """The server could not be reached (every attempt)."""


def _api_options(options: Mapping[str, Any]) -> Dict[str, Any]:
    body: Dict[str, Any] = {}
    for name, value in options.items():
        if value is None:
            continue
        key = _OPTION_NAMES.get(name, name if name in _API_NAMES else None)
        if key is None:
            known = ", ".join(sorted(_OPTION_NAMES))
            raise KforgeConfigError(f"unknown option {name!r}: the options are {known}")
        body[key] = value
    return body


def _looks_like_source(problem: str) -> bool:
    return "\n" in problem or "class Model" in problem


def _problem_fields(problem: str) -> Dict[str, str]:
    if not isinstance(problem, str) or not problem:
        raise KforgeConfigError(
            "expected a problem name (level1/02_gelu), a stored problem hash or a problem file's source, "
            f"got {problem!r}"
        )
    return {"problemSource": problem} if _looks_like_source(problem) else {"problem": problem}


def _retry_after(headers: Any) -> Optional[float]:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except (TypeError, ValueError):
        return None


class RewardClient:
    """A connection to one reward server.

    ``timeout`` bounds each HTTP attempt in seconds (an evaluation of a CUDA candidate that must
    compile takes minutes); ``batch_timeout`` bounds a batch's. Answers 429 and 5xx, refused
    connections and timeouts are retried up to ``retries`` times, waiting ``Retry-After`` when the
    server sends one, else ``backoff * 2**attempt`` seconds (with jitter, at most
    ``max_backoff``). Retrying is safe: identical requests share one evaluation on the server.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        *,
        timeout: float = 900.0,
        batch_timeout: float = 3600.0,
        retries: int = 6,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        max_batch: int = DEFAULT_MAX_BATCH,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.url = (url or os.environ.get("KFORGE_URL") or DEFAULT_URL).rstrip("/")
        self.token = token or os.environ.get("KFORGE_TOKEN")
        if not self.token:
            raise KforgeConfigError(
                "no token: pass token=... or set KFORGE_TOKEN to the token `kforge serve --reward` printed"
            )
        if retries < 0 or max_batch < 1:
            raise KforgeConfigError("expected retries >= 0 and max_batch >= 1")
        self.timeout = timeout
        self.batch_timeout = batch_timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_batch = max_batch
        self._sleep = sleep

    def evaluate(self, problem: str, candidate: str, **options: Any) -> Dict[str, Any]:
        """The full answer for one candidate: ``reward``, ``shaping``, ``verdict``, ``result`` (the
        evaluation, as ``kforge eval --json`` prints it), ``cached``, ``requestHash``."""
        if not isinstance(candidate, str):
            raise KforgeConfigError(f"expected the candidate's source as a string, got {type(candidate).__name__}")
        body = {**_problem_fields(problem), "candidateSource": candidate, **_api_options(options)}
        return self._post("/api/reward", body, self.timeout)

    def reward(self, problem: str, candidate: str, **options: Any) -> float:
        """The shaped reward of one candidate."""
        return float(self.evaluate(problem, candidate, **options)["reward"])

    def evaluate_batch(
        self, problems_or_problem: Union[str, Sequence[str]], candidates: Sequence[str], **options: Any
    ) -> List[Dict[str, Any]]:
        """Answers for many candidates, in order: one problem for all, or one problem per candidate.
        Lists longer than ``max_batch`` go in several requests."""
        candidates = list(candidates)
        if isinstance(problems_or_problem, str):
            shared: Optional[Dict[str, str]] = _problem_fields(problems_or_problem)
            items = [{"candidateSource": candidate} for candidate in candidates]
        else:
            problems = list(problems_or_problem)
            if len(problems) != len(candidates):
                raise KforgeConfigError(
                    f"expected one problem per candidate, got {len(problems)} problems for {len(candidates)} candidates"
                )
            shared = None
            items = [
                {**_problem_fields(problem), "candidateSource": candidate}
                for problem, candidate in zip(problems, candidates)
            ]
        for item in items:
            if not isinstance(item["candidateSource"], str):
                raise KforgeConfigError("expected every candidate's source as a string")
        if not items:
            return []
        fields = _api_options(options)
        results: List[Dict[str, Any]] = []
        for start in range(0, len(items), self.max_batch):
            body = {**(shared or {}), **fields, "items": items[start : start + self.max_batch]}
            results.extend(self._post("/api/reward/batch", body, self.batch_timeout)["results"])
        return results

    def reward_batch(
        self, problems_or_problem: Union[str, Sequence[str]], candidates: Sequence[str], **options: Any
    ) -> List[float]:
        """The shaped rewards of many candidates, in order."""
        return [float(entry["reward"]) for entry in self.evaluate_batch(problems_or_problem, candidates, **options)]

    def problems(self) -> List[Dict[str, Any]]:
        """The shipped problems the server knows by name."""
        return self._request("GET", "/api/reward/problems", None, self.timeout)["problems"]

    def _post(self, path: str, body: Mapping[str, Any], timeout: float) -> Dict[str, Any]:
        return self._request("POST", path, json.dumps(body).encode("utf-8"), timeout)

    def _request(self, method: str, path: str, data: Optional[bytes], timeout: float) -> Dict[str, Any]:
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Accept": "application/json",
            "User-Agent": f"kforge-reward-python/{__version__}",
        }
        if data is not None:
            headers["Content-Type"] = "application/json"
        last: KforgeError = KforgeConnectionError(f"no attempt reached {self.url}")
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
            wait: Optional[float] = None
            try:
                with urllib.request.urlopen(request, timeout=timeout) as response:
                    text = response.read().decode("utf-8", "replace")
                try:
                    return json.loads(text)
                except ValueError:
                    raise KforgeError(
                        f"{self.url}{path} answered {response.status} with something that is not JSON: {text[:200]!r}"
                    ) from None
            except urllib.error.HTTPError as error:
                last = self._http_error(error)
                if not last.retryable:
                    raise last from None
                wait = last.retry_after
            except urllib.error.URLError as error:
                if isinstance(error.reason, (socket.timeout, TimeoutError)):
                    last = KforgeTimeoutError(f"no answer from {self.url}{path} within {timeout} s")
                else:
                    last = KforgeConnectionError(
                        f"cannot reach the reward server at {self.url}: {error.reason} "
                        "(is `kforge serve --reward` running? KFORGE_URL says where)"
                    )
            except (socket.timeout, TimeoutError):
                last = KforgeTimeoutError(f"no answer from {self.url}{path} within {timeout} s")
            except (ConnectionError, OSError) as error:
                last = KforgeConnectionError(f"the connection to {self.url} failed: {error}")
            if attempt < self.retries:
                self._sleep(self._delay(attempt, wait))
        raise last

    def _delay(self, attempt: int, retry_after: Optional[float]) -> float:
        if retry_after is not None:
            return min(retry_after, max(self.max_backoff, 300.0))
        return min(self.max_backoff, self.backoff * (2**attempt)) * (0.5 + random.random() / 2)

    @staticmethod
    def _http_error(error: urllib.error.HTTPError) -> KforgeHTTPError:
        text = ""
        try:
            text = error.read().decode("utf-8", "replace")
            detail = json.loads(text).get("error", {})
        except (ValueError, AttributeError, OSError):
            detail = {}
        return KforgeHTTPError(
            error.code,
            str(detail.get("code") or "http-error"),
            str(detail.get("message") or text[:500] or error.reason),
            detail.get("field"),
            _retry_after(error.headers),
        )


def _client(url: Optional[str], token: Optional[str], client_options: Mapping[str, Any]) -> RewardClient:
    return RewardClient(url, token, **client_options)


_CLIENT_OPTIONS = ("timeout", "batch_timeout", "retries", "backoff", "max_backoff", "max_batch")


def _split(options: Dict[str, Any]) -> Dict[str, Any]:
    return {name: options.pop(name) for name in _CLIENT_OPTIONS if name in options}


def evaluate(
    problem: str, candidate: str, *, url: Optional[str] = None, token: Optional[str] = None, **options: Any
) -> Dict[str, Any]:
    """:meth:`RewardClient.evaluate` with a client from ``url``/``token`` or the environment."""
    return _client(url, token, _split(options)).evaluate(problem, candidate, **options)


def reward(
    problem: str, candidate: str, *, url: Optional[str] = None, token: Optional[str] = None, **options: Any
) -> float:
    """The shaped reward of one candidate: ``reward("level1/02_gelu", source, backend="cuda")``."""
    return _client(url, token, _split(options)).reward(problem, candidate, **options)


def evaluate_batch(
    problems_or_problem: Union[str, Sequence[str]],
    candidates: Sequence[str],
    *,
    url: Optional[str] = None,
    token: Optional[str] = None,
    **options: Any,
) -> List[Dict[str, Any]]:
    """:meth:`RewardClient.evaluate_batch` with a client from ``url``/``token`` or the environment."""
    return _client(url, token, _split(options)).evaluate_batch(problems_or_problem, candidates, **options)


def reward_batch(
    problems_or_problem: Union[str, Sequence[str]],
    candidates: Sequence[str],
    *,
    url: Optional[str] = None,
    token: Optional[str] = None,
    **options: Any,
) -> List[float]:
    """The shaped rewards of many candidates, in order; one problem for all or one per candidate."""
    return _client(url, token, _split(options)).reward_batch(problems_or_problem, candidates, **options)


_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


def _completion_text(completion: Any) -> str:
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        content = completion.get("content", "")
        if isinstance(content, list):
            return "".join(part.get("text", "") if isinstance(part, Mapping) else str(part) for part in content)
        return str(content)
    if isinstance(completion, Sequence):
        messages = [message for message in completion if isinstance(message, Mapping)]
        replies = [message for message in messages if message.get("role") == "assistant"] or messages
        return _completion_text(replies[-1]) if replies else ""
    return str(completion)


def extract_code(completion: Any) -> str:
    """The candidate file in a model's completion.

    Takes a string or chat messages (``[{"role": "assistant", "content": ...}]``, as TRL passes
    conversational completions). Of the fenced code blocks, the last Python one that defines
    ``ModelNew`` wins, else the last Python block, else the last block; with no fence, the whole
    text. An unterminated last fence (a truncated completion) counts up to the end.
    """
    text = _completion_text(completion)
    blocks = [(language.lower(), body) for language, body in _FENCE.findall(text)]
    if not blocks:
        return text.strip() + "\n" if text.strip() else ""
    python = [body for language, body in blocks if language in ("python", "py", "python3", "")]
    with_model = [body for body in python if "class ModelNew" in body]
    chosen = (with_model or python or [body for _, body in blocks])[-1]
    return chosen.strip("\n") + "\n"


def make_reward_func(
    problem: Optional[str] = None,
    *,
    problem_key: str = "problem",
    url: Optional[str] = None,
    token: Optional[str] = None,
    client: Optional[RewardClient] = None,
    extract: Callable[[Any], str] = extract_code,
    **options: Any,
) -> Callable[..., List[float]]:
    """A reward function with TRL's ``reward_funcs`` signature, ``(prompts, completions, **kwargs) -> list[float]``.

    The problem of each completion is ``problem`` when given, else the dataset column
    ``problem_key`` (TRL passes dataset columns as keyword lists). Code is taken from each
    completion with ``extract``; the batch goes to the server in one request (per 256).

        trainer = GRPOTrainer(model, reward_funcs=[make_reward_func(backend="cuda", shaping="tiered")], ...)
    """
    client_options = _split(options)
    _api_options(options)  # unknown options fail here, not in the middle of training
    connection = client or RewardClient(url, token, **client_options)

    def kforge_reward(prompts: Any = None, completions: Any = None, **kwargs: Any) -> List[float]:
        if completions is None:
            raise KforgeConfigError("expected `completions` (TRL passes them by keyword)")
        candidates = [extract(completion) for completion in completions]
        if problem is not None:
            problems: Union[str, Sequence[str]] = problem
        elif problem_key in kwargs:
            problems = list(kwargs[problem_key])
        else:
            raise KforgeConfigError(
                f"no problem: pass make_reward_func(problem=...) or give the dataset a {problem_key!r} column"
            )
        return connection.reward_batch(problems, candidates, **options)

    kforge_reward.__name__ = "kforge_reward"
    return kforge_reward
