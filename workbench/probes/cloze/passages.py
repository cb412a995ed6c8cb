"""Stored name-cloze passages: reading, selecting, replacing and deleting them.

``cloze_passages`` holds one row per passage: the window with the name replaced by ``[MASK]``, the gold
name and, for extracted passages, character offsets into the book's stored text such that
``text[start_char:name_start] + gold + text[name_end:end_char]`` is the original window.
``cloze_extractions`` holds, per book, how many candidates were found and how the sample was drawn.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Iterable

import pandas as pd

from workbench.corpus.book_sets import book_set_members
from workbench.errors import UserError
from workbench.probes.cloze.kinds import RUN_KINDS
from workbench.project import now
from workbench.runs import refuse_while_running, run_ids

if TYPE_CHECKING:
    from workbench.probes.cloze.candidates import BookSample
    from workbench.probes.cloze.rules import ExtractionSettings
    from workbench.project import Project

PASSAGE_COLUMNS = [
    "book_id", "passage_id", "passage", "gold", "start_char", "end_char", "name_start", "name_end", "origin",
]


def _placeholders(values: list) -> str:
    return ",".join("?" * len(values))


def _responses_for(project: "Project", passage_ids_sql: str, params: list) -> int:
    row = project.db.execute(
        f"SELECT COUNT(*) FROM responses x WHERE x.run_id IN (SELECT value FROM json_each(?))"
        f" AND x.item_id IN ({passage_ids_sql})",
        [json.dumps(run_ids(project, RUN_KINDS))] + params,
    ).fetchone()
    return row[0]


def extracted_usage(project: "Project", book_ids: Iterable[int]) -> dict[int, tuple[int, int]]:
    """Per book: (extracted passages, responses that point at them)."""
    usage = {}
    for book_id in book_ids:
        passages = project.db.execute(
            "SELECT COUNT(*) FROM cloze_passages WHERE book_id = ? AND origin = 'extracted'", [book_id]
        ).fetchone()[0]
        sql = "SELECT id FROM cloze_passages WHERE book_id = ? AND origin = 'extracted'"
        usage[book_id] = (passages, _responses_for(project, sql, [book_id]) if passages else 0)
    return usage


def _delete_extracted(project: "Project", book_id: int) -> None:
    """Inside a transaction: the book's extracted passages and every cloze response pointing at them."""
    sql = "SELECT id FROM cloze_passages WHERE book_id = ? AND origin = 'extracted'"
    project.db.execute(
        f"DELETE FROM responses WHERE item_id IN ({sql}) AND run_id IN (SELECT value FROM json_each(?))",
        [book_id, json.dumps(run_ids(project, RUN_KINDS))],
    )
    project.db.execute("DELETE FROM cloze_passages WHERE book_id = ? AND origin = 'extracted'", [book_id])
    project.db.execute("DELETE FROM cloze_extractions WHERE book_id = ?", [book_id])


def refuse_replacing(project: "Project", book_ids: Iterable[int], *, replace: bool,
                     titles: dict[int, str] | None = None) -> None:
    """Raise ``UserError`` when extracting these books again would delete answers: always while a name-cloze
    run is being executed (in any program: it may be writing answers for them), and, unless ``replace``,
    when stored answers point at their passages."""
    ids = list(book_ids)
    usage = extracted_usage(project, ids)
    if any(passages for passages, _ in usage.values()):
        refuse_while_running(project, "extract passages again", kinds=RUN_KINDS)
    in_use = {book_id: answers for book_id, (_, answers) in usage.items() if answers > 0}
    if in_use and not replace:
        names = ", ".join(f"{(titles or {}).get(b, f'Book {b}')} ({n} responses)" for b, n in sorted(in_use.items()))
        raise UserError(
            f"Runs already used the passages of {len(in_use)} book(s): {names}. Extracting again would "
            "delete those passages and their responses. Choose 'replace' to do so, or leave these books out."
        )


