"""Any OpenAI-compatible server: OpenAI, vLLM, llama.cpp's server, Ollama, LM Studio.

- ``chat=True`` sends ``chat.completions`` (messages); ``chat=False`` plain ``completions`` (a prompt).
- Up to ``concurrency`` requests are in flight at once (a thread pool); ``generate`` yields results
  as they finish, and closing it cancels the requests that have not started. After a fatal failure
  (refused key, server gone) nothing more is sent; the answers already in flight are yielded before the
  fatal failures, so a run that stops keeps every answer it paid for.
- Retries are the openai client's own: 408/409/429/5xx, timeouts and dropped connections, with
  exponential backoff that honours ``Retry-After`` / ``retry-after-ms`` (up to two minutes), at most
  ``max_retries`` times. The client does not retry an answer whose body is not valid JSON or lacks
  the completion; this module retries those ``malformed_retries`` times, then fails the item.
- ``n_ctx`` (optional): the tokens the model reads at once, prompt and answer, as the server was started
  with (llama.cpp's ``--n_ctx``, vLLM's ``--max-model-len``) or as the API documents it; probes that
  fit a text to the model (the reading questions) use it.
- The API key is read from the named environment variable or keyring entry when the backend opens
  and never appears in a message, a log line or a stored row.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Callable, Iterator, Sequence

import openai

from workbench.models import secrets
from workbench.models.base import Backend, BackendError, Failure, Generation, Request, Result
from workbench.models.openai_failures import CallContext, failure_from
from workbench.models.openai_requests import (
    MalformedResponse,
    chat_arguments,
    completion_arguments,
    read_chat,
    read_completion,
)
from workbench.models.secrets import shown_address

DEFAULT_MAX_RETRIES = 4
DEFAULT_MALFORMED_RETRIES = 2
OPENAI_ADDRESS = "https://api.openai.com/v1"
_POLL_SECONDS = 0.2  # how often a wait for answers in flight looks for a cancel


class OpenAIBackend(Backend):
    kind = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        api_key_keyring: str | None = None,
        chat: bool = True,
        concurrency: int = 8,
        timeout: float = 60,
        max_retries: int = DEFAULT_MAX_RETRIES,
        malformed_retries: int = DEFAULT_MALFORMED_RETRIES,
        n_ctx: int | None = None,
    ):
        if not model:
            raise BackendError("Enter the model's name as the server knows it (e.g. gpt-4o-mini).")
        if int(concurrency) < 1:
            raise BackendError("Concurrency must be at least 1 (requests sent at the same time).")
        if float(timeout) <= 0:
            raise BackendError("The timeout must be a positive number of seconds.")
        if n_ctx is not None and (isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or n_ctx < 1):
            raise BackendError("n_ctx is the number of tokens the server's model reads at once (e.g. n_ctx=4096).")
        self.n_ctx = n_ctx
        self.model_name = model
        self.is_chat = bool(chat)
        self.base_url = base_url
        self.concurrency = int(concurrency)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self._failure_kinds: set[str] = set()  # what kinds of failure this connection met (``run_notes``)
        self.malformed_retries = int(malformed_retries)
        key = secrets.resolve_api_key(api_key_env, api_key_keyring)
        self._context = CallContext(
            model=model,
            where=shown_address(base_url or OPENAI_ADDRESS),
            key_source=secrets.describe_key_source(api_key_env, api_key_keyring),
            has_key=key is not None,
            timeout=self.timeout,
            max_retries=self.max_retries,
            secret=key,
        )
        self._address = base_url or OPENAI_ADDRESS
        self._client = openai.OpenAI(
            api_key=key or secrets.NO_KEY,
            base_url=base_url or OPENAI_ADDRESS,
            timeout=self.timeout,
            max_retries=self.max_retries,
        )
        self._pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="openai-request")
        self._token_limit_name = "max_tokens"
        self._lock = threading.Lock()
        self._in_flight = 0  # requests being sent right now
        self._closed = False

    @property
    def context_tokens(self) -> int | None:
        """What the server's model reads at once, as its ``n_ctx`` parameter says; None when not given."""
        return self.n_ctx

    @property
    def cache_scope(self) -> str:
        """Answers from different servers are different answers, even under one model name."""
        return self._address  # only its hash is stored (``cache.cache_key``)

    def __repr__(self) -> str:  # never the key
        return f"OpenAIBackend(model={self.model_name!r}, base_url={self._context.where!r}, chat={self.is_chat})"

    # ------------------------------------------------------------------ one request
    def _send(self, request: Request) -> Generation:
        if self.is_chat:
            response = self._client.chat.completions.create(**chat_arguments(self.model_name, request,
                                                                               self._token_limit_name))
            return read_chat(response)
        if request.prompt is None:
            raise MalformedRequest()
        response = self._client.completions.create(**completion_arguments(self.model_name, request,
                                                                         self._token_limit_name))
        return read_completion(response)

    def _call(self, request: Request, stop: threading.Event, fatal: list[Failure]) -> Result:
        """One request to completion: a Generation, or a Failure (never an exception)."""
        if stop.is_set():
            return fatal[0] if fatal else Failure("Not sent: the run was stopped.", kind="other")
        with self._lock:
            if self._closed:
                return Failure("Not sent: the model connection was closed.", kind="other")
            self._in_flight += 1
        try:
            result = self._call_once(request, stop, fatal)
            if isinstance(result, Failure):
                with self._lock:
                    self._failure_kinds.add(result.kind)
            return result
        finally:
            with self._lock:
                self._in_flight -= 1
                last = self._closed and self._in_flight == 0
            if last:  # closed while this request was on its way: now nothing uses the connection
                self._client.close()

    def _call_once(self, request: Request, stop: threading.Event, fatal: list[Failure]) -> Result:
        started = time.monotonic()
        malformed_left = self.malformed_retries
        switched_token_limit = False
        while True:
            try:
                generation = self._send(request)
            except MalformedRequest:
                return Failure("This model is set to plain completion, but the probe sent a chat. Turn on chat "
                               "mode for the model.", kind="other")
            except (MalformedResponse, json.JSONDecodeError, UnicodeDecodeError) as exc:
                if malformed_left > 0:
                    malformed_left -= 1
                    continue
                detail = exc if isinstance(exc, MalformedResponse) else "the body is not valid JSON"
                return Failure(f"The server's answer could not be read ({detail}; tried "
                               f"{self.malformed_retries + 1} times).", kind="malformed")
            except openai.BadRequestError as exc:
                if not switched_token_limit and "max_completion_tokens" in str(exc):
                    # newer OpenAI models want max_completion_tokens instead of max_tokens
                    self._token_limit_name = "max_completion_tokens"
                    switched_token_limit = True
                    continue
                return self._fail(exc, stop, fatal)
            except openai.OpenAIError as exc:
                return self._fail(exc, stop, fatal)
            except Exception as exc:  # anything the client lets through (a bug, or an odd server)
                return self._fail(exc, stop, fatal)
            generation.latency_ms = (time.monotonic() - started) * 1000
            return generation

    def _fail(self, exc: Exception, stop: threading.Event, fatal: list[Failure]) -> Failure:
        failure = failure_from(exc, self._context)
        if failure.fatal:
            fatal.append(failure)
            stop.set()  # requests not yet sent fail the same way at once, without calling the server
        return failure

    # ------------------------------------------------------------------ the interface
    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Result]]:
        return self.generate_until(requests)

    def generate_until(
        self, requests: Sequence[Request], stop_when: Callable[[], bool] | None = None
    ) -> Iterator[tuple[int, Result]]:
        if self._closed:
            raise BackendError("This model connection was closed; open the model again.")
        return self._results(requests, stop_when)

    def _results(self, requests: Sequence[Request], stop_when: Callable[[], bool] | None
                 ) -> Iterator[tuple[int, Result]]:
        stop = threading.Event()
        fatal: list[Failure] = []
        futures: dict[Future, int] = {
            self._pool.submit(self._call, request, stop, fatal): index for index, request in enumerate(requests)
        }
        pending = set(futures)
        # A fatal failure (refused key, server gone) stops every request not yet sent at once; the answers
        # already on their way are paid for, so they are handed over first and the fatal failures last.
        fatal_results: list[tuple[int, Result]] = []
        try:
            while pending:
                # wake up now and then to see whether the run was cancelled while answers are slow
                done, pending = wait(pending, timeout=_POLL_SECONDS, return_when=FIRST_COMPLETED)
                for future in done:
                    result = future.result()
                    if isinstance(result, Failure) and result.fatal:
                        fatal_results.append((futures[future], result))
                    else:
                        yield futures[future], result
                if stop_when is not None and pending and stop_when():
                    return
            yield from sorted(fatal_results, key=lambda pair: pair[0])
        finally:
            stop.set()
            for future in futures:
                future.cancel()  # only those not started; the few in flight finish and are dropped

    def run_notes(self, *, failures: bool) -> list[str]:
        """How failing requests were tried, said only of the failures this connection met: a request the server
        refused outright (a wrong request, a prompt too long, a refused key) was never tried again, and saying
        that every failure was tried several times would contradict the failures listed beside it."""
        if not failures:
            return []
        with self._lock:
            kinds = set(self._failure_kinds)
        if kinds & RETRIED_KINDS:
            return [retry_policy(self.max_retries, self.malformed_retries)]
        if kinds:
            return ["The server refused the failed requests outright, so they were not tried again."]
        return []

    def list_models(self) -> list[str]:
        """The model names the server offers (to check an address, or to fill a choice list)."""
        try:
            return sorted(m.id for m in self._client.models.list())
        except openai.OpenAIError as exc:
            raise BackendError(failure_from(exc, self._context).error) from None

    def close(self) -> None:
        """Cancel the requests not started. Those already on their way finish (their threads end with
        them) before the HTTP client is closed: closing it under a request would leave that thread
        blocked on a socket nobody reads until the timeout, and keep the program from exiting."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            idle = self._in_flight == 0
        self._pool.shutdown(wait=False, cancel_futures=True)
        if idle:
            self._client.close()


#: failures that the client (or ``malformed_retries``) tries again before giving up
RETRIED_KINDS = {"timeout", "connection", "rate_limit", "server", "malformed"}


def retry_policy(max_retries: int, malformed_retries: int) -> str:
    """How often a failing request is tried, in words for a run's notes (the openai client's own backoff)."""
    first, longest = _client_backoff()
    tries = max_retries + 1
    if max_retries <= 0:
        waits = "without retrying"
    else:
        waits = (f"waiting about {first:g} s before the second try and twice as long before each further one "
                 f"(at most {longest:g} s, or as long as the server asked, up to two minutes)")
    return (f"A request the server refused for the moment (HTTP 408, 409, 429 or 5xx), that timed out or lost its "
            f"connection was tried up to {tries} time{'s' if tries != 1 else ''}, {waits}; an answer that could not "
            f"be read was asked for up to {malformed_retries + 1} times. Only then did the item count as failed.")


def _client_backoff() -> tuple[float, float]:
    """The openai client's first wait and longest wait between retries (seconds)."""
    try:
        from openai._constants import INITIAL_RETRY_DELAY, MAX_RETRY_DELAY  # not public; the values it uses
    except ImportError:  # pragma: no cover - a client that moved them
        return 0.5, 8.0
    return float(INITIAL_RETRY_DELAY), float(MAX_RETRY_DELAY)


class MalformedRequest(Exception):
    """A chat request for a model set to plain completion."""
