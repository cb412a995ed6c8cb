"""What the Bias (REP) page shows and the CLI prints: the page's choices (Qt-free state) and the queries that
build each table from them.

Each results view has a frozen ``...Choices`` dataclass holding every option the page offers for it (the
classifier, the table, the chart and its options, the models, the books, the set, the validation task ...),
and a query taking the project and that state:

- ``ResultsChoices``: ``results_frame`` (the statistics table as computed: what ``palimpsest rep stats`` and
  the CSV export write) and ``results_table`` (the same rows in plain words: what the Results tab shows);
  ``results_chart_frame`` (what the chosen chart plots);
- ``EntitiesChoices``: ``entities_result`` (overlap per completion, its summary and the base against
  fine-tuned test), ``entities_summary_table`` and ``entities_comparison_table`` (as the Entities tab shows
  them);
- ``AgreementChoices``: ``agreement_frame`` and ``agreement_table`` (the judge against people);
- ``SetChoices``: ``set_roles_table`` and ``set_words_table`` (the Sets tab);
- ``runs_table``: the REP runs (the Runs tab).

The page keeps what is heavy to compute (the counts of one classifier, each table made from them) and calls
the pieces the queries are made of (``count_results``, ``results_tables_from``) on a worker, so what it
shows is what the query returns for its choices. The display builders (``shares_view`` ...) write one row per
input row, in the same order, with readable titles and written-out values (text).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import pandas as pd

from workbench import wording
from workbench.errors import UserError
from workbench.probes.rep import stats
from workbench.probes.rep.classify import LEXICAL, UNPARSED_OUTCOME, select_responses
from workbench.probes.rep.role_names import role_names

if TYPE_CHECKING:
    from workbench.progress import TaskState
    from workbench.project import Project

OUTCOMES = {
    "labelled": "labelled",
    "unparsed": "judge gave no label",
    "unjudged": "not judged yet",
    "judge-failed": "judge call failed",
    "failed": "completion failed",
}
TESTS = {"chi-square": "Chi-square", "kruskal-wallis": "Kruskal-Wallis"}
TREND_METHODS = {"binomial": "binomial regression", "ols": "least squares"}
#: the statistics tables, by the key ``--table`` takes -> the title the Results tab offers
TABLES = {"shares": "Shares with 95% intervals", "tests": "Tests across decades", "trends": "Quadratic trends",
          "spread": "Spread per demographic"}
DEFAULT_CHART = "rep-decade-shares"


def no_rows() -> pd.DataFrame:
    """A table with nothing in it (what a view shows before anything is computed)."""
    return pd.DataFrame()


# ---------------------------------------------------------------------------------------------- values in words
def _missing(value: Any) -> bool:
    return wording.missing(value)


def percent(value: Any, digits: int = 0) -> str:
    """0.234 -> '23%'."""
    return "" if _missing(value) else f"{float(value) * 100:.{digits}f}%"


def interval(low: Any, high: Any, digits: int = 0) -> str:
    """A 95% interval of shares as '4% – 62%'."""
    if _missing(low) or _missing(high):
        return ""
    return f"{float(low) * 100:.{digits}f}% – {float(high) * 100:.{digits}f}%"


def p_value(value: Any) -> str:
    if _missing(value):
        return ""
    return "< 0.001" if float(value) < 0.001 else f"{float(value):.3f}"


def decimal(value: Any, digits: int = 2) -> str:
    return "" if _missing(value) else f"{float(value):.{digits}f}"


def whole(value: Any) -> str:
    return "" if _missing(value) else f"{int(value):,}"


def text(value: Any) -> str:
    return "" if _missing(value) else str(value)


def flag(value: Any, word: str = "yes") -> str:
    """A true/false column written only where it is true (so the exceptions stand out)."""
    return word if not _missing(value) and bool(value) else ""


def _roles(frame: pd.DataFrame, names: dict[tuple[str, str], str]) -> list[str]:
    return [names.get((d, r)) or wording.role_key(r) for d, r in zip(frame["demographic"], frame["role"])]


def _demographics(frame: pd.DataFrame) -> list[str]:
    return [wording.role_key(d) for d in frame["demographic"]]


def _decades(frame: pd.DataFrame) -> list[str]:
    return [", ".join(x for x in (text(d), text(s)) if x) for d, s in
            zip(frame.get("decade", [""] * len(frame)), frame.get("stage", [""] * len(frame)))]


# ---------------------------------------------------------------------------------------------- results: display
def shares_view(shares: pd.DataFrame, names: dict[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """``stats.with_shares``: one row per model, role and category."""
    names = names or {}
    if shares.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "Model": shares["model"].map(text),
        "Role": _roles(shares, names),
        "Category": shares["category"].map(text),
        "Share": shares["share"].map(percent),
        "95% CI (Wilson)": [interval(lo, hi) for lo, hi in zip(shares["ci_low"], shares["ci_high"])],
        "Count": [f"{whole(c)} of {whole(n)}" for c, n in zip(shares["count"], shares["n"])],
        "Decade, stage": _decades(shares),
        "Demographic": _demographics(shares),
        # unparsed answers are in the count's "of N"; failed completions (no text at all) are not
        "No label (in N)": [whole(n) if n else "" for n in shares["unparsed"].fillna(0)],
        "Failed (not in N)": [whole(n) if n else "" for n in shares["failed"].fillna(0)],
        "Small sample": shares["small_sample"].map(flag),
    })


def decade_tests_view(tests: pd.DataFrame, names: dict[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """``stats.decade_tests``: per role a chi-square over all categories, then a test per category."""
    names = names or {}
    if tests.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "Role": _roles(tests, names),
        "Category": [text(c) or "all categories" for c in tests["category"]],
        "Test": [TESTS.get(t, text(t)) for t in tests["test"]],
        # p first among the numbers: beside a chart the table is narrower than its columns, and the
        # column cut off at the edge must not be the one the scholar reads
        "p": tests["p_value"].map(p_value),
        "Significant": tests["significant"].map(lambda v: flag(v, "yes (p < 0.05)")),
        "Statistic": tests["statistic"].map(decimal),
        "df": tests["dof"].map(whole),
        "Decades": tests["decades"].map(text),
        "Completions": tests["n"].map(whole),
        "Demographic": _demographics(tests),
        "Note": tests["note"].map(text),
    })


def trends_view(trends: pd.DataFrame, names: dict[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """``stats.trends`` (its first frame): a quadratic fit of each category's share across decades."""
    names = names or {}
    if trends.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "Role": _roles(trends, names),
        "Category": trends["category"].map(text),
        # the numbers first (see decade_tests_view); the fit and demographic are the same on most rows
        "Quadratic term": trends["b2"].map(lambda v: decimal(v, 3)),
        "p (quadratic)": trends["p_b2"].map(p_value),
        "Linear term": trends["b1"].map(lambda v: decimal(v, 3)),
        "p (linear)": trends["p_b1"].map(p_value),
        "Decades": trends["decades"].map(whole),
        "R²": trends["r_squared"].map(decimal),
        "Fit": [TREND_METHODS.get(m, text(m)) for m in trends["method"]],
        "Demographic": _demographics(trends),
        "Time in": trends["x"].map(text),
        "Note": trends["note"].map(text),
    })


