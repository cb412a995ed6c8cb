"""Where each book stands in the name-cloze probe, and the probe's runs: the tables a chooser shows.

- ``books_overview``  one row per book: title, year, tags, whether its text is stored, how many
                      extracted and imported passages it has, candidates found, and the flag
                      (fewer candidates than passages asked for);
- ``cloze_runs``      the name-cloze runs (prompted, masked-LM baseline, log-probability, imported)
                      with model, status and counts, newest first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from workbench.probes.cloze.kinds import RUN_KINDS

if TYPE_CHECKING:
    from workbench.project import Project

OVERVIEW_COLUMNS = [
    "book_id", "title", "author", "year", "tags", "has_text", "passages", "imported", "candidates", "per_book",
    "flagged", "fast",
]


def books_overview(project: "Project") -> pd.DataFrame:
    """One row per book of the library with its name-cloze passages (columns ``OVERVIEW_COLUMNS``)."""
    from workbench.corpus.library import format_tags, list_books

    books = list_books(project)
    counts = {
        (book_id, origin): n
        for book_id, origin, n in project.db.execute(
            "SELECT book_id, origin, COUNT(*) FROM cloze_passages GROUP BY book_id, origin"
        ).fetchall()
    }
    extractions = {
        row[0]: row[1:]
        for row in project.db.execute(
            "SELECT book_id, candidates, per_book, sampled < per_book, fast FROM cloze_extractions"
        ).fetchall()
    }
    rows = []
    for book in books:
        candidates, per_book, flagged, fast = extractions.get(book.id, (None, None, None, None))
        rows.append({
            "book_id": book.id,
            "title": book.display_name,
            "author": book.author or "",
            "year": book.year,
            "tags": format_tags(book.tags),
            "has_text": book.has_text,
            "passages": counts.get((book.id, "extracted"), 0),
            "imported": counts.get((book.id, "imported"), 0),
            "candidates": candidates,
            "per_book": per_book,
            "flagged": None if flagged is None else bool(flagged),
            "fast": None if fast is None else bool(fast),
        })
    frame = pd.DataFrame(rows, columns=OVERVIEW_COLUMNS)
    for column in ("year", "candidates", "per_book"):
        frame[column] = frame[column].astype("Int64")
    for column in ("flagged", "fast"):
        frame[column] = frame[column].astype("boolean")
    return frame


RUN_COLUMNS = ["id", "kind", "model", "template", "status", "total", "ok", "failed", "created_at", "finished_at", "note",
               "imported"]


def cloze_runs(project: "Project") -> pd.DataFrame:
    """The name-cloze runs, newest first; ``imported`` is True for published results brought in from files."""
    from workbench.runs import runs, runs_frame

    frame = runs_frame(project)
    frame = frame[frame["kind"].isin(RUN_KINDS)].drop(columns=["model_id", "template_id"])
    backends = dict(project.db.execute("SELECT id, backend FROM models").fetchall())
    templates = dict(project.db.execute("SELECT id, name || ' v' || version FROM prompt_templates").fetchall())
    extra = pd.DataFrame([(run.id, backends.get(run.model_id), templates.get(run.template_id))
                          for run in runs(project, RUN_KINDS)], columns=["id", "backend", "template"]).astype({"id": "int64"})
    frame = frame.merge(extra, on="id", how="left")
    frame["imported"] = frame["backend"] == "external"
    frame["template"] = frame["template"].fillna("")
    frame["model"] = frame["model"].fillna("")
    return frame.sort_values("id", ascending=False).reset_index(drop=True)[RUN_COLUMNS]
