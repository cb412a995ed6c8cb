"""Passages for the continuation probe: a seeded sample spread over each book, never overlapping.

A book's text is cut into ``per_book`` equal stretches; in each, a start is drawn at random (seeded by the seed,
the book and the stretch, so the same setting gives the same passages whatever other books are chosen) and moved
to the next word; from there the prefix is the next K tokens and the true continuation the N after them. A
passage stays inside its stretch (the stretch must hold a window of ``window_chars`` characters), so passages
never overlap; a book too short for ``per_book`` stretches gets fewer, and says so (``shortfall``). The start is
drawn from the characters, not the tokens, so passages of different tokenizers start at the same places of the
book.

Only offsets are stored (and the true continuation's tokens): the text is the book's, read from the library.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.probes.continuation.tokens import Tokenizer
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

#: characters per token allowed for when a stretch's window is sized (generous: a word of English is ~6)
CHARS_PER_TOKEN = 12
MIN_WINDOW = 120
_WORD_START = re.compile(r"(?<=\s)\S")


@dataclass(frozen=True)
class Setting:
    """Which passages: tokenization, seed, passages per book, prefix and continuation lengths."""

    tokenizer: str
    seed: int
    per_book: int
    prefix_tokens: int
    continue_tokens: int

    def where(self) -> tuple[str, list]:
        return ("tokenizer = ? AND seed = ? AND per_book = ? AND prefix_tokens = ? AND continue_tokens = ?",
                [self.tokenizer, self.seed, self.per_book, self.prefix_tokens, self.continue_tokens])


def window_chars(prefix_tokens: int, continue_tokens: int) -> int:
    return max(MIN_WINDOW, (prefix_tokens + continue_tokens + 1) * CHARS_PER_TOKEN)


def sample_spans(text: str, tokenizer: Tokenizer, *, book_id: int, per_book: int, prefix_tokens: int,
                 continue_tokens: int, seed: int) -> list[tuple[int, int, int, int, list]]:
    """``(position, start, prefix_end, end, continuation tokens)`` for each stretch of ``text`` that yields a
    passage (a pure function of its arguments)."""
    width = window_chars(prefix_tokens, continue_tokens)
    stretches = min(per_book, len(text) // width)
    if stretches < 1:
        return []
    size = len(text) / stretches
    out = []
    for position in range(stretches):
        low, high = int(position * size), int((position + 1) * size)
        rng = random.Random(f"continuation:{seed}:{book_id}:{per_book}:{position}")
        start = low + rng.randrange(max(1, high - low - width))
        if start > low:  # to the start of the next word (a passage never begins inside a word)
            found = _WORD_START.search(text, start, high)
            if found is None:
                continue
            start = found.start()
        window = text[start : min(start + width, high)]
        split = tokenizer.split(window, prefix_tokens, continue_tokens)
        if split is None:
            continue
        out.append((position, start, start + split.prefix_end, start + split.end, split.continuation))
    return out


def ensure_passages(project: "Project", tokenizer: Tokenizer, book_ids: Sequence[int], setting: Setting,
                    state=None) -> None:
    """Sample and store the passages of ``setting`` for the books that have none yet (the same setting always
    gives the same passages, so books sampled before are kept as they are)."""
    from workbench.corpus.library import book_text

    clause, args = setting.where()
    have = {int(b) for (b,) in project.db.execute(
        f"SELECT DISTINCT book_id FROM continuation_passages WHERE {clause}", args).fetchall()}
    todo = [int(b) for b in book_ids if int(b) not in have]
    stamp = now()
    for done, book_id in enumerate(todo):
        if state is not None:
            state.check()
            state.progress(done, len(todo), f"Choosing passages: book {done + 1} of {len(todo)}")
        text = book_text(project, book_id)
        spans = sample_spans(text, tokenizer, book_id=book_id, per_book=setting.per_book,
                             prefix_tokens=setting.prefix_tokens, continue_tokens=setting.continue_tokens,
                             seed=setting.seed)
        rows = [(book_id, setting.tokenizer, setting.seed, setting.per_book, setting.prefix_tokens,
                 setting.continue_tokens, position, start, prefix_end, end, json.dumps(tokens), stamp)
                for position, start, prefix_end, end, tokens in spans]
        with project.db.transaction():
            project.db.conn.executemany(
                "INSERT OR IGNORE INTO continuation_passages (book_id, tokenizer, seed, per_book, prefix_tokens,"
                " continue_tokens, position, start_char, prefix_end, end_char, continuation, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


def passage_ids(project: "Project", setting: Setting, book_ids: Sequence[int]) -> list[int]:
    clause, args = setting.where()
    rows = project.db.execute(
        f"SELECT id FROM continuation_passages WHERE {clause} AND book_id IN (SELECT value FROM json_each(?))"
        " ORDER BY book_id, position", [*args, json.dumps([int(b) for b in book_ids])]).fetchall()
    return [int(i) for (i,) in rows]


def prefixes(project: "Project", ids: Sequence[int]) -> dict[int, str]:
    """passage id -> its prefix, read from the book's text (``UserError`` for passages deleted since)."""
    from workbench.corpus.library import book_text

    rows = project.db.execute(
        "SELECT id, book_id, start_char, prefix_end FROM continuation_passages"
        " WHERE id IN (SELECT value FROM json_each(?))", [json.dumps([int(i) for i in ids])]).fetchall()
    if len(rows) < len(set(ids)):
        raise UserError(f"{len(set(ids)) - len(rows)} passage(s) of this run no longer exist (their book was "
                        "removed). Start a new run.")
    texts: dict[int, str] = {}
    out = {}
    for passage, book_id, start, prefix_end in rows:
        if book_id not in texts:
            texts[book_id] = book_text(project, book_id)
        out[int(passage)] = texts[book_id][start:prefix_end]
    return out


PASSAGE_COLUMNS = ["passage_id", "book_id", "position", "start_char", "prefix_end", "end_char", "truth"]


def passages_frame(project: "Project", setting: Setting, book_ids: Sequence[int] | None = None) -> pd.DataFrame:
    """The passages of ``setting`` (of ``book_ids`` only, if given), with the true continuation's tokens
    (``truth``, a list)."""
    clause, args = setting.where()
    sql = (f"SELECT id, book_id, position, start_char, prefix_end, end_char, continuation FROM continuation_passages"
           f" WHERE {clause}")
    if book_ids is not None:
        sql += " AND book_id IN (SELECT value FROM json_each(?))"
        args = [*args, json.dumps([int(b) for b in book_ids])]
    rows = project.db.execute(sql + " ORDER BY book_id, position", args).fetchall()
    frame = pd.DataFrame(rows, columns=PASSAGE_COLUMNS)
    frame["truth"] = [json.loads(t) for t in frame["truth"]]
    return frame