def spread_view(spread: pd.DataFrame) -> pd.DataFrame:
    """``stats.spread``: how unevenly a model spreads each demographic's categories over the roles."""
    if spread.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "Model": spread["model"].map(text),
        "Decade, stage": _decades(spread),
        "Demographic": _demographics(spread),
        "Spread (percentage points)": spread["spread_pp"].map(lambda v: decimal(v, 1)),
        "Roles": spread["roles"].map(whole),
        "Fewest completions per role": spread["min_n"].map(whole),
        "Small sample": spread["small_sample"].map(flag),
        "How it is measured": spread["measure"].map(text),
    })


def responses_view(rows: pd.DataFrame, names: dict[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """The completions behind a clicked bar, point or cell."""
    names = names or {}
    if rows.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "Model": rows["model"].map(text),
        "Decade": rows["decade"].map(text),
        "Role": [names.get((d, r)) or (n if isinstance(n, str) and n else wording.role_key(r))
                 for n, d, r in zip(rows.get("role_name", [None] * len(rows)), rows["demographic"], rows["role"])],
        "Sample": rows["sample"].map(whole),
        "Outcome": [OUTCOMES.get(o, text(o)) for o in rows["outcome"]],
        "Category": rows["category"].map(text),
        "Decided by": rows["evidence"].map(text),
        "Completion": [" ".join(text(r).split()) for r in rows["raw"]],
    })


