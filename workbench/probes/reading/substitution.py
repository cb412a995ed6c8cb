"""Name substitution: the book (and any summary of it) with every character name replaced, consistently.

NarrativeXL's defence against a model that knows the book: questions on the substituted text can only
be answered from what was read, so "original vs substituted" is a memorization control for any model.

The book's name words and their replacements (``names``) are found once per book and seed and kept with
the book (``reading_names``), with the exact edits made to its text (``reading_substitutions``: start,
end and replacement of each name use, as offsets into the original text). The substituted text is the
original with those edits; ``shift`` carries an offset of the original (a scene boundary, a checkpoint)
into the substituted text. Summaries and other short texts get the same names with ``substitute``
(the same rules, without the recogniser's tags: a name word that is also an ordinary word is replaced
there only in mid-sentence).
"""

from __future__ import annotations

import bisect
import json
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Iterable, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.probes.reading.names import (
    NER_COMPONENTS,
    WORD,
    NameWord,
    choose_replacements,
    find_names,
    mid_sentence,
    name_lists,
)
from workbench.progress import TaskState
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

Edit = tuple[int, int, str]
_POSSESSIVE = ("'s", "\u2019s")
def substitution_edits(text: str, names: Sequence[NameWord], tagged: Iterable[int] = ()) -> list[Edit]:
    """Where each name word of ``names`` is written in ``text`` (as given or in capitals, possessive
    included) and what replaces it. A word whose scope is 'mentions' is replaced only at ``tagged``
    start offsets or in mid-sentence."""
    as_written = {n.word: n.replacement for n in names}
    in_capitals = {n.word.upper(): n.replacement.upper() for n in names}
    limited = {n.word for n in names if n.scope == "mentions"}
    limited |= {w.upper() for w in limited}
    tagged = set(tagged)
    edits: list[Edit] = []
    for match in WORD.finditer(text):
        word = match.group()
        if word not in as_written and word not in in_capitals and word[-2:] in _POSSESSIVE:
            word = word[:-2]
        replacement = as_written.get(word) or in_capitals.get(word)
        if replacement is None:
            continue
        start = match.start()
        if word in limited and start not in tagged and not mid_sentence(text, start):
            continue
        edits.append((start, start + len(word), replacement))
    return edits


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    parts = []
    position = 0
    for start, end, replacement in edits:
        parts.append(text[position:start])
        parts.append(replacement)
        position = end
    parts.append(text[position:])
    return "".join(parts)


@dataclass(frozen=True)
class Substitution:
    book_id: int
    seed: int
    names: tuple[NameWord, ...]
    edits: tuple[Edit, ...]

    def apply(self, text: str) -> str:
        """The book's text (the original it was made from) with the names replaced."""
        return apply_edits(text, self.edits)

    @cached_property
    def _shifts(self) -> tuple[list[int], list[int]]:
        ends, total, deltas = [], 0, []
        for start, end, replacement in self.edits:
            total += len(replacement) - (end - start)
            ends.append(end)
            deltas.append(total)
        return ends, deltas

    def shift(self, offset: int) -> int:
        """Where an offset of the original text (not inside a name) lies in the substituted text."""
        ends, deltas = self._shifts
        before = bisect.bisect_right(ends, offset)
        return offset + (deltas[before - 1] if before else 0)

    def substitute(self, text: str) -> str:
        """Another text about the book (a summary) with the same names replaced."""
        return apply_edits(text, substitution_edits(text, self.names))

    @property
    def mapping(self) -> dict[str, str]:
        return {n.word: n.replacement for n in self.names}


# ---------------------------------------------------------------------------------------------- storage
def substitute_book(project: "Project", book_id: int, seed: int = 0, state: TaskState | None = None) -> Substitution:
    """Find the book's character names, draw their replacements with ``seed`` and keep both, with the
    edits, beside the book (replacing an earlier substitution of the book). Doing it again with the same
    seed, text and spaCy pipeline returns what is stored."""
    from workbench.corpus.library import book_text
    from workbench.nlp import load_english, pipeline_id

    state = state or TaskState()
    text = book_text(project, book_id)
    digest = project.db.execute("SELECT content_hash FROM books WHERE id = ?", [book_id]).fetchone()[0]
    nlp = load_english(components=NER_COMPONENTS, project=project)
    pipeline = pipeline_id(nlp)
    row = project.db.execute("SELECT seed, content_hash, pipeline FROM reading_substitutions WHERE book_id = ?",
                             [book_id]).fetchone()
    if row is not None and tuple(row) == (seed, digest, pipeline):
        return get_substitution(project, book_id)
    lists = name_lists(project)
    counts = Counter(WORD.findall(text))
    names = find_names(text, nlp, lists, state, word_counts=counts)
    if not names:
        raise UserError(f"No character names were found in book {book_id}, so there is nothing to substitute.")
    names = choose_replacements(names, lists, seed, counts)
    tagged = [start for n in names if n.scope == "mentions" for start, _ in n.spans]
    edits = substitution_edits(text, names, tagged)
    db = project.db
    with db.transaction():
        db.execute("DELETE FROM reading_names WHERE book_id = ?", [book_id])
        db.execute("INSERT OR REPLACE INTO reading_substitutions (book_id, seed, content_hash, pipeline, edits, created_at)"
                   " VALUES (?, ?, ?, ?, ?, ?)", [book_id, seed, digest, pipeline, json.dumps(edits), now()])
        db.conn.executemany(
            "INSERT INTO reading_names (book_id, original, replacement, role, gender, mentions, scope)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(book_id, n.word, n.replacement, n.role, n.gender, n.mentions, n.scope) for n in names])
    state.progress(1, 1, f"{len(names)} name words replaced", force=True)
    return Substitution(book_id, seed, tuple(n for n in names), tuple(edits))


def get_substitution(project: "Project", book_id: int) -> Substitution | None:
    """The book's stored substitution, or None when its names were never substituted."""
    row = project.db.execute("SELECT seed, edits FROM reading_substitutions WHERE book_id = ?", [book_id]).fetchone()
    if row is None:
        return None
    names = tuple(NameWord(word=w, replacement=r, role=role, gender=g, mentions=m, scope=s)
                  for w, r, role, g, m, s in project.db.execute(
                      "SELECT original, replacement, role, gender, mentions, scope FROM reading_names"
                      " WHERE book_id = ? ORDER BY rowid", [book_id]).fetchall())
    return Substitution(book_id, row[0], names, tuple(tuple(e) for e in json.loads(row[1])))


def require_substitution(project: "Project", book_id: int) -> Substitution:
    found = get_substitution(project, book_id)
    if found is None:
        raise UserError(f"The names of book {book_id} have not been substituted yet. "
                        "Run 'palimpsest reading substitute' first.")
    return found


def names_frame(project: "Project", book_id: int) -> pd.DataFrame:
    """One row per name word: ``original``, ``replacement``, ``role``, ``gender``, ``mentions``, ``scope``."""
    return pd.read_sql_query(
        "SELECT original, replacement, role, gender, mentions, scope FROM reading_names WHERE book_id = ? ORDER BY rowid",
        project.db.conn, params=[book_id])
