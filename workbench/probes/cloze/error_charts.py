"""The error analysis's chart and tables in the export registry (see ``errors``).

- chart ``name-cloze-errors``: the randomization test's null distribution of the log-odds o (one value per
  deal of the names between S and U) with the observed o; options ``model``, ``by`` (default: ``model``),
  ``groups`` (decile or quintile), ``set_size``, ``permutations``, ``seed``. (Not named ``cloze-...``: the
  Charts page lists those, and this one is drawn on the Validity page.)
- tables ``cloze-errors`` (the one-row summary of ``palimpsest cloze errors``) and ``cloze-error-names``
  (the names of S and U with their PMI, book and how often the held-out errors offered them).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.errors import UserError
from workbench.export.registry import ChartSpec, TableSpec, register_chart, register_table
from workbench.probes.cloze.errors import DEFAULT_PERMUTATIONS, ErrorAnalysis, error_analysis, summary_frame

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from workbench.project import Project

NULL_COLUMNS = ["model", "by", "groups", "set_size", "errors", "in_seen", "in_unseen", "observed", "p_value", "deal",
                "log_odds"]


def _options(project: "Project", model: str | None, set_size: Any, permutations: Any, seed: Any) -> dict[str, Any]:
    from workbench.probes.cloze.analysis import model_labels

    if not model:
        labels = model_labels(project)
        if not labels:
            raise UserError("No model has name-cloze results yet: run the probe or import results first.")
        model = labels[0]
    return {"model": model, "set_size": int(set_size) if set_size not in (None, "") else None,
            "permutations": int(permutations or DEFAULT_PERMUTATIONS), "seed": int(seed or 0)}


def null_frame(project: "Project", model: str | None = None, by: str | None = None, groups: str = "decile",
               set_size: Any = None, permutations: Any = None, seed: Any = 0, **_: Any) -> pd.DataFrame:
    """One row per deal: its log-odds (inf where no error fell in the new U), beside the observed o and p."""
    chosen = _options(project, model, set_size, permutations, seed)
    model = chosen.pop("model")
    return null_plot(error_analysis(project, model, by, groups=groups, **chosen), model, by, groups)


def null_plot(result: ErrorAnalysis, model: str, by: str | None, groups: str) -> pd.DataFrame:
    """What the chart draws, from an error analysis already made."""
    if result.in_seen + result.in_unseen == 0:
        raise UserError(f"Nothing to draw for {model}: {result.note or 'no error names anyone in either set'}.")
    frame = pd.DataFrame({"deal": np.arange(1, len(result.null) + 1), "log_odds": result.null})
    summary = summary_frame(result, model, by, groups).iloc[0]
    for column in ("model", "by", "groups", "set_size", "errors", "in_seen", "in_unseen", "p_value"):
        frame[column] = summary[column]
    frame["observed"] = result.log_odds
    return frame[NULL_COLUMNS]


def draw_null(frame: pd.DataFrame, fig: "Figure", **_: Any) -> None:
    ax = fig.add_subplot()
    values = frame["log_odds"].to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    observed = float(frame["observed"].iloc[0])
    if len(finite):
        ax.hist(finite, bins=min(60, max(10, len(np.unique(finite)))), color="0.6", edgecolor="white",
                label=f"{len(values):,} deals of the names")
    if math.isfinite(observed):
        ax.axvline(observed, color="#c0392b", linewidth=2, label=f"observed o = {observed:.2f}")
    first = frame.iloc[0]
    reached = round(float(first["p_value"]) * (len(frame) + 1)) - 1
    p_text = f"p = {first['p_value']:.2g}" + (" (no deal reached the observed o)" if reached == 0 else "")
    ax.set_xlabel("log-odds o = log(errors naming S / errors naming U)")
    ax.set_ylabel("deals")
    ax.set_title(f"Errors of {first['model']} on held-out books (grouped by {first['by']}, {first['groups']}s)\n"
                 f"{int(first['set_size']):,} names per set; {int(first['in_seen']):,} of {int(first['errors']):,} errors "
                 f"name S, {int(first['in_unseen']):,} name U\n{p_text}", fontsize="medium")
    ax.legend(fontsize="small", loc="upper left")
    ax.grid(axis="y", alpha=0.3)


def summary_table(project: "Project", model: str | None = None, by: str | None = None, groups: str = "decile",
                  set_size: Any = None, permutations: Any = None, seed: Any = 0, **_: Any) -> pd.DataFrame:
    chosen = _options(project, model, set_size, permutations, seed)
    model = chosen.pop("model")
    return summary_frame(error_analysis(project, model, by, groups=groups, **chosen), model, by, groups)


def names_table(project: "Project", model: str | None = None, by: str | None = None, groups: str = "decile",
                set_size: Any = None, **_: Any) -> pd.DataFrame:
    chosen = _options(project, model, set_size, 1, 0)
    model = chosen.pop("model")
    return error_analysis(project, model, by, groups=groups, **chosen).names


register_chart(ChartSpec("name-cloze-errors", "Name cloze: errors towards memorized books", null_frame, draw_null,
                         "The randomization test of the error analysis: null distribution and observed log-odds",
                         size_inches=(7.0, 4.5)))
register_table(TableSpec("cloze-errors", "Name cloze: error analysis", summary_table,
                         "log-odds of errors naming memorized against unmemorized books' names, with its p-value"))
register_table(TableSpec("cloze-error-names", "Name cloze: error-analysis names", names_table,
                         "the names of S (seen) and U (unseen), their PMI and book, and how often errors offered them"))