def runs_view(runs: pd.DataFrame, about: list[str] | None = None) -> pd.DataFrame:
    """``jobs.runs_frame`` rows of REP runs."""
    if runs.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "Run": runs["id"].map(whole),
        "Kind": runs["kind"].map(wording.run_kind),
        "Model": runs["model"].map(text),
        "About": about if about is not None else [""] * len(runs),
        "Status": runs["status"].map(wording.status),
        "Done": [f"{int(ok) + int(failed):,} of {int(total):,}" for ok, failed, total in
                 zip(runs["ok"], runs["failed"], runs["total"])],
        "Failed": runs["failed"].map(whole),
        "Started": runs["created_at"].map(wording.when),
        "Finished": runs["finished_at"].map(wording.when),
        "Note": runs["note"].map(text),
    })


AGREEMENT_STATISTICS = {"accuracy": "Accuracy", "cohen_kappa": "Cohen's kappa", "kappa": "Cohen's kappa"}


def judge_agreement_view(frame: pd.DataFrame) -> pd.DataFrame:
    """``validation.judge_agreement``: the judge against each person and their consensus."""
    if frame.empty:
        return pd.DataFrame()
    accuracy = [str(s).lower().startswith("accuracy") for s in frame["statistic"]]
    return pd.DataFrame({
        "Task": frame["task"].map(text),
        "Judge": [wording.classifier(j) if str(j).startswith("judge:") else text(j) for j in frame["judge"]],
        "Against": frame["against"].map(lambda a: "people's consensus" if a == "consensus" else text(a)),
        "Statistic": [AGREEMENT_STATISTICS.get(str(s), text(s)) for s in frame["statistic"]],
        "Value": [percent(v) if is_share else decimal(v) for v, is_share in zip(frame["value"], accuracy)],
        "95% CI": [interval(lo, hi) if is_share else
                   ("" if _missing(lo) or _missing(hi) else f"{float(lo):.2f} – {float(hi):.2f}")
                   for lo, hi, is_share in zip(frame["ci_low"], frame["ci_high"], accuracy)],
        "Items": frame["items"].map(whole),
        "Note": frame["note"].map(text),
    })


