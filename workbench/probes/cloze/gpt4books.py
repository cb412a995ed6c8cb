"""Importing published name-cloze results in the gpt4-books format (Chang et al. 2023).

One TSV file per book, no header, four tab-separated columns per line:

1. the model's raw response (e.g. ``<name>Elizabeth</name>``),
2. the response without tags (as the authors parsed it),
3. the gold name,
4. the passage, with ``[MASK]`` where the name was.

The book id is the file name's stem. A folder stands for its ``.tsv`` and ``.txt`` files (as in the published
``data/model_output/gpt4_results/``); this is the only input format.

**Runs.** One import makes one ``cloze`` run of the ``external`` model ``model_label`` (created if
needed), holding every row of the files it brings in; the run's config lists those files (name, rows,
book), and its responses say which passages it holds (older versions also listed every passage id in the
config; such runs are read the same way). Answers are scored by the same scorer as Palimpsest's own runs when read; column
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

**One file, one book.** A published file is a row of a published table, so each file's answers stay
apart and its accuracy can be recomputed from the file alone. Two files of one import that would find the
same book (the published outputs hold ``472_the_house_behind_the_cedars.txt`` and
``chesnutt_the_house_behind_the_cedars_gutenberg_pg472_House_Behind_the_Cedars.txt``: the same passages of
Gutenberg 472, answered twice) become two books, both tagged ``same_work`` (``Gutenberg 472``): the first
file takes the book it matched, the other gets a book of its own, whose ``external_id`` is its stem (or
its file name, if another book has the stem) so that the next import finds it again by name. So does a
file matched only by its Gutenberg number to a book that holds this model's answers from a file of
another name. Nothing is refused for such a pair. Per-book tables count the two as two books, as the
paper's table of 571 books does; their CSVs tell them apart by ``book_id`` and ``book_source``.

**Safety.** Every file is read and checked before anything is written; bad rows stop the import with
the file and line of each problem. Everything is then written in one transaction, in large batches:
an import that fails or is cancelled leaves the project as it was.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from itertools import chain, count
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, NamedTuple, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.models.catalog import external_model
from workbench.probes.cloze import MASK
from workbench.probes.cloze.kinds import CLOZE_KIND, ClozeConfig
from workbench.probes.cloze.score import is_correct, parse_answer
from workbench.progress import TaskState
from workbench.project import now
from workbench.runs import create_run, run_ids, set_status

if TYPE_CHECKING:
    from workbench.project import Project

FORMAT = "gpt4books"
RESULT_SUFFIXES = (".tsv", ".txt")  # the files a folder stands for
SAME_WORK_TAG = "same_work"  # the tag on two books that hold results files of one work
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
      a capital letter and match the lower-case words; a lone ``s`` is a possessive: ``Ender_s_Game`` is
      "Ender's Game").

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
                return ReadableId(title=_possessives(" ".join(published)), author=author)
    return _loosely_readable(stem)


def _possessives(title: str) -> str:
    """``Sorcerer s Stone`` (a file name has no apostrophes) -> ``Sorcerer's Stone``; ``Ain t`` -> ``Ain't``."""
    return re.sub(r"(?<=n) t\b", "'t", re.sub(r"(?<=\w) s\b", "'s", title))


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
    """Every file read and checked; ``UserError`` listing the first problems if any row is bad. A folder
    stands for its results files (``results_paths``)."""
    paths = results_paths(paths)
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
    _refuse(problems)
    return files


def results_paths(paths: Iterable[str | Path]) -> list[Path]:
    """The files to import: each file given, and for each folder its ``.tsv`` and ``.txt`` files in name order
    (hidden files and other kinds left out)."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            inside = sorted((p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")
                             and p.suffix.lower() in RESULT_SUFFIXES), key=lambda p: p.name)
            if not inside:
                folders = sorted(p.name for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
                hint = (f" It holds the folders {', '.join(folders)}: import each as the results of its own model."
                        if folders else "")
                raise UserError(f"The folder {path} holds no results files (.tsv or .txt).{hint}")
            found += inside
        elif not path.exists():
            raise UserError(f"There is no file or folder {path}.")
        else:
            found.append(path)
    return found


def _refuse(problems: list[str]) -> None:
    if problems:
        shown = "\n".join(problems[:MAX_PROBLEMS_SHOWN])
        more = f"\n... and {len(problems) - MAX_PROBLEMS_SHOWN} more." if len(problems) > MAX_PROBLEMS_SHOWN else ""
        raise UserError(f"Nothing was imported: {len(problems)} problem(s) in the files.\n{shown}{more}")


class BookMatcher:
    """Finds the library book of each results file (see the module's **Books** and **One file, one book**),
    creating the missing ones (``save`` stores them and the ``same_work`` tags); one read of the library for
    a whole import. ``model_id``: the model the files are answers of (a file of another name whose answers
    that model already gave for a book gets a book of its own). Use inside the import's transaction."""

    def __init__(self, project: "Project", model_id: int | None = None):
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
        self.taken: dict[int, str] = {}  # book id -> the file of this import that found it
        self.same_work: dict[int, tuple[int, str]] = {}  # book made now -> (the book it repeats, the tag's value)
        self.answered_from = _answered_from(project, model_id) if model_id is not None else {}

    def match(self, book_file: BookFile) -> tuple[int, bool]:
        """(book id, True if it was created now) for a results file."""
        name, key = book_file.path.name, book_file.book_key
        readable = readable_id(key)
        number = str(readable.gutenberg) if readable.gutenberg is not None else None
        exact = self.by_external.get(name, self.by_external.get(key))
        found = exact if exact is not None else self.by_number.get(number) if number is not None else None
        if found is not None:
            other_files = self.answered_from.get(found, set()) - {name}
            if found not in self.taken and (exact is not None or not other_files):
                self.taken[found] = name
                return found, False
        book_id, self.next_id = self.next_id, self.next_id + 1
        if found is None:
            external_id = number or key
            if number is not None:
                self.by_number[number] = book_id
        else:  # the same work as ``found``, another set of results: a book of its own, found again by its name
            candidates = chain((key, name, f"{book_file.path.parent.name}/{name}"), (f"{key} ({n})" for n in count(2)))
            external_id = next(c for c in candidates if c not in self.by_external)
            self.same_work[book_id] = (found, f"Gutenberg {number}" if number is not None else key)
        # a stem that names no title stands in for one (the Library shows no blank titles)
        self.new.append((book_id, readable.title or key, readable.author, name, external_id, now()))
        self.by_external[external_id] = book_id
        self.taken[book_id] = name
        return book_id, True

    def save(self) -> None:
        """Store the books created by ``match`` (in one batch), and tag each book made for a work that another
        book also holds, and that book, ``same_work`` (an earlier tag of that name is kept)."""
        self.project.db.conn.executemany(
            "INSERT INTO books (id, title, author, source_kind, source_name, external_id, added_at)"
            " VALUES (?, ?, ?, 'external', ?, ?, ?)", self.new)
        tags = [(book, SAME_WORK_TAG, value) for made, (repeats, value) in self.same_work.items()
                for book in (repeats, made)]
        self.project.db.conn.executemany("INSERT OR IGNORE INTO book_tags (book_id, key, value) VALUES (?, ?, ?)", tags)
        self.new = []


def _answered_from(project: "Project", model_id: int) -> dict[int, set[str]]:
    """Book id -> the results files the model's imported answers to its passages came from (answers stored
    without a file name, by earlier versions, name none)."""
    found: dict[int, set[str]] = defaultdict(set)
    for book_id, name in project.db.execute(
        "SELECT DISTINCT p.book_id, json_extract(x.extra, '$.file') FROM responses x"
        " JOIN cloze_passages p ON p.id = x.item_id WHERE x.run_id IN (SELECT value FROM json_each(?))"
        " AND p.origin = 'imported'", [json.dumps(run_ids(project, CLOZE_KIND, model_id=model_id))]
    ):
        if name:
            found[book_id].add(name)
    return found


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
        "SELECT x.item_id, x.raw, x.extra, x.run_id FROM responses x WHERE x.run_id IN (SELECT value FROM json_each(?))"
        " AND x.sample = 0 ORDER BY x.run_id", [json.dumps(run_ids(project, CLOZE_KIND, model_id=model_id))]
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


#: ``added``: the file's answers were stored by this import (False: it had been imported before);
#: ``same_work_as``: for a file given a book of its own because another file holds results of the same work
#: (module docstring, **One file, one book**), that other file's book
SUMMARY_COLUMNS = ["file", "book_id", "book", "new_book", "rows", "correct", "parse_disagreements", "run_id", "added",
                   "same_work_as"]


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
        matcher = BookMatcher(project, model_id)
        matched = [matcher.match(f) for f in files]
        same_work = {made: repeats for made, (repeats, _) in matcher.same_work.items()}
        matcher.save()
        book_ids = [book_id for book_id, _ in matched]
        state.check()
        passage_ids = _passage_ids(project, files, book_ids)
        stored = _stored_answers(project, model_id)
        changed = [any(stored.get(pid, (None, None, 0))[:2] != (row.raw, row.published_parsed)
                       for row, pid in zip(f.rows, ids)) for f, ids in zip(files, passage_ids)]
        new_files = [i for i, c in enumerate(changed) if c]
        run_id = None
        if new_files:
            run_id = _new_run(project, model_id, [files[i] for i in new_files], [book_ids[i] for i in new_files])
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
            "same_work_as": same_work.get(book_id),
        })
    state.progress(total, total, "Imported", force=True)
    frame = pd.DataFrame(summary, columns=SUMMARY_COLUMNS)
    frame["same_work_as"] = frame["same_work_as"].astype("Int64")
    return frame


