"""The passages the leakage and membership analyses look at, gathered into ``leakage_passages``.

Sources (the ``--source`` of the commands):

- ``cloze``: the name-cloze passages of the project *with the name in place*: for an extracted passage
  the window of the book's own text (so the exact original characters), for an imported one the
  passage with ``[MASK]`` replaced by the gold name. Read through the export registry's public table
  ``cloze-passages`` (this probe does not import the name-cloze probe);
- ``validity``: the downstream-validity passages, through the registry table ``validity-passages``
  (columns ``book_id``, ``passage_id``, ``passage``) once that probe provides it;
- a file: ``.txt`` (passages separated by blank lines) or ``.csv``/``.tsv`` with a header naming
  ``passage`` (or ``text``) and optionally ``book`` (the book's id, external id or exact title) and
  ``passage_id``.

Each passage is stored once per (source, its id there, text); the stored row's id is the item id of
every run on it, so results stay tied to the exact text that was analysed.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

CLOZE, VALIDITY = "cloze", "validity"
MASK = "[MASK]"  # how the name-cloze passages mark the hidden name
COLUMNS = ["passage_id", "source", "source_key", "book_id", "book", "text"]


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def store_passages(project: "Project", source: str, rows: Iterable[tuple[str, int | None, str, str]]) -> list[int]:
    """Store ``(source_key, book_id, label, text)`` rows (once each); their ids, in the given order."""
    rows = [(str(key), book, label or "", text) for key, book, label, text in rows if text and text.strip()]
    stamp = now()
    with project.db.transaction():
        project.db.conn.executemany(
            "INSERT INTO leakage_passages (source, source_key, book_id, label, text, hash, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(source, source_key, hash) DO NOTHING",
            [(source, key, book, label, text, text_hash(text), stamp) for key, book, label, text in rows],
        )
    ids = []
    for key, _, _, text in rows:
        row = project.db.execute("SELECT id FROM leakage_passages WHERE source = ? AND source_key = ? AND hash = ?",
                                 [source, key, text_hash(text)]).fetchone()
        ids.append(int(row[0]))
    return ids


def gather(project: "Project", source: str | Path, *, book_ids: Sequence[int] | None = None) -> list[int]:
    """Passage ids of ``source`` (``cloze``, ``validity`` or a file), stored if new; ``book_ids`` narrows."""
    source_text = str(source)
    if source_text == CLOZE:
        ids = store_passages(project, CLOZE, _cloze_rows(project, book_ids))
    elif source_text == VALIDITY:
        ids = store_passages(project, VALIDITY, _validity_rows(project, book_ids))
    else:
        path = Path(source_text)
        ids = store_passages(project, f"file:{path.name}", file_rows(project, path))
    if not ids:
        raise UserError(f"There are no passages in '{source_text}'" + (" for the chosen books" if book_ids else "") +
                        ". " + NO_PASSAGES_HINT.get(source_text, FILE_HINT))
    return ids


FILE_HINT = ("The file has none: passages are separated by blank lines, or in a 'passage' column of a .csv or "
             ".tsv file.")
NO_PASSAGES_HINT = {
    CLOZE: "Extract name-cloze passages first (palimpsest cloze extract, or the Name cloze page).",
    VALIDITY: "Sample the validity passages first (palimpsest validity passages, or the Validity page).",
}


def _registry_table(project: "Project", name: str, missing: str) -> pd.DataFrame:
    from workbench.export import registry

    if name not in registry.tables():
        raise UserError(missing)
    return registry.table(name).frame(project)


def _cloze_rows(project: "Project", book_ids: Sequence[int] | None) -> list[tuple[str, int, str, str]]:
    from workbench.corpus.library import book_text, books_frame

    frame = _registry_table(project, "cloze-passages", "The name-cloze probe is not installed, so there are no "
                            "name-cloze passages to read.")
    if book_ids is not None:
        frame = frame[frame["book_id"].isin(list(book_ids))]
    titles = _titles(books_frame(project))
    rows, texts = [], {}
    for record in frame.itertuples(index=False):
        book = int(record.book_id)
        text = None
        if pd.notna(record.start_char) and pd.notna(record.end_char):
            if book not in texts:
                texts[book] = book_text(project, book)
            window = texts[book][int(record.start_char) : int(record.end_char)]
            if record.gold in window:
                text = window
        if text is None:
            text = str(record.passage).replace(MASK, str(record.gold), 1)
        rows.append((str(int(record.passage_id)), book, titles.get(book, ""), text))
    return rows


def _validity_rows(project: "Project", book_ids: Sequence[int] | None) -> list[tuple[str, int, str, str]]:
    frame = _registry_table(project, "validity-passages", "There are no downstream-validity passages in this "
                            "version of Palimpsest yet; use the name-cloze passages or a file of passages.")
    if book_ids is not None:
        frame = frame[frame["book_id"].isin(list(book_ids))]
    from workbench.corpus.library import books_frame

    titles = _titles(books_frame(project))
    return [(str(r.passage_id), int(r.book_id), titles.get(int(r.book_id), ""), str(r.passage))
            for r in frame.itertuples(index=False)]


def _titles(books: pd.DataFrame) -> dict[int, str]:
    return {int(i): str(t) for i, t in zip(books["id"], books["title"])} if not books.empty else {}


def file_rows(project: "Project", path: Path) -> list[tuple[str, int | None, str, str]]:
    """Passages of a .txt (blank-line separated) or .csv/.tsv file, with their books where named."""
    from workbench.corpus.decode import decode_text

    if not path.exists() or path.is_dir():
        raise UserError(f"There is no file at {path}. Give a .txt, .csv or .tsv file of passages.")
    text = decode_text(path.read_bytes(), path.name)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv"):
        blocks = [b.strip() for b in text.replace("\r\n", "\n").split("\n\n")]
        return [(str(n), None, path.stem, b) for n, b in enumerate((b for b in blocks if b), start=1)]
    reader = csv.DictReader(io.StringIO(text), delimiter="\t" if suffix == ".tsv" else ",")
    fields = {(f or "").strip().lower(): f for f in reader.fieldnames or []}
    column = fields.get("passage") or fields.get("text")
    if column is None:
        raise UserError(f"{path.name} needs a column named 'passage' (or 'text'); its columns are "
                        f"{', '.join(reader.fieldnames or []) or 'none'}.")
    books = _book_lookup(project)
    rows = []
    for number, record in enumerate(reader, start=2):
        passage = (record.get(column) or "").strip()
        if not passage:
            continue
        label = (record.get(fields["book"]) or "").strip() if "book" in fields else ""
        book_id = None
        if label:
            book_id = books.get(label) or books.get(label.lower())
            if book_id is None:
                raise UserError(f"Line {number} of {path.name} names the book '{label}', which is not in the project "
                                "(give its id, its external id or its exact title).")
        key = (record.get(fields["passage_id"]) or "").strip() if "passage_id" in fields else ""
        rows.append((key or str(number), book_id, label, passage))
    return rows


def _book_lookup(project: "Project") -> dict[str, int]:
    lookup: dict[str, int] = {}
    for book_id, title, external in project.db.execute("SELECT id, title, external_id FROM books").fetchall():
        lookup.setdefault(str(book_id), book_id)
        if external:
            lookup.setdefault(str(external), book_id)
        if title:
            lookup.setdefault(title, book_id)
            lookup.setdefault(title.lower(), book_id)
    return lookup


def passages_frame(project: "Project", ids: Sequence[int] | None = None, *, text: bool = True) -> pd.DataFrame:
    """Stored passages with their book title (``book``: the title, else the label the source gave), in the
    order of ``ids`` if given (those no longer stored left out); ``text=False`` leaves the texts out (a
    results table naming 57,000 passages' books need not read their texts)."""
    columns = COLUMNS if text else [c for c in COLUMNS if c != "text"]
    sql = ("SELECT p.id AS passage_id, p.source, p.source_key, p.book_id,"
           f" COALESCE(NULLIF(b.title, ''), p.label) AS book{', p.text' if text else ''}"
           " FROM leakage_passages p LEFT JOIN books b ON b.id = p.book_id")
    if ids is not None:
        ids = [int(i) for i in ids]  # numpy integers would reach SQLite as bytes
        if not ids:
            return pd.DataFrame(columns=columns)
        frame = pd.read_sql_query(sql + " WHERE p.id IN (SELECT value FROM json_each(?))", project.db.conn,
                                  params=[json.dumps(ids)])
        order = {pid: n for n, pid in enumerate(ids)}
        frame = frame.sort_values("passage_id", key=lambda s: s.map(order)).reset_index(drop=True)
    else:
        frame = pd.read_sql_query(sql + " ORDER BY p.id", project.db.conn)
    frame["book_id"] = frame["book_id"].astype("Int64")
    return frame[columns]


def passage_books(project: "Project", ids: Sequence[int]) -> pd.DataFrame:
    """Beside each of ``ids``, in their order (a passage no longer stored: blanks): its ``source_key``,
    ``book_id`` and ``book`` (as ``passages_frame``), read in one query without the texts: what a results
    frame of 57,000 passages puts beside its numbers, column by column."""
    ids = [int(i) for i in ids]  # numpy integers would reach SQLite as bytes
    rows = project.db.execute(
        "SELECT p.id, p.source_key, p.book_id, COALESCE(NULLIF(b.title, ''), p.label) FROM leakage_passages p"
        " LEFT JOIN books b ON b.id = p.book_id WHERE p.id IN (SELECT value FROM json_each(?))",
        [json.dumps(ids)]).fetchall()
    frame = pd.DataFrame(rows or None, columns=["passage_id", "source_key", "book_id", "book"])
    frame = frame.set_index("passage_id").reindex(ids)
    frame["book_id"] = frame["book_id"].astype("Int64")
    return frame


def passage_texts(project: "Project", ids: Sequence[int]) -> dict[int, str]:
    frame = passages_frame(project, ids)
    missing = set(ids) - set(frame["passage_id"])
    if missing:
        raise UserError(f"{len(missing)} passage(s) of this run are no longer in the project. Start a new run.")
    return dict(zip(frame["passage_id"].astype(int), frame["text"]))
