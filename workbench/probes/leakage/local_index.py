"""Queries on a local infini-gram index (one folder made by ``index_build``).

- ``suffix_lengths(ids)``: for every token of a passage, the length of the longest run of passage tokens
  *ending* there that occurs in the corpus (the study's per-position lengths). infini-gram's
  ``creativity`` query gives, for every token, the longest run *starting* there (all positions at once,
  in C++ threads without holding Python's lock); ``suffix_from_forward`` turns one into the other;
- ``count(ids)``: how often a token sequence occurs (``count``);
- ``counts(sequences)``: many counts.

Ids are the tokenizer's; they become the engine's 16-bit units here (``tokenizing.to_units``). With two
units per token a match is counted in whole tokens (a token whose first unit matches but whose second
does not is not part of the match).

An index is checked against its ``index.json`` every time it is opened, and a damaged one is refused before
the engine sees it; the engine is given exactly the index's files (``index_files``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from workbench.errors import UserError
from workbench.probes.leakage.index_build import INSTALL_HINT, IndexInfo
from workbench.probes.leakage.index_files import engine_files, engine_view, verified_info
from workbench.probes.leakage.tokenizing import UNIT_MAX, Encoded, IndexTokenizer, open_tokenizer, to_units

if TYPE_CHECKING:
    from workbench.project import Project

#: the words by which the engine tells its files apart (in the whole path, not only the file's name)
ENGINE_MARKERS = ("tokenized", "table", "offset", "metadata", "metaoff")


class LocalIndex:
    kind = "local"

    def __init__(self, folder: Path, tokenizer: IndexTokenizer, info: IndexInfo):
        try:
            from infini_gram.engine import InfiniGramEngine
        except ImportError:
            raise UserError(f"The n-gram engine is not installed. {INSTALL_HINT}") from None
        self.folder = Path(folder)
        self.tokenizer = tokenizer
        self.info = info
        self.width = info.width
        # No read-ahead threads: an index of the size a laptop builds sits in the page cache, where starting
        # those threads costs more than they save (queries three to four times faster without them).
        # The engine maps the files while it is made; the folder of links it is given goes away after that.
        with engine_view(self.folder, [name for shard in engine_files(info) for name in shard]) as view:
            self.engine = InfiniGramEngine(index_dir=view, eos_token_id=UNIT_MAX, vocab_size=UNIT_MAX + 1,
                                           version=4, token_dtype="u16", ds_prefetch_depth=0, sa_prefetch_depth=0,
                                           od_prefetch_depth=0)

    @classmethod
    def open(cls, project: "Project", folder: Path) -> "LocalIndex":
        """The index in ``folder``, checked against its ``index.json`` first (``DamagedIndex`` if it is not
        what that says: nothing is then asked of it)."""
        folder = Path(folder)
        info = verified_info(folder)
        return cls(folder, open_tokenizer(project, info.tokenizer, folder), info)

    # ---- what every index answers ----------------------------------------------------------------

    @property
    def total_tokens(self) -> int:
        return self.info.tokens

    @property
    def words(self) -> int:
        return self.info.words

    @property
    def vocabulary_size(self) -> int:
        return self.info.vocabulary

    def encode(self, text: str) -> Encoded:
        return self.tokenizer.encode(text)

    def suffix_lengths(self, ids: Sequence[int]) -> np.ndarray:
        return suffix_from_forward(self.forward_lengths(ids))

    def forward_lengths(self, ids: Sequence[int]) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size == 0:
            return np.zeros(0, np.int64)
        units = to_units(ids, self.width).tolist()
        result = self.engine.creativity(input_ids=units)
        if "error" in result:
            raise UserError(f"The n-gram index could not answer: {result['error']}")
        ends = np.asarray(result["rs"], dtype=np.int64)
        starts = np.arange(units.__len__(), dtype=np.int64)
        lengths = (ends - starts)[:: self.width] // self.width
        return lengths

    def count(self, ids: Sequence[int]) -> int:
        if len(ids) == 0:
            return self.total_tokens
        result = self.engine.count(input_ids=to_units(np.asarray(ids), self.width).tolist())
        if "error" in result:
            raise UserError(f"The n-gram index could not answer: {result['error']}")
        return int(result["count"])

    def counts(self, sequences: Sequence[Sequence[int]]) -> list[int]:
        return [self.count(s) for s in sequences]

    def close(self) -> None:
        self.engine = None


def suffix_from_forward(forward: np.ndarray) -> np.ndarray:
    """Longest matches ending at each token, from the longest matches starting at each token.

    A run that occurs contains only runs that occur, so ``i + forward[i]`` never decreases; the longest
    match ending at ``j`` starts at the first ``i`` whose match reaches past ``j``."""
    forward = np.asarray(forward, dtype=np.int64)
    ends = np.arange(forward.size) + forward
    positions = np.arange(forward.size)
    first = np.searchsorted(ends, positions, side="right")
    return np.maximum(positions + 1 - first, 0)
