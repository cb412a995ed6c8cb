"""The error analysis's chart and tables in the export registry (see ``errors``).

Options (strings from the command line, or values): ``model`` (several, comma-separated, for the tables),
``grouped_by`` (``by`` is the same; default: the first model: one grouping model for every model), ``groups``
(decile or quintile), ``ties`` (``all`` or ``draw``), ``draws``, ``set_size`` (for the tables several,
comma-separated; ``all`` or empty for as many names as both sides allow), ``permutations``, ``seed``.

- chart ``name-cloze-errors``: the randomization test's null distribution of the log-odds o (one value per
  deal of the names between S and U) with the observed o and, when the ties were drawn, the 5th-95th
  percentile of o over the draws. The Validity page shows it (``page="validity"``) beside the tables of
  ``error_report``.
- tables ``cloze-errors`` (the rows of ``palimpsest cloze errors``: one per model and set size) and
  ``cloze-error-names`` (the names of S and U with their PMI, book and how often the held-out errors offered
  them).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.corpus.book_sets import ALL_TIED, DEFAULT_DRAWS, DRAW_TIES
from workbench.errors import UserError
from workbench.export.registry import ChartSpec, Marks, TableSpec, hover_text, register_chart, register_table
from workbench.probes.cloze.error_analysis import (
    ALL_NAMES,
    DEFAULT_PERMUTATIONS,
    DEFAULT_SET_SIZES,
    ErrorAnalysis,
    error_analyses,
    error_analysis,
    summary_frame,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from workbench.project import Project

NULL_COLUMNS = ["model", "grouped_by", "groups", "tie_rule", "set_size", "seen_names", "unseen_names", "errors",
                "in_seen", "in_unseen", "observed", "log_odds_p5", "log_odds_p95", "draws", "p_value", "deal",
                "log_odds"]


def _models(project: "Project", model: Any) -> list[str]:
    from workbench.probes.cloze.analysis import model_labels

    if isinstance(model, (list, tuple)):
        chosen = [str(m).strip() for m in model if str(m).strip()]
    else:
        chosen = [m.strip() for m in str(model or "").split(",") if m.strip()]
    if not chosen:
        labels = model_labels(project)
        if not labels:
            raise UserError("No model has name-cloze results yet: run the probe or import results first.")
        chosen = labels[:1]
    return chosen


def set_size_option(value: Any) -> int | None:
    """One set size from an option: a whole number, or ``all`` / nothing for as many as both sides allow."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", ALL_NAMES, "0")):
        return None
    try:
        size = int(value)
    except (TypeError, ValueError):
        raise UserError(f"'{value}' is not a set size: give a whole number of names, or 'all'.") from None
    return size or None


def _sizes(value: Any, default: tuple) -> list[int | None]:
    if value is None:
        return list(default)
    if isinstance(value, (list, tuple)):
        return [set_size_option(v) for v in value]
    return [set_size_option(v) for v in str(value).split(",")]


def _options(ties: Any, draws: Any, permutations: Any, seed: Any, groups: Any) -> dict[str, Any]:
    return {"ties": str(ties or ALL_TIED), "draws": int(draws or DEFAULT_DRAWS),
            "permutations": int(permutations or DEFAULT_PERMUTATIONS), "seed": int(seed or 0),
            "groups": str(groups or "decile")}


def null_frame(project: "Project", model: Any = None, grouped_by: str | None = None, groups: str = "decile",
               set_size: Any = None, permutations: Any = None, seed: Any = 0, ties: Any = ALL_TIED, draws: Any = None,
               by: str | None = None, **_: Any) -> pd.DataFrame:
    """One row per deal: its log-odds (inf where no error fell in the new U), beside the observed o and p."""
    model = _models(project, model)[0]
    result = error_analysis(project, model, grouped_by or by, set_size=set_size_option(set_size),
                            **_options(ties, draws, permutations, seed, groups))
    return null_plot(result)


def null_plot(result: ErrorAnalysis, *_: Any) -> pd.DataFrame:
    """What the chart draws, from an error analysis already made."""
    if result.in_seen + result.in_unseen == 0:
        raise UserError(f"Nothing to draw for {result.model}: "
                        f"{result.note or 'no error names anyone in either set'}.")
    frame = pd.DataFrame({"deal": np.arange(1, len(result.null) + 1), "log_odds": result.null})
    summary = summary_frame(result).iloc[0]
    for column in NULL_COLUMNS:
        if column in summary.index and column not in frame.columns:  # the summary's log_odds is the observed o
            frame[column] = summary[column]
    frame["observed"] = result.log_odds
    return frame[NULL_COLUMNS]


