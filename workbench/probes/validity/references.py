"""Reference narrative times: the truth the models' estimates are compared with.

Two sources:

- ``imported``: the ``minutes`` given with imported passages;
- an annotation task (``narrative-time``) whose items are the passages: an item's reference is its
  adjudicated value where there is one, otherwise the mean of its annotators' answers on the log scale
  (the geometric mean: 10 minutes and 1,000 minutes average to 100 minutes, not 505). ``source`` says
  which, per passage. Items are matched to passages by the passage id they carry (tasks made with
  ``annotation_task_from_passages``), else by book and text.

``annotation_task_from_passages`` makes such a task from the stored passages (blinded by default), so
annotators time exactly the passages the models read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

from workbench.errors import UserError
from workbench.probes.validity.passages import passages_frame, tidy

if TYPE_CHECKING:
    from workbench.project import Project

IMPORTED = "imported"
PASSAGE_KEY = "validity_passage"  # the passage id an annotation item made from a passage carries in its meta
REFERENCE_COLUMNS = ["passage_id", "reference_minutes", "source"]


def reference_choices(project: "Project") -> list[str]:
    """'imported' (when passages carry minutes) and every narrative-time annotation task, by name."""
    from workbench.annotation.tasks import NARRATIVE_TIME, list_tasks

    choices = []
    if project.db.execute("SELECT 1 FROM validity_passages WHERE minutes IS NOT NULL LIMIT 1").fetchone():
        choices.append(IMPORTED)
    return choices + [t.name for t in list_tasks(project) if t.kind == NARRATIVE_TIME]


def reference_minutes(project: "Project", reference: str) -> pd.DataFrame:
    """One row per passage with a reference: its minutes and where they come from."""
    if reference == IMPORTED:
        frame = passages_frame(project)
        frame = frame[frame["minutes"].notna()]
        if frame.empty:
            raise UserError("No passage came with a reference narrative time. Import passages with a 'minutes' "
                            "column, or compare with an annotation task instead.")
        return pd.DataFrame({"passage_id": frame["passage_id"], "reference_minutes": frame["minutes"].astype(float),
                             "source": IMPORTED})[REFERENCE_COLUMNS]
    return _task_references(project, reference)


def _task_references(project: "Project", name: str) -> pd.DataFrame:
    from workbench.annotation.adjudication import adjudications_frame
    from workbench.annotation.answers import annotations_frame
    from workbench.annotation.items import list_items
    from workbench.annotation.tasks import NARRATIVE_TIME, get_task

    task = get_task(project, name)
    if task.kind != NARRATIVE_TIME:
        raise UserError(f"The annotation task '{task.name}' is a {task.kind} task; choose a narrative-time task.")
    passages = passages_frame(project)
    by_id = set(passages["passage_id"])
    by_text = {(b, p): i for i, b, p in zip(passages["passage_id"], passages["book_id"], passages["passage"])}
    item_passage: dict[str, int] = {}
    for item in list_items(project, task):
        pid = item.meta.get(PASSAGE_KEY)
        if pid in by_id:
            item_passage[item.item_key] = int(pid)
        elif (item.book_id, tidy(item.text)) in by_text:
            item_passage[item.item_key] = by_text[(item.book_id, tidy(item.text))]
    answers = annotations_frame(project, task, answered_only=True)
    answers = answers[answers["minutes"] > 0]
    adjudicated = adjudications_frame(project, task).dropna(subset=["minutes"]).set_index("item_id")["minutes"]
    rows = []
    for item_key, pid in item_passage.items():
        if item_key in adjudicated.index:
            rows.append((pid, float(adjudicated[item_key]), "adjudicated"))
            continue
        minutes = answers.loc[answers["item_id"] == item_key, "minutes"].to_numpy(dtype=float)
        if len(minutes):
            rows.append((pid, float(np.exp(np.log(minutes).mean())),
                         f"mean of {len(minutes)} annotator{'s' if len(minutes) != 1 else ''} (log scale)"))
    if not item_passage:
        raise UserError(f"No item of the task '{task.name}' is one of the passages the models read. Make the task from "
                        "the passages ('palimpsest validity annotate'), then annotate it.")
    return pd.DataFrame(rows, columns=REFERENCE_COLUMNS)


def annotation_task_from_passages(project: "Project", name: str, *, book_ids: Sequence[int] | None = None,
                                  blinded: bool = True, seed: int = 0) -> int:
    """Make a narrative-time annotation task whose items are the stored passages; returns how many items."""
    from workbench.annotation.items import NewItem, add_items, book_meta
    from workbench.annotation.tasks import NARRATIVE_TIME, create_task

    passages = passages_frame(project, book_ids)
    if passages.empty:
        raise UserError("There are no passages yet: sample or import them first.")
    task = create_task(project, name, NARRATIVE_TIME, blinded=blinded, seed=seed)
    metas = {int(b): book_meta(project, int(b)) for b in passages["book_id"].unique()}
    items = [NewItem(text=row.passage, book_id=int(row.book_id),
                     start_char=None if pd.isna(row.start_char) else int(row.start_char),
                     end_char=None if pd.isna(row.end_char) else int(row.end_char),
                     meta={**metas[int(row.book_id)], PASSAGE_KEY: int(row.passage_id)}, origin="validity")
             for row in passages.itertuples(index=False)]
    return len(add_items(project, task, items))
