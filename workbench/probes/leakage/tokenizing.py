"""How a reference corpus and the passages queried against it are cut into tokens.

Two kinds, named by a *tokenizer spec* stored with each index:

- ``word``: word-level tokens (``wordlevel``), numbered by a vocabulary built from the corpus itself.
  Needs no download. A passage word the corpus never has gets an id that matches nothing.
- ``model:LABEL``: the tokenizer of a registered local model (a transformers folder). Read from the
  model's folder only: nothing is fetched from the Hugging Face Hub.

The n-gram engine stores 16-bit units (values 0-65534; 65535 separates documents). A tokenizer whose ids
all fit takes one unit per token. Larger vocabularies (word-level vocabularies of big corpora, recent
model tokenizers) take two units per token, a high and a low part drawn from disjoint ranges, so that a
match can only start at the first unit of a token (``to_units``); lengths in units are halved back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from workbench.errors import UserError
from workbench.probes.leakage.wordlevel import Vocabulary

if TYPE_CHECKING:
    from workbench.project import Project

WORD = "word"
MODEL_PREFIX = "model:"
UNIT_MAX = 65534  # 65535 is the engine's document separator
_HALF = 32767  # two-unit tokens: high part in [0, 32767), low part in [32767, 65534)
#: the largest token id two units can hold (the one above it stands for "not in the corpus")
TWO_UNIT_MAX = _HALF * _HALF - 2


@dataclass(frozen=True)
class Encoded:
    """A text's token ids with the characters of the text each token covers."""

    text: str  # the text the offsets refer to (word level: the normalized text)
    ids: np.ndarray  # int64; -1 where a word is not in the vocabulary
    starts: np.ndarray
    ends: np.ndarray

    def __len__(self) -> int:
        return int(self.ids.size)

    def span_text(self, first: int, count: int) -> str:
        """The text of ``count`` tokens from token ``first`` (as written in the text, without the white space a
        first token may carry)."""
        if count <= 0:
            return ""
        return self.text[int(self.starts[first]) : int(self.ends[first + count - 1])].strip()


class IndexTokenizer(Protocol):
    spec: str

    def encode(self, text: str) -> Encoded: ...

    def vocabulary_size(self) -> int: ...


def to_units(ids: np.ndarray, width: int) -> np.ndarray:
    """Token ids as the engine's 16-bit units (``width`` units per token); -1 (unknown) matches nothing."""
    ids = np.asarray(ids, dtype=np.int64)
    if width == 1:
        return np.where(ids < 0, UNIT_MAX, ids).astype(np.uint16)
    ids = np.where(ids < 0, TWO_UNIT_MAX + 1, ids)
    units = np.empty(ids.size * 2, np.uint16)
    units[0::2] = ids // _HALF
    units[1::2] = _HALF + ids % _HALF
    return units


def width_for(vocabulary_size: int) -> int:
    """Units per token for a vocabulary of this many ids (ids 0 .. size - 1)."""
    if vocabulary_size <= UNIT_MAX:  # ids up to 65533; 65534 is left for "unknown"
        return 1
    if vocabulary_size <= TWO_UNIT_MAX + 1:
        return 2
    raise UserError(f"A vocabulary of {vocabulary_size:,} token types is too large for the n-gram index.")


class WordTokenizer:
    """Word-level tokens; ``grow`` adds new types to the vocabulary (while a corpus is indexed)."""

    spec = WORD

    def __init__(self, vocabulary: Vocabulary | None = None):
        self.vocabulary = vocabulary or Vocabulary()

    def encode(self, text: str, *, grow: bool = False) -> Encoded:
        spans = self.vocabulary.encode_spans(text, grow=grow)
        return Encoded(spans.text, spans.ids, spans.starts, spans.ends)

    def vocabulary_size(self) -> int:
        return len(self.vocabulary)


class ModelTokenizer:
    """The tokenizer of a transformers model folder (no special tokens added)."""

    def __init__(self, label: str, folder: Path):
        from transformers import AutoTokenizer

        self.spec = MODEL_PREFIX + label
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        except Exception as exc:
            raise UserError(f"The tokenizer of '{label}' could not be read from {folder} ({exc}).") from None
        if not getattr(self.tokenizer, "is_fast", False):
            raise UserError(f"The tokenizer of '{label}' cannot say where its tokens lie in the text "
                            "(it is not a 'fast' tokenizer). Use the word-level tokenizer instead.")

    def encode(self, text: str) -> Encoded:
        out = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        offsets = np.asarray(out["offset_mapping"], dtype=np.int64).reshape(-1, 2)
        return Encoded(text, np.asarray(out["input_ids"], dtype=np.int64), offsets[:, 0], offsets[:, 1])

    def vocabulary_size(self) -> int:
        return len(self.tokenizer)


