"""Answers made elsewhere (on paper, in a spreadsheet, in another tool), imported as one batch.

Columns: ``annotator``, ``item_id``, ``value``; optional ``unit``, ``seconds``, ``confidence``,
``comment``, ``flagged``. Values: narrative time, a duration ('2 hours', '3d'; a bare number is read in
``unit``, or as minutes); summary validity, ``true`` or ``distorted`` (the summary the annotator judged
true); label tasks, one of the labels. Unknown items, repeated annotator/item pairs (in the file or
already answered in the project), impossible values (zero or negative durations, labels outside the set)
are refused with their line numbers and nothing is imported. New annotators are added.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.annotation.annotators import clean_name
from workbench.annotation.durations import MINUTES_PER_UNIT, UNIT_OF, parse_duration
from workbench.annotation.items import items_by_key
from workbench.annotation.session import CONFIDENCE_LEVELS
from workbench.annotation.tasks import NAME_CLOZE, NARRATIVE_TIME, SUMMARY_VALIDITY, Task, get_task
from workbench.errors import UserError
from workbench.project import now
from workbench.tabular import read_rows, refuse

if TYPE_CHECKING:
    from workbench.project import Project

OPTIONAL = ("unit", "seconds", "confidence", "comment", "flagged")
_TRUE_WORDS = {"1", "yes", "true", "y", "x"}


def import_annotations(project: "Project", task: "Task | str | int", path: str | Path) -> dict[str, int]:
    """Check the whole file, then import it in one transaction. Returns counts of answers and new annotators."""
    task = get_task(project, task)
    _, rows = read_rows(path, ("annotator", "item_id", "value"), OPTIONAL)
    items = items_by_key(project, task)
    answered = {
        (name, item_id)
        for name, item_id in project.db.execute(
            "SELECT p.name, a.item_id FROM annotations a JOIN annotators p ON p.id = a.annotator_id"
            " WHERE a.task_id = ? AND a.status = 'answered'",
            [task.id],
        ).fetchall()
    }
    problems: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    records: list[dict[str, Any]] = []
    for row in rows:
        v, where = row.values, f"line {row.line}"
        try:
            name = clean_name(v["annotator"])
        except UserError:
            problems.append(f"{where}: the annotator's name is empty.")
            continue
        key = v["item_id"]
        item = items.get(key)
        if item is None:
            problems.append(f"{where}: task '{task.name}' has no item '{key}'.")
            continue
        if (name, key) in seen:
            problems.append(f"{where}: {name} already answered item {key} on line {seen[name, key]}.")
            continue
        seen[name, key] = row.line
        if (name, item.id) in answered:
            problems.append(f"{where}: {name} already has an answer for item {key} in this project.")
        try:
            record = {"annotator": name, "item_id": item.id, **_value_fields(task, v), **_extra_fields(v)}
        except UserError as exc:
            problems.append(f"{where}: {exc}")
            continue
        records.append(record)
    refuse(path, problems)
    return _store(project, task, records)


def _value_fields(task: Task, v: dict[str, str]) -> dict[str, Any]:
    value = v["value"].strip()
    if task.kind == NARRATIVE_TIME:
        unit = v.get("unit", "").strip().lower()
        if unit and unit not in UNIT_OF and unit not in MINUTES_PER_UNIT:
            raise UserError(f"'{unit}' is not a unit (minutes, hours, days, weeks, months, years).")
        duration = parse_duration(value, default_unit=UNIT_OF.get(unit, unit) or "minutes")
        return {"value": str(duration), "amount": duration.amount, "unit": duration.unit, "minutes": duration.minutes}
    if task.kind == NAME_CLOZE:  # the name as written; an empty value is "don't know"
        return {"value": value}
    choices = {c.lower(): c for c in task.choices}
    match = choices.get(value.lower())
    if match is None:
        what = "the summary judged true" if task.kind == SUMMARY_VALIDITY else "a label"
        raise UserError(f"'{value}' is not {what}: write one of {', '.join(task.choices)}.")
    return {"value": match}


def _extra_fields(v: dict[str, str]) -> dict[str, Any]:
    fields: dict[str, Any] = {"comment": v.get("comment", ""), "flagged": v.get("flagged", "").lower() in _TRUE_WORDS}
    if v.get("seconds"):
        try:
            fields["seconds"] = float(v["seconds"])
        except ValueError:
            raise UserError(f"seconds '{v['seconds']}' is not a number.") from None
        if fields["seconds"] < 0:
            raise UserError("seconds cannot be negative.")
    if v.get("confidence"):
        try:
            fields["confidence"] = int(v["confidence"])
        except ValueError:
            fields["confidence"] = -1
        if fields["confidence"] not in CONFIDENCE_LEVELS:
            raise UserError(f"confidence '{v['confidence']}' is not 1, 2 or 3.")
    return fields


def _store(project: "Project", task: Task, records: list[dict[str, Any]]) -> dict[str, int]:
    db = project.db
    stamp = now()
    with db.transaction():
        before = db.execute("SELECT COUNT(*) FROM annotators").fetchone()[0]
        ids: dict[str, int] = {}
        for name in dict.fromkeys(r["annotator"] for r in records):
            db.execute("INSERT OR IGNORE INTO annotators (name, created_at) VALUES (?, ?)", [name, stamp])
            ids[name] = db.execute("SELECT id FROM annotators WHERE name = ?", [name]).fetchone()[0]
        added = db.execute("SELECT COUNT(*) FROM annotators").fetchone()[0] - before
        for r in records:
            annotator_id = ids[r["annotator"]]
            (seq,) = db.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM annotations WHERE task_id = ? AND annotator_id = ?",
                [task.id, annotator_id],
            ).fetchone()
            db.execute(
                "INSERT INTO annotations (task_id, item_id, annotator_id, status, value, amount, unit, minutes,"
                " confidence, seconds, flagged, comment, origin, seq, answered_at, updated_at)"
                " VALUES (?, ?, ?, 'answered', ?, ?, ?, ?, ?, ?, ?, ?, 'import', ?, ?, ?)"
                " ON CONFLICT(task_id, item_id, annotator_id) DO UPDATE SET status = 'answered', value = excluded.value,"
                " amount = excluded.amount, unit = excluded.unit, minutes = excluded.minutes,"
                " confidence = excluded.confidence, seconds = excluded.seconds, flagged = excluded.flagged,"
                " comment = excluded.comment, origin = 'import', seq = excluded.seq, answered_at = excluded.answered_at,"
                " updated_at = excluded.updated_at",
                [task.id, r["item_id"], annotator_id, r["value"], r.get("amount"), r.get("unit"), r.get("minutes"),
                 r.get("confidence"), r.get("seconds"), int(r["flagged"]), r["comment"], seq, stamp, stamp],
            )
    return {"answers": len(records), "new_annotators": added}
