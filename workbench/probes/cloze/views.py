"""The Name cloze pages' results views: what a page offers for each view, and the one query that builds it.

Each view has a Qt-free, frozen ``...Choices`` (every option the page offers for it, with the page's defaults,
the book included) and a core query taking the project and those choices:

- accuracy per book   ``AccuracyChoices``     ``accuracy_frame`` (numbers; ``palimpsest cloze accuracy``) and
                                              ``accuracy_view`` (the Name cloze page's "Accuracy per book" tab);
- the probe's runs    ``RunsChoices``         ``runs_view`` (the page's "Runs" tab);
- models side by side ``ModelsTableChoices``  ``models_table_frame`` (numbers; ``palimpsest cloze table``) and
                                              ``models_table_view`` (the page's "Models side by side" tab);
- one book's answers  ``PassagesChoices``     ``passages_view`` (the passages dialog of the Charts page;
                                              ``palimpsest cloze answers --book``).

A ``..._view`` is the ``..._frame`` of the same choices written as the page shows it (shares as percentages,
intervals as one cell, kinds and times in words), with ``ViewColumn`` s naming its columns: the page only shows
it, and the terminal prints the same numbers unrounded. The pages keep their choices in these objects and hand
them to the query on a worker; nothing is read from a widget when the table is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import pandas as pd

from workbench import wording
from workbench.probes.cloze.kinds import CLOZE_KIND, LOGPROB_KIND, MLM_KIND

if TYPE_CHECKING:
    from workbench.project import Project


@dataclass(frozen=True)
class ViewColumn:
    """One column of a view: its field in the view's frame, its heading, and how the page lays it out."""

    field: str
    title: str
    numeric: bool = False
    tooltip: str = ""
    stretch: bool = False
    optional: bool = False  # hidden while every cell is empty (e.g. log-probabilities before any such run)


# ---------------------------------------------------------------------------------------------- writing values
def _share(value: Any) -> str:
    return "" if wording.missing(value) else f"{float(value):.0%}"


def _count(value: Any) -> str:
    return "" if wording.missing(value) else f"{int(value):,}"


def _decimal(value: Any) -> str:
    return "" if wording.missing(value) else f"{float(value):.2f}"


def _yes_only(value: Any) -> str:
    return "yes" if not wording.missing(value) and bool(value) else ""


def _text(value: Any) -> str:
    return "" if wording.missing(value) else str(value)


def _interval(low: pd.Series, high: pd.Series) -> list[str]:
    return ["" if wording.missing(a) or wording.missing(b) else f"{a:.0%} – {b:.0%}" for a, b in zip(low, high)]


KIND_NAMES = {CLOZE_KIND: "name cloze", MLM_KIND: "masked-LM baseline", LOGPROB_KIND: "log-probability"}


def kind_words(value: Any) -> str:
    return KIND_NAMES.get(value, _text(value))


def _only_book(frame: pd.DataFrame, book_id: int | None) -> pd.DataFrame:
    if book_id is None:
        return frame.reset_index(drop=True)
    return frame[frame["book_id"] == int(book_id)].reset_index(drop=True)


# ---------------------------------------------------------------------------------------------- accuracy per book
@dataclass(frozen=True)
class AccuracyChoices:
    """The per-book accuracy: which models (none: every model), which book (None: every book), whether flagged
    books are left out, the interval, and (the command line's short table) whether every column is kept."""

    models: tuple[str, ...] = ()
    book_id: int | None = None
    exclude_flagged: bool = False
    ci: str = "wilson"
    all_columns: bool = True


def accuracy_frame(project: "Project", choices: AccuracyChoices) -> pd.DataFrame:
    """``book_accuracy`` for the choices: one row per model, kind of run and book (``BOOK_COLUMNS``, or the short
    ``ACCURACY_TABLE_COLUMNS`` without ``all_columns``)."""
    from workbench.probes.cloze.analysis import ACCURACY_TABLE_COLUMNS, book_accuracy

    frame = book_accuracy(project, list(choices.models) or None, ci=choices.ci,
                          exclude_flagged=choices.exclude_flagged)
    frame = _only_book(frame, choices.book_id)
    return frame if choices.all_columns else frame[ACCURACY_TABLE_COLUMNS]