def replace_extracted(
    project: "Project", book_id: int, sample: "BookSample", settings: "ExtractionSettings", *, model: str,
    replace: bool = True, title: str = "",
) -> list[int]:
    """Store a book's new sample in one transaction, replacing its earlier extracted passages. Checked again
    inside the transaction (``refuse_replacing``): a run may have started or answered since extraction began."""
    stamp = now()
    ids = []
    with project.db.transaction():
        refuse_replacing(project, [book_id], replace=replace, titles={book_id: title})
        _delete_extracted(project, book_id)
        for c, passage in zip(sample.passages, sample.texts):
            cur = project.db.execute(
                "INSERT INTO cloze_passages (book_id, passage, gold, start_char, end_char, name_start, name_end,"
                " origin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'extracted', ?)",
                [book_id, passage, c.gold, c.start_char, c.end_char, c.name_start, c.name_end, stamp],
            )
            ids.append(cur.lastrowid)
        record = {**settings.as_record(), "spacy_model": model, "blocks": sample.blocks, "blocks_read": sample.blocks_read}
        project.db.execute(
            "INSERT INTO cloze_extractions (book_id, candidates, sampled, per_book, seed, fast, settings, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [book_id, sample.candidates, len(sample.passages), settings.per_book, settings.seed, int(settings.fast),
             json.dumps(record, sort_keys=True), stamp],
        )
    return ids


def passages_frame(
    project: "Project", book_ids: Iterable[int] | None = None, *, origin: str | None = None
) -> pd.DataFrame:
    """Stored passages, one row each, in book and text order (columns ``PASSAGE_COLUMNS``)."""
    sql = (
        "SELECT book_id, id AS passage_id, passage, gold, start_char, end_char, name_start, name_end, origin"
        " FROM cloze_passages WHERE 1 = 1"
    )
    params: list = []
    if book_ids is not None:
        ids = list(book_ids)
        sql += f" AND book_id IN ({_placeholders(ids)})"
        params += ids
    if origin is not None:
        sql += " AND origin = ?"
        params.append(origin)
    frame = pd.read_sql_query(sql + " ORDER BY book_id, name_start, id", project.db.conn, params=params)
    for column in ("start_char", "end_char", "name_start", "name_end"):
        frame[column] = frame[column].astype("Int64")
    return frame


def extractions_frame(project: "Project") -> pd.DataFrame:
    """Per extracted book: candidates found, passages sampled, per_book asked for, flagged, seed, fast."""
    frame = pd.read_sql_query(
        "SELECT e.book_id, COALESCE(NULLIF(b.title, ''), b.external_id) AS title, e.candidates, e.sampled,"
        " e.per_book, e.sampled < e.per_book AS flagged, e.seed, e.fast, e.created_at"
        " FROM cloze_extractions e JOIN books b ON b.id = e.book_id ORDER BY e.book_id",
        project.db.conn,
    )
    frame["flagged"] = frame["flagged"].astype(bool)
    frame["fast"] = frame["fast"].astype(bool)
    return frame


def select_books(
    project: "Project",
    *,
    book_ids: Iterable[int] | None = None,
    tags: dict[str, str] | None = None,
    book_set: str | None = None,
) -> list[int] | None:
    """Book ids matching every condition given (None when no condition is given: all books).

    ``UserError`` for an unknown book id or book set.
    """
    if book_ids is None and not tags and book_set is None:
        return None
    ids = [r[0] for r in project.db.execute("SELECT id FROM books ORDER BY id").fetchall()]
    if book_ids is not None:
        wanted = list(dict.fromkeys(book_ids))
        missing = [b for b in wanted if b not in set(ids)]
        if missing:
            raise UserError(f"There is no book with id {missing[0]} in this project. 'palimpsest books' lists them.")
        ids = wanted
    for key, value in (tags or {}).items():
        tagged = {r[0] for r in project.db.execute(
            "SELECT book_id FROM book_tags WHERE key = ? AND value = ?", [key, value])}
        ids = [i for i in ids if i in tagged]
    if book_set is not None:
        members = book_set_members(project, book_set)
        ids = [i for i in ids if i in members]
    return ids


def select_passage_ids(
    project: "Project",
    *,
    book_ids: Iterable[int] | None = None,
    tags: dict[str, str] | None = None,
    book_set: str | None = None,
    origin: str | None = "extracted",
) -> list[int]:
    """Passage ids for a probe run: every stored passage, or those of chosen books, tags or a book set.

    Conditions combine with AND. ``origin`` None takes imported passages too.
    """
    books = select_books(project, book_ids=book_ids, tags=tags, book_set=book_set)
    sql = "SELECT p.id FROM cloze_passages p WHERE 1 = 1"
    params: list = []
    if books is not None:
        if not books:
            return []
        sql += f" AND p.book_id IN ({_placeholders(books)})"
        params += books
    if origin is not None:
        sql += " AND p.origin = ?"
        params.append(origin)
    return [r[0] for r in project.db.execute(sql + " ORDER BY p.book_id, p.name_start, p.id", params).fetchall()]