# ---------------------------------------------------------------------------------------------- results: state
def _names(values: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(str(v) for v in values or ())


@dataclass(frozen=True)
class ResultsChoices:
    """Every option of the Results tab (and of ``palimpsest rep stats``).

    ``classifier``: whose labels are counted ('lexical', or 'judge:MODEL'); ``table``: a key of ``TABLES``;
    ``method``: the trend fit ('binomial' or 'ols'); ``models`` and ``demographics``: only these (empty: all);
    ``chart``: the chart drawn (a chart of the export registry); ``chart_options``: its options, as
    (name, value) pairs (``options`` gives them as a dict).
    """

    classifier: str = LEXICAL
    table: str = "shares"
    method: str = "binomial"
    models: tuple[str, ...] = ()
    demographics: tuple[str, ...] = ()
    chart: str = DEFAULT_CHART
    chart_options: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.table not in TABLES:
            raise UserError(f"There is no REP table called '{self.table}'. Tables: {', '.join(TABLES)}.")
        if self.method not in TREND_METHODS:
            raise UserError(f"'{self.method}' is not a trend fit. Fits: {', '.join(TREND_METHODS)}.")
        object.__setattr__(self, "models", _names(self.models))
        object.__setattr__(self, "demographics", _names(self.demographics))
        options = self.chart_options.items() if isinstance(self.chart_options, dict) else self.chart_options
        object.__setattr__(self, "chart_options", tuple(sorted((str(k), v) for k, v in options)))

    @property
    def options(self) -> dict[str, Any]:
        """The chart's options as a dict."""
        return dict(self.chart_options)

    @property
    def table_title(self) -> str:
        return TABLES[self.table]

    def counted_key(self) -> tuple:
        """What the counts depend on: a change here means counting again."""
        return self.classifier, self.models, self.demographics

    def table_key(self) -> tuple:
        """What a table made from the counts depends on besides them."""
        return self.table, self.method

    def chart_key(self) -> tuple:
        """What a chart's frame is kept under: the chart, the classifier and the chart's options."""
        return chart_key(self.chart, {"classifier": self.classifier, **self.options})

    def replace(self, **changes: Any) -> "ResultsChoices":
        return dataclasses.replace(self, **changes)


def chart_key(name: str, options: dict) -> tuple:
    """What a chart's frame is kept under: the chart and its options (the classifier among them)."""
    return (name, tuple(sorted((k, str(v)) for k, v in options.items())))


@dataclass
class RepCounts:
    """The counts of one classifier (``stats.counts_and_responses``), the classified completions behind them
    and the roles' names: what every table and chart of the Results tab is made from."""

    classifier: str = LEXICAL
    counts: pd.DataFrame = field(default_factory=pd.DataFrame)
    classified: pd.DataFrame = field(default_factory=pd.DataFrame)
    names: dict[tuple[str, str], str] = field(default_factory=dict)
    key: tuple = ()

    @property
    def empty(self) -> bool:
        return self.counts.empty


def count_results(project: "Project", choices: ResultsChoices) -> RepCounts:
    """Classify and count the completions of ``choices`` (its classifier, models and demographics)."""
    counts, classified = stats.counts_and_responses(project, choices.classifier, models=choices.models or None,
                                                    demographics=choices.demographics or None)
    return RepCounts(choices.classifier, counts, classified, role_names(classified), choices.counted_key())


def results_frame_from(counted: RepCounts, choices: ResultsChoices) -> pd.DataFrame:
    """The table ``choices.table`` made from ``counted``, as computed (shares as fractions, both interval ends)."""
    counts = counted.counts
    if counts.empty:
        return pd.DataFrame()
    if choices.table == "shares":
        return stats.with_shares(counts)
    if choices.table == "tests":
        return stats.decade_tests(counts)
    if choices.table == "trends":
        return stats.trends(counts, method=choices.method)[0]
    return stats.spread(stats.with_shares(counts))


def results_view_of(frame: pd.DataFrame, choices: ResultsChoices, names: dict[tuple[str, str], str]) -> pd.DataFrame:
    """``frame`` (the table ``choices.table`` as computed) in plain words."""
    if frame.empty:
        return pd.DataFrame()
    if choices.table == "shares":
        return shares_view(frame, names)
    if choices.table == "tests":
        return decade_tests_view(frame, names)
    if choices.table == "trends":
        return trends_view(frame, names)
    return spread_view(frame)


def results_tables_from(counted: RepCounts, choices: ResultsChoices) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the table as computed, the table as shown) from counts made for ``choices``."""
    frame = results_frame_from(counted, choices)
    return frame, results_view_of(frame, choices, counted.names)


def results_frame(project: "Project", choices: ResultsChoices) -> pd.DataFrame:
    """The statistics table of ``choices`` as computed: what ``palimpsest rep stats`` prints and the Results
    tab's "Export table" writes."""
    return results_frame_from(count_results(project, choices), choices)


def results_table(project: "Project", choices: ResultsChoices) -> pd.DataFrame:
    """The statistics table of ``choices`` as the Results tab shows it."""
    return results_tables_from(count_results(project, choices), choices)[1]


def why_no_rows(counted: RepCounts, choices: ResultsChoices) -> str:
    return stats.why_empty(counted.counts, choices.table, choices.classifier)


