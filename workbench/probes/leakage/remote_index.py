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
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

import numpy as np

from workbench.errors import UserError
from workbench.probes.leakage.tokenizing import Encoded

CONCURRENCY = 8
ATTEMPTS = 4
TIMEOUT_SECONDS = 30.0
RETRY_PAUSE = 0.5  # seconds before the second attempt; doubled each time
#: vocabulary sizes of the tokenizers the public indexes use (for the unigram estimate); others: 65,535
KNOWN_VOCABULARIES = {"llama": 32000, "gpt2": 50257, "olmo": 50280}
_MARKS = {"\u2581": " ", "\u0120": " ", "\u010a": "\n"}


class ServerUnavailable(UserError):
    """The server could not be reached or kept failing: stop the run (what is done is kept)."""


class RemoteIndex:
    kind = "remote"

    def __init__(self, url: str, index: str, *, concurrency: int = CONCURRENCY, timeout: float = TIMEOUT_SECONDS,
                 retry_pause: float = RETRY_PAUSE):
        import httpx

        self.url = url
        self.index = index
        self._client = httpx.Client(timeout=timeout)
        self._pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="infini-gram")
        self._total: int | None = None
        self._pause = retry_pause

    # ---- requests ---------------------------------------------------------------------------------

    def query(self, payload: dict[str, Any]) -> dict[str, Any]:
        """One API call, retried when the server is busy or fails; ``UserError`` when it cannot answer."""
        import httpx

        body = {"index": self.index, **payload}
        problem = ""
        for attempt in range(ATTEMPTS):
            if attempt:
                time.sleep(min(8.0, self._pause * 2 ** attempt))
            try:
                response = self._client.post(self.url, json=body)
            except httpx.HTTPError as exc:
                problem = f"the server could not be reached ({type(exc).__name__})"
                continue
            if response.status_code == 429 or response.status_code >= 500:
                problem = f"the server answered {response.status_code}"
                continue
            try:
                data = response.json()
            except ValueError:
                problem = "the server's answer was not JSON"
                continue
            if response.status_code >= 400 or "error" in data:
                raise UserError(f"The infini-gram server at {self.url} refused the query: "
                                f"{data.get('error') or response.status_code}. Check the index name ('{self.index}').")
            return data
        raise ServerUnavailable(f"The infini-gram server at {self.url} did not answer ({problem}). Try again later, or check "
                        "the address.")

    def _many(self, payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return list(self._pool.map(self.query, payloads))

    # ---- what every index answers -----------------------------------------------------------------

    @property
    def total_tokens(self) -> int:
        if self._total is None:
            self._total = int(self.query({"query_type": "count", "query": ""})["count"])
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
        ids = np.asarray(data.get("token_ids") or [], dtype=np.int64)
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
        return np.asarray([int(r.get("suffix_len", 0)) for r in self._many(payloads)], dtype=np.int64)

    def count(self, ids: Sequence[int]) -> int:
        if len(ids) == 0:
            return self.total_tokens
        return int(self.query({"query_type": "count", "query_ids": [int(i) for i in ids]})["count"])

    def counts(self, sequences: Sequence[Sequence[int]]) -> list[int]:
        empty = [i for i, s in enumerate(sequences) if len(s) == 0]
        asked = [{"query_type": "count", "query_ids": [int(i) for i in s]} for s in sequences if len(s)]
        answers = iter(int(r["count"]) for r in self._many(asked))
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