ACCURACY_VIEW_COLUMNS = [
    ViewColumn("Model", "Model"),
    ViewColumn("Run", "Run"),
    ViewColumn("Book", "Book", stretch=True),
    ViewColumn("Answered", "Answered", numeric=True, tooltip="Passages the model answered (failures not counted)"),
    ViewColumn("Correct", "Correct", numeric=True),
    ViewColumn("Accuracy", "Accuracy", numeric=True, tooltip="Correct / answered"),
    ViewColumn("95% CI", "95% CI", numeric=True, tooltip="Wilson 95% confidence interval"),
    ViewColumn("Failed", "Failed", numeric=True, tooltip="Calls that failed; 'Retry failed only' asks again"),
    ViewColumn("Flagged", "Flagged", tooltip="Fewer passages than asked for: charts can leave these books out",
               optional=True),
    ViewColumn("Mean log-prob", "Mean log-prob", numeric=True, optional=True,
               tooltip="Mean log-probability of the true name (log-probability runs; higher = more expected)"),
]


def accuracy_display(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of ``book_accuracy`` as the page writes them (columns ``ACCURACY_VIEW_COLUMNS``, with ``book_id``)."""
    return pd.DataFrame({
        "Model": [_text(v) for v in frame["model"]],
        "Run": [kind_words(v) for v in frame["kind"]],
        "Book": [_text(v) for v in frame["book"]],
        "Answered": [_count(v) for v in frame["n"]],
        "Correct": [_count(v) for v in frame["correct"]],
        "Accuracy": [_share(v) for v in frame["accuracy"]],
        "95% CI": _interval(frame["ci_low"], frame["ci_high"]),
        "Failed": [_count(v) for v in frame["failed"]],
        "Flagged": [_yes_only(v) for v in frame["flagged"]],
        "Mean log-prob": [_decimal(v) for v in frame["mean_logprob"]],
        "book_id": list(frame["book_id"]),
    }, columns=[c.field for c in ACCURACY_VIEW_COLUMNS] + ["book_id"])


def accuracy_view(project: "Project", choices: AccuracyChoices) -> pd.DataFrame:
    """What the "Accuracy per book" tab shows for the choices: ``accuracy_frame`` written out."""
    from dataclasses import replace

    return accuracy_display(accuracy_frame(project, replace(choices, all_columns=True)))


def empty_accuracy_view() -> pd.DataFrame:
    return pd.DataFrame(columns=[c.field for c in ACCURACY_VIEW_COLUMNS] + ["book_id"])


# ---------------------------------------------------------------------------------------------- runs
@dataclass(frozen=True)
class RunsChoices:
    """The name-cloze runs: which models' (none: every model's)."""

    models: tuple[str, ...] = ()


RUNS_VIEW_COLUMNS = [
    ViewColumn("Run", "Run", numeric=True),
    ViewColumn("Kind", "Kind"),
    ViewColumn("Model", "Model"),
    ViewColumn("Prompt", "Prompt"),
    ViewColumn("Status", "Status"),
    ViewColumn("Done", "Done", numeric=True),
    ViewColumn("Failed", "Failed", numeric=True),
    ViewColumn("Started", "Started"),
    ViewColumn("Note", "Note", stretch=True),
]
#: the view's fields beside the columns shown: the run's id (the key) and what can be done with it
RUN_ACTIONS = ["id", "can_continue", "can_retry"]


def run_about(project: "Project", run_id: int, kind: str, known: dict[int, str]) -> str:
    """Where a run's answers came from, e.g. 'imported from pg1342.tsv; 40 passages', read once per run (it never
    changes) into ``known`` (a query per run: 1,142 runs took 60 ms)."""
    from workbench import jobs
    from workbench.errors import UserError

    if run_id not in known:
        try:
            known[run_id] = wording.run_about(kind, jobs.get_run(project, run_id)["config"])
        except UserError:
            known[run_id] = ""
    return known[run_id]


def runs_view(project: "Project", choices: RunsChoices, known: dict[int, str] | None = None) -> pd.DataFrame:
    """The name-cloze runs as the "Runs" tab shows them, newest first (``RUNS_VIEW_COLUMNS`` and ``RUN_ACTIONS``):
    whether a run can be continued (it stopped with passages left) or its failures retried is said here."""
    from workbench.jobs import RESUMABLE_STATUSES
    from workbench.probes.cloze.overview import cloze_runs

    runs = cloze_runs(project)
    if choices.models:
        runs = runs[runs["model"].isin(choices.models)].reset_index(drop=True)
    known = {} if known is None else known
    notes = []
    for run_id, kind, note in zip(runs["id"], runs["kind"], runs["note"]):
        about = run_about(project, int(run_id), kind, known)
        notes.append("; ".join(x for x in (_text(note), about) if x))
    resumable = ~runs["imported"].astype(bool) & runs["status"].isin(RESUMABLE_STATUSES)
    return pd.DataFrame({
        "Run": [_count(v) for v in runs["id"]],
        "Kind": [kind_words(v) for v in runs["kind"]],
        "Model": [_text(v) for v in runs["model"]],
        "Prompt": [_text(v) for v in runs["template"]],
        "Status": [_text(v) for v in runs["status"]],
        "Done": [f"{int(ok) + int(failed)} of {int(total)}"
                 for ok, failed, total in zip(runs["ok"], runs["failed"], runs["total"])],
        "Failed": [_count(v) for v in runs["failed"]],
        "Started": [wording.when(v) for v in runs["created_at"]],
        "Note": notes,
        "id": [int(v) for v in runs["id"]],
        "can_continue": list(resumable & (runs["ok"] + runs["failed"] < runs["total"])),
        "can_retry": list(resumable & (runs["failed"] > 0)),
    }, columns=[c.field for c in RUNS_VIEW_COLUMNS] + RUN_ACTIONS)


def empty_runs_view() -> pd.DataFrame:
    return pd.DataFrame(columns=[c.field for c in RUNS_VIEW_COLUMNS] + RUN_ACTIONS)


def run_actions(view: pd.DataFrame, run_id: Any) -> dict | None:
    """The row of ``runs_view`` for one run (its id and what can be done with it), or None."""
    if run_id is None or view.empty:
        return None
    rows = view[view["id"] == run_id]
    return None if rows.empty else {k: rows.iloc[0][k] for k in RUN_ACTIONS}


# ---------------------------------------------------------------------------------------------- models side by side
@dataclass(frozen=True)
class ModelsTableChoices:
    """The paper's table: the models side by side (none: the first two with results), the N books the ranking model
    knows best, the years, the people, the order, and one book (None: every book)."""

    models: tuple[str, ...] = ()
    top: int | None = None
    year_from: int | None = None
    year_to: int | None = None
    humans: bool = False
    sort_by: str | None = None
    book_id: int | None = None
    annotator: str | None = None
    task: str | None = None
    per_answer: bool = False

    def ordered_models(self) -> list[str]:
        """The models, the ranking model's column first (as in the paper's tables)."""
        models = list(dict.fromkeys(m for m in self.models if m))
        if self.sort_by in models:
            models = [self.sort_by] + [m for m in models if m != self.sort_by]
        return models

    def order(self) -> str | None:
        """The order of the rows as ``models_table`` takes it: the people only when their column is asked for."""
        if self.sort_by == "humans" and not (self.humans or self.annotator):
            return None
        return self.sort_by or None

    def export_options(self) -> dict[str, Any]:
        """The choices as the export registry's ``cloze-models-table`` takes them (``key=value`` options)."""
        options = {"models": ",".join(self.ordered_models()), "top": self.top, "year_from": self.year_from,
                   "year_to": self.year_to, "humans": self.humans, "sort_by": self.order(),
                   "annotator": self.annotator, "task": self.task}
        return {k: v for k, v in options.items() if v not in (None, "", False)}


