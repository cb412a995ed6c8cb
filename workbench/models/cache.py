"""The response cache: identical requests are answered from the project instead of the model.

An answer is stored under the sha256 of everything that determines it: the backend kind, the model,
the backend's scope (e.g. the server address), the generation parameters, the prompt or messages and
the sample index (``Request.cache_payload``). Only requests whose answer is meant to be repeatable are
cached: greedy ones (temperature 0) and seeded ones (the same seed should give the same draw). An
unseeded sample at temperature above 0 is always sent, so asking for more samples gives new ones.
Every successful ``Generation`` of a cacheable request is stored; failures never are, so they are
tried again. ``CachedBackend`` wraps any backend; the rest of the program cannot tell
the difference except that cached answers carry ``cached=True`` (the job runner counts them apart and
does not add their tokens to the run's usage).

The cache lives in the project file (``response_cache``) and uses the calling thread's connection.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import pandas as pd

from workbench.models.base import Backend, Generation, Message, Request, Result
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

_LOOKUP_CHUNK = 500


def backend_scope(backend: Backend) -> str:
    """What else tells two models of one name apart: a server's address, a model file's location."""
    scope = getattr(backend, "cache_scope", None)
    if scope is None:
        scope = str(getattr(backend, "path", "") or "")
    return str(scope)


def cache_key(backend: Backend, request: Request) -> str:
    identity = {
        "backend": backend.kind,
        "model": backend.model_name,
        "scope": backend_scope(backend),
        "request": request.cache_payload(),
    }
    blob = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def cacheable(request: Request) -> bool:
    return request.params.temperature == 0 or request.seed is not None


def _encode(generation: Generation) -> str:
    return json.dumps({
        "text": generation.text,
        "finish_reason": generation.finish_reason,
        "prompt_tokens": generation.prompt_tokens,
        "completion_tokens": generation.completion_tokens,
        "token_logprobs": generation.token_logprobs,
        "latency_ms": generation.latency_ms,
    }, ensure_ascii=False)


def _decode(blob: str) -> Generation:
    data = json.loads(blob)
    logprobs = data.get("token_logprobs")
    return Generation(
        text=data["text"],
        finish_reason=data.get("finish_reason"),
        prompt_tokens=data.get("prompt_tokens"),
        completion_tokens=data.get("completion_tokens"),
        token_logprobs=[(t, lp) for t, lp in logprobs] if logprobs is not None else None,
        latency_ms=data.get("latency_ms"),
        cached=True,
    )


def lookup(project: "Project", keys: Sequence[str]) -> dict[str, Generation]:
    found: dict[str, Generation] = {}
    unique = list(dict.fromkeys(keys))
    for start in range(0, len(unique), _LOOKUP_CHUNK):
        chunk = unique[start:start + _LOOKUP_CHUNK]
        marks = ",".join("?" * len(chunk))
        for key, blob in project.db.execute(f"SELECT key, response FROM response_cache WHERE key IN ({marks})", chunk):
            found[key] = _decode(blob)
    return found


def store(project: "Project", key: str, backend: Backend, generation: Generation) -> None:
    with project.db.transaction():
        project.db.execute(
            "INSERT OR REPLACE INTO response_cache (key, backend, model, response, created_at) VALUES (?, ?, ?, ?, ?)",
            [key, backend.kind, backend.model_name, _encode(generation), now()],
        )


def _as_cached(generation: Generation) -> Generation:
    copy = Generation(**{**generation.__dict__})
    copy.cached = True
    return copy


class CachedBackend(Backend):
    """``inner`` behind the project's response cache. Counts ``hits`` and ``calls`` (requests sent)."""

    def __init__(self, inner: Backend, project: "Project"):
        self.inner = inner
        self.project = project
        self.kind = inner.kind
        self.model_name = inner.model_name
        self.is_chat = inner.is_chat
        self.hits = 0
        self.calls = 0

    @property
    def cache_scope(self) -> str:
        return backend_scope(self.inner)

    def run_notes(self, *, failures: bool) -> list[str]:
        return self.inner.run_notes(failures=failures)

    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Result]]:
        return self.generate_until(requests)

    def generate_until(
        self, requests: Sequence[Request], stop: "Callable[[], bool] | None" = None
    ) -> Iterator[tuple[int, Result]]:
        # an uncacheable request gets a key of its own, so it is neither looked up nor stored
        keys = [cache_key(self.inner, r) if cacheable(r) else f"uncached:{i}" for i, r in enumerate(requests)]
        found = lookup(self.project, [k for k in keys if not k.startswith("uncached:")])
        waiting: dict[str, list[int]] = {}  # key -> indexes of the requests it answers
        for index, key in enumerate(keys):
            if key in found:
                self.hits += 1
                yield index, found[key]
            else:
                waiting.setdefault(key, []).append(index)
        if not waiting:
            return
        # identical requests in one batch are sent once and answer each other
        first = [indexes[0] for indexes in waiting.values()]
        self.calls += len(first)
        results = self.inner.generate_until([requests[i] for i in first], stop)
        try:
            for position, result in results:
                key = keys[first[position]]
                if isinstance(result, Generation) and not key.startswith("uncached:"):
                    store(self.project, key, self.inner, result)
                for n, index in enumerate(waiting[key]):
                    yield index, result if n == 0 or not isinstance(result, Generation) else _as_cached(result)
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()  # the inner backend stops what it has not started

    # everything else is the inner backend's
    def continuation_logprob(self, prompt: str | Sequence[Message], continuation: str) -> float:
        return self.inner.continuation_logprob(prompt, continuation)

    def score_texts(self, texts: Sequence[str], *, start_token: bool = False, word_boundaries: bool = False) -> list:
        return self.inner.score_texts(texts, start_token=start_token, word_boundaries=word_boundaries)

    @property
    def mask_token(self) -> str | None:
        return self.inner.mask_token

    def fill_mask(self, texts: Sequence[str], top_k: int = 5) -> list[list[tuple[str, float]]]:
        return self.inner.fill_mask(texts, top_k)

    @property
    def capabilities(self) -> frozenset[str]:
        return self.inner.capabilities

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:  # backend-specific extras (tokenizer, server address ...)
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


