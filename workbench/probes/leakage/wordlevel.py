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

import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

SPACE, WORD, OTHER = 0, 1, 2
#: texts are split into pieces of about this many characters (at white space) to bound memory
CHUNK_CHARS = 4_000_000

_QUOTES = {0x2018: 0x27, 0x2019: 0x27, 0x201A: 0x27, 0x201B: 0x27, 0x2032: 0x27,
           0x201C: 0x22, 0x201D: 0x22, 0x201E: 0x22, 0x201F: 0x22, 0x2033: 0x22}
_BASE = np.uint64(1099511628211)  # an odd multiplier, so it has an inverse modulo 2**64
_INVERSE = np.uint64(pow(1099511628211, -1, 2**64))

# Tables built once and shared by the threads that tokenize documents at the same time: each is built
# under the lock and published in one assignment, so a reader never sees half of it.
_tables: dict[str, Any] = {}
_building = threading.Lock()


def _class_table() -> tuple[np.ndarray, np.ndarray]:
    """(class of every code point of the Basic Multilingual Plane, the same code points with typographic
    quotes made straight): built once, ~30 ms."""
    tables = _tables.get("classes")
    if tables is None:
        with _building:
            tables = _tables.get("classes")
            if tables is None:
                table = np.full(0x10000, OTHER, np.uint8)
                for code in range(0x10000):
                    char = chr(code)
                    if char.isspace():
                        table[code] = SPACE
                    elif char.isalnum() or char == "_":
                        table[code] = WORD
                quotes = np.arange(0x10000, dtype=np.uint32)
                for source, target in _QUOTES.items():
                    quotes[source] = target
                tables = _tables["classes"] = (table, quotes)
    return tables


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """BASE**i and BASE**-i modulo 2**64 for i < n (kept and grown as needed)."""
    have = _tables.get("powers")
    if have is None or len(have[0]) < n:
        with _building:
            have = _tables.get("powers")
            if have is None or len(have[0]) < n:
                size = max(n, 2 * len(have[0]) if have is not None else 0, 1 << 16)
                with np.errstate(over="ignore"):
                    power = np.full(size, _BASE, np.uint64)
                    power[0] = 1
                    np.cumprod(power, out=power)
                    inverse = np.full(size, _INVERSE, np.uint64)
                    inverse[0] = 1
                    np.cumprod(inverse, out=inverse)
                have = _tables["powers"] = (power, inverse)
    return have


def normalize(text: str) -> str:
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text


@dataclass(frozen=True)
class Split:
    points: np.ndarray  # the text's code points (typographic quotes made straight)
    starts: np.ndarray  # where each token starts and ends (code point offsets)
    ends: np.ndarray
    fingerprints: np.ndarray  # one 64-bit fingerprint per token
    words: int  # white-space separated words


@dataclass(frozen=True)
class Spans:
    text: str  # the NFC text the offsets refer to
    ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    words: int


def split_fingerprints(text: str) -> Split:
    """Tokens of one already normalized text: where they are and their fingerprints."""
    points = np.frombuffer(text.encode("utf-32-le"), np.uint32)
    if points.size == 0:
        empty = np.zeros(0, np.int64)
        return Split(points, empty, empty, np.zeros(0, np.uint64), 0)
    points, kind = _classes(points)
    word = kind == WORD
    other = kind == OTHER
    words = _runs(kind != SPACE)
    starts = np.flatnonzero(other | (word & ~np.concatenate(([False], word[:-1]))))
    ends = np.flatnonzero(other | (word & ~np.concatenate((word[1:], [False])))) + 1
    power, inverse = _powers(points.size + 1)
    with np.errstate(over="ignore"):
        prefix = np.zeros(points.size + 1, np.uint64)
        np.cumsum((points.astype(np.uint64) + np.uint64(1)) * power[: points.size], out=prefix[1:])
        fingerprints = (prefix[ends] - prefix[starts]) * inverse[starts]
    return Split(points, starts, ends, fingerprints, words)


