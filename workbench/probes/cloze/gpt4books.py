"""Importing published name-cloze results in the gpt4-books format (Chang et al. 2023).

One TSV file per book, no header, four tab-separated columns per line:

1. the model's raw response (e.g. ``<name>Elizabeth</name>``),
2. the response without tags (as the authors parsed it),
3. the gold name,
4. the passage, with ``[MASK]`` where the name was.

The book id is the file name's stem.

**Runs.** One import makes one ``cloze`` run of the ``external`` model ``model_label`` (created if
needed), holding every row of the files it brings in; the run's config lists those files (name, rows,
book) and the passages. Answers are scored by the same scorer as Palimpsest's own runs when read; column
2 is kept in each response's ``extra`` (``published_parsed``, with the file and line) and compared with
our parse (``parse_disagreements`` in the summary).

**Importing again.** A file whose rows are all already the model's answers (the same passages, the
same raw answers and published parses) adds nothing: importing the same files again changes nothing,
and importing a folder again after adding files to it brings in only the new files, as a new run of
the same model. A file whose answers differ from the stored ones (a corrected release) goes into the
new run whole; being newer, its answers are the ones the analyses count. Passages are found again by
book, text and name, so two models' files of the same books share passages (and McNemar's test can
pair them). Projects that hold one run per file from earlier versions keep working: their answers are
recognised the same way, and analyses read a book's answers across runs.

**Books.** A library book whose ``external_id`` equals the stem; else, for a stem such as ``pg1342``,
``1342`` or ``1342_pride_and_prejudice``, a book with that Project Gutenberg number (one that already
holds imported results first, then one with text); else a new book without text (``source_kind``
'external', no ``book_texts`` row), with the file name as its source and a title, author and Gutenberg
number (its ``external_id``) read from the stem where it carries them (``readable_id``; else the stem
is both its title and its ``external_id``). A metadata table can fill in the rest later (matched by
file name, external id or Gutenberg number).

**Safety.** Every file is read and checked before anything is written; bad rows stop the import with
the file and line of each problem. Everything is then written in one transaction, in large batches:
an import that fails or is cancelled leaves the project as it was.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, NamedTuple, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.jobs import create_run
from workbench.models.registry import external_model
from workbench.probes.cloze import MASK
from workbench.probes.cloze.run import CLOZE_KIND
from workbench.probes.cloze.score import is_correct, parse_answer
from workbench.progress import TaskState
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

FORMAT = "gpt4books"
GUTENBERG_STEM = re.compile(r"^(?:pg)?(\d+)(?:[_\-.](.*))?$", re.IGNORECASE)
MAX_PROBLEMS_SHOWN = 5
BATCH_FILES = 50  # files written per batch (a check for Cancel between batches)
TEXT_KINDS = ("gutenberg", "download")  # books found by Gutenberg number that have their text
SMALL_WORDS = {"a", "an", "and", "as", "at", "but", "by", "for", "from", "in", "into", "nor", "of", "on", "or", "the",
               "to", "with"}


class Row(NamedTuple):  # a tuple: tens of thousands are made per import
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


@dataclass(frozen=True)
class ReadableId:
    """What a results file's stem says about its book."""

    title: str = ""
    author: str = ""
    gutenberg: int | None = None


def _title_case(words: Sequence[str]) -> str:
    return " ".join(w[:1].upper() + w[1:] if i == 0 or w.lower() not in SMALL_WORDS else w.lower()
                    for i, w in enumerate(words))


def _squashed(words: Sequence[str]) -> str:
    return re.sub(r"[^0-9a-z]", "", "".join(words).casefold())


