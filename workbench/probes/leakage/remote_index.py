"""Queries on a remote infini-gram index through its web API (the Pile, Dolma, C4, RedPajama ...).

The API (https://infini-gram.io/api_doc) takes a JSON POST ``{"index": NAME, "query_type": TYPE,
"query": TEXT}`` or ``"query_ids": [...]`` and answers with a JSON object holding ``error`` on failure,
else the query's fields plus ``token_ids`` and ``tokens`` (the index's own tokenization). Used here:

- ``count`` with ``query`` = a passage: its tokens in the index's tokenizer (the server tokenizes, so
  no tokenizer is downloaded here); with an empty query: the corpus size in tokens;
- ``count`` with ``query_ids``: how often a token sequence occurs;
- ``infgram_prob`` with ``query_ids``: ``suffix_len``, the length of the longest suffix of all tokens
  but the last that occurs in the corpus. Asking it for every prefix of a passage gives the longest
  match ending at every token (the same numbers a local index gives).

Requests go out a few at a time; a busy or failing server is retried with growing pauses, then the
query fails with a message that says what to do.

A server is not trusted to behave: each query has an overall deadline (``DEADLINE_SECONDS``, all its
tries together: every read from the network is given only the time left, so an answer trickling in a
byte at a time is cut off too), an answer may be at most ``MAX_ANSWER_BYTES`` long (read in pieces,
never whole), and every field used is checked (a count is a whole number, a token list a list of whole
numbers ...). An answer of the wrong shape stops the work with a plain message, as an unreachable server
does (``ServerUnavailable``); messages show the address without a user name, password or key.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

import numpy as np

from workbench.errors import UserError
from workbench.models.secrets import shown_address
from workbench.probes.leakage.tokenizing import Encoded

CONCURRENCY = 8
ATTEMPTS = 4
TIMEOUT_SECONDS = 30.0  # one read from the network
DEADLINE_SECONDS = 120.0  # one query, all its tries together
MAX_ANSWER_BYTES = 16 << 20  # a query's answer (the largest hold a passage's token list: kilobytes)
RETRY_PAUSE = 0.5  # seconds before the second attempt; doubled each time
#: vocabulary sizes of the tokenizers the public indexes use (for the unigram estimate); others: 65,535
KNOWN_VOCABULARIES = {"llama": 32000, "gpt2": 50257, "olmo": 50280}
#: the fields each kind of query must answer with (whole numbers, 0 or more)
REQUIRED = {"count": ("count",), "infgram_prob": ("suffix_len",)}
_MARKS = {"\u2581": " ", "\u0120": " ", "\u010a": "\n"}
_SHOWN = 200  # characters of a server's text repeated in a message


class ServerUnavailable(UserError):
    """The server could not be reached, kept failing or answered nonsense: stop the run (what is done is kept)."""


class _TooSlow(Exception):
    pass


class _TooLarge(Exception):
    pass


# ---- the deadline of the query running in this thread, applied to every read and write on the network ----
_deadline = threading.local()


def _bounded(timeout: float | None) -> float | None:
    ends = getattr(_deadline, "at", None)
    if ends is None:
        return timeout
    left = ends - time.monotonic()
    if left <= 0:
        import httpcore

        raise httpcore.ReadTimeout("the query's deadline has passed")
    return left if timeout is None else min(timeout, left)


def _deadline_backend(backend):
    """``backend`` (httpcore's network backend) with every connect, read and write given at most the time left
    before the deadline of the query running in the calling thread."""
    import httpcore

    class Stream(httpcore.NetworkStream):
        def __init__(self, stream):
            self._stream = stream

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return self._stream.read(max_bytes, _bounded(timeout))

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._stream.write(buffer, _bounded(timeout))

        def close(self) -> None:
            self._stream.close()

        def start_tls(self, ssl_context, server_hostname=None, timeout=None):
            return Stream(self._stream.start_tls(ssl_context, server_hostname, _bounded(timeout)))

        def get_extra_info(self, info: str):
            return self._stream.get_extra_info(info)

    class Backend(httpcore.NetworkBackend):
        def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            return Stream(backend.connect_tcp(host, port, _bounded(timeout), local_address, socket_options))

        def connect_unix_socket(self, path, timeout=None, socket_options=None):
            return Stream(backend.connect_unix_socket(path, _bounded(timeout), socket_options))

        def sleep(self, seconds: float) -> None:
            backend.sleep(seconds)

    return Backend()


def _client(timeout: float):
    """An httpx client whose connections keep to the calling thread's query deadline. (httpx has no overall
    deadline of its own; its connection pools take a network backend, which is where the deadline is put.
    Should a later httpx hide them, the answer's body is still read against the deadline, piece by piece.)"""
    import httpx

    client = httpx.Client(timeout=timeout, headers={"Accept-Encoding": "identity"})
    transports = [getattr(client, "_transport", None), *getattr(client, "_mounts", {}).values()]
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        if pool is not None and hasattr(pool, "_network_backend"):
            pool._network_backend = _deadline_backend(pool._network_backend)
    return client


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)[:_SHOWN] if value is not None else "missing"
    text = "".join(c if c.isprintable() else " " for c in str(text))
    return text[:_SHOWN] + ("…" if len(text) > _SHOWN else "")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class RemoteIndex:
    kind = "remote"

    def __init__(self, url: str, index: str, *, concurrency: int = CONCURRENCY, timeout: float = TIMEOUT_SECONDS,
                 retry_pause: float = RETRY_PAUSE, deadline: float = DEADLINE_SECONDS,
                 max_bytes: int = MAX_ANSWER_BYTES):
        self.url = url
        self.where = shown_address(url)  # for messages
        self.index = index
        self._deadline = float(deadline)
        self._max_bytes = int(max_bytes)
        self._client = _client(min(timeout, deadline))
        self._pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="infini-gram")
        self._total: int | None = None
        self._pause = retry_pause

    # ---- requests ---------------------------------------------------------------------------------

    def query(self, payload: dict[str, Any]) -> dict[str, Any]:
        """One API call, retried when the server is busy or fails; ``UserError`` when it cannot answer. The
        answer is a JSON object whose fields for the query's kind (``REQUIRED``) are whole numbers, and whose
        ``token_ids`` and ``tokens``, when present, are lists of whole numbers and of texts."""
        import httpx

        body = {"index": self.index, **payload}
        ends = time.monotonic() + self._deadline
        problem = ""
        for attempt in range(ATTEMPTS):
            if attempt:
                pause = min(8.0, self._pause * 2 ** attempt)
                if time.monotonic() + pause >= ends:
                    break
                time.sleep(pause)
            try:
                status, raw = self._post(body, ends)
            except _TooSlow:
                raise self._too_slow() from None
            except _TooLarge:
                raise ServerUnavailable(
                    f"The infini-gram server at {self.where} sent an answer larger than "
                    f"{self._max_bytes / 2**20:g} MB, far more than a query needs, and it was not read. Check that the "
                    "address is an infini-gram API.") from None
            except httpx.HTTPError as exc:
                if time.monotonic() >= ends:
                    raise self._too_slow() from None
                problem = f"the server could not be reached ({type(exc).__name__})"
                continue
            if status == 429 or status >= 500:
                problem = f"the server answered {status}"
                continue
            try:
                data = json.loads(raw)
            except (ValueError, RecursionError):
                problem = "the server's answer was not JSON"
                continue
            if not isinstance(data, dict):
                raise self._unreadable(f"the answer is a JSON {type(data).__name__}, not an object")
            if status >= 400 or "error" in data:
                raise UserError(f"The infini-gram server at {self.where} refused the query: "
                                f"{_shown(data.get('error')) if data.get('error') else status}. Check the index name "
                                f"('{_shown(self.index)}').")
            self._check(data, str(payload.get("query_type")))
            return data
        raise ServerUnavailable(f"The infini-gram server at {self.where} did not answer ({problem}). Try again later, "
                                "or check the address.")

    def _post(self, body: dict[str, Any], ends: float) -> tuple[int, bytes]:
        """(status, body) of one POST, read piece by piece against the deadline and the size cap."""
        _deadline.at = ends
        try:
            with self._client.stream("POST", self.url, json=body) as response:
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > self._max_bytes:
                    raise _TooLarge()
                chunks, size = [], 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > self._max_bytes:
                        raise _TooLarge()
                    if time.monotonic() >= ends:
                        raise _TooSlow()
                    chunks.append(chunk)
                return response.status_code, b"".join(chunks)
        finally:
            _deadline.at = None

    def _too_slow(self) -> ServerUnavailable:
        return ServerUnavailable(f"The infini-gram server at {self.where} did not finish answering within "
                                 f"{self._deadline:g} seconds. Try again later, or check the address.")

    def _unreadable(self, detail: str) -> ServerUnavailable:
        return ServerUnavailable(f"The infini-gram server at {self.where} answered in a form Palimpsest cannot read "
                                 f"({detail}). Check that the address is an infini-gram API and the index name is "
                                 "right; nothing from this answer was used.")

    def _check(self, data: dict[str, Any], kind: str) -> None:
        for name in REQUIRED.get(kind, ()):
            if not _whole(data.get(name)):
                raise self._unreadable(f"'{name}' should be a whole number but is {_shown(data.get(name))}")
        ids = data.get("token_ids")
        if ids is not None and not (isinstance(ids, list) and all(_whole(i) for i in ids)):
            raise self._unreadable(f"'token_ids' should be a list of whole numbers but is {_shown(ids)}")
        tokens = data.get("tokens")
        if tokens is not None and not (isinstance(tokens, list) and all(isinstance(t, str) for t in tokens)):
            raise self._unreadable(f"'tokens' should be a list of texts but is {_shown(tokens)}")

    def _many(self, payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return list(self._pool.map(self.query, payloads))

    # ---- what every index answers -----------------------------------------------------------------

    @property
    def total_tokens(self) -> int:
        if self._total is None:
            self._total = self.query({"query_type": "count", "query": ""})["count"]
        return self._total

    @property
    def words(self) -> int:
        """The corpus size in words is not published; its size in tokens stands in for it (said in the methods)."""
        return self.total_tokens

    @property
    def vocabulary_size(self) -> int:
        name = self.index.lower()
        return next((size for key, size in KNOWN_VOCABULARIES.items() if key in name), 65535)

    def encode(self, text: str) -> Encoded:
        data = self.query({"query_type": "count", "query": text})
        if not isinstance(data.get("token_ids"), list) or (text.strip() and not data["token_ids"]):
            raise self._unreadable(f"it gave no tokens for a text of {len(text):,} characters")
        ids = np.asarray(data["token_ids"], dtype=np.int64)
        pieces = [_readable(t) for t in data.get("tokens") or []]
        if len(pieces) != ids.size:
            pieces = [f"<{i}>" for i in ids]
        starts, ends, position = [], [], 0
        for piece in pieces:
            starts.append(position)
            position += len(piece)
            ends.append(position)
        joined = "".join(pieces)
        return Encoded(joined, ids, np.asarray(starts, np.int64), np.asarray(ends, np.int64))

    def suffix_lengths(self, ids: Sequence[int]) -> np.ndarray:
        ids = [int(i) for i in ids]
        payloads = [{"query_type": "infgram_prob", "query_ids": ids[: j + 1] + [ids[j + 1] if j + 1 < len(ids) else 0]}
                    for j in range(len(ids))]
        lengths = np.asarray([r["suffix_len"] for r in self._many(payloads)], dtype=np.int64)
        if lengths.size and np.any(lengths > np.arange(1, lengths.size + 1)):
            raise self._unreadable("a match it reports is longer than the text asked about")
        return lengths

    def count(self, ids: Sequence[int]) -> int:
        if len(ids) == 0:
            return self.total_tokens
        return self.query({"query_type": "count", "query_ids": [int(i) for i in ids]})["count"]

    def counts(self, sequences: Sequence[Sequence[int]]) -> list[int]:
        empty = [i for i, s in enumerate(sequences) if len(s) == 0]
        asked = [{"query_type": "count", "query_ids": [int(i) for i in s]} for s in sequences if len(s)]
        answers = iter(r["count"] for r in self._many(asked))
        return [self.total_tokens if i in empty else next(answers) for i in range(len(sequences))]

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._client.close()


def _readable(token: str) -> str:
    """An index token as text: SentencePiece and byte-level markers become the spaces they stand for."""
    if token.startswith("<0x") and token.endswith(">") and len(token) == 6:
        try:
            return bytes([int(token[3:5], 16)]).decode("latin-1")
        except ValueError:
            return token
    return "".join(_MARKS.get(c, c) for c in token)
