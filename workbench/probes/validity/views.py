"""What the Validity page shows, as queries of a Qt-free state: ``ValidityChoices`` holds every option the page
offers for its results (the task, whose answers, which model's name cloze groups the books, deciles or quintiles,
ties, the reference, the rule for spans of years, the seed, a book), and the functions here return exactly the
frames the page (and ``palimpsest validity year|narrative-time``) shows for them.

The name-cloze error analysis the page also offers ("errors") is the name-cloze probe's
(``workbench.probes.cloze.error_charts.error_report``); the page passes it the same choices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.analysis.intervals import BOOTSTRAP_RESAMPLES
from workbench.analysis.permutation import PERMUTATION_RESAMPLES
from workbench.corpus.book_sets import ALL_TIED, DEFAULT_DRAWS
from workbench.errors import UserError
from workbench.probes.validity.parsers import DEFAULT_SPANS, YEAR_RANGE

if TYPE_CHECKING:
    from workbench.project import Project

YEAR, NARRATIVE, ERRORS = "year", "narrative-time", "errors"
TASKS = {YEAR: "Year of first publication", NARRATIVE: "Narrative time", ERRORS: "Name-cloze errors"}
#: the per-book columns ``palimpsest validity year --books`` prints as a table
YEAR_BOOK_COLUMNS = ["book", "group", "accuracy", "year", "answer", "predicted", "abs_error", "tied_at_cut", "flag"]


@dataclass(frozen=True)
class ValidityChoices:
    """Every choice of the Validity page's analysis (and of the CLI's ``validity year`` / ``narrative-time``).

    ``book_id`` narrows the per-book (per-passage) rows and the answers to one book; the group table is always
    over every book (the groups are cut over the whole ranking). ``permutations`` is the error analysis's deals;
    the year test's permutations are ``year_permutations``."""
    task: str = YEAR
    model: str | None = None
    by: str | None = None
    groups: str = "decile"
    ties: str = ALL_TIED
    reference: str | None = None
    spans: str = DEFAULT_SPANS
    set_size: int | None = None
    permutations: int = 10_000
    seed: int = 0
    book_id: int | None = None
    years: tuple[int, int] = YEAR_RANGE
    resamples: int = BOOTSTRAP_RESAMPLES
    year_permutations: int = PERMUTATION_RESAMPLES
    draws: int = DEFAULT_DRAWS

    def missing(self) -> str:
        """What must be chosen before the analysis can run, in words ('' when nothing is missing)."""
        if not self.model or not self.by:
            return ("Choose whose answers to analyse and which model's name-cloze accuracy groups the books. "
                    "The grouping model needs name-cloze results (Name cloze page).")
        if self.task == NARRATIVE and not self.reference:
            return ("There is no reference narrative time yet: import passages with minutes, or make an "
                    "annotation task of the passages and annotate it.")
        return ""


def _book(frame: pd.DataFrame, book_id: int | None) -> pd.DataFrame:
    if book_id is None or frame.empty or "book_id" not in frame:
        return frame
    return frame[frame["book_id"] == int(book_id)].reset_index(drop=True)


def validity_report(project: "Project", choices: ValidityChoices, *, save_groups: bool = True) -> dict[str, Any]:
    """The year or narrative-time analysis of ``choices`` as the page shows it, each part computed once: the group
    ``table``, the per-book (per-passage) ``rows`` (one book's with ``book_id``), the charts' frames, the parse rate
    in words (``parsing``) and the answers without a value (``unparsed``)."""
    from workbench.probes.validity.charts import error_plot, groups_plot, narrative_plot
    from workbench.probes.validity.parse_rate import parse_summary, spread_summary, unparsed_answers

    if choices.task not in (YEAR, NARRATIVE):
        raise UserError(f"The validity analysis is of the year or the narrative time, not '{choices.task}'.")
    if choices.missing():
        raise UserError(choices.missing())
    model, by, groups = choices.model, choices.by, choices.groups
    if choices.task == YEAR:
        from workbench.probes.validity.year import year_results, year_span_spread

        books, table = year_results(project, model, by, groups=groups, year_range=tuple(choices.years),
                                    seed=choices.seed, resamples=choices.resamples,
                                    permutations=choices.year_permutations, save_groups=save_groups,
                                    spans=choices.spans, ties=choices.ties, draws=choices.draws)
        spread = year_span_spread(project, model, by, groups=groups, year_range=tuple(choices.years))
        return {"table": table, "rows": _book(books, choices.book_id), "spread": spread,
                "charts": {"validity-year-groups": groups_plot(table),
                           "validity-year-error": error_plot(books, model, by, groups)},
                "parsing": " ".join(filter(None, [parse_summary(table), spread_summary(spread, choices.spans)])),
                "unparsed": _book(unparsed_answers(project, YEAR, model, by, groups=groups,
                                                   year_range=tuple(choices.years), spans=choices.spans),
                                  choices.book_id)}
    from workbench.probes.validity.narrative_time import narrative_results

    items, table = narrative_results(project, model, by, choices.reference, groups=groups, seed=choices.seed,
                                     resamples=choices.resamples, save_groups=save_groups, ties=choices.ties,
                                     draws=choices.draws)
    return {"table": table, "rows": _book(items, choices.book_id),
            "charts": {"validity-narrative-time": narrative_plot(items, table)}, "parsing": parse_summary(table),
            "unparsed": _book(unparsed_answers(project, NARRATIVE, model, by, groups=groups,
                                               reference=choices.reference), choices.book_id)}