def draw_null(frame: pd.DataFrame, fig: "Figure", **_: Any) -> list[Marks]:
    ax = fig.add_subplot()
    values = frame["log_odds"].to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    observed = float(frame["observed"].iloc[0])
    first = frame.iloc[0]
    marks = []
    if len(finite):
        counts, edges, _ = ax.hist(finite, bins=min(60, max(10, len(np.unique(finite)))), color="0.6",
                                   edgecolor="white", label=f"{len(values):,} deals of the names")

        def text(i: int) -> str:
            return hover_text(f"{int(counts[i]):,} deals", f"log-odds between {edges[i]:.2f} and {edges[i + 1]:.2f}")

        marks.append(Marks(ax, edges[:-1], np.zeros(len(counts)), text, None, width=np.diff(edges), height=counts))
    drawn = first["tie_rule"] == DRAW_TIES and int(first["draws"] or 0) > 0
    if drawn and math.isfinite(float(first["log_odds_p5"])) and math.isfinite(float(first["log_odds_p95"])):
        ax.axvspan(float(first["log_odds_p5"]), float(first["log_odds_p95"]), color="#c0392b", alpha=0.15,
                   label=f"o over {int(first['draws'])} draws of the ties: 5th-95th percentile")
    if math.isfinite(observed):
        ax.axvline(observed, color="#c0392b", linewidth=2,
                   label=f"observed o = {observed:.2f}" + (" (median draw)" if drawn else ""))
    reached = round(float(first["p_value"]) * (len(frame) + 1)) - 1
    p_text = f"p = {first['p_value']:.2g}" + (" (no deal reached the observed o)" if reached == 0 else "")
    sizes = (f"{int(first['seen_names']):,} names in S, {int(first['unseen_names']):,} in U"
             if first["seen_names"] != first["unseen_names"] else f"{int(first['seen_names']):,} names per set")
    ties = "ties drawn at random" if drawn else "every tied book and name in"
    ax.set_xlabel("log-odds o = log(errors naming S / errors naming U), per name")
    ax.set_ylabel("deals")
    ax.set_title(f"Errors of {first['model']} on held-out books (grouped by {first['grouped_by']}, {first['groups']}s, "
                 f"{ties})\n{sizes}; {int(first['in_seen']):,} of {int(first['errors']):,} errors "
                 f"name S, {int(first['in_unseen']):,} name U\n{p_text}", fontsize="medium")
    ax.legend(fontsize="small", loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    return marks


def null_caption(project: "Project", frame: pd.DataFrame, **_: Any) -> str:
    """What the chart comes to in a sentence: o, the errors behind it, p, and the spread over tie draws."""
    first = frame.iloc[0]
    observed = float(first["observed"])
    drawn = first["tie_rule"] == DRAW_TIES and int(first["draws"] or 0) > 0
    sizes = (f"{int(first['seen_names']):,} names each" if first["seen_names"] == first["unseen_names"] else
             f"{int(first['seen_names']):,} names in S, {int(first['unseen_names']):,} in U")
    spread = (f" Over {int(first['draws'])} draws of the tied books and names, o ran from "
              f"{float(first['log_odds_p5']):.2f} to {float(first['log_odds_p95']):.2f} (5th-95th percentile, "
              "shaded); the draw shown is the median one." if drawn else "")
    return (f"Observed o = {observed:.2f} (red line): {int(first['in_seen'])} of {int(first['errors'])} errors name "
            f"a character of S, {int(first['in_unseen'])} one of U ({sizes}); p = {first['p_value']:.2g} from "
            f"{len(frame):,} deals.{spread}")


def summary_table(project: "Project", model: Any = None, grouped_by: str | None = None, groups: str = "decile",
                  set_size: Any = None, permutations: Any = None, seed: Any = 0, ties: Any = ALL_TIED,
                  draws: Any = None, by: str | None = None, **_: Any) -> pd.DataFrame:
    return summary_frame(error_analyses(project, _models(project, model), grouped_by or by,
                                        set_sizes=_sizes(set_size, DEFAULT_SET_SIZES),
                                        **_options(ties, draws, permutations, seed, groups)))


def names_table(project: "Project", model: Any = None, grouped_by: str | None = None, groups: str = "decile",
                set_size: Any = None, seed: Any = 0, ties: Any = ALL_TIED, draws: Any = None, by: str | None = None,
                **_: Any) -> pd.DataFrame:
    model = _models(project, model)[0]
    return error_analysis(project, model, grouped_by or by, set_size=set_size_option(set_size),
                          **_options(ties, draws, 1, seed, groups)).names


register_chart(ChartSpec("name-cloze-errors", "Name cloze: errors towards memorized books", null_frame, draw_null,
                         "The randomization test of the error analysis: null distribution and observed log-odds",
                         size_inches=(7.0, 4.5), page="validity", caption=null_caption))


def error_report(project: "Project", model: str, grouped_by: str | None, *, groups: str = "decile",
                 set_size: Any = None, permutations: Any = None, seed: Any = 0, ties: Any = ALL_TIED,
                 draws: Any = None, state=None) -> dict[str, Any]:
    """The error analysis as a page shows it: its summary table, the names of S and U, and the chart's frame
    (empty when no error names anyone in either set: the table's note says why)."""
    result = error_analysis(project, model, grouped_by, set_size=set_size_option(set_size),
                            state=state, **_options(ties, draws, permutations, seed, groups))
    chart = null_plot(result) if result.in_seen + result.in_unseen else pd.DataFrame()
    return {"table": summary_frame(result), "rows": result.names, "charts": {"name-cloze-errors": chart}}
register_table(TableSpec("cloze-errors", "Name cloze: error analysis", summary_table,
                         "log-odds of errors naming memorized against unmemorized books' names, with its spread over "
                         "tie draws and set sizes, and its p-value"))
register_table(TableSpec("cloze-error-names", "Name cloze: error-analysis names", names_table,
                         "the names of S (seen) and U (unseen), their PMI and book, and how often errors offered them"))
