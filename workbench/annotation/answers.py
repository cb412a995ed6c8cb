"""Reading saved answers back as tidy tables (one row per annotator and item)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from workbench.annotation.tasks import SUMMARY_VALIDITY, Task, get_task

if TYPE_CHECKING:
    from workbench.project import Project

EXPORT_COLUMNS = [
    "task", "annotator", "item_id", "status", "value", "amount", "unit", "minutes", "chosen_side", "true_side",
    "correct", "confidence", "seconds", "flagged", "comment", "origin", "answered_at", "updated_at",
]


def annotations_frame(project: "Project", task: "Task | str | int", *, answered_only: bool = False) -> pd.DataFrame:
    """Every saved row of a task: answers, skips and flags, with annotator names and item ids.

    ``correct`` (summary validity) is whether the annotator picked the true summary. Hidden metadata is
    not here; join with ``items_frame`` on ``item_id`` for it.
    """
    task = get_task(project, task)
    sql = (
        "SELECT t.name AS task, p.name AS annotator, i.item_key AS item_id, a.status, a.value, a.amount, a.unit,"
        " a.minutes, a.chosen_side, a.true_side, a.confidence, a.seconds, a.flagged, a.comment, a.origin,"
        " a.answered_at, a.updated_at, a.item_id AS item_pk"
        " FROM annotations a JOIN annotators p ON p.id = a.annotator_id JOIN annotation_items i ON i.id = a.item_id"
        " JOIN annotation_tasks t ON t.id = a.task_id WHERE a.task_id = ?"
        " AND NOT (a.status = 'open' AND a.flagged = 0)"  # only the time kept on an item left unanswered
    )
    if answered_only:
        sql += " AND a.status = 'answered'"
    frame = pd.read_sql_query(sql + " ORDER BY p.name, a.seq", project.db.conn, params=[task.id])
    frame["flagged"] = frame["flagged"].astype(bool)
    if task.kind == SUMMARY_VALIDITY:
        frame["correct"] = frame["value"].map({"true": True, "distorted": False}).astype("boolean")
    else:
        frame["correct"] = pd.Series(pd.NA, index=frame.index, dtype="boolean")
    for column in ("amount", "minutes", "seconds"):
        frame[column] = frame[column].astype(float)
    for column in ("chosen_side", "true_side", "confidence"):
        frame[column] = frame[column].astype("Int64")
    return frame[EXPORT_COLUMNS + ["item_pk"]]


def export_frame(project: "Project", task: "Task | str | int") -> pd.DataFrame:
    return annotations_frame(project, task).drop(columns=["item_pk"])


def progress_frame(project: "Project", task: "Task | str | int") -> pd.DataFrame:
    """One row per annotator of the task: items assigned, answered, skipped and flagged."""
    task = get_task(project, task)
    rows = project.db.execute(
        "SELECT p.name,"
        " (SELECT COUNT(*) FROM annotation_assignments s WHERE s.task_id = :t AND s.annotator_id = p.id),"
        " SUM(a.status = 'answered'), SUM(a.status = 'skipped'), SUM(a.flagged)"
        " FROM annotators p JOIN annotations a ON a.annotator_id = p.id AND a.task_id = :t GROUP BY p.id"
        " UNION SELECT p.name, COUNT(*), 0, 0, 0 FROM annotators p JOIN annotation_assignments s"
        " ON s.annotator_id = p.id AND s.task_id = :t"
        " WHERE NOT EXISTS (SELECT 1 FROM annotations a WHERE a.annotator_id = p.id AND a.task_id = :t) GROUP BY p.id"
        " ORDER BY 1",
        {"t": task.id},
    ).fetchall()
    return pd.DataFrame(rows, columns=["annotator", "assigned", "answered", "skipped", "flagged"])