def models_table_frame(project: "Project", choices: ModelsTableChoices) -> pd.DataFrame:
    """``models_table`` for the choices, only the chosen book's row when one is chosen (after ``top``: the book's
    row is the one it has among the books shown)."""
    from workbench.probes.cloze.models_table import models_table

    frame = models_table(project, choices.ordered_models(), top=choices.top, year_from=choices.year_from,
                         year_to=choices.year_to, humans=choices.humans, annotator=choices.annotator,
                         task=choices.task, sort_by=choices.order(), per_answer=choices.per_answer)
    return _only_book(frame, choices.book_id)


BOOK_VIEW_COLUMNS = [ViewColumn("book", "Book", stretch=True), ViewColumn("author", "Author"),
                     ViewColumn("year", "Year", numeric=True)]
BASELINE_VIEW_COLUMNS = [
    ViewColumn("book", "Book", stretch=True),
    ViewColumn("baseline_name", "Name always answered"),
    ViewColumn("passages", "Passages", numeric=True),
    ViewColumn("accuracy", "Accuracy", numeric=True),
    ViewColumn("ci", "95% CI", numeric=True, tooltip="Wilson 95% interval"),
    ViewColumn("note", "Note"),
]


def models_table_columns(frame: pd.DataFrame) -> list[ViewColumn]:
    """The columns of a models table: book, author, year, then a pair (accuracy, n) per model, and the people's
    interval where there is one."""
    columns = list(BOOK_VIEW_COLUMNS)
    for name in frame.columns:
        if not name.startswith("accuracy: "):
            continue
        who = name[len("accuracy: "):]
        columns.append(ViewColumn(name, who, numeric=True, tooltip=f"Share of passages {who} named correctly"))
        columns.append(ViewColumn(f"passages: {who}", "n", numeric=True,
                                  tooltip=f"Passages {who} answered (failures not counted)"))
        if f"ci_low: {who}" in frame.columns:
            columns.append(ViewColumn(f"ci: {who}", "95% CI", numeric=True, tooltip="Wilson 95% confidence interval"))
    return columns


