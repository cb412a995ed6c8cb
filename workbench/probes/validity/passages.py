"""Passages for the downstream tasks: a seeded sample of whole sentences from each book, or a table of them.

**Sampling** (``sample_passages``). A passage is a run of whole sentences of about ``words`` words (within
20% of it), never crossing a chapter heading or other non-prose line: the stretches of prose between such
lines come from ``workbench.annotation.passages`` (front matter before the first chapter is left out),
the sentence boundaries from spaCy's sentence recogniser. For each passage a stretch is drawn in
proportion to its length, then a paragraph of it in proportion to its length, then a sentence of that
paragraph; the passage starts there and takes the following sentences until it is nearest ``words``.
Draws that run out of prose, or overlap a passage already drawn, are drawn again (up to
``TRIES_PER_PASSAGE`` times each). The random generator is seeded with the seed and the book's text
(its hash), so a book gets the same passages in any project, whatever else the project holds.
Passages are stored with their character offsets into the book's stored text.

A book that already has sampled passages keeps them unless ``replace`` is asked for; replacing deletes
the old passages and the answers runs gave for them (``passage_usage`` counts those first).

**Importing** (``import_passages``). A TSV or CSV file with a header naming ``book`` and ``passage``,
and optionally ``year`` (year of first publication: it fills the book's year where the library has
none, and is the truth of the year task for that passage), ``minutes`` (a reference narrative time: a
number of minutes, or a duration such as ``2 hours``) and ``id`` (the passage's id in the file, which
imported predictions may name). ``book`` is a book's id, its external id, the name of the results file
its imported name-cloze results came from (``1342_pride_and_prejudice``, as published results name
books) or its exact title; a value that names different books by different kinds of name (one book's
id, another's external id) is refused for that row (``BookLookup``). Every row is checked before
anything is written; unknown books and malformed rows are listed with their line numbers, and nothing is
imported then. Importing a passage again (same book and text) updates it instead of adding it twice:
the columns the file has replace the stored values (an empty cell clears one), and a column it lacks
leaves them as they are, so a file of years and a file of minutes for the same passages add up.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.progress import TaskState
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

DEFAULT_WORDS = 250
DEFAULT_PER_BOOK = 1
DEFAULT_SEED = 0
WORD_TOLERANCE = 0.2
TRIES_PER_PASSAGE = 40
SENTENCE_COMPONENTS = ("senter",)
SAMPLED, IMPORTED = "sampled", "imported"

SAMPLE_COLUMNS = ["book_id", "book", "status", "passages", "words", "note"]
PASSAGE_COLUMNS = ["passage_id", "book_id", "book", "label", "origin", "words", "start_char", "end_char",
                   "year", "minutes", "passage"]


@dataclass(frozen=True)
class Span:
    start: int
    end: int


# ---------------------------------------------------------------------------------------------- sampling
def _stretches(text: str) -> list[list[Span]]:
    """Stretches of prose between headings, each a list of its paragraphs (character spans)."""
    from workbench.annotation.passages import prose_runs

    return [[Span(para[0].start, para[-1].end) for para in run if para] for run in prose_runs(text)]


def _word_count(text: str) -> int:
    return len(text.split())


class _Sentences:
    """spaCy's sentences of a book's paragraphs, split on first use and kept."""

    def __init__(self, nlp, text: str):
        self.nlp, self.text, self.split = nlp, text, {}

    def of(self, para: Span) -> list[Span]:
        if para not in self.split:
            doc = self.nlp(self.text[para.start : para.end])
            found = []
            for sentence in doc.sents:
                stripped = sentence.text.strip()
                if stripped:
                    start = para.start + sentence.start_char + (len(sentence.text) - len(sentence.text.lstrip()))
                    found.append(Span(start, start + len(stripped)))
            self.split[para] = found
        return self.split[para]


def _draw_one(rng: random.Random, stretches: list[list[Span]], sizes: list[list[int]], sentences: _Sentences,
              text: str, words: int) -> Span | None:
    """One passage: a stretch by length, a paragraph by length, a sentence; then whole sentences to ``words``."""
    totals = [sum(s) for s in sizes]
    r = rng.choices(range(len(stretches)), weights=totals)[0]
    p = rng.choices(range(len(stretches[r])), weights=sizes[r])[0]
    first = sentences.of(stretches[r][p])
    if not first:
        return None
    s = rng.randrange(len(first))
    start, size, end = first[s].start, 0, None
    for para in stretches[r][p:]:
        for sentence in sentences.of(para)[s:]:
            length = _word_count(text[sentence.start : sentence.end])
            if size and abs(size + length - words) > abs(size - words):
                return Span(start, end) if size >= words * (1 - WORD_TOLERANCE) else None
            size, end = size + length, sentence.end
            if size > words * (1 + WORD_TOLERANCE):
                return None
        s = 0
    return Span(start, end) if end is not None and size >= words * (1 - WORD_TOLERANCE) else None


def draw_passages(text: str, nlp, *, words: int, count: int, seed: str) -> list[Span]:
    """Up to ``count`` non-overlapping passages of whole sentences from ``text``, in book order."""
    stretches = _stretches(text)
    sizes = [[_word_count(text[p.start : p.end]) for p in stretch] for stretch in stretches]
    keep = [i for i, s in enumerate(sizes) if sum(s) >= words * (1 - WORD_TOLERANCE)]
    stretches, sizes = [stretches[i] for i in keep], [sizes[i] for i in keep]
    if not stretches:
        return []
    rng = random.Random(seed)
    sentences = _Sentences(nlp, text)
    chosen: list[Span] = []
    tries = 0
    while len(chosen) < count and tries < TRIES_PER_PASSAGE * count:
        tries += 1
        span = _draw_one(rng, stretches, sizes, sentences, text, words)
        if span is not None and not any(span.start < c.end and c.start < span.end for c in chosen):
            chosen.append(span)
    return sorted(chosen, key=lambda c: c.start)


def tidy(text: str) -> str:
    """Paragraphs joined by a blank line, the lines of a paragraph by spaces."""
    from workbench.annotation.passages import tidy as tidy_paragraphs

    return tidy_paragraphs(text)


def passage_usage(project: "Project", passage_ids: Sequence[int]) -> int:
    """How many stored answers of validity runs point at these passages."""
    from workbench.probes.validity.kinds import RUN_KINDS
    from workbench.runs import run_ids

    if not passage_ids:
        return 0
    runs = json.dumps(run_ids(project, list(RUN_KINDS.values())))
    total = 0
    for start in range(0, len(passage_ids), 500):
        chunk = list(passage_ids[start : start + 500])
        total += project.db.execute(
            "SELECT COUNT(*) FROM responses x WHERE x.run_id IN (SELECT value FROM json_each(?))"
            f" AND x.item_id IN ({','.join('?' * len(chunk))})", [runs, *chunk]).fetchone()[0]
    return total


def sampled_ids(project: "Project", book_ids: Iterable[int]) -> list[int]:
    ids = list(book_ids)
    found: list[int] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found += [r[0] for r in project.db.execute(
            f"SELECT id FROM validity_passages WHERE origin = 'sampled' AND book_id IN ({','.join('?' * len(chunk))})",
            chunk)]
    return found


def delete_passages(project: "Project", passage_ids: Sequence[int]) -> int:
    """Delete passages and the answers validity runs gave for them; returns the answers deleted."""
    from workbench.probes.validity.kinds import RUN_KINDS
    from workbench.runs import refuse_while_running, run_ids

    kinds = list(RUN_KINDS.values())
    deleted = 0
    with project.db.transaction():
        if passage_ids:
            refuse_while_running(project, "sample passages again", kinds=kinds)
        runs = json.dumps(run_ids(project, kinds))
        for start in range(0, len(passage_ids), 500):
            chunk = list(passage_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            deleted += project.db.execute(
                f"DELETE FROM responses WHERE item_id IN ({marks}) AND run_id IN (SELECT value FROM json_each(?))",
                [*chunk, runs]).rowcount
            project.db.execute(f"DELETE FROM validity_passages WHERE id IN ({marks})", chunk)
    return deleted


def sample_passages(project: "Project", book_ids: Sequence[int] | None = None, *, words: int = DEFAULT_WORDS,
                    per_book: int = DEFAULT_PER_BOOK, seed: int = DEFAULT_SEED, replace: bool = False,
                    state: TaskState | None = None) -> pd.DataFrame:
    """Sample passages from each book with text (all books when ``book_ids`` is None); one summary row per book.

    ``status`` is 'sampled', 'kept' (the book had sampled passages and ``replace`` was not asked for),
    'no text' (known only from imported results) or 'too short' (no stretch of prose long enough)."""
    from workbench.corpus.library import book_text, get_book
    from workbench.nlp import load_english, resolve_model_name

    if words < 20:
        raise UserError(f"Passages of {words} words are too short to say anything; choose 20 words or more.")
    if per_book < 1:
        raise UserError("Sample at least one passage per book.")
    state = state or TaskState()
    if book_ids is None:
        book_ids = [r[0] for r in project.db.execute("SELECT id FROM books ORDER BY id")]
    book_ids = list(dict.fromkeys(int(b) for b in book_ids))
    if not book_ids:
        raise UserError("There are no books to sample passages from. Import books on the Library page first.")
    with_passages = {r[0] for r in project.db.execute("SELECT DISTINCT book_id FROM validity_passages WHERE origin = 'sampled'")}
    nlp = None
    settings = {"words": words, "per_book": per_book, "seed": seed}
    rows = []
    for number, book_id in enumerate(book_ids):
        state.check()
        book = get_book(project, book_id)
        state.progress(number, len(book_ids), f"Sampling passages from {book.display_name}")
        row = {"book_id": book_id, "book": book.display_name, "passages": 0, "words": 0, "note": ""}
        if book_id in with_passages and not replace:
            count = project.db.execute("SELECT COUNT(*) FROM validity_passages WHERE book_id = ? AND origin = 'sampled'",
                                       [book_id]).fetchone()[0]
            rows.append({**row, "status": "kept", "passages": count, "note": "already sampled (replace to sample again)"})
            continue
        try:
            text = book_text(project, book_id)
        except UserError:
            rows.append({**row, "status": "no text", "note": "only known from imported results"})
            continue
        if nlp is None:
            nlp = load_english(components=SENTENCE_COMPONENTS, project=project)
            settings["spacy_model"] = resolve_model_name(project)
        content = project.db.execute("SELECT content_hash FROM books WHERE id = ?", [book_id]).fetchone()[0]
        spans = draw_passages(text, nlp, words=words, count=per_book, seed=f"{seed}:{content or book_id}")
        if not spans:
            rows.append({**row, "status": "too short", "note": f"no stretch of prose of about {words} words"})
            continue
        stamp = now()
        with project.db.transaction():
            if book_id in with_passages:
                delete_passages(project, sampled_ids(project, [book_id]))
            for span in spans:
                passage = tidy(text[span.start : span.end])
                project.db.execute(
                    "INSERT INTO validity_passages (book_id, passage, words, start_char, end_char, origin, settings,"
                    " created_at) VALUES (?, ?, ?, ?, ?, 'sampled', ?, ?)",
                    [book_id, passage, _word_count(passage), span.start, span.end, json.dumps(settings, sort_keys=True),
                     stamp])
        note = f"only {len(spans)} of {per_book} found" if len(spans) < per_book else ""
        rows.append({**row, "status": "sampled", "passages": len(spans),
                     "words": sum(_word_count(text[s.start : s.end]) for s in spans), "note": note})
    state.progress(len(book_ids), len(book_ids), "Sampled", force=True)
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)


# ---------------------------------------------------------------------------------------------- reading
def passages_frame(project: "Project", book_ids: Sequence[int] | None = None) -> pd.DataFrame:
    """The stored passages, one row each (``year``/``minutes``: given with an imported passage); of
    ``book_ids``' books only when given (only they are read)."""
    where, params = "", []
    if book_ids is not None:
        where, params = " WHERE p.book_id IN (SELECT value FROM json_each(?))", [json.dumps([int(b) for b in book_ids])]
    frame = pd.read_sql_query(
        "SELECT p.id AS passage_id, p.book_id, COALESCE(NULLIF(b.title, ''), b.external_id, 'Book ' || b.id) AS book,"
        " p.label, p.origin, p.words, p.start_char, p.end_char, p.year, p.minutes, p.passage"
        f" FROM validity_passages p JOIN books b ON b.id = p.book_id{where} ORDER BY p.id",
        project.db.conn, params=params)
    # ordered by book here: SQLite would read the texts in the book index's order, a row at a time (twice the time)
    frame = frame.sort_values(["book_id", "passage_id"], kind="stable")
    for column in ("start_char", "end_char", "year"):
        frame[column] = frame[column].astype("Int64")
    frame["minutes"] = frame["minutes"].astype(float)
    return frame.reset_index(drop=True)[PASSAGE_COLUMNS]