def readable_id(stem: str) -> ReadableId:
    """Title, author and Gutenberg number from the two file-name forms of the published results.

    - ``1342_pride_and_prejudice`` (or ``pg1342``, ``1342``): Gutenberg number 1342, title "Pride and
      Prejudice" (the words title-cased);
    - ``austen_pride_and_prejudice_Pride_and_Prejudice``: author "Austen", title "Pride and Prejudice"
      (the author's words, then the title in lower case, then the title as published, which must have
      a capital letter and match the lower-case words).

    Anything else (``b01``, ``unknown_book``) gives nothing: the id itself then names the book.
    """
    number = GUTENBERG_STEM.match(stem)
    if number:
        words = [w for w in re.split(r"[_\-\s]+", number.group(2) or "") if w]
        if not any(c.isalpha() for c in "".join(words)):  # 1342-0.txt: Gutenberg's encoding suffix
            words = []
        return ReadableId(title=_title_case(words), gutenberg=int(number.group(1)))
    parts = [p for p in stem.split("_") if p]
    for author_end in range(1, len(parts) - 1):
        for title_start in range(author_end + 1, len(parts)):
            lower, published = parts[author_end:title_start], parts[title_start:]
            if _squashed(lower) == _squashed(published) and any(c.isupper() for c in "".join(published)):
                author = " ".join(p[:1].upper() + p[1:] for p in parts[:author_end])
                return ReadableId(title=" ".join(published), author=author)
    return _loosely_readable(stem)


GUTENBERG_IN_STEM = re.compile(r"_gutenberg_(?:pg)?(\d+)(?:-\d+)?_")