def validity_table(project: "Project", choices: ValidityChoices) -> pd.DataFrame:
    """The group table of ``choices``: top, bottom, all, and their difference with its tests."""
    return validity_report(project, choices)["table"]


def validity_rows(project: "Project", choices: ValidityChoices) -> pd.DataFrame:
    """The per-book (year) or per-passage (narrative time) rows of ``choices``, one book's with ``book_id``."""
    return validity_report(project, choices)["rows"]


def validity_unparsed(project: "Project", choices: ValidityChoices) -> pd.DataFrame:
    """Every answer the analysis of ``choices`` counts that gave no value (one book's with ``book_id``)."""
    from workbench.probes.validity.parse_rate import unparsed_answers

    frame = unparsed_answers(project, choices.task, choices.model, choices.by, groups=choices.groups,
                             **({"reference": choices.reference} if choices.task == NARRATIVE else
                                {"year_range": tuple(choices.years), "spans": choices.spans}))
    return _book(frame, choices.book_id)


def validity_answers(project: "Project", choices: ValidityChoices, *, group: str | None = None,
                     passage_id: int | None = None, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """The answers behind a point or row of the analysis: those of ``choices.book_id``'s book, or of a ``group``'s
    books ('all': every book of the rows), or of one passage; for narrative time each with its reference minutes.

    ``rows`` are the analysis's rows (``validity_rows``) when the caller has them (the group a book fell in,
    under drawn ties, is the median draw's); otherwise they are computed."""
    from workbench.probes.validity.answers import task_answers

    if choices.task not in (YEAR, NARRATIVE):
        raise UserError("The answers behind a point are those of the year or the narrative-time task.")
    if group is not None:
        if rows is None:
            rows = validity_rows(project, choices)
        books = rows["book_id"] if group == "all" else rows.loc[rows["group"] == group, "book_id"]
        wanted: list[int] | None = sorted({int(b) for b in books})
    else:
        wanted = None if choices.book_id is None else [int(choices.book_id)]
    extra = {"spans": choices.spans, "year_range": tuple(choices.years)} if choices.task == YEAR else {}
    frame = task_answers(project, choices.task, choices.model, book_ids=wanted, **extra)
    if passage_id is not None:
        frame = frame[frame["passage_id"] == int(passage_id)]
    if choices.task == NARRATIVE and choices.reference:
        from workbench.probes.validity.references import reference_minutes

        references = reference_minutes(project, choices.reference)[["passage_id", "reference_minutes"]]
        frame = frame.merge(references, on="passage_id", how="left")
    return frame.reset_index(drop=True)


def answers_summary(task: str, frame: pd.DataFrame) -> str:
    """The answers dialog's heading: answers, with a value, missing, failed calls."""
    answered = frame[frame["status"] == "ok"]
    missing = int(answered["value"].isna().sum())
    failed = len(frame) - len(answered)
    what = "year" if task == YEAR else "time"
    text = f"{len(answered)} answer(s), {len(answered) - missing} with a {what}, {missing} missing"
    return text + (f", {failed} failed call(s)" if failed else "") + "."


# ------------------------------------------------------------------------------------------- the passages side
BOOK_COLUMNS = ["book_id", "title", "author", "year", "has_text", "sampled", "imported"]


def passage_books(project: "Project | None") -> list[dict]:
    """The books the passages side lists (``books_overview``), as records; none without a project."""
    if project is None:
        return []
    from workbench.probes.validity.passages import books_overview

    return [{k: (None if _missing(v) else v) for k, v in row.items()}
            for row in books_overview(project).to_dict("records")]


def _missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def ticked_text(books: list[dict], ticked: set[int] | list[int]) -> str:
    """'3 of 10 books ticked · 12 passages'."""
    ticked = set(ticked)
    chosen = [b for b in books if int(b["book_id"]) in ticked]
    passages = sum(int(b["sampled"]) + int(b["imported"]) for b in chosen)
    return f"{len(chosen)} of {len(books)} books ticked · {passages:,} passages"


def sampled_text(summary: pd.DataFrame) -> str:
    """What ``sample_passages`` did, in words."""
    counts = summary["status"].value_counts()
    text = f"{int(summary['passages'].sum()):,} passage(s) in {int((summary['passages'] > 0).sum())} book(s)."
    notes = [f"{int(counts[s])} {what}" for s, what in (("kept", "kept their earlier passages"),
                                                        ("no text", "have no text (imported results only)"),
                                                        ("too short", "have no stretch of prose that long"))
             if s in counts]
    return text + (" " + "; ".join(notes) + "." if notes else "")


def imported_passages_text(frame: pd.DataFrame) -> str:
    """What ``import_passages`` did, in words."""
    return f"Imported {len(frame)} passage(s): {int(frame['new'].sum())} new, {int((~frame['new']).sum())} updated."


def imported_answers_text(frame: pd.DataFrame) -> str:
    """What ``import_predictions`` did, in words."""
    row = frame.iloc[0]
    return (f"Imported {int(row['answers']):,} answer(s) for {int(row['books'])} book(s) under '{row['model']}' "
            f"({int(row['new_answers']):,} new).")