def books_overview(project: "Project") -> pd.DataFrame:
    """Every book: its year, whether it has text, and its sampled and imported passages."""
    frame = pd.read_sql_query(
        "SELECT b.id AS book_id, COALESCE(NULLIF(b.title, ''), b.external_id, 'Book ' || b.id) AS title, b.author,"
        " b.year, EXISTS (SELECT 1 FROM book_texts t WHERE t.book_id = b.id) AS has_text,"
        " (SELECT COUNT(*) FROM validity_passages p WHERE p.book_id = b.id AND p.origin = 'sampled') AS sampled,"
        " (SELECT COUNT(*) FROM validity_passages p WHERE p.book_id = b.id AND p.origin = 'imported') AS imported"
        " FROM books b ORDER BY title COLLATE NOCASE, b.id", project.db.conn)
    frame["has_text"] = frame["has_text"].astype(bool)
    frame["year"] = frame["year"].astype("Int64")
    return frame


# ---------------------------------------------------------------------------------------------- importing
REQUIRED, OPTIONAL = ("book", "passage"), ("year", "minutes", "id")
LABEL_COLUMNS = ("id", "passage_id")
#: a stored passage's values a file may give, each with the file's columns that give it
GIVEN_BY = {"label": LABEL_COLUMNS, "year": ("year",), "minutes": ("minutes",)}