def _loosely_readable(stem: str) -> ReadableId:
    """The published results' other file names: the author's surname, a lower-case slug that need not spell the
    title (``butler_seed_to_harvest_Wild_Seed``: a collection; ``golden_memoirs_of_a_geisha_Memoirs_of_Geisha``),
    then the title as published, from its first capitalised word; or a title without letters said twice
    (``orwell_1984_1984``). A slug may hold the Gutenberg number (``..._gutenberg_pg2046_Clotel...``)."""
    raw = stem.split("_")
    if len(raw) < 3 or not raw[0].isalpha() or not raw[0].islower():
        return ReadableId()
    start = next((i for i in range(2, len(raw)) if raw[i][:1].isupper()), None)
    if start is None:
        start = next((len(raw) - size for size in range(1, (len(raw) - 1) // 2 + 1)
                      if raw[-size:] == raw[-2 * size:-size] and not any(c.isalpha() for c in "".join(raw[-size:]))),
                     None)
    if start is None:
        return ReadableId()
    title = "_".join(raw[start:])
    title = re.sub(r"__(.+?)_$", r" (\1)", title)  # The_Girl_on_the_Train__trade_paperback_: parentheses
    title = title.replace("___", " & ").replace("_s_", "'s ").replace("_", " ")
    if title.endswith(" s"):
        title = title[:-2] + "'s"
    number = GUTENBERG_IN_STEM.search("_".join(raw[:start]) + "_")
    return ReadableId(title=re.sub(r"\s+", " ", title).strip(), author=raw[0].capitalize(),
                      gutenberg=int(number.group(1)) if number else None)


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
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")  # no quoting in this format: a tab always separates columns
        if len(fields) != 4:
            problems.append(
                f"{path.name}, line {number}: expected 4 columns separated by tabs (response, response without "
                f"tags, name, passage), found {len(fields)}."
            )
            continue
        raw, parsed, gold, passage = fields
        masks = passage.count(MASK)
        if not gold.strip():
            problems.append(f"{path.name}, line {number}: the name (third column) is empty.")
        elif masks != 1:
            problems.append(f"{path.name}, line {number}: the passage (fourth column) must contain {MASK} once; "
                            f"it has it {masks} times.")
        else:
            rows.append(Row(number, raw, parsed, gold.strip(), passage))
    if not rows and not problems:
        problems.append(f"{path.name}: the file has no rows.")
    return BookFile(path, rows), problems


def read_files(paths: Sequence[Path], state: TaskState | None = None) -> list[BookFile]:
    """Every file read and checked; ``UserError`` listing the first problems if any row is bad."""
    if not paths:
        raise UserError("Choose at least one results file (.tsv) to import.")
    state = state or TaskState()
    files, problems = [], []
    for number, path in enumerate(paths):
        state.check()
        state.progress(number, len(paths), f"Reading {Path(path).name}")
        book_file, found = read_file(Path(path))
        files.append(book_file)
        problems += found
    counts: dict[str, int] = defaultdict(int)
    for book_file in files:
        counts[book_file.book_key] += 1
    duplicated = sorted(k for k, n in counts.items() if n > 1)
    if duplicated:
        problems.append(f"Several files are named for the same book: {', '.join(duplicated)}. Import one per book.")
    _refuse(problems)
    return files


def _refuse(problems: list[str]) -> None:
    if problems:
        shown = "\n".join(problems[:MAX_PROBLEMS_SHOWN])
        more = f"\n... and {len(problems) - MAX_PROBLEMS_SHOWN} more." if len(problems) > MAX_PROBLEMS_SHOWN else ""
        raise UserError(f"Nothing was imported: {len(problems)} problem(s) in the files.\n{shown}{more}")


class BookMatcher:
    """Finds the library book of each results file (see the module's **Books**), creating the missing
    ones (``save`` stores them); one read of the library for a whole import. Use inside the import's
    transaction."""

    def __init__(self, project: "Project"):
        self.project = project
        self.by_external: dict[str, int] = {}
        by_number: dict[str, list[tuple[tuple, int]]] = defaultdict(list)
        for book_id, kind, external_id, has_results in project.db.execute(
            "SELECT b.id, b.source_kind, b.external_id, EXISTS (SELECT 1 FROM cloze_passages p"
            " WHERE p.book_id = b.id AND p.origin = 'imported') FROM books b WHERE b.external_id IS NOT NULL"
            " ORDER BY b.id"
        ):
            self.by_external.setdefault(external_id, book_id)
            if kind in TEXT_KINDS or kind == "external":
                by_number[external_id].append(((not has_results, kind not in TEXT_KINDS, book_id), book_id))
        self.by_number = {number: min(found)[1] for number, found in by_number.items()}
        self.next_id = project.db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM books").fetchone()[0]
        self.new: list[tuple] = []

    def match(self, book_file: BookFile) -> tuple[int, bool]:
        """(book id, True if it was created now) for a results file."""
        key = book_file.book_key
        if key in self.by_external:
            return self.by_external[key], False
        readable = readable_id(key)
        number = str(readable.gutenberg) if readable.gutenberg is not None else None
        if number in self.by_number:
            return self.by_number[number], False
        book_id, self.next_id = self.next_id, self.next_id + 1
        # a stem that names no title stands in for one (the Library shows no blank titles)
        self.new.append((book_id, readable.title or key, readable.author, book_file.path.name, number or key, now()))
        self.by_external[number or key] = book_id
        if number is not None:
            self.by_number[number] = book_id
        return book_id, True

    def save(self) -> None:
        """Store the books created by ``match`` (in one batch)."""
        self.project.db.conn.executemany(
            "INSERT INTO books (id, title, author, source_kind, source_name, external_id, added_at)"
            " VALUES (?, ?, ?, 'external', ?, ?, ?)", self.new)
        self.new = []


def _passage_ids(project: "Project", files: list[BookFile], book_ids: list[int]) -> list[list[int]]:
    """Per file, one passage id per row: earlier imported passages of the book with the same text and
    name are reused in order, the others inserted (in one batch)."""
    db = project.db
    pools: dict[tuple[int, str, str], list[int]] = {}  # (book, passage, name) -> passage ids, oldest first
    for pid, book_id, passage, gold in db.execute(
        "SELECT id, book_id, passage, gold FROM cloze_passages WHERE origin = 'imported'"
        " AND book_id IN (SELECT value FROM json_each(?)) ORDER BY id", [json.dumps(book_ids)]
    ).fetchall():
        pools.setdefault((book_id, passage, gold), []).append(pid)
    next_id = db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM cloze_passages").fetchone()[0]
    new, ids, stamp = [], [], now()
    pooled = {book_id for book_id, _, _ in pools}
    for book_file, book_id in zip(files, book_ids):
        file_ids = []
        for row in book_file.rows:
            pool = pools.get((book_id, row.passage, row.gold)) if book_id in pooled else None
            if pool:
                file_ids.append(pool.pop(0))
            else:
                new.append((next_id, book_id, row.passage, row.gold, stamp))
                file_ids.append(next_id)
                next_id += 1
        ids.append(file_ids)
    db.conn.executemany(
        "INSERT INTO cloze_passages (id, book_id, passage, gold, origin, created_at) VALUES (?, ?, ?, ?, 'imported', ?)",
        new,
    )
    return ids


def _stored_answers(project: "Project", model_id: int) -> dict[int, tuple[str | None, str | None, int]]:
    """Passage id -> (raw, published parse, run id) of the model's newest stored answer to it."""
    stored: dict[int, tuple[str | None, str | None, int]] = {}
    for item_id, raw, extra, run_id in project.db.execute(
        "SELECT x.item_id, x.raw, x.extra, x.run_id FROM responses x JOIN runs r ON r.id = x.run_id"
        " WHERE r.model_id = ? AND r.kind = ? AND x.sample = 0 ORDER BY x.run_id", [model_id, CLOZE_KIND]
    ):
        stored[item_id] = (raw, extra, run_id)
    return {pid: (raw, json.loads(extra or "{}").get("published_parsed"), run_id)
            for pid, (raw, extra, run_id) in stored.items()}


def _describe(files: list[BookFile]) -> str:
    """How the methods text and the Jobs page name an import's files: the file, or how many and where."""
    if len(files) == 1:
        return files[0].path.name
    folders = {f.path.parent.name for f in files}
    where = f" in {folders.pop()}/" if len(folders) == 1 and "" not in folders else ""
    return f"{len(files):,} files{where}"


def _response_rows(run_id: int, book_file: BookFile, ids: list[int], stamp: str) -> list[tuple]:
    name = encode_basestring_ascii(book_file.path.name)
    return [
        (run_id, pid, "ok", row.raw, '{"file": %s, "line": %d, "published_parsed": %s}'  # json.dumps's own form
         % (name, row.line, encode_basestring_ascii(row.published_parsed)), stamp)
        for row, pid in zip(book_file.rows, ids)
    ]


#: ``added``: the file's answers were stored by this import (False: it had been imported before)
SUMMARY_COLUMNS = ["file", "book_id", "book", "new_book", "rows", "correct", "parse_disagreements", "run_id", "added"]


def import_gpt4books(
    project: "Project", paths: Iterable[str | Path], model_label: str, state: TaskState | None = None
) -> pd.DataFrame:
    """Import gpt4-books TSV files as one run of the external model ``model_label`` (see the module's
    docstring for what importing again does); one summary row per file, ``run_id`` the run that holds
    its answers (the new run, or the earlier one when nothing in the file was new)."""
    state = state or TaskState()
    files = read_files([Path(p) for p in paths], state)
    db = project.db
    total = len(files)
    with db.transaction():  # everything or nothing; a cancel rolls it back
        model_id = external_model(project, model_label)
        matcher = BookMatcher(project)
        matched = [matcher.match(f) for f in files]
        matcher.save()
        book_ids = [book_id for book_id, _ in matched]
        _refuse_shared_books(files, book_ids)
        state.check()
        passage_ids = _passage_ids(project, files, book_ids)
        stored = _stored_answers(project, model_id)
        changed = [any(stored.get(pid, (None, None, 0))[:2] != (row.raw, row.published_parsed)
                       for row, pid in zip(f.rows, ids)) for f, ids in zip(files, passage_ids)]
        new_files = [i for i, c in enumerate(changed) if c]
        run_id = None
        if new_files:
            run_id = _new_run(project, model_id, [files[i] for i in new_files], [book_ids[i] for i in new_files],
                              [passage_ids[i] for i in new_files])
            stamp = now()
            for start in range(0, len(new_files), BATCH_FILES):
                state.check()
                state.progress(start, len(new_files), f"Saving the answers of {len(new_files):,} files")
                batch = [row for i in new_files[start:start + BATCH_FILES]
                         for row in _response_rows(run_id, files[i], passage_ids[i], stamp)]
                db.conn.executemany(
                    "INSERT INTO responses (run_id, item_id, sample, status, raw, extra, created_at)"
                    " VALUES (?, ?, 0, ?, ?, ?, ?)", batch)
        state.check()
        names = dict(db.execute(
            "SELECT id, COALESCE(NULLIF(title, ''), external_id, 'Book ' || id) FROM books"
            " WHERE id IN (SELECT value FROM json_each(?))", [json.dumps(book_ids)]).fetchall())
    summary, parsed_answers = [], {}
    for book_file, (book_id, created), ids, is_new in zip(files, matched, passage_ids, changed):
        correct, disagreements = _score(book_file.rows, parsed_answers)
        summary.append({
            "file": book_file.path.name, "book_id": book_id, "book": names[book_id], "new_book": created,
            "rows": len(book_file.rows), "correct": correct, "parse_disagreements": disagreements,
            "run_id": run_id if is_new else max(stored[pid][2] for pid in ids), "added": is_new,
        })
    state.progress(total, total, "Imported", force=True)
    return pd.DataFrame(summary, columns=SUMMARY_COLUMNS)


def _refuse_shared_books(files: list[BookFile], book_ids: list[int]) -> None:
    """Two files of one import for the same book (``1342.txt`` and ``pg1342_x.txt``) would mix their rows."""
    seen: dict[int, str] = {}
    problems = []
    for book_file, book_id in zip(files, book_ids):
        if book_id in seen:
            problems.append(f"{seen[book_id]} and {book_file.path.name} are results for the same book. "
                            "Import one file per book.")
        seen.setdefault(book_id, book_file.path.name)
    _refuse(problems)


def _new_run(project: "Project", model_id: int, files: list[BookFile], book_ids: list[int],
             passage_ids: list[list[int]]) -> int:
    """The import's run: a finished ``cloze`` run of the external model, its files and passages in config."""
    config = {
        "format": FORMAT,
        "imported_from": _describe(files),
        "files": [{"file": f.path.name, "rows": len(f.rows), "book_id": b} for f, b in zip(files, book_ids)],
        "passage_ids": [pid for ids in passage_ids for pid in ids],
    }
    run_id = create_run(project, CLOZE_KIND, model_id=model_id, params={}, config=config,
                        total=len(config["passage_ids"]))
    stamp = now()
    project.db.execute("UPDATE runs SET status = 'done', started_at = ?, finished_at = ? WHERE id = ?",
                       [stamp, stamp, run_id])
    return run_id


def _score(rows: list[Row], parsed_answers: dict[str, str]) -> tuple[int, int]:
    """(correct answers, answers whose published parse differs from ours) of one file's rows;
    ``parsed_answers`` keeps each distinct answer's parse for the next file."""
    correct = disagreements = 0
    for row in rows:
        parsed = parsed_answers.get(row.raw)
        if parsed is None:
            parsed = parsed_answers[row.raw] = parse_answer(row.raw)
        correct += is_correct(parsed, row.gold)
        disagreements += parsed != row.published_parsed.strip()
    return correct, disagreements


def import_summary_text(summary: pd.DataFrame, model_label: str) -> str:
    """What an import did, in a sentence or three (the CLI and the Probes page say the same)."""
    added = summary[summary["added"]]
    before = len(summary) - len(added)
    if added.empty:
        return (f"Nothing new: {'this file was' if before == 1 else f'these {before} files were'} imported before "
                f"under '{model_label}', so nothing was added.")
    run = int(added["run_id"].iloc[0])
    text = f"Imported {int(added['rows'].sum()):,} answers for {len(added)} book(s) under '{model_label}' (run {run})."
    if before:
        text += f" {before} file(s) had been imported before and added nothing."
    new = int(summary["new_book"].sum())
    if new:
        text += (f" {new} book(s) were not in the library and were added from their file names, without text "
                 "(a metadata table can fill in their titles, authors and years).")
    return text
