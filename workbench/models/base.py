"""The one interface every probe uses to talk to a model.

A backend takes a batch of ``Request`` objects (one sample each) and yields, in whatever order they
finish, ``(index, Generation)`` or ``(index, Failure)``. Batching, concurrency, retries and caching
happen behind this interface; probes never see which library answers.

- ``Request.prompt`` is plain completion text; ``Request.messages`` a chat. ``prompt_request``
  picks the right one for the model (chat template for instruct models, bare prompt for base ones).
- ``sample`` is the sample index: requests that differ only in ``sample`` are different draws.
- ``continuation_logprob`` scores a given continuation (local models).
- ``fill_mask`` gives top-k fills for the mask token (encoder models such as BERT).
- ``score_texts`` reads whole texts and says how likely each token was (local models; membership
  scores and surprisal).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterator, Sequence

from workbench.errors import UserError


class BackendError(UserError):
    """The backend cannot be used at all (wrong path, server down, bad key, not a GGUF file...)."""


class NotSupported(UserError):
    """This backend cannot do what was asked (e.g. masked-LM fill on a chat API)."""


@dataclass(frozen=True)
class Message:
    role: str  # system, user, assistant
    content: str


@dataclass(frozen=True)
class GenerationParams:
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 32
    stop: tuple[str, ...] = ()
    seed: int | None = None
    # token id -> bias, as sorted pairs so the parameters stay hashable
    logit_bias: tuple[tuple[int, float], ...] = ()
    # how many alternatives per generated token to return as log-probabilities (None: none)
    logprobs: int | None = None
    # generate at least this many tokens (local backends; used to keep random tiny models talking)
    min_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "stop": list(self.stop),
            "seed": self.seed,
            "logit_bias": [list(p) for p in self.logit_bias],
            "logprobs": self.logprobs,
            "min_tokens": self.min_tokens,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "GenerationParams":
        data = dict(data)
        data["stop"] = tuple(data.get("stop") or ())
        data["logit_bias"] = tuple(tuple(p) for p in (data.get("logit_bias") or ()))
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class Request:
    prompt: str | None = None
    messages: tuple[Message, ...] | None = None
    params: GenerationParams = field(default_factory=GenerationParams)
    sample: int = 0

    def __post_init__(self) -> None:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("A request has either a prompt or messages, not both or neither.")

    @property
    def is_chat(self) -> bool:
        return self.messages is not None

    @property
    def seed(self) -> int | None:
        """The seed this draw uses: the run's seed plus the sample index."""
        return None if self.params.seed is None else self.params.seed + self.sample

    def text_for_record(self) -> str:
        """The prompt as stored beside the response (chats flattened with role labels)."""
        if self.prompt is not None:
            return self.prompt
        return "\n\n".join(f"[{m.role}]\n{m.content}" for m in self.messages or ())

    def cache_payload(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt,
            "messages": [[m.role, m.content] for m in self.messages] if self.messages else None,
            "params": self.params.as_dict(),
            "sample": self.sample,
        }


@dataclass
class Generation:
    text: str
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # (token, logprob) for each generated token, where the backend offers them
    token_logprobs: list[tuple[str, float]] | None = None
    latency_ms: float | None = None
    cached: bool = False


@dataclass
class Failure:
    """One request failed. ``fatal`` means the backend as a whole is unusable (stop the run)."""

    error: str
    kind: str = "other"  # rate_limit, server, auth, timeout, malformed, oom, too_long, connection, other
    fatal: bool = False


Result = Generation | Failure


@dataclass
class TokenScores:
    """A text as a model reads it: its tokens and, at each, what the model expected.

    ``logprobs[i]`` is ln p(token i | everything before it), None for a first token with nothing before
    it. ``expected[i]`` and ``variance[i]`` are the mean and variance of ln p(v) over the model's whole
    next-token distribution at that place (Min-K%++ standardises with them). ``word_start`` (when asked
    for) has one entry more than the tokens: entry i is the probability that the token at place i begins
    a new word (a token that starts with white space, or the end of the text), entry n the same after
    the last token; None where nothing precedes."""

    tokens: list[str]
    offsets: list[tuple[int, int]]  # the characters of the text each token covers
    logprobs: list[float | None]
    expected: list[float | None]
    variance: list[float | None]
    word_start: list[float | None] | None = None


