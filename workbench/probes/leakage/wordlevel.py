"""Word-level tokens that need no download, and the vocabulary that numbers them.

A token is a run of letters and digits (with ``_``: Python's ``\\w``), or one single character that is
neither such a character nor white space (a punctuation mark or a symbol): the same tokens as
``re.findall(r"\\w+|[^\\w\\s]", text)``. Case is kept. Before splitting, the text is put in Unicode NFC
form and typographic quotes become straight ones (‘ ’ ‚ ‛ ′ -> ' and “ ” „ ‟ ″ -> "), so that editions
that differ only in their quote marks still match.

Why not the regular expression itself: building an index reads the whole reference corpus, and Python
creates one string object per token that way (seconds per hundred novels, most of the build). Here the
text is a NumPy array of code points: token boundaries come from a character-class table and each
token is told by a 64-bit fingerprint of its characters (a polynomial hash); only the first occurrence
of each new type becomes a Python string. Two different types sharing a fingerprint would be counted
as one; with a million types the chance of that is about 3 in 100 million.

``Vocabulary`` numbers types in the order they are first seen and keeps their text (``words``), so
ids can be turned back into text. A vocabulary is saved as one word per line (``save``/``load``):
tokens never contain white space.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

SPACE, WORD, OTHER = 0, 1, 2
#: texts are split into pieces of about this many characters (at white space) to bound memory
CHUNK_CHARS = 4_000_000

_QUOTES = {0x2018: 0x27, 0x2019: 0x27, 0x201A: 0x27, 0x201B: 0x27, 0x2032: 0x27,
           0x201C: 0x22, 0x201D: 0x22, 0x201E: 0x22, 0x201F: 0x22, 0x2033: 0x22}
_BASE = np.uint64(1099511628211)  # an odd multiplier, so it has an inverse modulo 2**64
_INVERSE = np.uint64(pow(1099511628211, -1, 2**64))

_tables: dict[str, np.ndarray] = {}


def _class_table() -> np.ndarray:
    """Character class of every code point of the Basic Multilingual Plane (built once, ~30 ms)."""
    if "class" not in _tables:
        table = np.full(0x10000, OTHER, np.uint8)
        for code in range(0x10000):
            char = chr(code)
            if char.isspace():
                table[code] = SPACE
            elif char.isalnum() or char == "_":
                table[code] = WORD
        _tables["class"] = table
        quotes = np.arange(0x10000, dtype=np.uint32)
        for source, target in _QUOTES.items():
            quotes[source] = target
        _tables["quotes"] = quotes
    return _tables["class"]


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """BASE**i and BASE**-i modulo 2**64 for i < n (kept and grown as needed)."""
    have = _tables.get("pow")
    if have is None or len(have) < n:
        size = max(n, 2 * len(have) if have is not None else 0, 1 << 16)
        with np.errstate(over="ignore"):
            power = np.full(size, _BASE, np.uint64)
            power[0] = 1
            np.cumprod(power, out=power)
            inverse = np.full(size, _INVERSE, np.uint64)
            inverse[0] = 1
            np.cumprod(inverse, out=inverse)
        _tables["pow"], _tables["ipow"] = power, inverse
    return _tables["pow"], _tables["ipow"]


def normalize(text: str) -> str:
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text


def split_fingerprints(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(code points, token starts, token ends, token fingerprints) of one already normalized text."""
    classes = _class_table()
    points = np.frombuffer(text.encode("utf-32-le"), np.uint32)
    if points.size == 0:
        empty = np.zeros(0, np.int64)
        return points, empty, empty, np.zeros(0, np.uint64)
    low = np.minimum(points, 0xFFFF)
    points = np.where(points < 0x10000, _tables["quotes"][low], points)
    kind = classes[low]
    astral = np.flatnonzero(points >= 0x10000)
    for index in astral:  # characters beyond the BMP (emoji, rare scripts): looked up one by one
        char = chr(int(points[index]))
        kind[index] = SPACE if char.isspace() else WORD if char.isalnum() else OTHER
    word = kind == WORD
    other = kind == OTHER
    starts = np.flatnonzero(other | (word & ~np.concatenate(([False], word[:-1]))))
    ends = np.flatnonzero(other | (word & ~np.concatenate((word[1:], [False])))) + 1
    power, inverse = _powers(points.size + 1)
    with np.errstate(over="ignore"):
        prefix = np.zeros(points.size + 1, np.uint64)
        np.cumsum((points.astype(np.uint64) + np.uint64(1)) * power[: points.size], out=prefix[1:])
        fingerprints = (prefix[ends] - prefix[starts]) * inverse[starts]
    return points, starts, ends, fingerprints