class BookLookup:
    """Finds a book by what a file calls it: its id (its number in this project), its external id, the file
    name its imported results came from (with or without its ending, as published results name books) or
    its exact title. Every kind of name is tried, in that order, and a name must fit one book: a number
    that is one book's id and another's external id (a Gutenberg number, the number of a published results
    file) is refused with both books named, never settled by which kind of name comes first."""

    def __init__(self, project: "Project"):
        rows = project.db.execute("SELECT id, title, external_id, source_name FROM books ORDER BY id").fetchall()
        self.names: dict[str, dict[int, list[str]]] = {}  # a name -> {book id: the kinds of name it is for it}
        self.titles = {int(r[0]): (r[1] or "").strip() for r in rows}
        for book_id, title, external, source in rows:
            self._add(str(book_id), book_id, "id")
            self._add(external, book_id, "external id")
            self._add(source, book_id, "file name")
            self._add(Path(source).stem if source else None, book_id, "file name")
            self._add(title, book_id, "title")

    def _add(self, name: object, book_id: int, kind: str) -> None:
        name = str(name).strip() if name is not None else ""
        if name:
            kinds = self.names.setdefault(name, {}).setdefault(int(book_id), [])
            if kind not in kinds:
                kinds.append(kind)

    def find(self, key: str) -> tuple[int | None, str]:
        """(book id, '') or (None, why not)."""
        key = key.strip()
        if not key:
            return None, "the book is empty"
        found = self.names.get(key, {})
        if len(found) == 1:
            return next(iter(found)), ""
        if not found:
            return None, f"no book has the id, external id, file name or title '{key}'"
        if all(kinds == ["title"] for kinds in found.values()):
            return None, f"several books are called '{key}'; name it by its id instead ({', '.join(map(str, found))})"
        books = " and ".join(f"book {book_id}" + (f" ({self.titles[book_id]})" if self.titles[book_id] else "")
                             + f" by its {' and '.join(kinds)}" for book_id, kinds in found.items())
        return None, (f"'{key}' names more than one book: {books}. Write the title or the file name of the book you "
                      "mean instead")