#: characters of context kept on each side of the place where two pieces of a long text are joined
SEAM_CHARS = 2_000


def ids_in_pieces(tokenizer: IndexTokenizer, text: str, size: int, seam: int = SEAM_CHARS) -> np.ndarray:
    """The token ids of ``text``, tokenized about ``size`` characters at a time (so memory does not grow with
    the length of one document).

    Consecutive pieces overlap by three ``seam`` widths. They are joined at the last place in the middle of
    the overlap where a token starts in both pieces' tokenizations, each piece having at least ``seam``
    characters on either side of it; the tokens before that place come from the first piece, the rest from
    the second. The ids are those of the whole text wherever the tokenizer's choice of a token depends on
    less than ``seam`` characters around it, as with the word-by-word BPE and SentencePiece tokenizers of
    language models. (Cutting at white space alone would not do: a SentencePiece tokenizer marks the start of
    a text, and byte-level BPE attaches a space to the word after it.)"""
    size = max(int(size), 4 * seam)
    if len(text) <= size:
        return np.asarray(tokenizer.encode(text).ids, dtype=np.int64)
    out: list[np.ndarray] = []
    begin = 0  # where the current piece starts in the text
    current = tokenizer.encode(text[:size])
    first = 0  # the current piece's first token not yet given
    while True:
        end = begin + size
        if end >= len(text):
            out.append(np.asarray(current.ids[first:], dtype=np.int64))
            break
        after = end - 3 * seam  # the next piece starts here
        following = tokenizer.encode(text[after : after + size])
        mine = np.asarray(current.starts, dtype=np.int64) + begin
        theirs = np.asarray(following.starts, dtype=np.int64) + after
        low, high = after + seam, end - seam
        shared = np.intersect1d(mine[(mine >= low) & (mine <= high)], theirs[(theirs >= low) & (theirs <= high)])
        if shared.size:
            join = int(shared[-1])
        else:  # no shared boundary (no token starts there, or the two disagree throughout): the first piece's last
            candidates = mine[(mine > (mine[first] if first < mine.size else begin)) & (mine <= high)]
            join = int(candidates[-1]) if candidates.size else high
        cut = int(np.searchsorted(mine, join, side="left"))
        out.append(np.asarray(current.ids[first:cut], dtype=np.int64))
        first = int(np.searchsorted(theirs, join, side="left"))
        current, begin = following, after
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def model_tokenizer(project: "Project", label: str) -> ModelTokenizer:
    """The tokenizer of the project's model ``label`` (a local transformers model)."""
    from workbench.models.catalog import get_model
    from workbench.models.hf_locate import locate_model

    spec = get_model(project, label)
    if spec.backend != "hf":
        raise UserError(f"'{spec.label}' is not a local transformers model, so its tokenizer cannot be used for "
                        "an index. Choose a transformers model, or the word-level tokenizer ('word').")
    try:
        folder = locate_model(spec.ref, local_files_only=True)
    except UserError as exc:
        raise UserError(f"The files of '{spec.label}' are not on this computer ({exc}). Palimpsest does not "
                        "download tokenizers for indexes; download the model first.") from None
    return ModelTokenizer(spec.label, folder)


def open_tokenizer(project: "Project", spec: str, index_folder: Path | None = None) -> IndexTokenizer:
    """The tokenizer named by ``spec``; the word-level one reads its vocabulary from ``index_folder``."""
    if spec == WORD:
        if index_folder is None:
            return WordTokenizer()
        return WordTokenizer(Vocabulary.load(index_folder / VOCABULARY_FILE))
    if spec.startswith(MODEL_PREFIX):
        return model_tokenizer(project, spec[len(MODEL_PREFIX):])
    raise UserError(f"'{spec}' is not a tokenizer Palimpsest knows: use 'word' or the label of a local model.")


def spec_from_choice(choice: str | None) -> str:
    """``word`` (the default) or a model label -> a tokenizer spec."""
    if not choice or choice == WORD:
        return WORD
    return choice if choice.startswith(MODEL_PREFIX) else MODEL_PREFIX + choice


VOCABULARY_FILE = "vocabulary.txt"
