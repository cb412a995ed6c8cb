"""Downstream-validity charts and tables, registered in the export registry.

Charts (``palimpsest chart PROJECT NAME --out FILE.pdf|svg|png --option key=value``); every one takes
``model`` (whose answers), ``by`` (whose name-cloze accuracy groups the books; default: ``model``),
``groups`` (decile or quintile), ``ties`` (``all``: every book tied at a cut goes in; ``draw``: tied books drawn
at random over ``draws`` seeded draws, the median draw shown with the spread over the draws) and ``seed``:

- ``validity-year-groups``  mean absolute error of the year by group (top, bottom, all) with 95% bootstrap
                            intervals, the missing share and the permutation p of top - bottom;
- ``validity-year-error``   each book's absolute error against the grouping model's accuracy, coloured by
                            group, with Spearman's rho;
- ``validity-narrative-time`` predicted against reference minutes (log-log), coloured by group, with
                            each group's rho; option ``reference`` (an annotation task, or 'imported').

The year charts and tables also take ``years`` (plausible years, FROM-TO) and ``spans`` (the parser's
rule for spans of years: missing, decade or century; ``workbench.probes.validity.parsers``).

Tables (CSV): ``validity-passages``, ``validity-answers`` (option ``task``), ``validity-year`` and
``validity-narrative-time`` (the group tables of the CLI, with each group's parse rate),
``validity-year-spans`` (the year's headline numbers under each rule for spans of years), and
``validity-unparsed`` (option ``task``: every answer the analysis counts that gave no value, with its
book, group, passage and reason).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.errors import UserError
from workbench.export.registry import ChartSpec, Marks, TableSpec, hover_text, register_chart, register_table
from workbench.probes.validity import NARRATIVE_TIME, YEAR
from workbench.probes.validity.groups import ALL, ALL_TIED, BOTTOM, DEFAULT_DRAWS, MIDDLE, TOP

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from workbench.project import Project

PAGE = "validity"  # the page of the window that shows these charts
#: one colour per group, the same in every chart
GROUP_COLOURS = {TOP: "#c0392b", BOTTOM: "#2471a3", MIDDLE: "#9a9a9a", "": "#cfcfcf", ALL: "#444444"}
GROUP_NAMES = {TOP: "top", BOTTOM: "bottom", MIDDLE: "middle", "": "no accuracy", ALL: "all"}


def _model(project: "Project", task: str, model: str | None) -> str:
    from workbench.probes.validity.answers import answered_models

    if model:
        return model
    labels = answered_models(project, task)
    if not labels:
        raise UserError("No model has answered this task yet: run it or import answers first.")
    return labels[0]


def _choices(project: "Project", task: str, model: str | None, by: str | None) -> tuple[str, str]:
    model = _model(project, task, model)
    return model, by or model


def _ties(ties: Any, draws: Any) -> dict[str, Any]:
    return {"ties": str(ties or ALL_TIED), "draws": int(draws or DEFAULT_DRAWS)}


def _years(value: Any) -> tuple[int, int]:
    from workbench.probes.validity.parsers import YEAR_RANGE

    if not value:
        return YEAR_RANGE
    if isinstance(value, str):
        low, _, high = value.partition("-")
        return int(low), int(high)
    return tuple(value)


def _spans(value: Any) -> str:
    from workbench.probes.validity.parsers import DEFAULT_SPANS, check_spans

    return check_spans(str(value)) if value else DEFAULT_SPANS


def _reference(project: "Project", reference: str | None) -> str:
    from workbench.probes.validity.references import reference_choices

    if reference:
        return reference
    choices = reference_choices(project)
    if not choices:
        raise UserError("There is no reference narrative time yet: import passages with minutes, or annotate them.")
    return choices[0]


# ---------------------------------------------------------------------------- year: MAE by group
def year_groups_frame(project: "Project", model: str | None = None, by: str | None = None, groups: str = "decile",
                      seed: Any = 0, years: Any = None, spans: Any = None, ties: Any = None, draws: Any = None,
                      **_: Any) -> pd.DataFrame:
    """The year table's top, bottom and all rows, with the difference's p-value on each row."""
    from workbench.probes.validity.year import year_table

    model, by = _choices(project, YEAR, model, by)
    return groups_plot(year_table(project, model, by, groups=groups, seed=int(seed), year_range=_years(years),
                                  spans=_spans(spans), **_ties(ties, draws)))


def groups_plot(table: pd.DataFrame) -> pd.DataFrame:
    """What the MAE-by-group chart draws, from the year table."""
    difference = table[table["group"] == "difference"].iloc[0]
    frame = table[table["group"].isin([TOP, BOTTOM, ALL])].copy()
    frame["difference_mae"] = difference["mae"]
    frame["difference_p_value"] = difference["p_value"]
    frame["difference_mae_p5"], frame["difference_mae_p95"] = difference["mae_p5"], difference["mae_p95"]
    columns = ["model", "by", "groups", "tie_rule", "draws", "group", "books", "predicted", "missing", "missing_share",
               "mae", "mae_ci_low", "mae_ci_high", "mae_p5", "mae_p95", "spearman_rho", "spearman_p", "difference_mae",
               "difference_mae_p5", "difference_mae_p95", "difference_p_value", "note", "answers", "parsed",
               "parse_rate", "parse_ci_low", "parse_ci_high", "approximate", "spans"]
    return frame[columns].reset_index(drop=True)


def _number(value: Any, digits: int = 1) -> str:
    return "\u2014" if value is None or value != value else f"{float(value):,.{digits}f}"


def draw_year_groups(frame: pd.DataFrame, fig: "Figure", **_: Any) -> list[Marks]:
    if frame["mae"].isna().all():
        raise UserError("No answer gave a year, so there is no error to draw: every answer counts as missing (see the "
                        "Missing column). Read some answers (double-click a book) to see what the model wrote.")
    ax = fig.add_subplot()
    x = np.arange(len(frame))
    for i, row in enumerate(frame.itertuples(index=False)):
        colour = GROUP_COLOURS.get(row.group, "#444444")
        if not math.isnan(row.mae):
            err = [[row.mae - row.mae_ci_low], [row.mae_ci_high - row.mae]] if not math.isnan(row.mae_ci_low) else None
            ax.errorbar([i], [row.mae], yerr=err, fmt="o", markersize=7, capsize=6, color=colour, ecolor=colour,
                        elinewidth=1.5)
            ax.annotate(f"{row.mae:.1f}", (i, row.mae), xytext=(10, 0), textcoords="offset points", va="center",
                        fontsize="small")
    labels = [f"{GROUP_NAMES.get(r.group, r.group)}\n{int(r.predicted)} of {int(r.books)} books dated\n"
              f"missing {r.missing_share:.0%}" if r.books else f"{GROUP_NAMES.get(r.group, r.group)}\nno answers"
              for r in frame.itertuples(index=False)]
    ax.set_xticks(x, labels)
    ax.set_xlim(-0.6, len(frame) - 0.4)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("mean absolute error, years (95% bootstrap CI)")
    first = frame.iloc[0]
    p = first["difference_p_value"]
    test = (f"top \u2212 bottom = {first['difference_mae']:.1f} years, permutation p = {p:.3g}"
            if isinstance(p, float) and not math.isnan(p) else "top \u2212 bottom: not enough books to test")
    if first.get("tie_rule") == "draw" and first.get("draws"):
        test += (f"\nmedian of {int(first['draws'])} draws of the tied books; over the draws "
                 f"{first['difference_mae_p5']:.1f} to {first['difference_mae_p95']:.1f} (5th-95th percentile)")
    ax.set_title(f"Year of first publication: {first['model']}, books grouped by {first['by']} ({first['groups']}s)\n"
                 f"{test}", fontsize="medium")
    ax.grid(axis="y", alpha=0.3)
    shown = frame[frame["mae"].notna()]
    rows = list(shown.itertuples(index=False))

    def text(i: int) -> str:
        row = rows[i]
        return hover_text(f"{GROUP_NAMES.get(row.group, row.group)} books",
                          f"mean absolute error {_number(row.mae)} years (95% CI {_number(row.mae_ci_low)}\u2013"
                          f"{_number(row.mae_ci_high)})",
                          f"{int(row.predicted)} of {int(row.books)} books dated; {int(row.missing)} missing",
                          "click to read the answers")

    return [Marks(ax, np.flatnonzero(frame["mae"].notna().to_numpy()).astype(float), shown["mae"].to_numpy(float),
                  text, lambda i: {"group": rows[i].group})]


# ---------------------------------------------------------------------------- year: error against accuracy
def year_error_frame(project: "Project", model: str | None = None, by: str | None = None, groups: str = "decile",
                     years: Any = None, spans: Any = None, seed: Any = 0, ties: Any = None, draws: Any = None,
                     **_: Any) -> pd.DataFrame:
    """Books with a prediction and an accuracy: accuracy, absolute error, group; rho and p on every row."""
    from workbench.probes.validity.year import year_results

    model, by = _choices(project, YEAR, model, by)
    books, _table = year_results(project, model, by, groups=groups, year_range=_years(years), seed=int(seed),
                                 spans=_spans(spans), **_ties(ties, draws))
    return error_plot(books, model, by, groups)


def error_plot(books: pd.DataFrame, model: str, by: str, groups: str) -> pd.DataFrame:
    """What the error-against-accuracy chart draws, from the per-book year table."""
    from workbench.analysis.correlation import spearman

    books = books.dropna(subset=["abs_error", "accuracy"]).reset_index(drop=True)
    result = spearman(books["accuracy"].astype(float), books["abs_error"].astype(float), resamples=0)
    books.insert(0, "by", by)
    books.insert(0, "model", model)
    books["groups"] = groups
    books["spearman_rho"], books["spearman_p"] = result.rho, result.p_value
    return books


def draw_year_error(frame: pd.DataFrame, fig: "Figure", **_: Any) -> list[Marks]:
    ax = fig.add_subplot()
    for group in (MIDDLE, "", BOTTOM, TOP):
        part = frame[frame["group"] == group]
        if len(part):
            ax.scatter(part["accuracy"], part["abs_error"], s=16 if group in (TOP, BOTTOM) else 10,
                       color=GROUP_COLOURS[group], alpha=0.85, label=f"{GROUP_NAMES[group]} ({len(part)})",
                       edgecolors="none")
    ax.set_yscale("symlog", linthresh=1)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(f"name-cloze accuracy of {frame['by'].iloc[0]}")
    ax.set_ylabel("absolute error of the year (years, symmetric log scale)")
    rho, p = frame["spearman_rho"].iloc[0], frame["spearman_p"].iloc[0]
    note = f"Spearman \u03c1 = {rho:.2f}, p = {p:.3g}, {len(frame)} books" if not math.isnan(rho) else \
        f"{len(frame)} books (too few or too alike for a correlation)"
    ax.set_title(f"Year error against memorization: {frame['model'].iloc[0]}\n{note}", fontsize="medium")
    ax.legend(fontsize="small", title=f"{frame['groups'].iloc[0]}", loc="upper right")
    ax.grid(alpha=0.3)
    rows = list(frame.itertuples(index=False))

    def text(i: int) -> str:
        row = rows[i]
        return hover_text(row.book, f"{GROUP_NAMES.get(row.group, row.group)} \u00b7 accuracy {row.accuracy:.0%}",
                          f"true {row.year}, answered {row.predicted:.0f}: off by {row.abs_error:.0f} years",
                          "click to read the answer")

    return [Marks(ax, frame["accuracy"].to_numpy(float), frame["abs_error"].to_numpy(float), text,
                  lambda i: {"book_id": int(rows[i].book_id), "book": rows[i].book})]


# ---------------------------------------------------------------------------- narrative time
def narrative_frame(project: "Project", model: str | None = None, by: str | None = None, groups: str = "decile",
                    reference: str | None = None, seed: Any = 0, ties: Any = None, draws: Any = None,
                    **_: Any) -> pd.DataFrame:
    """Passages with a reference and a prediction, their group, and each group's rho (and interval)."""
    from workbench.probes.validity.narrative_time import narrative_results

    model, by = _choices(project, NARRATIVE_TIME, model, by)
    reference = _reference(project, reference)
    items, table = narrative_results(project, model, by, reference, groups=groups, seed=int(seed),
                                     **_ties(ties, draws))
    return narrative_plot(items, table)