EXTRA_CELLS = "more cells than the header names (quote a passage or answer holding a comma or tab)."


def rows_with_books(project: "Project", table: list, problems: list[str]):
    """The rows of a table read by ``annotation.tabular.read_rows`` whose cells fit the header and whose
    ``book`` names a book: (values with ``line``, where, book id); the others go to ``problems``."""
    lookup = BookLookup(project)
    for found in table:
        row, where = {**found.values, "line": found.line}, f"line {found.line}"
        if found.extra:
            problems.append(f"{where}: {EXTRA_CELLS}")
            continue
        book_id, why = lookup.find(row["book"])
        if book_id is None:
            problems.append(f"{where}: {why}.")
            continue
        yield row, where, book_id


def _minutes(value: str) -> float:
    from workbench.annotation.durations import parse_duration

    try:
        number = float(value.replace(",", "."))
    except ValueError:
        return parse_duration(value).minutes
    if not math.isfinite(number) or number <= 0:
        raise UserError(f"'{value}' minutes is not a length of time above zero.")
    return number


IMPORT_COLUMNS = ["line", "book_id", "book", "passage_id", "new", "year", "minutes"]


def import_passages(project: "Project", path: str | Path) -> pd.DataFrame:
    """Import passages from a TSV/CSV file (see the module docstring); one row per passage imported."""
    from workbench.corpus.library import parse_year
    from workbench.tabular import read_rows, refuse

    path = Path(path)
    header, table = read_rows(path, REQUIRED, OPTIONAL)
    given = [value for value, columns in GIVEN_BY.items() if set(columns) & set(header)]
    problems: list[str] = []
    checked: list[dict] = []
    seen: dict[tuple[int, str], int] = {}
    for row, where, book_id in rows_with_books(project, table, problems):
        passage = tidy(row["passage"])
        if not passage:
            problems.append(f"{where}: the passage is empty.")
            continue
        year = minutes = None
        try:
            year = parse_year(row.get("year"))
        except UserError as exc:
            problems.append(f"{where}: {exc}")
            continue
        if row.get("minutes"):
            try:
                minutes = _minutes(row["minutes"])
            except UserError as exc:
                problems.append(f"{where}: {exc}")
                continue
        key = (book_id, passage)
        if key in seen:
            problems.append(f"{where}: the same passage of the same book as line {seen[key]}.")
            continue
        seen[key] = row["line"]
        label = next((row[c] for c in LABEL_COLUMNS if row.get(c)), None)
        checked.append({"line": row["line"], "book_id": book_id, "passage": passage, "year": year, "minutes": minutes,
                        "label": label})
    refuse(path, problems)
    existing = {(b, p): {"id": i, "label": label, "year": year, "minutes": minutes}
                for i, b, p, label, year, minutes in project.db.execute(
                    "SELECT id, book_id, passage, label, year, minutes FROM validity_passages WHERE origin = 'imported'")}
    years = dict(project.db.execute("SELECT id, year FROM books").fetchall())
    out = []
    stamp = now()
    with project.db.transaction():
        for row in checked:
            key = (row["book_id"], row["passage"])
            if key in existing:
                stored = existing[key]
                passage_id = stored["id"]
                row.update({c: stored[c] for c in GIVEN_BY if c not in given})  # a column the file lacks is kept
                if given:
                    project.db.execute(f"UPDATE validity_passages SET {', '.join(f'{c} = ?' for c in given)} WHERE id = ?",
                                       [*(row[c] for c in given), passage_id])
            else:
                passage_id = project.db.execute(
                    "INSERT INTO validity_passages (book_id, label, passage, words, year, minutes, origin, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, 'imported', ?)",
                    [row["book_id"], row["label"], row["passage"], _word_count(row["passage"]), row["year"],
                     row["minutes"], stamp]).lastrowid
            if "year" in given and row["year"] is not None and years.get(row["book_id"]) is None:
                project.db.execute("UPDATE books SET year = ? WHERE id = ?", [row["year"], row["book_id"]])
                years[row["book_id"]] = row["year"]
            out.append({"line": row["line"], "book_id": row["book_id"], "passage_id": passage_id,
                        "new": key not in existing, "year": row["year"], "minutes": row["minutes"]})
    frame = pd.DataFrame(out, columns=[c for c in IMPORT_COLUMNS if c != "book"])
    titles = passages_frame(project)[["book_id", "book"]].drop_duplicates("book_id")
    return frame.merge(titles, on="book_id", how="left")[IMPORT_COLUMNS]