# ---------------------------------------------------------------------------------------------- results: charts
def chart_context(counted: RepCounts) -> dict[str, Any]:
    """What the charts' frames and choices are made from: the classifier and the counts on show."""
    return {"classifier": counted.classifier, "counts": counted.counts, "role_names": counted.names}


def chart_options_for(project: "Project", choices: ResultsChoices, counted: RepCounts) -> dict[str, Any]:
    """The chart's options: those chosen where offered for these counts, else each option's default."""
    from workbench.export.registry import chart, chosen_options

    return chosen_options(chart(choices.chart).options, project, choices.options, chart_context(counted))


def results_chart_frame(project: "Project", choices: ResultsChoices,
                        counted: RepCounts | None = None) -> pd.DataFrame | str:
    """What the chart ``choices.chart`` plots for its options (from ``counted``, else counted here); or why it
    cannot be drawn."""
    from workbench.export.registry import chart

    counted = counted if counted is not None else count_results(project, choices)
    try:
        return chart(choices.chart).frame(project, **choices.options, **chart_context(counted))
    except UserError as exc:
        return str(exc)


@dataclass
class ResultsShown:
    """One background count for the Results tab: the counts, and the table and chart on show for them (the
    chart's options resolved for these counts), so nothing heavy is left for the GUI thread."""

    choices: ResultsChoices
    counted: RepCounts
    table: tuple[pd.DataFrame, pd.DataFrame]
    chart_frame: pd.DataFrame | str


def results_on_show(project: "Project", choices: ResultsChoices) -> ResultsShown:
    counted = count_results(project, choices)
    choices = choices.replace(chart_options=chart_options_for(project, choices, counted))
    return ResultsShown(choices, counted, results_tables_from(counted, choices),
                        results_chart_frame(project, choices, counted))


def picked_responses(counted: RepCounts, selection: dict[str, Any]) -> pd.DataFrame:
    """The completions behind a clicked bar, point or cell (``classify.select_responses``), in plain words."""
    if counted.classified.empty:
        return pd.DataFrame()
    return responses_view(select_responses(counted.classified, **selection), counted.names)


def results_summary(counted: RepCounts) -> str:
    """One sentence over the completions counted: how many, from how many models, and their outcomes."""
    classified, classifier = counted.classified, counted.classifier
    if classified.empty:
        return "No REP completions yet: tick models on the Runs tab and press Run the prompts."
    outcomes = classified["outcome"].value_counts()
    parts = [f"{int(n):,} {OUTCOMES.get(o, o)}" for o, n in outcomes.items()]
    source = "the word lists" if classifier == LEXICAL else f"the judge {classifier.partition(':')[2]}"
    models = classified["model"].nunique()
    unparsed, total = int(outcomes.get(UNPARSED_OUTCOME, 0)), int(outcomes.sum())
    hint = (" Most judge answers were not one of the labels: try another judge model, or the word lists, "
            "before reading the shares.") if total and unparsed / total >= 0.5 else ""
    return (f"{len(classified):,} completions from {models} model(s), labels from {source}: "
            + ", ".join(parts) + "." + hint)


# ---------------------------------------------------------------------------------------------- runs
def runs_table(project: "Project") -> pd.DataFrame:
    """The REP runs (REP, judge and EEP), newest first, in plain words: what the Runs tab lists."""
    from workbench import jobs
    from workbench.probes.rep.kinds import RUN_KINDS

    frame = jobs.runs_frame(project)
    frame = frame[frame["kind"].isin(RUN_KINDS)].sort_values("id", ascending=False)
    about = [wording.run_about(kind, jobs.get_run(project, int(run_id))["config"])
             for kind, run_id in zip(frame["kind"], frame["id"])]
    return runs_view(frame, about)


# ---------------------------------------------------------------------------------------------- validation
@dataclass(frozen=True)
class AgreementChoices:
    """The judge against people: the validation task (as ``rep validate --task`` named it) and one judge
    (None: every judge)."""

    task: str = "judge check"
    judge: str | None = None