def _classes(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(code points with typographic quotes made straight, the class of each)."""
    classes, quotes = _class_table()
    low = np.minimum(points, 0xFFFF)
    points = np.where(points < 0x10000, quotes[low], points)
    kind = classes[low]
    for index in np.flatnonzero(points >= 0x10000):  # beyond the BMP (emoji, rare scripts): one by one
        char = chr(int(points[index]))
        kind[index] = SPACE if char.isspace() else WORD if char.isalnum() else OTHER
    return points, kind


def _runs(filled: np.ndarray) -> int:
    """How many runs of True there are."""
    return int(np.count_nonzero(filled[1:] & ~filled[:-1]) + filled[0]) if filled.size else 0


def count_words(text: str) -> int:
    """White-space separated words (as ``len(text.split())`` counts them), without making the strings."""
    points = np.frombuffer(text.encode("utf-32-le"), np.uint32)
    return _runs(_classes(points)[1] != SPACE) if points.size else 0


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


@dataclass(frozen=True)
class Prepared:
    """A text cut into tokens, each told by its fingerprint, before the vocabulary numbers them."""

    text: str
    pieces: list[tuple[Split, int, np.ndarray, np.ndarray]]  # (split, character offset, codes, unique fingerprints)
    words: int


def prepare(text: str) -> Prepared:
    """The work of encoding that needs no vocabulary (most of it): safe to run in several threads at once."""
    import pandas as pd

    text = normalize(text)
    parts, offset, words = [], 0, 0
    for piece in pieces(text):
        split = split_fingerprints(piece)
        words += split.words
        if split.fingerprints.size:
            codes, uniques = pd.factorize(split.fingerprints)
            parts.append((split, offset, codes, uniques))
        offset += len(piece)
    return Prepared(text, parts, words)


class Vocabulary:
    """Token types numbered from 0 in the order they are first seen."""

    def __init__(self, words: Sequence[str] = ()):
        import pandas as pd

        self.words: list[str] = list(words)
        self._index = pd.Index(np.zeros(0, np.uint64))
        if self.words:
            fingerprints = split_fingerprints("\n".join(self.words)).fingerprints
            if fingerprints.size != len(self.words):
                raise ValueError("a vocabulary holds single tokens, one per line")
            self._index = pd.Index(fingerprints)

    def __len__(self) -> int:
        return len(self.words)

    def encode(self, text: str, *, grow: bool = False, unknown: int = -1) -> np.ndarray:
        """Token ids of ``text`` (int64). New types get new ids when ``grow``, else ``unknown``."""
        return self.encode_spans(text, grow=grow, unknown=unknown).ids

    def encode_spans(self, text: str, *, grow: bool = False, unknown: int = -1) -> Spans:
        """Token ids and places of ``text``: offsets are into its NFC form, where curly quotes are still as
        written."""
        return self.assign(prepare(text), grow=grow, unknown=unknown)

    def assign(self, prepared: "Prepared", *, grow: bool = False, unknown: int = -1) -> Spans:
        """Ids for a text's tokens found by ``prepare`` (which may run in another thread; this may not)."""
        import pandas as pd

        ids_parts, start_parts, end_parts = [], [], []
        for split, offset, codes, uniques in prepared.pieces:
            ids = self._index.get_indexer(uniques)
            new = np.flatnonzero(ids < 0)
            if new.size and grow:
                first = np.full(len(uniques), -1, np.int64)
                first[codes[::-1]] = np.arange(codes.size - 1, -1, -1)
                ids[new] = np.arange(len(self.words), len(self.words) + new.size)
                for u in new:
                    at = first[u]
                    self.words.append(split.points[split.starts[at] : split.ends[at]].tobytes().decode("utf-32-le"))
                self._index = self._index.append(pd.Index(uniques[new]))
            elif new.size:
                ids[new] = unknown
            ids_parts.append(ids[codes].astype(np.int64))
            start_parts.append(split.starts + offset)
            end_parts.append(split.ends + offset)
        return Spans(prepared.text, _joined(ids_parts), _joined(start_parts), _joined(end_parts), prepared.words)

    def tokens(self, text: str) -> list[str]:
        """The tokens of ``text`` as strings (normalized), for display and tests."""
        text = normalize(text)
        out: list[str] = []
        for piece in pieces(text):
            split = split_fingerprints(piece)
            out.extend(split.points[s:e].tobytes().decode("utf-32-le") for s, e in zip(split.starts, split.ends))
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
