"""Importing published name-cloze results in the gpt4-books format (Chang et al. 2023).

One TSV file per book, no header, four tab-separated columns per line:

1. the model's raw response (e.g. ``<name>Elizabeth</name>``),
2. the response without tags (as the authors parsed it),
3. the gold name,
4. the passage, with ``[MASK]`` where the name was.

The book id is the file name's stem. The results become one ``cloze`` run per file for a model with
backend ``external`` (created if needed), scored by the same scorer as Palimpsest's own runs; column 2
is kept in ``extra`` and compared with our parse (``parse_disagreements`` in the summary).

Books: a library book whose ``external_id`` equals the stem; else, for a stem such as ``pg1342``,
``1342`` or ``1342_pride_and_prejudice``, a Project Gutenberg book with that number; else a new id-only
book (``external_id`` = stem, ``source_kind`` 'external', no text).

Importing the same file again changes nothing: passages and the run are found again, not duplicated.
Bad rows stop the import before anything is written, with the file and line of each problem.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.jobs import Outcome, Unit, find_or_create_run, run_job
from workbench.models.registry import external_model
from workbench.probes.cloze import MASK
from workbench.probes.cloze.run import CLOZE_KIND
from workbench.probes.cloze.score import parse_answer
from workbench.progress import TaskState
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

FORMAT = "gpt4books"
GUTENBERG_STEM = re.compile(r"^(?:pg)?(\d+)(?:[_\-.].*)?$", re.IGNORECASE)
MAX_PROBLEMS_SHOWN = 5


@dataclass(frozen=True)
class Row:
    line: int
    raw: str
    published_parsed: str
    gold: str
    passage: str


@dataclass
class BookFile:
    path: Path
    rows: list[Row]

    @property
    def book_key(self) -> str:
        return self.path.stem


def read_file(path: Path) -> tuple[BookFile, list[str]]:
    """The rows of one TSV file and the problems found in it (each naming file and line)."""
    path = Path(path)
    problems: list[str] = []
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"Could not read {path}: {exc.strerror or exc}.") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path.name} is not UTF-8 text (byte {exc.start}). Save it as UTF-8 and import again.") from exc
    rows = []
    for number, fields in enumerate(csv.reader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE), start=1):
        if not fields or all(not f.strip() for f in fields):
            continue
        where = f"{path.name}, line {number}"
        if len(fields) != 4:
            problems.append(
                f"{where}: expected 4 columns separated by tabs (response, response without tags, name, passage), "
                f"found {len(fields)}."
            )
            continue
        raw, parsed, gold, passage = fields
        if not gold.strip():
            problems.append(f"{where}: the name (third column) is empty.")
        elif passage.count(MASK) != 1:
            problems.append(f"{where}: the passage (fourth column) must contain {MASK} once; it has it {passage.count(MASK)} times.")
        else:
            rows.append(Row(number, raw, parsed, gold.strip(), passage))
    if not rows and not problems:
        problems.append(f"{path.name}: the file has no rows.")
    return BookFile(path, rows), problems


def read_files(paths: Sequence[Path]) -> list[BookFile]:
    """Every file read and checked; ``UserError`` listing the first problems if any row is bad."""
    if not paths:
        raise UserError("Choose at least one results file (.tsv) to import.")
    files, problems = [], []
    for path in paths:
        book_file, found = read_file(Path(path))
        files.append(book_file)
        problems += found
    keys = [f.book_key for f in files]
    duplicated = sorted({k for k in keys if keys.count(k) > 1})
    if duplicated:
        problems.append(f"Several files are named for the same book: {', '.join(duplicated)}. Import one per book.")
    if problems:
        shown = "\n".join(problems[:MAX_PROBLEMS_SHOWN])
        more = f"\n... and {len(problems) - MAX_PROBLEMS_SHOWN} more." if len(problems) > MAX_PROBLEMS_SHOWN else ""
        raise UserError(f"Nothing was imported: {len(problems)} problem(s) in the files.\n{shown}{more}")
    return files


def match_book(project: "Project", key: str) -> tuple[int, bool]:
    """(book id, True if it was created) for a results file named ``key``."""
    db = project.db
    row = db.execute("SELECT id FROM books WHERE external_id = ? ORDER BY id LIMIT 1", [key]).fetchone()
    if row is not None:
        return row[0], False
    number = GUTENBERG_STEM.match(key)
    if number:
        row = db.execute(
            "SELECT id FROM books WHERE external_id = ? AND source_kind IN ('gutenberg', 'download') ORDER BY id LIMIT 1",
            [str(int(number.group(1)))],
        ).fetchone()
        if row is not None:
            return row[0], False
    with db.transaction():
        cur = db.execute(
            "INSERT INTO books (title, source_kind, source_name, external_id, added_at) VALUES ('', 'external', ?, ?, ?)",
            [f"{key} (imported results)", key, now()],
        )
    return cur.lastrowid, True


def imported_passage_ids(project: "Project", book_id: int, rows: Sequence[Row]) -> list[int]:
    """One passage per row: earlier imported passages with the same text and name are reused in order."""
    db = project.db
    existing: dict[tuple[str, str], list[int]] = {}
    for pid, passage, gold in db.execute(
        "SELECT id, passage, gold FROM cloze_passages WHERE book_id = ? AND origin = 'imported' ORDER BY id", [book_id]
    ):
        existing.setdefault((passage, gold), []).append(pid)
    ids = []
    stamp = now()
    with db.transaction():
        for row in rows:
            pool = existing.get((row.passage, row.gold))
            if pool:
                ids.append(pool.pop(0))
                continue
            cur = db.execute(
                "INSERT INTO cloze_passages (book_id, passage, gold, origin, created_at) VALUES (?, ?, ?, 'imported', ?)",
                [book_id, row.passage, row.gold, stamp],
            )
            ids.append(cur.lastrowid)
    return ids


SUMMARY_COLUMNS = ["file", "book_id", "book", "new_book", "rows", "correct", "parse_disagreements", "run_id"]


def import_gpt4books(
    project: "Project", paths: Iterable[str | Path], model_label: str, state: TaskState | None = None
) -> pd.DataFrame:
    """Import gpt4-books TSV files as runs of the external model ``model_label``; one summary row per file."""
    from workbench.corpus.library import get_book
    from workbench.probes.cloze.score import is_correct

    state = state or TaskState()
    files = read_files([Path(p) for p in paths])
    model_id = external_model(project, model_label)
    summary = []
    for number, book_file in enumerate(files):
        state.check()
        state.progress(number, len(files), f"Importing {book_file.path.name}")
        book_id, created = match_book(project, book_file.book_key)
        ids = imported_passage_ids(project, book_id, book_file.rows)
        config = {"passage_ids": ids, "imported_from": book_file.path.name, "format": FORMAT}
        run_id = find_or_create_run(project, CLOZE_KIND, model_id=model_id, params={}, config=config, total=len(ids))
        outcomes = {i: row for i, row in zip(ids, book_file.rows)}

        def process(units, _state, outcomes=outcomes):
            for unit in units:
                row = outcomes[unit.item_id]
                yield unit, Outcome(raw=row.raw, extra={"published_parsed": row.published_parsed, "line": row.line})

        run_job(project, run_id, [Unit(i) for i in ids], process)
        book = get_book(project, book_id)
        summary.append({
            "file": book_file.path.name,
            "book_id": book_id,
            "book": book.display_name,
            "new_book": created,
            "rows": len(book_file.rows),
            "correct": sum(is_correct(parse_answer(r.raw), r.gold) for r in book_file.rows),
            "parse_disagreements": sum(parse_answer(r.raw) != r.published_parsed.strip() for r in book_file.rows),
            "run_id": run_id,
        })
    state.progress(len(files), len(files), "Imported", force=True)
    return pd.DataFrame(summary, columns=SUMMARY_COLUMNS)
