"""What the Annotate page shows, as queries of a Qt-free state: ``AnnotationChoices`` holds the page's options (the
task, who is annotating, and for the disagreements how far apart two times must be), and the functions here return
the frames and sentences the page (and ``palimpsest annotate agreement|disagreements``) shows for them.

Blinding: nothing here names a book, an author or a model. The agreement and the disagreements are everyone's answers,
which the page closes while a session is on (each judgement stays the annotator's own); the Tasks table and the
progress lines say only what the page showed before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from workbench.annotation.adjudication import DEFAULT_FACTOR
from workbench.annotation.tasks import LABEL, SUMMARY_VALIDITY

if TYPE_CHECKING:
    from workbench.annotation.tasks import Task
    from workbench.project import Project

KIND_NAMES = {"narrative-time": "narrative time", "summary-validity": "summary validity", "label": "labels",
              "name-cloze": "name cloze"}
#: the Tasks tab's columns (with ``task_id`` beside them)
TASK_COLUMNS = ["Task", "Annotators judge", "Blinded", "Items", "Per annotator", "Shared", "Seed",
                "Progress (answered of assigned)"]


@dataclass(frozen=True)
class AnnotationChoices:
    """The Annotate page's choices: the task (its id, or its name on the command line), who annotates, and the ratio
    beyond which two narrative times disagree."""
    task: int | str | None = None
    annotator: str | None = None
    factor: float = DEFAULT_FACTOR


def plural(count, word: str) -> str:
    """'1 item', '3 items' (also for numpy numbers)."""
    count = int(count)
    return f"{count} {word}{'' if count == 1 else 's'}"


def agreement_frame(project: "Project", choices: AnnotationChoices) -> pd.DataFrame:
    """One row per agreement statistic of the chosen task (``agreement.agreement_table``), each interval's two ends
    apart: what ``palimpsest annotate agreement`` prints."""
    from workbench.annotation.agreement import agreement_table

    if choices.task is None:
        return pd.DataFrame()
    return agreement_table(project, choices.task)


def agreement_view(frame: pd.DataFrame) -> pd.DataFrame:
    """The agreement table with its interval as one cell ('0.41 – 0.78'); the CSV export keeps both ends."""
    if frame.empty or "ci_low" not in frame:
        return frame
    view = frame.copy()
    view.insert(list(view.columns).index("ci_low"), "ci", [
        "" if pd.isna(low) or pd.isna(high) else f"{low:.3f} – {high:.3f}"
        for low, high in zip(view["ci_low"], view["ci_high"])])
    return view.drop(columns=["ci_low", "ci_high"])


def agreement_shown(project: "Project", choices: AnnotationChoices) -> pd.DataFrame:
    """The agreement as the Results tab shows it."""
    return agreement_view(agreement_frame(project, choices))


def disputes_table(project: "Project", choices: AnnotationChoices) -> pd.DataFrame:
    """One row per disputed item of the chosen task (``adjudication.disagreements``)."""
    from workbench.annotation.adjudication import disagreements

    if choices.task is None:
        return pd.DataFrame()
    return disagreements(project, choices.task, factor=choices.factor)


def tasks_table(project: "Project | None") -> pd.DataFrame:
    """The Tasks tab: one row of texts per task (``TASK_COLUMNS``) with its ``task_id``."""
    from workbench.annotation.overview import tasks_overview

    if project is None:
        return pd.DataFrame(columns=["task_id", *TASK_COLUMNS])
    rows = []
    for row in tasks_overview(project).itertuples():
        limited = not pd.isna(row.per_annotator)
        items = (f"{row.items} ({row.ready} ready)" if row.kind == SUMMARY_VALIDITY and row.ready != row.items
                 else str(row.items))
        rows.append([int(row.task_id), row.name,
                     KIND_NAMES.get(row.kind, row.kind) + (f" ({row.labels})" if row.kind == LABEL and row.labels else ""),
                     "yes" if row.blinded else "no", items, str(int(row.per_annotator)) if limited else "all",
                     f"{row.overlap:.0%}" if limited else "", str(row.seed), row.progress or "nobody has started"])
    return pd.DataFrame(rows, columns=["task_id", *TASK_COLUMNS])


def progress_text(project: "Project", task: "Task") -> str:
    """The start screen's lines: each annotator's answered (of assigned), skipped and flagged items."""
    from workbench.annotation.answers import progress_frame

    lines = [f"{r.annotator}: {r.answered} answered" + (f" of {r.assigned}" if r.assigned else "")
             + (f", {r.skipped} skipped" if r.skipped else "") + (f", {r.flagged} flagged" if r.flagged else "")
             for r in progress_frame(project, task).itertuples()]
    return "\n".join(["Progress so far:", *lines]) if lines else "Nobody has started yet."


def delete_question(project: "Project", task: "Task") -> str:
    """What deleting ``task`` deletes, as the question put before it is deleted."""
    from workbench.annotation.overview import tasks_overview

    row = tasks_overview(project).set_index("task_id").loc[task.id]
    answers = (f" and {plural(row['answers'], 'answer')} from {plural(row['annotators'], 'annotator')}"
               if row["answers"] else "")
    return (f"Delete the task '{task.name}'? Its {plural(row['items'], 'item')}{answers} are deleted with it, and so "
            "are the model runs that made its items. This cannot be undone.")
