"""A whole book in scenes: consecutive pieces of about N words that cover its stored text exactly once.

Scenes end at paragraph boundaries; a paragraph longer than a scene is cut between its sentences
(``workbench.annotation.passages`` finds both). A scene closes before the paragraph or sentence that
would take it further from the target than it already is, and a heading (a chapter title, say) opens a
new scene once the current one holds at least half the target. A last scene shorter than a third of the
target joins the one before it.

Each scene knows its character offsets (scene ``i`` ends where scene ``i + 1`` starts; the first starts
at 0, the last ends at the end of the text) and its word position: the words of the book before it.
A question asked after scene ``c`` about scene ``s`` therefore has a retention demand of
``word_end(c) - word_end(s)`` words: what was read between the end of that scene and the question.

Scenes are stored as a *scene set* per book and target length (``reading_scene_sets``), so cutting the
same book again with the same settings finds the stored set, and summaries and questions that refer
to a set's scenes stay valid when another length is tried.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from workbench.annotation.passages import is_barrier, paragraph_spans, sentence_spans, word_count
from workbench.errors import UserError
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

DEFAULT_WORDS = 800
MIN_WORDS = 50
HEADING_OPENS_AT = 0.5
LAST_JOINS_BELOW = 1 / 3


@dataclass(frozen=True)
class Scene:
    scene: int
    start_char: int
    end_char: int
    words: int
    word_start: int

    @property
    def word_end(self) -> int:
        """Words of the book up to the end of this scene."""
        return self.word_start + self.words


@dataclass(frozen=True)
class SceneSet:
    id: int
    book_id: int
    target_words: int
    scenes: tuple[Scene, ...]

    @property
    def words(self) -> int:
        return self.scenes[-1].word_end if self.scenes else 0


@dataclass(frozen=True)
class _Unit:
    start: int
    words: int
    heading: bool


def _units(text: str, target: int) -> list[_Unit]:
    """Paragraphs, or the sentences of paragraphs longer than a scene, in order."""
    units = []
    for para in paragraph_spans(text):
        chunk = text[para.start : para.end]
        words = word_count(chunk)
        if words > target:
            units.extend(_Unit(s.start, word_count(text[s.start : s.end]), False) for s in sentence_spans(text, para))
        elif words:
            units.append(_Unit(para.start, words, is_barrier(chunk)))
    return units


def cut_scenes(text: str, target_words: int = DEFAULT_WORDS) -> list[Scene]:
    """The scenes of ``text`` (see the module's description)."""
    if target_words < MIN_WORDS:
        raise UserError(f"A scene should be at least {MIN_WORDS} words long (you asked for {target_words}).")
    groups: list[list[_Unit]] = []
    size = 0
    for unit in _units(text, target_words):
        if groups and groups[-1]:
            heading_break = unit.heading and size >= target_words * HEADING_OPENS_AT
            farther = abs(size + unit.words - target_words) > abs(size - target_words)
            if heading_break or (size + unit.words > target_words and farther):
                groups.append([])
                size = 0
        if not groups:
            groups.append([])
        groups[-1].append(unit)
        size += unit.words
    if not groups:
        raise UserError("The book has no words to cut into scenes.")
    if len(groups) > 1 and sum(u.words for u in groups[-1]) < target_words * LAST_JOINS_BELOW:
        groups[-2].extend(groups.pop())
    scenes = []
    word_start = 0
    for number, group in enumerate(groups):
        start = 0 if number == 0 else group[0].start
        end = groups[number + 1][0].start if number + 1 < len(groups) else len(text)
        words = sum(u.words for u in group)
        scenes.append(Scene(number, start, end, words, word_start))
        word_start += words
    return scenes


# ---------------------------------------------------------------------------------------------- storage
def make_scenes(project: "Project", book_id: int, target_words: int = DEFAULT_WORDS) -> SceneSet:
    """Cut the book into scenes and store them; the stored set when this book was cut this way before."""
    from workbench.corpus.library import book_text

    text = book_text(project, book_id)
    digest = _content_hash(project, book_id)
    found = _find_set(project, book_id, target_words, digest)
    if found is not None:
        return get_scene_set(project, found)
    scenes = cut_scenes(text, target_words)
    db = project.db
    with db.transaction():
        cur = db.execute(
            "INSERT INTO reading_scene_sets (book_id, target_words, content_hash, scenes, words, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [book_id, target_words, digest, len(scenes), scenes[-1].word_end, now()],
        )
        set_id = cur.lastrowid
        db.conn.executemany(
            "INSERT INTO reading_scenes (set_id, scene, start_char, end_char, words, word_start) VALUES (?, ?, ?, ?, ?, ?)",
            [(set_id, s.scene, s.start_char, s.end_char, s.words, s.word_start) for s in scenes],
        )
    return SceneSet(set_id, book_id, target_words, tuple(scenes))


def _content_hash(project: "Project", book_id: int) -> str | None:
    row = project.db.execute("SELECT content_hash FROM books WHERE id = ?", [book_id]).fetchone()
    return row[0] if row else None


def _find_set(project: "Project", book_id: int, target_words: int, digest: str | None) -> int | None:
    row = project.db.execute(
        "SELECT id FROM reading_scene_sets WHERE book_id = ? AND target_words = ? AND content_hash IS ?",
        [book_id, target_words, digest],
    ).fetchone()
    return row[0] if row else None


def get_scene_set(project: "Project", set_id: int) -> SceneSet:
    row = project.db.execute("SELECT book_id, target_words FROM reading_scene_sets WHERE id = ?", [set_id]).fetchone()
    if row is None:
        raise UserError(f"There is no scene set number {set_id} in this project.")
    scenes = project.db.execute(
        "SELECT scene, start_char, end_char, words, word_start FROM reading_scenes WHERE set_id = ? ORDER BY scene",
        [set_id],
    ).fetchall()
    return SceneSet(set_id, row[0], row[1], tuple(Scene(*s) for s in scenes))


def latest_scene_set(project: "Project", book_id: int, target_words: int | None = None) -> SceneSet:
    """The book's most recent scene set (of that length, if given); a plain error when there is none."""
    sql = "SELECT id FROM reading_scene_sets WHERE book_id = ?"
    params: list = [book_id]
    if target_words is not None:
        sql += " AND target_words = ?"
        params.append(target_words)
    row = project.db.execute(sql + " ORDER BY id DESC LIMIT 1", params).fetchone()
    if row is None:
        raise UserError(f"Book {book_id} has not been cut into scenes yet. Run 'palimpsest reading scenes' first.")
    return get_scene_set(project, row[0])


def scenes_frame(project: "Project", scene_set: SceneSet, *, with_text: bool = True) -> pd.DataFrame:
    """One row per scene: ``scene`` (0-based), ``start_char``, ``end_char``, ``words``, ``text``."""
    from workbench.corpus.library import book_text

    text = book_text(project, scene_set.book_id) if with_text else ""
    rows = [{"scene": s.scene, "start_char": s.start_char, "end_char": s.end_char, "words": s.words,
             **({"text": text[s.start_char : s.end_char].strip()} if with_text else {})}
            for s in scene_set.scenes]
    columns = ["scene", "start_char", "end_char", "words"] + (["text"] if with_text else [])
    return pd.DataFrame(rows, columns=columns)
