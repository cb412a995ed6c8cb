"""Question sets as JSON Lines, so that others can run them with their own harness, and back.

One question a line. Every line has

- ``question_id`` (unique in the file), ``book`` (the book's title, else its external id), ``book_id``
  (its id in the project that wrote the file), ``variant`` (original or substituted), ``kind``;
- ``options``: the texts of the options, in the order shown ("None of the above" is not among them: it
  is always offered last); ``answer``: the index of the true option in ``options``, or null when none of
  them is true (``none_of_the_above``: true) and for reconstruction questions;
- ``retention_words`` (words between the true scene's end and the checkpoint), ``retention_scenes``,
  ``checkpoint_char`` (the offset in the variant's text where reading stops: the book before it is the
  context), ``checkpoint_word``, ``checkpoint_scene``, ``scene``;
- for reconstruction questions ``false_summary`` and ``reference`` (the true summary), and for those
  with the passage ``passage_start`` and ``passage_end`` (offsets in the variant's text); for those on a
  hierarchical summary also ``level`` (1 and up), ``node``, ``first_scene`` and ``last_scene``.

``export_questions`` can also write the variant's text, to which the offsets refer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import UserError
from workbench.probes.reading.questions import (
    READ_ALONG_KINDS,
    RECONSTRUCTION_KINDS,
    VARIANTS,
    Question,
    QuestionSet,
    latest_question_sets,
    load_questions,
    store_questions,
)

if TYPE_CHECKING:
    from workbench.project import Project

_BODY_FIELDS = ("false_summary", "reference", "passage_start", "passage_end", "level", "node", "first_scene",
                "last_scene")
_LEVEL_FIELDS = ("level", "node", "first_scene", "last_scene")
MAX_PROBLEMS_SHOWN = 5


def question_record(question: Question, question_set: QuestionSet, book: str) -> dict[str, Any]:
    record = {
        "question_id": question.key, "book": book, "book_id": question_set.book_id,
        "variant": question_set.variant, "kind": question.kind, "options": list(question.options),
        "answer": question.answer, "none_of_the_above": question.read_along and question.answer is None,
        "retention_words": question.retention_words, "retention_scenes": question.retention_scenes,
        "checkpoint_char": question.checkpoint_char, "checkpoint_word": question.checkpoint_word,
        "checkpoint_scene": question.checkpoint_scene, "scene": question.scene,
    }
    record.update({k: question.body[k] for k in _BODY_FIELDS if k in question.body})
    return record


def export_questions(project: "Project", book_id: int, out: str | Path, *, variant: str | None = None,
                     text_out: str | Path | None = None) -> int:
    """Write the book's newest question set of each variant (or only ``variant``) to ``out``; returns the
    number of questions. With ``text_out``, also the variant's text (one variant needed then)."""
    from workbench.corpus.library import get_book

    sets = latest_question_sets(project, variant=variant, book_ids=[book_id])
    if not sets:
        raise UserError(f"Book {book_id} has no questions yet. Build them with 'palimpsest reading questions'.")
    if text_out is not None and len(sets) > 1:
        raise UserError("The book has questions on both texts; choose one with --variant to write its text.")
    book = get_book(project, book_id)
    name = book.title or book.external_id or f"book {book_id}"
    count = 0
    with open(out, "w", encoding="utf-8", newline="\n") as handle:
        for question_set in sets:
            for question in load_questions(project, question_set.id):
                handle.write(json.dumps(question_record(question, question_set, name), ensure_ascii=False) + "\n")
                count += 1
    if text_out is not None:
        from workbench.probes.reading.run import variant_text

        Path(text_out).write_text(variant_text(project, sets[0]), encoding="utf-8")
    return count


# ---------------------------------------------------------------------------------------------- import
def _as_int(value: Any, name: str, line: int, problems: list[str], *, optional: bool = True) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        problems.append(f"line {line}: {name} should be a whole number of at least 0" + (" or null" if optional else ""))
        return None
    return value


def _question(record: dict, line: int, problems: list[str], text_length: int | None) -> Question | None:
    before = len(problems)
    kind = record.get("kind")
    if kind not in READ_ALONG_KINDS + RECONSTRUCTION_KINDS:
        problems.append(f"line {line}: kind '{kind}' is none of {', '.join(READ_ALONG_KINDS + RECONSTRUCTION_KINDS)}")
        return None
    options = record.get("options", [])
    if not isinstance(options, list) or not all(isinstance(o, str) and o.strip() for o in options):
        problems.append(f"line {line}: options should be a list of texts")
        options = []
    answer = _as_int(record.get("answer"), "answer", line, problems)
    if answer is not None and answer >= len(options):
        problems.append(f"line {line}: answer {answer} points past the {len(options)} options")
    if kind in READ_ALONG_KINDS and len(options) < 2:
        problems.append(f"line {line}: a read-along question needs at least two options")
    if len({" ".join(o.lower().split()) for o in options}) < len(options):
        problems.append(f"line {line}: two options have the same text")
    numbers = {k: _as_int(record.get(k), k, line, problems) for k in
               ("retention_words", "retention_scenes", "checkpoint_char", "checkpoint_word", "checkpoint_scene",
                "scene", "passage_start", "passage_end")}
    if kind in READ_ALONG_KINDS and numbers["checkpoint_char"] is None:
        problems.append(f"line {line}: a read-along question needs checkpoint_char (where reading stops)")
    for key in ("checkpoint_char", "passage_end"):
        if text_length is not None and numbers[key] is not None and numbers[key] > text_length:
            problems.append(f"line {line}: {key} {numbers[key]} lies past the end of the book ({text_length} characters)")
    body = {}
    if kind in RECONSTRUCTION_KINDS:
        for key in ("false_summary", "reference"):
            if not isinstance(record.get(key), str) or not record[key].strip():
                problems.append(f"line {line}: a reconstruction question needs the text '{key}'")
            body[key] = record.get(key)
        for key in _LEVEL_FIELDS:  # a question on a hierarchical summary (level 1 and up)
            value = _as_int(record.get(key), key, line, problems)
            if value is not None:
                body[key] = value
        if kind == "reconstruct-passage":
            if numbers["passage_start"] is None or numbers["passage_end"] is None:
                problems.append(f"line {line}: reconstruct-passage needs passage_start and passage_end")
            body.update(passage_start=numbers["passage_start"], passage_end=numbers["passage_end"])
    if len(problems) > before:
        return None
    sources = tuple({"source": "true" if i == answer else "imported"} for i in range(len(options)))
    return Question(key=str(record["question_id"]), kind=kind, options=tuple(options), sources=sources,
                    answer=answer, body=body, **{k: numbers[k] for k in
                    ("retention_words", "retention_scenes", "checkpoint_char", "checkpoint_word", "checkpoint_scene",
                     "scene")})