def models_table_display(frame: pd.DataFrame) -> pd.DataFrame:
    """A ``models_table`` as the tab writes it (the fields of ``models_table_columns``, with ``book_id``)."""
    shown: dict[str, list] = {
        "book": [_text(v) for v in frame["book"]],
        "author": [_text(v) for v in frame["author"]],
        "year": ["" if wording.missing(v) else str(int(v)) for v in frame["year"]],
    }
    for column in models_table_columns(frame)[len(BOOK_VIEW_COLUMNS):]:
        if column.field.startswith("accuracy: "):
            shown[column.field] = [_share(v) for v in frame[column.field]]
        elif column.field.startswith("passages: "):
            shown[column.field] = [_count(v) for v in frame[column.field]]
        else:
            who = column.field[len("ci: "):]
            shown[column.field] = _interval(frame[f"ci_low: {who}"], frame[f"ci_high: {who}"])
    shown["book_id"] = list(frame["book_id"]) if "book_id" in frame.columns else []
    return pd.DataFrame(shown, columns=list(shown))


def baseline_display(frame: pd.DataFrame) -> pd.DataFrame:
    """The most-frequent-name baseline as the tab writes it (``BASELINE_VIEW_COLUMNS``)."""
    if frame.empty:
        return pd.DataFrame(columns=[c.field for c in BASELINE_VIEW_COLUMNS])
    return pd.DataFrame({
        "book": [_text(v) for v in frame["book"]],
        "baseline_name": [_text(v) for v in frame["baseline_name"]],
        "passages": [_count(v) for v in frame["passages"]],
        "accuracy": [_share(v) for v in frame["accuracy"]],
        "ci": _interval(frame["ci_low"], frame["ci_high"]),
        "note": [_text(v) for v in frame["note"]],
    }, columns=[c.field for c in BASELINE_VIEW_COLUMNS])


