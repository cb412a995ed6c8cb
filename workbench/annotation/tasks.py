"""Annotation tasks: what is annotated (the kind), the codebook, and how items are handed out.

Kinds:

- ``narrative-time``: a passage; the answer is a duration, stored in minutes.
- ``summary-validity``: a scene and two summaries (one true, one distorted); the answer is which is true.
- ``label``: any text (e.g. a model's response) and a fixed label set; the answer is one label. This is
  the generic machinery for human labelling, e.g. validating an LLM judge (see ``workbench.annotation``).
- ``name-cloze``: a passage with one name hidden as ``[MASK]``; the answer is the name typed, as written, or
  empty for "don't know". Its items are made by the name-cloze probe from the passages the models answered
  (``name_cloze.create_name_cloze_task``); annotation stores the typed strings and never scores them: the
  probe scores them with the same function as a model's answers.

Settings: ``blinded`` hides book, author, model, condition and group from annotators; ``per_annotator``
items each (None: all of them) of which a share ``overlap`` is common to every annotator; ``seed`` fixes
every random choice. See ``assignment.py`` for the rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import pandas as pd

from workbench.annotation.codebooks import default_codebook
from workbench.errors import UserError
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

NARRATIVE_TIME = "narrative-time"
SUMMARY_VALIDITY = "summary-validity"
LABEL = "label"
NAME_CLOZE = "name-cloze"
KINDS = (NARRATIVE_TIME, SUMMARY_VALIDITY, LABEL, NAME_CLOZE)

# What a summary-validity answer records: the summary the annotator judged true.
SUMMARY_CHOICES = ("true", "distorted")

DEFAULT_IDLE_CAP_SECONDS = 300.0


@dataclass
class Task:
    id: int
    name: str
    kind: str
    labels: list[str]
    codebook: str
    blinded: bool
    per_annotator: int | None
    overlap: float
    seed: int
    settings: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""

    @property
    def choices(self) -> tuple[str, ...]:
        """The values a nominal answer can take (empty for narrative time)."""
        if self.kind == LABEL:
            return tuple(self.labels)
        if self.kind == SUMMARY_VALIDITY:
            return SUMMARY_CHOICES
        return ()

    @property
    def idle_cap_seconds(self) -> float:
        return float(self.settings.get("idle_cap_seconds", DEFAULT_IDLE_CAP_SECONDS))


_COLUMNS = "id, name, kind, labels, codebook, blinded, per_annotator, overlap, seed, settings, created_at"


def _task(row: Sequence[Any]) -> Task:
    id_, name, kind, labels, codebook, blinded, per_annotator, overlap, seed, settings, created_at = row
    return Task(id_, name, kind, json.loads(labels), codebook, bool(blinded), per_annotator, overlap, seed,
                json.loads(settings or "{}"), created_at)


def parse_labels(text: str | Sequence[str]) -> list[str]:
    """'woman, man, non-binary' -> ['woman', 'man', 'non-binary'], checked for blanks and repeats."""
    raw = text.split(",") if isinstance(text, str) else list(text)
    labels = [str(label).strip() for label in raw]
    if any(not label for label in labels):
        raise UserError("A label is empty. Write the labels separated by commas, e.g. woman,man,non-binary.")
    lowered = [label.lower() for label in labels]
    repeated = sorted({label for label in lowered if lowered.count(label) > 1})
    if repeated:
        raise UserError(f"These labels appear twice: {', '.join(repeated)}. Each label must be different.")
    if len(labels) < 2:
        raise UserError("A label task needs at least two labels to choose from.")
    return labels


def create_task(
    project: "Project",
    name: str,
    kind: str,
    *,
    labels: Sequence[str] | str | None = None,
    codebook: str | None = None,
    blinded: bool = False,
    per_annotator: int | None = None,
    overlap: float = 0.2,
    seed: int = 0,
    idle_cap_seconds: float = DEFAULT_IDLE_CAP_SECONDS,
) -> Task:
    name = (name or "").strip()
    if not name:
        raise UserError("Give the task a name, e.g. 'narrative time, pilot'.")
    if kind not in KINDS:
        raise UserError(f"'{kind}' is not a kind of annotation task. Choose one of: {', '.join(KINDS)}.")
    if kind == LABEL:
        if labels is None:
            raise UserError("A label task needs its label set, e.g. --labels woman,man,non-binary.")
        labels = parse_labels(labels)
    elif labels:
        raise UserError(f"Only label tasks take a label set; a {kind} task has its own answers.")
    else:
        labels = []
    if per_annotator is not None and int(per_annotator) < 1:
        raise UserError("Items per annotator must be at least 1 (or leave it empty for all items).")
    if not 0.0 <= float(overlap) <= 1.0:
        raise UserError(f"The overlap is a share between 0 and 1 (e.g. 0.2 for a fifth); {overlap} is not.")
    if idle_cap_seconds <= 0:
        raise UserError("The idle cap must be a positive number of seconds.")
    if project.db.execute("SELECT 1 FROM annotation_tasks WHERE name = ?", [name]).fetchone():
        raise UserError(f"There is already a task called '{name}'. Choose another name.")
    text = codebook if codebook is not None else default_codebook(kind, name, labels)
    with project.db.transaction():
        cur = project.db.execute(
            "INSERT INTO annotation_tasks (name, kind, labels, codebook, blinded, per_annotator, overlap, seed,"
            " settings, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [name, kind, json.dumps(labels), text, int(blinded), per_annotator, float(overlap), int(seed),
             json.dumps({"idle_cap_seconds": float(idle_cap_seconds)}), now()],
        )
    return get_task(project, cur.lastrowid)


def get_task(project: "Project", task: "Task | str | int") -> Task:
    """A task by name or id (a ``Task`` is re-read, so its settings are current)."""
    key = task.id if isinstance(task, Task) else task
    if isinstance(key, int):
        row = project.db.execute(f"SELECT {_COLUMNS} FROM annotation_tasks WHERE id = ?", [key]).fetchone()
    else:
        row = project.db.execute(f"SELECT {_COLUMNS} FROM annotation_tasks WHERE name = ?", [key]).fetchone()
    if row is None:
        known = ", ".join(t.name for t in list_tasks(project)) or "none yet"
        raise UserError(f"There is no annotation task called '{key}'. Tasks: {known}.")
    return _task(row)


def list_tasks(project: "Project") -> list[Task]:
    rows = project.db.execute(f"SELECT {_COLUMNS} FROM annotation_tasks ORDER BY id").fetchall()
    return [_task(row) for row in rows]


def set_blinded(project: "Project", task: "Task | str | int", blinded: bool) -> Task:
    task = get_task(project, task)
    with project.db.transaction():
        project.db.execute("UPDATE annotation_tasks SET blinded = ? WHERE id = ?", [int(blinded), task.id])
    return get_task(project, task.id)


def set_codebook(project: "Project", task: "Task | str | int", markdown: str) -> Task:
    task = get_task(project, task)
    if not markdown.strip():
        raise UserError("The codebook is empty. Write the instructions annotators should read.")
    with project.db.transaction():
        project.db.execute("UPDATE annotation_tasks SET codebook = ? WHERE id = ?", [markdown, task.id])
    return get_task(project, task.id)


def delete_task(project: "Project", task: "Task | str | int") -> None:
    """Delete a task with its items, answers and the runs that generated its items (their config names
    the task as ``annotation_task``; a later task may reuse the id, and must not inherit them)."""
    from workbench.runs import delete_runs, run_ids

    task = get_task(project, task)
    with project.db.transaction():
        delete_runs(project, run_ids(project, annotation_task=task.id), doing=f"delete the task '{task.name}'")
        project.db.execute("DELETE FROM annotation_tasks WHERE id = ?", [task.id])


def tasks_frame(project: "Project") -> pd.DataFrame:
    """One row per task with its settings and counts of items, annotators and answers."""
    rows = []
    for task in list_tasks(project):
        counts = project.db.execute(
            "SELECT (SELECT COUNT(*) FROM annotation_items WHERE task_id = :t),"
            " (SELECT COUNT(DISTINCT annotator_id) FROM annotations WHERE task_id = :t AND status = 'answered'),"
            " (SELECT COUNT(*) FROM annotations WHERE task_id = :t AND status = 'answered')",
            {"t": task.id},
        ).fetchone()
        rows.append({
            "name": task.name, "kind": task.kind, "labels": ",".join(task.labels), "blinded": task.blinded,
            "per_annotator": task.per_annotator, "overlap": task.overlap, "seed": task.seed,
            "items": counts[0], "annotators": counts[1], "answers": counts[2],
        })
    return pd.DataFrame(rows, columns=["name", "kind", "labels", "blinded", "per_annotator", "overlap", "seed",
                                       "items", "annotators", "answers"])
