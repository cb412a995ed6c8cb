"""Each passage's answer from a model's runs of a task, parsed when read.

Which answers count: of the model's runs of the task that hold answers, only those with the settings
(prompt template version and generation parameters) of the newest one, so that one table never mixes
two prompts; among them, each passage's answer is the newest run's (sample 0). Imported answers are
runs like any other. ``run_ids`` restricts the answers to those runs instead.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.probes.validity.kinds import RUN_KINDS
from workbench.probes.validity.parsers import DEFAULT_SPANS, YEAR_RANGE, Parsed, parse
from workbench.probes.validity.passages import passages_frame
from workbench.probes.validity.run import check_task
from workbench.runs import runs

if TYPE_CHECKING:
    from workbench.project import Project

ANSWER_COLUMNS = ["model", "run_id", "passage_id", "book_id", "book", "status", "raw", "error", "value", "reason",
                  "read", "flag", "truth_year", "minutes", "passage"]


def answered_models(project: "Project", task: str) -> list[str]:
    """Models with answers to ``task``, by label."""
    return sorted({run.model for run in runs(project, RUN_KINDS[check_task(task)], with_responses=True)
                   if run.model is not None})


def counted_runs(project: "Project", task: str, model: str, run_ids: Sequence[int] | None = None) -> list[int]:
    """The model's runs of ``task`` whose answers count (see the module docstring)."""
    rows = [(run.id, "" if run.template_id is None else str(run.template_id), run.params_text)
            for run in runs(project, RUN_KINDS[task], model_label=model, with_responses=True,
                            run_ids=[int(r) for r in run_ids] if run_ids is not None else None)]
    if not rows:
        return []
    settings = rows[-1][1:]
    return [run_id for run_id, *rest in rows if tuple(rest) == settings]


def task_answers(project: "Project", task: str, model: str, *, year_range: tuple[int, int] = YEAR_RANGE,
                 spans: str = DEFAULT_SPANS, run_ids: Sequence[int] | None = None,
                 book_ids: Sequence[int] | None = None) -> pd.DataFrame:
    """One row per answered passage: raw answer, status, the parsed ``value`` (a year, or minutes; NaN when
    missing, ``reason`` saying why, ``read`` the words it was read from, ``flag`` how a value was made from
    a span or a vague word: ``workbench.probes.validity.parsers``; ``spans``: its rule for spans of years),
    the passage's truth
    (``truth_year``: the year given with it, else the book's; ``minutes``: an imported reference) and its
    text. Of ``book_ids``' passages only, when given (only they are read)."""
    check_task(task)
    if project.db.execute("SELECT 1 FROM models WHERE label = ?", [model]).fetchone() is None:
        raise UserError(f"There is no model called '{model}' in this project.")
    runs = counted_runs(project, task, model, run_ids) or [-1]
    books, params = "", list(runs)
    if book_ids is not None:
        books = " AND x.item_id IN (SELECT id FROM validity_passages WHERE book_id IN (SELECT value FROM json_each(?)))"
        params.append(json.dumps([int(b) for b in book_ids]))
    # each passage's answer: the first in the order newest run, then sample (kept by pandas, not a window
    # function over every answer: a third of the time)
    answers = pd.read_sql_query(
        "SELECT x.run_id, x.item_id AS passage_id, x.status, x.raw, x.error"
        f" FROM responses x WHERE x.run_id IN ({','.join('?' * len(runs))}){books}"
        " ORDER BY x.item_id, x.run_id DESC, x.sample", project.db.conn, params=params)
    answers = answers.drop_duplicates("passage_id", keep="first").reset_index(drop=True)
    passages = passages_frame(project, book_ids)
    years = pd.read_sql_query("SELECT id AS book_id, year AS book_year FROM books", project.db.conn)
    frame = answers.merge(passages[["passage_id", "book_id", "book", "year", "minutes", "passage"]], on="passage_id")
    frame = frame.merge(years, on="book_id", how="left")
    frame["truth_year"] = frame["year"].astype("Float64").fillna(frame["book_year"].astype("Float64"))
    once: dict[str, Parsed] = {}  # parsing is a function of the answer alone: each distinct answer is parsed once
    parsed = [(once[raw] if raw in once else once.setdefault(raw, parse(task, raw, year_range, spans)))
              if status == "ok" else None for raw, status in zip(frame["raw"].tolist(), frame["status"].tolist())]
    frame["value"] = [p.value if p is not None and p.value is not None else float("nan") for p in parsed]
    frame["reason"] = [("call failed" if p is None else p.reason) for p in parsed]
    frame["read"] = ["" if p is None else p.text for p in parsed]
    frame["flag"] = ["" if p is None else p.flag for p in parsed]
    frame["model"] = model
    frame["truth_year"] = frame["truth_year"].astype(float)
    return frame.sort_values(["book_id", "passage_id"]).reset_index(drop=True)[ANSWER_COLUMNS]