@dataclass(frozen=True)
class ModelsTableView:
    """What the "Models side by side" tab shows: the models with results (to offer), the table written out with
    its columns, the note under it and the baseline (None for the table: no model has answers yet)."""

    labels: list[str]
    table: pd.DataFrame | None = None
    columns: list[ViewColumn] = field(default_factory=lambda: list(BOOK_VIEW_COLUMNS))
    note: str = ""
    baseline: pd.DataFrame = field(default_factory=lambda: baseline_display(pd.DataFrame()))


def empty_models_table() -> pd.DataFrame:
    return pd.DataFrame(columns=[c.field for c in BOOK_VIEW_COLUMNS] + ["book_id"])


def models_table_view(project: "Project", choices: ModelsTableChoices) -> ModelsTableView:
    """The tab's view for the choices, read in one go on a worker: with no model chosen, the first two with
    results; with people asked for but none answered, the table without them and a note saying so."""
    from dataclasses import replace

    from workbench.errors import UserError
    from workbench.probes.cloze.analysis import model_labels
    from workbench.probes.cloze.baselines import frequent_name_baseline
    from workbench.probes.cloze.human import human_answers, no_answers_message, pooling_note
    from workbench.probes.cloze.models_table import models_table_note

    labels = model_labels(project)
    if not choices.models:
        if not labels:
            return ModelsTableView(labels)
        choices = replace(choices, models=tuple(labels[:2]), sort_by=None)
    notes = []
    if choices.humans and human_answers(project).empty:
        notes.append(no_answers_message(project))
        choices = replace(choices, humans=False)
    frame = models_table_frame(project, choices)
    notes.append(models_table_note(project, frame, year_from=choices.year_from, year_to=choices.year_to))
    if choices.humans:
        pooling = pooling_note(human_answers(project))
        notes.append(f"People: {pooling}." if pooling else "")
    try:
        baseline = frequent_name_baseline(project)
    except UserError:
        baseline = pd.DataFrame()
    if choices.book_id is not None and not baseline.empty:  # the all-books row stays: the book's context
        baseline = baseline[baseline["book_id"].isna() | (baseline["book_id"] == choices.book_id)]
    return ModelsTableView(labels, models_table_display(frame), models_table_columns(frame),
                           " ".join(n for n in notes if n), baseline_display(baseline))


# ---------------------------------------------------------------------------------------------- one book's answers
#: what the passages dialog offers to show, and its words for it
ANSWER_FILTERS = {"all": "All answers", "right": "Right", "wrong": "Wrong", "failed": "Failed calls"}


@dataclass(frozen=True)
class PassagesChoices:
    """One book's passages with the models' answers: the book, the models (none: every model) and which answers."""

    book_id: int | None = None
    models: tuple[str, ...] = ()
    show: str = "all"


def answer_rows(frame: pd.DataFrame, show: str) -> pd.DataFrame:
    """The rows of ``passage_results`` to show: all, the right answers, the wrong ones (answered), the failed calls;
    with ``verdict`` ('right', 'wrong', blank for a failed call)."""
    from workbench.errors import UserError

    if show not in ANSWER_FILTERS:
        raise UserError(f"'{show}' is not a choice of answers: use {', '.join(ANSWER_FILTERS)}.")
    correct = frame["correct"].astype("boolean").fillna(False).astype(bool)
    answered = frame["status"] == "ok"
    keep = {"all": pd.Series(True, index=frame.index), "right": correct, "wrong": answered & ~correct,
            "failed": ~answered}[show]
    rows = frame[keep].reset_index(drop=True)
    rows["verdict"] = ["" if wording.missing(v) else ("right" if bool(v) else "wrong") for v in rows["correct"]]
    return rows


def passages_view(project: "Project", choices: PassagesChoices) -> pd.DataFrame:
    """One book's passages (every book's when none is chosen) with each model's raw and parsed answer, as the
    passages dialog lists them: ``PASSAGE_COLUMNS`` and ``verdict``, only the answers ``choices.show`` keeps."""
    from workbench.corpus.library import get_book
    from workbench.probes.cloze.analysis import passage_results

    if choices.book_id is not None:
        get_book(project, int(choices.book_id))  # a book that is not there is said, not shown as no answers
    books = None if choices.book_id is None else [int(choices.book_id)]
    return answer_rows(passage_results(project, list(choices.models) or None, book_ids=books), choices.show)


