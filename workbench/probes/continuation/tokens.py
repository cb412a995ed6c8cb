"""How a passage is cut into tokens, and how an answer is tokenized for scoring.

- A local model (transformers or GGUF) uses its own tokenizer: the prefix is K of its tokens, the true
  continuation the next N, and its answer is tokenized the same way before it is compared.
- An API model's tokenizer is not known here, so passages and answers are cut into words: runs of characters
  between white space (``\\S+``), compared exactly (case and punctuation count).

A ``Tokenizer`` gives ``split(text, k, n)``: where in ``text`` the first ``k`` tokens end and the next ``n``
end, and those ``n`` tokens; ``encode(text)`` gives an answer's tokens. Its ``name`` is stored with the passages
and the run ('words', or 'hf:...' / 'gguf:...' with the model's name), so passages cut by one tokenizer are
never scored with another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

WORDS = "words"
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Split:
    """Where the prefix ends and the continuation ends (characters of the text given), and the continuation's
    tokens."""

    prefix_end: int
    end: int
    continuation: list


class Tokenizer:
    name: str = WORDS
    #: words: an API's answer may be longer than asked in words; model tokens: the answer is N tokens at most
    unit: str = "word"

    def encode(self, text: str) -> list:
        return _WORD.findall(text or "")

    def split(self, text: str, k: int, n: int) -> Split | None:
        spans = [m.span() for m in _WORD.finditer(text)]
        if len(spans) < k + n or k < 1 or n < 1:
            return None
        words = [text[a:b] for a, b in spans[k : k + n]]
        return Split(spans[k - 1][1], spans[k + n - 1][1], words)


class HFTokenizer(Tokenizer):
    """A transformers tokenizer (fast tokenizers give each token's characters)."""

    unit = "token"

    def __init__(self, tokenizer: Any, model_name: str):
        self.tokenizer = tokenizer
        self.name = f"hf:{model_name}"

    def encode(self, text: str) -> list:
        return list(self.tokenizer(text or "", add_special_tokens=False)["input_ids"])

    def split(self, text: str, k: int, n: int) -> Split | None:
        encoded = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        ids, offsets = list(encoded["input_ids"]), list(encoded["offset_mapping"])
        if len(ids) < k + n + 1 or k < 1 or n < 1:  # one token more: the last one kept may not be cut by the window
            return None
        return Split(int(offsets[k - 1][1]), int(offsets[k + n - 1][1]), ids[k : k + n])


class LlamaTokenizer(Tokenizer):
    """llama.cpp's tokenizer (a GGUF model): no character offsets, so a prefix's characters are the length of
    its tokens written back as text."""

    unit = "token"

    def __init__(self, llama: Any, model_name: str):
        self.llama = llama
        self.name = f"gguf:{model_name}"

    def _ids(self, text: str) -> list[int]:
        return list(self.llama.tokenize((text or "").encode("utf-8"), add_bos=False, special=False))

    def _text(self, ids: list[int]) -> str:
        return self.llama.detokenize(ids).decode("utf-8", errors="replace")

    def encode(self, text: str) -> list:
        return self._ids(text)

    def split(self, text: str, k: int, n: int) -> Split | None:
        ids = self._ids(text)
        if len(ids) < k + n + 1 or k < 1 or n < 1:
            return None
        prefix = self._text(ids[:k])
        whole = self._text(ids[: k + n])
        if not text.startswith(prefix) or not text.startswith(whole):
            return None  # the tokens do not write back to the book's characters: leave this stretch out
        return Split(len(prefix), len(whole), ids[k : k + n])


def tokenizer_for(backend: Any) -> Tokenizer:
    """The tokenizer a run on ``backend`` uses: a local model's own, else words."""
    inner = getattr(backend, "inner", backend)  # behind the response cache
    if getattr(inner, "tokenizer", None) is not None and callable(inner.tokenizer):
        return HFTokenizer(inner.tokenizer, inner.model_name)
    if getattr(inner, "llama", None) is not None:
        return LlamaTokenizer(inner.llama, inner.model_name)
    return Tokenizer()


def is_local(tokenizer: Tokenizer) -> bool:
    return tokenizer.name != WORDS


Encoder = Callable[[str], list]