def agreement_frame(project: "Project", choices: AgreementChoices) -> pd.DataFrame:
    """Accuracy (Wilson CI) and Cohen's kappa per judge and person, as computed (``rep agreement``)."""
    from workbench.probes.rep.validation import judge_agreement

    return judge_agreement(project, choices.task.strip(), judge=choices.judge or None)


def agreement_table(project: "Project", choices: AgreementChoices) -> pd.DataFrame:
    """``agreement_frame`` as the Classify tab shows it."""
    return judge_agreement_view(agreement_frame(project, choices))


# ---------------------------------------------------------------------------------------------- sets
@dataclass(frozen=True)
class SetChoices:
    """The set shown on the Sets tab (its name: a demographic such as 'gender', or 'eep'; None: none)."""

    name: str | None = None


def set_roles_table(project: "Project", choices: SetChoices) -> pd.DataFrame:
    """The newest version of the chosen set: one row per role (or EEP stem) with its key, name and stem."""
    from workbench.probes.rep.sets import get_set

    columns = ["Key", "Name", "Stem"]
    if not choices.name:
        return pd.DataFrame(columns=columns)
    prompts = get_set(project, choices.name).parsed.prompts
    return pd.DataFrame([[p.key, p.name, p.stem] for p in prompts], columns=columns)


def set_words_table(project: "Project", choices: SetChoices) -> pd.DataFrame:
    """The chosen set's word lists (the lexical baseline): one row per label with its words."""
    from workbench.probes.rep.lexical import rules_frame
    from workbench.probes.rep.sets import get_set

    lexical = getattr(get_set(project, choices.name).parsed, "lexical", None) if choices.name else None
    frame = rules_frame(lexical) if lexical else pd.DataFrame(columns=["label", "words"])
    return frame.rename(columns={"label": "Label", "words": "Words"})


# ---------------------------------------------------------------------------------------------- entities
ALL_PROMPTS = "all"
CELL_CHARS = 110


@dataclass(frozen=True)
class EntitiesChoices:
    """Every option of the Entities tab (and of ``palimpsest rep entities``): the models (empty: every model
    with EEP completions), the reference books (books with one ``tag`` such as decade=1950s, or a
    ``book_set``) and the EEP set whose stems are sampled."""

    models: tuple[str, ...] = ()
    tag: str | None = None
    book_set: str | None = None
    eep_set: str = "eep"

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", _names(self.models))
        object.__setattr__(self, "tag", (self.tag or "").strip() or None)
        object.__setattr__(self, "book_set", self.book_set or None)

    def describe_books(self) -> str:
        if self.book_set:
            return f"the book set '{self.book_set}'"
        return f"the books tagged {self.tag}" if self.tag else "no books yet"

    def replace(self, **changes: Any) -> "EntitiesChoices":
        return dataclasses.replace(self, **changes)


@dataclass
class EntitiesResult:
    """The completions compared with the books (one row each), the overlap summary per model and prompt, and
    base against fine-tuned models (as computed: what the CLI prints and the CSV exports keep)."""

    per_response: pd.DataFrame = field(default_factory=pd.DataFrame)
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    comparison: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def summary_table(self) -> pd.DataFrame:
        """The summary as the Entities tab shows it."""
        return entities_summary_view(self.summary) if not self.summary.empty else pd.DataFrame()

    @property
    def comparison_table(self) -> pd.DataFrame:
        return entities_comparison_view(self.comparison) if not self.comparison.empty else pd.DataFrame()

    @property
    def comparison_note(self) -> str:
        return "" if self.comparison.empty else str(self.comparison.iloc[0]["note"] or "")

    def describe(self, books: str) -> str:
        """How many completions of how many models were compared with ``books`` (a phrase)."""
        per = self.per_response
        return (f"{len(per)} completions of {per['model'].nunique()} model(s) compared with {books}; "
                f"{int(per['overlap'].notna().sum())} name at least one entity.")

    def summary_row_completions(self, row: int) -> tuple[pd.DataFrame, str]:
        """The completions behind summary row ``row`` (a model and a prompt, or all its prompts) and what they
        are, in words."""
        picked = self.summary.iloc[row]
        per = self.per_response
        rows = per[per["model"] == picked["model"]]
        if picked["prompt"] != ALL_PROMPTS:
            rows = rows[rows["prompt"] == picked["prompt"]]
        what = "all prompts" if picked["prompt"] == ALL_PROMPTS else f"prompt {picked['prompt']}"
        return rows.reset_index(drop=True), f"{len(rows)} completion(s) of {picked['model']}, {what}"