def count_words(text: str) -> int:
    """White-space separated words (as ``len(text.split())`` counts them), without making the strings."""
    points = np.frombuffer(text.encode("utf-32-le"), np.uint32)
    if points.size == 0:
        return 0
    space = _class_table()[np.minimum(points, 0xFFFF)] == SPACE
    astral = np.flatnonzero(points >= 0x10000)
    space[astral] = [chr(int(points[i])).isspace() for i in astral]
    return int(np.count_nonzero(~space[1:] & space[:-1]) + (not space[0]))


def pieces(text: str, size: int = CHUNK_CHARS) -> Iterable[str]:
    """``text`` cut at white space into pieces of about ``size`` characters (no token is cut)."""
    start = 0
    while start < len(text):
        end = start + size
        if end < len(text):
            cut = max(text.rfind(" ", start, end), text.rfind("\n", start, end))
            end = cut + 1 if cut > start else end
        yield text[start:end]
        start = end


class Vocabulary:
    """Token types numbered from 0 in the order they are first seen."""

    def __init__(self, words: Sequence[str] = ()):
        import pandas as pd

        self.words: list[str] = list(words)
        self._index = pd.Index(np.zeros(0, np.uint64))
        if self.words:
            fingerprints = split_fingerprints("\n".join(self.words))[3]
            if fingerprints.size != len(self.words):
                raise ValueError("a vocabulary holds single tokens, one per line")
            self._index = pd.Index(fingerprints)

    def __len__(self) -> int:
        return len(self.words)

    def encode(self, text: str, *, grow: bool = False, unknown: int = -1) -> np.ndarray:
        """Token ids of ``text`` (int64). New types get new ids when ``grow``, else ``unknown``."""
        return self.encode_spans(text, grow=grow, unknown=unknown)[1]

    def encode_spans(self, text: str, *, grow: bool = False,
                     unknown: int = -1) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
        """(NFC text, token ids, token starts, token ends): offsets are into the NFC text, where curly quotes
        are still as written."""
        import pandas as pd

        text = normalize(text)
        ids_parts, start_parts, end_parts, offset = [], [], [], 0
        for piece in pieces(text):
            points, starts, ends, fingerprints = split_fingerprints(piece)
            if fingerprints.size:
                codes, uniques = pd.factorize(fingerprints)
                ids = self._index.get_indexer(uniques)
                new = np.flatnonzero(ids < 0)
                if new.size and grow:
                    first = np.full(len(uniques), -1, np.int64)
                    first[codes[::-1]] = np.arange(codes.size - 1, -1, -1)
                    ids[new] = np.arange(len(self.words), len(self.words) + new.size)
                    for u in new:
                        at = first[u]
                        self.words.append(points[starts[at] : ends[at]].tobytes().decode("utf-32-le"))
                    self._index = self._index.append(pd.Index(uniques[new]))
                elif new.size:
                    ids[new] = unknown
                ids_parts.append(ids[codes].astype(np.int64))
                start_parts.append(starts + offset)
                end_parts.append(ends + offset)
            offset += len(piece)
        return text, _joined(ids_parts), _joined(start_parts), _joined(end_parts)

    def tokens(self, text: str) -> list[str]:
        """The tokens of ``text`` as strings (normalized), for display and tests."""
        text = normalize(text)
        out: list[str] = []
        for piece in pieces(text):
            points, starts, ends, _ = split_fingerprints(piece)
            out.extend(points[s:e].tobytes().decode("utf-32-le") for s, e in zip(starts, ends))
        return out

    def decode(self, ids: Sequence[int], unknown: str = "\N{REPLACEMENT CHARACTER}") -> list[str]:
        return [self.words[i] if 0 <= i < len(self.words) else unknown for i in ids]

    def save(self, path: str | Path) -> None:
        Path(path).write_text("\n".join(self.words) + ("\n" if self.words else ""), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "Vocabulary":
        text = Path(path).read_text(encoding="utf-8")
        return cls(text.split("\n")[:-1] if text else [])


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)