# ---------------------------------------------------------------------------------------------- size, clear
def cache_stats(project: "Project") -> pd.DataFrame:
    """Cached answers per backend and model, with the bytes they take (roughly, as stored)."""
    return pd.read_sql_query(
        "SELECT backend, model, COUNT(*) AS answers,"
        " SUM(LENGTH(key) + LENGTH(backend) + LENGTH(model) + LENGTH(CAST(response AS BLOB)) + LENGTH(created_at))"
        " AS bytes FROM response_cache GROUP BY backend, model ORDER BY backend, model",
        project.db.conn,
    )


def cache_size(project: "Project") -> tuple[int, int]:
    """(answers, bytes) in the whole cache."""
    stats = cache_stats(project)
    return int(stats["answers"].sum()), int(stats["bytes"].sum())


def clear_cache(project: "Project", model: str | None = None) -> int:
    """Forget cached answers (all, or one model's). Returns how many were removed."""
    with project.db.transaction():
        if model is None:
            cur = project.db.execute("DELETE FROM response_cache")
        else:
            cur = project.db.execute("DELETE FROM response_cache WHERE model = ?", [model])
    return cur.rowcount


def describe_size(answers: int, size: int) -> str:
    units = ["bytes", "KB", "MB", "GB"]
    value = float(size)
    unit = units[0]
    for unit in units:
        if value < 1024 or unit == units[-1]:
            break
        value /= 1024
    amount = f"{int(value)} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
    return f"{answers:,} cached answer{'s' if answers != 1 else ''}, {amount}"
