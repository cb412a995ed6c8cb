"""Answers made elsewhere (another program, a published study), imported as an external model's run.

A TSV or CSV file with a header naming ``book`` and ``answer``, and optionally ``passage_id``. ``book``
names a book as for imported passages (its id, external id, results file name or exact title; a value
that names two books by different kinds of name is refused); ``passage_id`` is a passage's
number in this project or its id in the file the passages were imported from. Without it, the book must
have exactly one passage. ``answer`` is the raw answer, parsed by the same parsers as Palimpsest's own
runs whenever it is read.

The answers become one run of the task's kind for the ``external`` model ``model_label`` (created if
needed); importing the same file again finds that run and changes nothing. Every row is checked first;
problems are listed with their line numbers and nothing is imported then.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from workbench.errors import UserError
from workbench.jobs import Outcome, Unit, find_or_create_run, run_job
from workbench.probes.validity.kinds import RUN_KINDS, TaskConfig
from workbench.probes.validity.passages import rows_with_books
from workbench.probes.validity.run import check_task
from workbench.progress import TaskState
from workbench.tabular import read_rows, refuse

if TYPE_CHECKING:
    from workbench.project import Project

FORMAT = "csv"
SUMMARY_COLUMNS = ["model", "task", "run_id", "answers", "books", "new_answers"]


def ids_digest(ids: list[int]) -> str:
    """sha256 of the sorted passage ids (written as "1,2,3")."""
    return hashlib.sha256(",".join(str(i) for i in sorted(ids)).encode("ascii")).hexdigest()


def _passages_by_book(project: "Project") -> dict[int, list[tuple[int, str | None]]]:
    found: dict[int, list[tuple[int, str | None]]] = {}
    for pid, book_id, label in project.db.execute("SELECT id, book_id, label FROM validity_passages ORDER BY id"):
        found.setdefault(book_id, []).append((pid, label))
    return found


def _passage_for(passages: list[tuple[int, str | None]], wanted: str) -> tuple[int | None, str]:
    if not passages:
        return None, "the book has no passages yet (sample or import them first)"
    if not wanted:
        if len(passages) == 1:
            return passages[0][0], ""
        return None, f"the book has {len(passages)} passages; say which one in a passage_id column"
    for pid, label in passages:
        if label is not None and label == wanted:
            return pid, ""
    if wanted.isdigit() and int(wanted) in {pid for pid, _ in passages}:
        return int(wanted), ""
    return None, f"the book has no passage '{wanted}'"


def import_predictions(project: "Project", task: str, path: str | Path, model_label: str,
                       state: TaskState | None = None) -> pd.DataFrame:
    """Import a file of answers to ``task`` as a run of the external model ``model_label``; a one-row summary."""
    from workbench.models.catalog import external_model

    check_task(task)
    label = (model_label or "").strip()
    if not label:
        raise UserError("Give the answers a model label (the name they go under in tables and charts).")
    path = Path(path)
    _header, table = read_rows(path, ("book", "answer"), ("passage_id",))
    by_book = _passages_by_book(project)
    problems: list[str] = []
    answers: dict[int, tuple[int, str]] = {}
    for row, where, book_id in rows_with_books(project, table, problems):
        passage_id, why = _passage_for(by_book.get(book_id, []), row.get("passage_id", ""))
        if passage_id is None:
            problems.append(f"{where}: {why}.")
            continue
        if passage_id in answers:
            problems.append(f"{where}: a second answer for the passage answered on line {answers[passage_id][0]}.")
            continue
        answers[passage_id] = (row["line"], row["answer"])
    refuse(path, problems)
    model_id = external_model(project, label)
    ids = sorted(answers)
    # the answers' passages by number and digest, not listed: the run's answers list them (a config is no place
    # for a list that grows with the study); the digest keeps another file of the same name a run of its own
    config = TaskConfig(task=task, passages=len(ids), passages_sha256=ids_digest(ids), imported_from=path.name,
                        format=FORMAT)
    run_id = find_or_create_run(project, RUN_KINDS[task], model_id=model_id, params={}, config=config, total=len(ids))

    def process(units, _state):
        for unit in units:
            line, answer = answers[unit.item_id]
            yield unit, Outcome(raw=answer, extra={"line": line})

    report = run_job(project, run_id, [Unit(i) for i in ids], process, state)
    books = len({b for b, passages in by_book.items() for pid, _ in passages if pid in answers})
    return pd.DataFrame([{"model": label, "task": task, "run_id": run_id, "answers": len(ids), "books": books,
                          "new_answers": report.processed}], columns=SUMMARY_COLUMNS)