# ---------------------------------------------------------------------------------------------- the books chooser
def book_rows(overview: pd.DataFrame) -> list[dict]:
    """Rows of ``books_overview`` as the books chooser writes them: plain dicts of texts (a Series per row is slow)."""
    rows = []
    for book in overview.to_dict("records"):
        flagged = not wording.missing(book["flagged"]) and bool(book["flagged"])
        rows.append({
            "book_id": int(book["book_id"]),
            "title": book["title"],
            "tooltip": f"{book['title']}" + (f" — {book['author']}" if book["author"] else ""),
            "year": "" if wording.missing(book["year"]) else str(book["year"]),
            "tags": book["tags"],
            "passages": f"{book['passages']:,}" if book["has_text"] else "no text",
            "passages_tip": "" if book["has_text"] else "Only imported results: the book's text is not in the library",
            "imported": f"{book['imported']:,}" if book["imported"] else "",
            "candidates": "" if wording.missing(book["candidates"]) else f"{book['candidates']:,}",
            "flag": f"fewer than {book['per_book']}" if flagged else "",
            "flag_tip": (f"Only {book['passages']} passages: fewer candidates than the {book['per_book']} asked for."
                         if flagged else ""),
        })
    return rows


def ticked_books(overview: pd.DataFrame, book_ids: Sequence[int]) -> pd.DataFrame:
    """The rows of ``books_overview`` of the ticked books."""
    if overview.empty:
        return overview
    return overview[overview["book_id"].isin(list(book_ids))]


def ticked_text(overview: pd.DataFrame, book_ids: Sequence[int]) -> str:
    """'3 of 10 books ticked · 300 passages (+40 imported) · 1 flagged'."""
    chosen = ticked_books(overview, book_ids)
    passages = int(chosen["passages"].sum()) if len(chosen) else 0
    imported = int(chosen["imported"].sum()) if len(chosen) else 0
    flagged = int(chosen["flagged"].fillna(False).sum()) if len(chosen) else 0
    text = f"{len(chosen)} of {len(overview)} books ticked · {passages:,} passages"
    if imported:
        text += f" (+{imported:,} imported)"
    if flagged:
        text += f" · {flagged} flagged"
    return text


def books_to_extract(overview: pd.DataFrame, book_ids: Sequence[int]) -> dict[int, str]:
    """The ticked books whose text is stored (books known only from imported results have none): id -> title."""
    chosen = ticked_books(overview, book_ids)
    with_text = chosen[chosen["has_text"].astype(bool)] if len(chosen) else chosen
    return {int(b): str(t) for b, t in zip(with_text.get("book_id", []), with_text.get("title", []))}


def extraction_text(summary: pd.DataFrame) -> str:
    """What an extraction did, in a sentence or two (the flagged books named)."""
    flagged = summary[summary["flagged"]]
    text = f"Extracted {int(summary['sampled'].sum()):,} passages from {len(summary)} book(s)."
    if len(flagged):
        text += (f" {len(flagged)} book(s) had fewer than {int(flagged['per_book'].iloc[0])} candidates and are "
                 f"flagged: {', '.join(flagged['title'])}. Charts can leave them out.")
    return text


def empty_overview() -> pd.DataFrame:
    from workbench.probes.cloze.overview import OVERVIEW_COLUMNS

    return pd.DataFrame(columns=OVERVIEW_COLUMNS)


def template_choices(templates: pd.DataFrame) -> list[tuple[str, str]]:
    """The prompt templates as a chooser offers them: ('name-cloze (v2, 2 versions)', 'name-cloze')."""
    choices = []
    for record in templates.itertuples():
        versions = f", {record.versions} versions" if record.versions > 1 else ""
        choices.append((f"{record.name} (v{record.version}{versions})", record.name))
    return choices
