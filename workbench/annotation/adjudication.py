"""Disagreements and their resolution.

``disagreements`` lists the items where annotators differ: different choices or labels, or narrative-time
answers more than ``factor`` apart (the largest over the smallest; 2 by default). An adjudicated value is
stored beside the original answers, which are never changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.annotation.answers import annotations_frame
from workbench.annotation.durations import describe_minutes, parse_duration
from workbench.annotation.items import item_by_key
from workbench.annotation.tasks import NARRATIVE_TIME, Task, get_task
from workbench.errors import UserError
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

DEFAULT_FACTOR = 2.0


def disagreements(project: "Project", task: "Task | str | int", *, factor: float = DEFAULT_FACTOR) -> pd.DataFrame:
    """One row per disputed item: item_id, one column per annotator, spread, and any adjudicated value."""
    task = get_task(project, task)
    answers = annotations_frame(project, task, answered_only=True)
    annotators = sorted(answers["annotator"].unique())
    adjudicated = adjudications_frame(project, task).set_index("item_id")["value"].to_dict()
    # Grouped in plain Python: a pandas group per item cost about 0.3 ms each (1.2 s for a 4,000-item task,
    # holding the GIL in long stretches and so freezing the window while the Results tab computed).
    by_item: dict[str, list[tuple[str, Any, float]]] = {}
    for annotator, item_id, value, minutes in zip(answers["annotator"], answers["item_id"], answers["value"],
                                                  answers["minutes"]):
        by_item.setdefault(item_id, []).append((annotator, value, minutes))
    rows: list[dict[str, Any]] = []
    for item_id in sorted(by_item):
        group = by_item[item_id]
        if len(group) < 2:
            continue
        if task.kind == NARRATIVE_TIME:
            known = [m for _, _, m in group if not pd.isna(m)]
            with np.errstate(divide="ignore", invalid="ignore"):  # as pandas did: 0 minutes give inf or nan
                ratio = np.float64(max(known)) / np.float64(min(known)) if known else np.float64("nan")
            if ratio <= factor:
                continue
            spread = f"{ratio:.1f}x"
            shown = {a: describe_minutes(m) for a, _, m in group}
        else:
            different = len({v for _, v, _ in group if not pd.isna(v)})
            if different < 2:
                continue
            spread = f"{different} different"
            shown = {a: v for a, v, _ in group}
        rows.append({"item_id": item_id, **{a: shown.get(a, "") for a in annotators}, "spread": spread,
                     "adjudicated": adjudicated.get(item_id, "")})
    return pd.DataFrame(rows, columns=["item_id", *annotators, "spread", "adjudicated"])


def adjudicate(project: "Project", task: "Task | str | int", item_key: str, value: str, *, adjudicator: str = "",
               note: str = "") -> dict[str, Any]:
    """Store the agreed value for an item (replacing an earlier adjudication; answers stay as they are)."""
    task = get_task(project, task)
    item = item_by_key(project, task, item_key)
    if item is None:
        raise UserError(f"Task '{task.name}' has no item {item_key}.")
    minutes = None
    if task.kind == NARRATIVE_TIME:
        duration = parse_duration(value)
        value, minutes = str(duration), duration.minutes
    else:
        match = next((c for c in task.choices if c.lower() == str(value).strip().lower()), None)
        if match is None:
            raise UserError(f"'{value}' is not a possible answer here. Choose one of: {', '.join(task.choices)}.")
        value = match
    with project.db.transaction():
        project.db.execute(
            "INSERT INTO annotation_adjudications (task_id, item_id, value, minutes, adjudicator, note, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(task_id, item_id) DO UPDATE SET value = excluded.value,"
            " minutes = excluded.minutes, adjudicator = excluded.adjudicator, note = excluded.note,"
            " created_at = excluded.created_at",
            [task.id, item.id, value, minutes, adjudicator.strip(), note.strip(), now()],
        )
    return {"item_id": item.item_key, "value": value, "minutes": minutes}


def adjudications_frame(project: "Project", task: "Task | str | int") -> pd.DataFrame:
    task = get_task(project, task)
    return pd.read_sql_query(
        "SELECT i.item_key AS item_id, d.value, d.minutes, d.adjudicator, d.note, d.created_at"
        " FROM annotation_adjudications d JOIN annotation_items i ON i.id = d.item_id WHERE d.task_id = ?"
        " ORDER BY i.item_key",
        project.db.conn,
        params=[task.id],
    )