def narrative_plot(items: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """What the narrative-time chart draws: passages with a prediction, each group's rho beside them."""
    first = table.iloc[0]
    model, by, groups, reference = first["model"], first["by"], first["groups"], first["reference"]
    table = table.set_index("group")
    items = items.dropna(subset=["predicted_minutes"]).reset_index(drop=True)
    for column in ("spearman_rho", "ci_low", "ci_high"):
        for group in (TOP, BOTTOM, ALL):
            items[f"{group}_{column}"] = table.loc[group, column]
    items.insert(0, "reference", reference)
    items.insert(0, "groups", groups)
    items.insert(0, "by", by)
    items.insert(0, "model", model)
    return items


def _rho_text(frame: pd.DataFrame, group: str) -> str:
    value = frame[f"{group}_spearman_rho"].iloc[0]
    if math.isnan(value):
        return "no \u03c1"
    low, high = frame[f"{group}_ci_low"].iloc[0], frame[f"{group}_ci_high"].iloc[0]
    interval = f" [{low:.2f}, {high:.2f}]" if not math.isnan(low) else ""
    return f"\u03c1 = {value:.2f}{interval}"


def draw_narrative(frame: pd.DataFrame, fig: "Figure", **_: Any) -> list[Marks]:
    ax = fig.add_subplot()
    for group in (MIDDLE, "", BOTTOM, TOP):
        part = frame[frame["group"] == group]
        if len(part):
            label = f"{GROUP_NAMES[group]} ({len(part)})"
            if group in (TOP, BOTTOM):
                label += f": {_rho_text(frame, group)}"
            ax.scatter(part["reference_minutes"], part["predicted_minutes"], s=18 if group in (TOP, BOTTOM) else 10,
                       color=GROUP_COLOURS[group], alpha=0.85, edgecolors="none", label=label)
    values = pd.concat([frame["reference_minutes"], frame["predicted_minutes"]]).astype(float)
    low, high = values.min() / 2, values.max() * 2
    ax.plot([low, high], [low, high], color="0.6", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low, high)
    ax.set_ylim(low, high)
    ax.set_aspect("equal")
    ax.set_xlabel(f"reference minutes ({frame['reference'].iloc[0]})")
    ax.set_ylabel("predicted minutes")
    ax.set_title(f"Narrative time: {frame['model'].iloc[0]}, books grouped by {frame['by'].iloc[0]}\n"
                 f"all {len(frame)} passages: Spearman {_rho_text(frame, ALL)}", fontsize="medium")
    ax.legend(fontsize="small", title=f"{frame['groups'].iloc[0]}s (95% bootstrap CI)", loc="upper left")
    ax.grid(alpha=0.3)
    from workbench.annotation.durations import describe_minutes

    rows = list(frame.itertuples(index=False))

    def minutes(value: Any) -> str:
        return "\u2014" if value is None or value != value else describe_minutes(float(value))

    def text(i: int) -> str:
        row = rows[i]
        accuracy = "\u2014" if row.accuracy is None or row.accuracy != row.accuracy else f"{row.accuracy:.0%}"
        return hover_text(row.book, f"{GROUP_NAMES.get(row.group, row.group)} \u00b7 accuracy {accuracy}",
                          f"reference {minutes(row.reference_minutes)}, predicted {minutes(row.predicted_minutes)}",
                          "click to read the passage")

    return [Marks(ax, frame["reference_minutes"].to_numpy(float), frame["predicted_minutes"].to_numpy(float), text,
                  lambda i: {"book_id": int(rows[i].book_id), "book": rows[i].book,
                             "passage_id": int(rows[i].passage_id)})]


# ---------------------------------------------------------------------------- tables
def passages_table(project: "Project", **_: Any) -> pd.DataFrame:
    from workbench.probes.validity.passages import passages_frame

    return passages_frame(project)


def answers_table(project: "Project", task: str = YEAR, model: str | None = None, years: Any = None,
                  spans: Any = None, **_: Any) -> pd.DataFrame:
    from workbench.probes.validity.answers import task_answers

    return task_answers(project, task, _model(project, task, model), year_range=_years(years), spans=_spans(spans))


def year_table_frame(project: "Project", model: str | None = None, by: str | None = None, groups: str = "decile",
                     seed: Any = 0, years: Any = None, spans: Any = None, ties: Any = None, draws: Any = None,
                     **_: Any) -> pd.DataFrame:
    from workbench.probes.validity.year import year_table

    model, by = _choices(project, YEAR, model, by)
    return year_table(project, model, by, groups=groups, seed=int(seed), year_range=_years(years), spans=_spans(spans),
                      **_ties(ties, draws))


def unparsed_table(project: "Project", task: str = YEAR, model: str | None = None, by: str | None = None,
                   groups: str = "decile", reference: str | None = None, years: Any = None, spans: Any = None,
                   **_: Any) -> pd.DataFrame:
    """Every answer the analysis of ``task`` counts that gave no value (``parse_rate.unparsed_answers``)."""
    from workbench.probes.validity.parse_rate import unparsed_answers

    model, by = _choices(project, task, model, by)
    if task == NARRATIVE_TIME:
        reference = _reference(project, reference)
    return unparsed_answers(project, task, model, by, groups=groups, reference=reference, year_range=_years(years),
                            spans=_spans(spans))


def narrative_table_frame(project: "Project", model: str | None = None, by: str | None = None, groups: str = "decile",
                          reference: str = "imported", seed: Any = 0, ties: Any = None, draws: Any = None,
                          **_: Any) -> pd.DataFrame:
    from workbench.probes.validity.narrative_time import narrative_table

    model, by = _choices(project, NARRATIVE_TIME, model, by)
    return narrative_table(project, model, by, reference, groups=groups, seed=int(seed), **_ties(ties, draws))


register_chart(ChartSpec("validity-year-groups", "Validity: year error by group", year_groups_frame, draw_year_groups,
                         "Mean absolute error of the predicted year for the best- and least-known books, with 95% CIs",
                         size_inches=(6.5, 4.8), page=PAGE))
register_chart(ChartSpec("validity-year-error", "Validity: year error against accuracy", year_error_frame,
                         draw_year_error, "Each book's year error against name-cloze accuracy, with Spearman's rho",
                         page=PAGE))
register_chart(ChartSpec("validity-narrative-time", "Validity: narrative time", narrative_frame, draw_narrative,
                         "Predicted against reference narrative time (log-log), coloured by memorization group",
                         size_inches=(6.0, 5.6), page=PAGE))
register_table(TableSpec("validity-passages", "Validity: passages", passages_table,
                         "the passages the tasks ask about, with offsets, years and reference minutes"))
register_table(TableSpec("validity-answers", "Validity: answers per passage", answers_table,
                         "raw answer, parsed value and why a value is missing, per passage"))
register_table(TableSpec("validity-year", "Validity: year by group", year_table_frame,
                         "missing share and mean absolute error per group, the difference and its tests"))
register_table(TableSpec("validity-narrative-time", "Validity: narrative time by group", narrative_table_frame,
                         "Spearman's rho with its interval per group, and the difference"))
def year_spans_table(project: "Project", model: str | None = None, by: str | None = None, groups: str = "decile",
                     years: Any = None, **_: Any) -> pd.DataFrame:
    from workbench.probes.validity.year import year_span_spread

    model, by = _choices(project, YEAR, model, by)
    return year_span_spread(project, model, by, groups=groups, year_range=_years(years))


register_table(TableSpec("validity-year-spans", "Validity: year under each rule for spans", year_spans_table,
                         "missing share, MAE and Spearman's rho when ranges, decades and centuries are read as "
                         "missing, up to a decade, or up to a century"))
register_table(TableSpec("validity-unparsed", "Validity: answers without a value", unparsed_table,
                         "every answer an analysis counts that gave no year or time: book, group, passage, raw "
                         "answer and why"))


# ---------------------------------------------------------------------------- everything a page shows at once
def year_report(project: "Project", model: str, by: str, *, groups: str = "decile", seed: int = 0,
                save_groups: bool = False, spans: str | None = None, ties: str = ALL_TIED,
                draws: int = DEFAULT_DRAWS) -> dict[str, Any]:
    """The year analysis as a page shows it: the group table, the per-book rows (grouped as the table is: under
    ``draw``, the median draw), both charts' frames, the parse rate in words (``parsing``) and the answers without
    a value (``unparsed``), each computed once."""
    from workbench.probes.validity.parse_rate import parse_summary, spread_summary, unparsed_answers
    from workbench.probes.validity.year import year_results, year_span_spread

    spans = _spans(spans)
    books, table = year_results(project, model, by, groups=groups, seed=seed, save_groups=save_groups, spans=spans,
                                ties=ties, draws=draws)
    spread = year_span_spread(project, model, by, groups=groups)
    return {"table": table, "rows": books, "charts": {"validity-year-groups": groups_plot(table),
                                                      "validity-year-error": error_plot(books, model, by, groups)},
            "parsing": " ".join(filter(None, [parse_summary(table), spread_summary(spread, spans)])),
            "unparsed": unparsed_answers(project, YEAR, model, by, groups=groups, spans=spans)}


def narrative_report(project: "Project", model: str, by: str, reference: str, *, groups: str = "decile",
                     seed: int = 0, save_groups: bool = False, ties: str = ALL_TIED,
                     draws: int = DEFAULT_DRAWS) -> dict[str, Any]:
    """The narrative-time analysis as a page shows it (see ``year_report``)."""
    from workbench.probes.validity.narrative_time import narrative_results
    from workbench.probes.validity.parse_rate import parse_summary, unparsed_answers

    items, table = narrative_results(project, model, by, reference, groups=groups, seed=seed,
                                     save_groups=save_groups, ties=ties, draws=draws)
    return {"table": table, "rows": items, "charts": {"validity-narrative-time": narrative_plot(items, table)},
            "parsing": parse_summary(table),
            "unparsed": unparsed_answers(project, NARRATIVE_TIME, model, by, groups=groups, reference=reference)}
