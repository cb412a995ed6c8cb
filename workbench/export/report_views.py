"""What the Report page shows for the choices made on it: ``ReportChoices`` (the model the report is about, and a
book, None for every book) and ``report_table``, the frame its table shows (``report.exposure_table``), with the
words the page writes around it: a source's cell, the summary line, and why a book got its verdict.
``palimpsest report`` builds the same choices from its options and prints the same query. Qt-free."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

import pandas as pd

from workbench.export.report import NOT_MEASURED_SIGNAL, exposure_table, verdict_counts

if TYPE_CHECKING:
    from workbench.progress import TaskState
    from workbench.project import Project


@dataclass(frozen=True)
class ReportChoices:
    """The Report page: the model the report is about; ``book_id``: that book's row only (None: every book)."""

    model: str | None = None
    book_id: int | None = None


def report_table(project: "Project", choices: ReportChoices, *, state: "TaskState | None" = None) -> pd.DataFrame:
    """One row per book (of ``choices.book_id`` only, when given) with its evidence from every source and the
    verdict (``report.exposure_table``, ``attrs`` kept: ``sources``, ``notes``, ``model``)."""
    table = exposure_table(project, choices.model or "", state=state)
    if choices.book_id is not None:
        attrs = dict(table.attrs)
        table = table[table["book_id"] == int(choices.book_id)].reset_index(drop=True)
        table.attrs = attrs
    return table


def empty_report() -> pd.DataFrame:
    """The page's table before anything is read."""
    return pd.DataFrame(columns=["book", "book_id", "verdict", "measures_disagree", "verdict_rests_on"])


def number_text(value: Any, measure: str) -> str:
    """A source's number as the page writes it: tokens whole, an AUC to two places, a share as a percentage."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if "tokens" in measure:
        return f"{float(value):.0f}"
    if "AUC" in measure:
        return f"{float(value):.2f}"
    return f"{float(value):.0%}"


def cell_text(row: Mapping[str, Any], source: dict[str, Any]) -> str:
    """How a source's evidence is written in one cell of the page: signal, number, interval."""
    key, measure = source["key"], source["measure"]
    signal = row[f"{key}_signal"]
    if signal == NOT_MEASURED_SIGNAL:
        return "—"
    value = number_text(row[f"{key}_value"], measure)
    low, high = number_text(row[f"{key}_ci_low"], measure), number_text(row[f"{key}_ci_high"], measure)
    return f"{signal}: {value}" + (f" [{low}–{high}]" if low and high else "")


def flag_text(disagree: Any) -> str:
    return "measures disagree" if bool(disagree) else ""


def summary_text(table: pd.DataFrame) -> str:
    """The line above the page's table: books, sources, the verdicts counted, where the measures disagree."""
    sources = table.attrs.get("sources", [])
    disagree = int(table["measures_disagree"].sum()) if not table.empty else 0
    counts = verdict_counts(table)
    return (f"{len(table)} books, {len(sources)} sources of evidence. "
            + ", ".join(f"{n} {label}" for label, n in counts.items())
            + (f"; measures disagree on {disagree}" if disagree else "")
            + ". Double-click a source's cell to open its page.")


def _row(table: pd.DataFrame, book_id: int) -> pd.Series | None:
    rows = table[table["book_id"] == book_id] if not table.empty else table
    return None if rows.empty else rows.iloc[0]


def book_title(table: pd.DataFrame, book_id: int) -> str | None:
    """The title the table gives ``book_id`` (None: not in the table)."""
    row = _row(table, book_id)
    return None if row is None else str(row["book"])


def why_text(table: pd.DataFrame, book_id: int | None) -> str:
    """Why ``book_id`` got its verdict, source by source (what to do when no book of the table is chosen)."""
    row = None if book_id is None else _row(table, book_id)
    if row is None:
        return "Choose a book to see what each source found and the rule it read it by."
    lines = [f"{row['book']}: {row['verdict']}" + (" (measures disagree)" if row["measures_disagree"] else "")
             + f" — rests on {row['verdict_rests_on']}."]
    for source in table.attrs.get("sources", []):
        measured = row[f"{source['key']}_signal"] != NOT_MEASURED_SIGNAL
        lines.append(f"{source['label']}: " + (str(row[f"{source['key']}_basis"]) if measured else "not measured."))
    return "\n".join(lines)


def measured_sources(table: pd.DataFrame, book_id: int) -> list[str] | None:
    """The keys of the sources that measured ``book_id``, in the report's order (None: not in the table)."""
    row = _row(table, book_id)
    if row is None:
        return None
    return [s["key"] for s in table.attrs.get("sources", []) if row[f"{s['key']}_signal"] != NOT_MEASURED_SIGNAL]