def scoring_windows(length: int, width: int) -> list[tuple[int, int, int]]:
    """``(start, end, first_scored)`` windows for reading ``length`` tokens ``width`` at a time.

    A text longer than the model's context is read in windows that overlap by half: each later window
    starts with the second half of the one before as context and scores only the tokens after it."""
    if length <= width:
        return [(0, length, 0)]
    half = max(1, width // 2)
    windows = [(0, width, 0)]
    while windows[-1][1] < length:
        start = windows[-1][1] - half
        windows.append((start, min(start + width, length), windows[-1][1]))
    return windows


def check_logit_bias(params: GenerationParams, vocab: int) -> Failure | None:
    """For local models: a failure when the logit bias names a token id outside the model's vocabulary
    (ids 0 to ``vocab - 1``), else None."""
    bad = [token for token, _ in params.logit_bias if not 0 <= token < vocab]
    if not bad:
        return None
    return Failure(
        f"The logit bias names token id {bad[0]}, but this model's vocabulary has ids 0 to {vocab - 1}. "
        "Token ids differ between models: look them up with this model's tokenizer.",
        kind="other",
    )


class Backend(ABC):
    """A loaded model. Create through ``workbench.models.catalog.open_backend``."""

    kind: ClassVar[str] = ""
    #: identifies the model for the cache and the price table (hub id, file name, API model name)
    model_name: str = ""
    #: whether prompts go through a chat template / the chat endpoint
    is_chat: bool = False

    @abstractmethod
    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Result]]:
        """Yield ``(index into requests, result)`` for every request, as each finishes."""

    def generate_until(
        self, requests: Sequence[Request], stop: Callable[[], bool] | None = None
    ) -> Iterator[tuple[int, Result]]:
        """``generate``, ending early (without results for the rest) once ``stop()`` is true.

        A backend that waits on requests in flight (a server) checks ``stop`` while it waits, so that a
        Cancel does not hang until a slow answer arrives; the default simply generates, and the caller
        checks between results.
        """
        return self.generate(requests)

    def continuation_logprob(self, prompt: str | Sequence[Message], continuation: str) -> float:
        """Sum of log-probabilities of ``continuation``'s tokens after ``prompt`` (natural log)."""
        raise NotSupported(f"{self.kind} models cannot score a given continuation.")

    def score_texts(self, texts: Sequence[str], *, start_token: bool = False,
                    word_boundaries: bool = False) -> list["TokenScores | Failure"]:
        """How likely the model finds each token of each text (``TokenScores``), in one batched pass.

        The tokenizer's own special tokens are added as when the text is encoded normally (a Llama
        tokenizer puts its start token first, a GPT-2 one adds nothing, so its first token has no
        score); ``start_token`` puts the model's start-of-text token (or end-of-text token, when it has
        no start token) first when the tokenizer added none, so that every token is scored.
        ``word_boundaries`` also gives ``word_start``."""
        raise NotSupported(f"{self.kind} models cannot score a text token by token; use a local model.")

    @property
    def mask_token(self) -> str | None:
        return None

    @property
    def context_tokens(self) -> int | None:
        """The most tokens the model reads at once, prompt and answer together; None where that cannot be
        known here (an API model)."""
        return None

    def request_tokens(self, request: Request) -> int | None:
        """How many tokens the model reads for ``request``'s prompt (a chat template's own few tokens may be
        left out); None where that cannot be known here (an API model)."""
        return None

    def fill_mask(self, texts: Sequence[str], top_k: int = 5) -> list[list[tuple[str, float]]]:
        """For each text containing ``mask_token`` once: the top-k fills with their probabilities."""
        raise NotSupported(f"{self.kind} models have no mask token to fill; use an encoder model such as BERT.")

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset({"generate"})

    def run_notes(self, *, failures: bool) -> list[str]:
        """Sentences a run's notes should state about how this model was used: warnings about how it was
        loaded, and (``failures``: some items failed) how often a failing request was tried."""
        return []

    def close(self) -> None:  # noqa: B027 -- a backend with nothing to free need not override it
        """Free memory, stop threads. Safe to call twice."""

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def prompt_request(
    backend: Backend,
    text: str,
    params: GenerationParams,
    *,
    sample: int = 0,
    system: str | None = None,
) -> Request:
    """The request a probe sends for ``text``: a chat turn for chat models, the bare text otherwise."""
    if backend.is_chat:
        messages = ((Message("system", system),) if system else ()) + (Message("user", text),)
        return Request(messages=messages, params=params, sample=sample)
    prompt = f"{system}\n\n{text}" if system else text
    return Request(prompt=prompt, params=params, sample=sample)