def _text_length(project: "Project", book_id: int, variant: str) -> int | None:
    from workbench.corpus.library import book_text
    from workbench.probes.reading.substitution import get_substitution

    text = book_text(project, book_id)
    if variant == "substituted":
        found = get_substitution(project, book_id)
        return len(found.apply(text)) if found is not None else None
    return len(text)


def _normal(name: str) -> str:
    return " ".join(str(name).split()).casefold()


def _library_names(project: "Project") -> dict[str, list[int]]:
    """The library's books with a text by title and by external id (compared without case or extra spaces)."""
    from workbench.corpus.library import list_books

    names: dict[str, list[int]] = {}
    for book in list_books(project):
        if book.has_text:
            for name in dict.fromkeys(n for n in (book.title, book.external_id) if n):
                names.setdefault(_normal(name), []).append(book.id)
    return names


def _unmatched_message(path: Path, unmatched: dict[str, list[int]], names: dict[str, list[int]]) -> str:
    def lines(numbers: list[int]) -> str:
        shown = ", ".join(str(n) for n in numbers[:3])
        return f"line {shown}" if len(numbers) == 1 else f"lines {shown}" + (", …" if len(numbers) > 3 else "")

    parts = []
    for name, numbers in list(unmatched.items())[:MAX_PROBLEMS_SHOWN]:
        if not name:
            parts.append(f"{lines(numbers)} name no book")
        elif len(names.get(_normal(name), [])) > 1:
            parts.append(f"'{name}' ({lines(numbers)}) is the title of several books of the library")
        else:
            parts.append(f"'{name}' ({lines(numbers)}) is not a book of the library")
    return (f"Nothing was imported from {path.name}: its questions are matched to books of the library by the "
            f"book's title or Gutenberg number, and " + "; ".join(parts) + ". Add the book to the library first "
            "(Library page, or 'palimpsest import'), or give --book ID to import every question for that book.")


def import_questions(project: "Project", path: str | Path, book_id: int | None = None, *,
                     variant: str | None = None) -> list[QuestionSet]:
    """Read a JSON Lines question file (see the module's description) as question sets: one per book and
    variant in the file (``variant`` overrides the file's). With ``book_id`` every question is for that
    book of the library; without it, each line's ``book`` is matched to a book of the library by title or
    external id (Gutenberg number), and a name that matches none, or several, stops the import. Nothing is
    stored when any line has a problem; the message lists the first few."""
    from workbench.corpus.library import get_book

    if book_id is not None:
        get_book(project, book_id)
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"The file {path} could not be read ({exc}).") from exc
    names = _library_names(project) if book_id is None else {}
    problems: list[str] = []
    unmatched: dict[str, list[int]] = {}
    found: dict[tuple[int, str], list[Question]] = {}
    seen: set[str] = set()
    lengths: dict[tuple[int, str], int | None] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"line {number}: not JSON ({exc.msg})")
            continue
        if not isinstance(record, dict) or "question_id" not in record:
            problems.append(f"line {number}: each line should be an object with a question_id")
            continue
        if str(record["question_id"]) in seen:
            problems.append(f"line {number}: question_id '{record['question_id']}' appears twice")
        seen.add(str(record["question_id"]))
        chosen = variant or record.get("variant") or "original"
        if chosen not in VARIANTS:
            problems.append(f"line {number}: variant '{chosen}' is neither original nor substituted")
            continue
        book = book_id
        if book is None:
            name = str(record.get("book") or "").strip()
            matches = names.get(_normal(name), []) if name else []
            if len(matches) != 1:
                unmatched.setdefault(name, []).append(number)
                continue
            book = matches[0]
        if (book, chosen) not in lengths:
            lengths[book, chosen] = _text_length(project, book, chosen)
        question = _question(record, number, problems, lengths[book, chosen])
        if question is not None:
            found.setdefault((book, chosen), []).append(question)
    if unmatched:
        raise UserError(_unmatched_message(path, unmatched, names))
    if problems:
        more = f"; and {len(problems) - MAX_PROBLEMS_SHOWN} more" if len(problems) > MAX_PROBLEMS_SHOWN else ""
        raise UserError(f"Nothing was imported from {path.name}: " + "; ".join(problems[:MAX_PROBLEMS_SHOWN]) + more + ".")
    if not found:
        raise UserError(f"{path.name} holds no questions.")
    return [store_questions(project, book, questions, {"file": path.name, "variant": v}, scene_set_id=None,
                            variant=v, summaries="", origin="imported")
            for (book, v), questions in found.items()]