def entities_result(project: "Project", choices: EntitiesChoices, state: "TaskState | None" = None) -> EntitiesResult:
    """Every stored EEP completion of ``choices.models`` compared with ``choices``' books."""
    from workbench.probes.rep.entities import compare_stages, overlap_per_response, overlap_summary

    per_response = overlap_per_response(project, tag=choices.tag, book_set=choices.book_set,
                                        models=list(choices.models) or None, state=state)
    return EntitiesResult(per_response, overlap_summary(per_response), compare_stages(per_response))


def entities_summary_table(project: "Project", choices: EntitiesChoices) -> pd.DataFrame:
    """Mean overlap per model and prompt, as the Entities tab shows it."""
    return entities_result(project, choices).summary_table


def entities_comparison_table(project: "Project", choices: EntitiesChoices) -> pd.DataFrame:
    """Base against fine-tuned models, as the Entities tab shows it."""
    return entities_result(project, choices).comparison_table


def overlap_percent(value: Any) -> str:
    return "" if _missing(value) else f"{float(value):.1f}%"


def _with_interval(mean: Any, low: Any, high: Any) -> str:
    if _missing(mean):
        return ""
    if _missing(low) or _missing(high):
        return f"{mean:.1f}%"
    return f"{mean:.1f}% ({low:.1f}–{high:.1f}%)"


def entities_summary_view(summary: pd.DataFrame) -> pd.DataFrame:
    """The overlap summary as a scholar reads it (one row per summary row, same order)."""
    return pd.DataFrame({
        "Model": summary["model"],
        "Decade, stage": [", ".join(x for x in (d, s) if isinstance(x, str) and x)
                          for d, s in zip(summary["decade"], summary["stage"])],
        "Prompt": ["all prompts" if p == ALL_PROMPTS else p for p in summary["prompt"]],
        "Completions": summary["responses"],
        "With entities": summary["with_entities"],
        "Mean overlap (95% interval)": [_with_interval(m, lo, hi) for m, lo, hi in
                                        zip(summary["overlap_pct"], summary["ci_low_pct"], summary["ci_high_pct"])],
    })


def entities_comparison_view(comparison: pd.DataFrame) -> pd.DataFrame:
    row = comparison.iloc[0]
    return pd.DataFrame([{
        "Base models": f"{overlap_percent(row['base_pct']) or '—'} (n = {int(row['base_n'])})",
        "Fine-tuned models": f"{overlap_percent(row['fine_tuned_pct']) or '—'} (n = {int(row['fine_tuned_n'])})",
        "Test": f"{row['test']}, two-sided",
        "U": "" if _missing(row["statistic"]) else f"{row['statistic']:.1f}",
        "p-value": p_value(row["p_value"]),
    }])


def _short(value: str) -> str:
    value = " ".join((value or "").split())
    return value if len(value) <= CELL_CHARS else value[: CELL_CHARS - 1] + "…"


def overlap_text(common: int, entities: int, overlap: float) -> str:
    return "no entities" if entities == 0 else f"{common} of {entities} ({overlap_percent(overlap * 100)})"


def eep_responses_view(rows: pd.DataFrame) -> pd.DataFrame:
    """EEP completions compared with the books (``overlap_per_response`` rows), as the Entities tab lists them."""
    if rows.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "Prompt": rows["prompt"],
        "Sample": rows["sample"],
        "Completion": [_short(t) for t in rows["raw"]],
        "Entities in the books": [overlap_text(c, e, o) for c, e, o in
                                  zip(rows["common"], rows["entities"], rows["overlap"])],
        "Matched entities": rows["common_entities"],
    })