def _new_run(project: "Project", model_id: int, files: list[BookFile], book_ids: list[int]) -> int:
    """The import's run: a finished ``cloze`` run of the external model, its files in config (its responses
    say which passages it holds: the config lists no items, however many there are)."""
    config = ClozeConfig(format=FORMAT, imported_from=_describe(files),
                         files=tuple({"file": f.path.name, "rows": len(f.rows), "book_id": b}
                                     for f, b in zip(files, book_ids)))
    run_id = create_run(project, CLOZE_KIND, model_id=model_id, params={}, config=config,
                        total=sum(len(f.rows) for f in files))
    set_status(project, run_id, "done", started=True)
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
    """What an import did, in a sentence or three (the CLI and the Name cloze page say the same)."""
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
    repeats = summary[summary["same_work_as"].notna()] if "same_work_as" in summary else summary.iloc[:0]
    if len(repeats):
        first = repeats.iloc[0]
        others = summary[summary["book_id"] == first["same_work_as"]]["file"]
        pair = f"{first['file']} and {others.iloc[0]}" if len(others) else first["file"]
        text += (f" {len(repeats)} file(s) hold results for a work that another file also has results for (e.g. "
                 f"{pair}): each file was kept as a book of its own, tagged {SAME_WORK_TAG}, so that every file's "
                 "accuracy stays its own.")
    return text
