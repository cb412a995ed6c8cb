"""Name-cloze charts and CSV tables, registered in the export registry.

Charts (``palimpsest chart PROJECT NAME --out FILE.pdf|svg|png [--option key=value]``):

- ``cloze-accuracy``    per-book accuracy, ranked, with 95% CI whiskers; options ``model``, ``color_by``
                        (a book tag, ``decade`` or ``source``), ``ci`` (wilson/bootstrap), ``exclude_flagged``;
- ``cloze-categories``  mean per-book accuracy by a book tag with 95% t intervals; options ``tag``
                        (default ``decade``), ``model``, ``exclude_flagged``;
- ``cloze-models``      per-book accuracy of two models against each other with the diagonal and the
                        Wilcoxon signed-rank p; options ``model_a``, ``model_b``, ``exclude_flagged``;
- ``cloze-year``        per-book accuracy against year of publication with Spearman's rho; options
                        ``model``, ``exclude_flagged``.

Tables (CSV): ``cloze-passage-results`` (one row per model and passage), ``cloze-book-accuracy``
(one row per model and book), ``cloze-passages`` (the stored passages), ``cloze-extractions``.

Options come from the command line as text, so each ``frame`` accepts strings ("true", "0.1").
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.errors import UserError
from workbench.export.registry import ChartSpec, TableSpec, register_chart, register_table
from workbench.probes.cloze import analysis

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from workbench.project import Project

MAX_LABELLED_BOOKS = 60
NO_GROUP = "(no tag)"
CI_NAMES = {"wilson": "Wilson", "bootstrap": "bootstrap"}


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _one_model(project: "Project", model: str | None) -> str:
    labels = analysis.model_labels(project)
    if model:
        return model
    if not labels:
        raise UserError("No model has name-cloze results yet: run the probe or import results first.")
    return labels[0]


def _two_models(project: "Project", model_a: str | None, model_b: str | None) -> tuple[str, str]:
    labels = analysis.model_labels(project)
    if model_a and model_b:
        return model_a, model_b
    others = [m for m in labels if m not in (model_a, model_b)]
    chosen = [m for m in (model_a, model_b) if m] + others
    if len(chosen) < 2:
        raise UserError("Comparing models needs name-cloze results from two models. Choose model_a and model_b.")
    return chosen[0], chosen[1]


# ---------------------------------------------------------------------------- ranked per-book accuracy


def accuracy_frame(project: "Project", model: str | None = None, color_by: str | None = None, ci: str = "wilson",
                   exclude_flagged: Any = False, **_: Any) -> pd.DataFrame:
    """One model's books ranked by accuracy: rank, book, accuracy, ci_low, ci_high, n, failed, group."""
    model = _one_model(project, model)
    books = analysis.book_accuracy(project, model, ci=ci, exclude_flagged=_flag(exclude_flagged))
    books = books[books["n"] > 0].copy()
    if color_by:
        groups = analysis.book_groups(project, color_by).drop_duplicates("book_id")
        books = books.merge(groups.rename(columns={"value": "group"}), on="book_id", how="left")
        books["group"] = books["group"].fillna(NO_GROUP)
    else:
        books["group"] = NO_GROUP
    books = analysis.ranked(books)
    books.insert(0, "rank", range(1, len(books) + 1))
    columns = ["rank", "model", "kind", "book_id", "book", "year", "accuracy", "ci_low", "ci_high", "ci_method",
               "n", "failed", "flagged", "group"]
    return books[columns].reset_index(drop=True)


def _colours(groups: list[str]) -> dict[str, Any]:
    from matplotlib import colormaps

    palette = colormaps["tab10"]
    return {group: ("0.35" if group == NO_GROUP else palette(i % 10)) for i, group in enumerate(groups)}


def draw_accuracy(frame: pd.DataFrame, fig: "Figure", color_by: str | None = None, **_: Any) -> None:
    labelled = len(frame) <= MAX_LABELLED_BOOKS
    if labelled:
        fig.set_size_inches(7.0, max(3.0, 1.2 + 0.22 * len(frame)))
    ax = fig.add_subplot()
    positions = np.arange(len(frame))[::-1]  # rank 1 at the top
    groups = list(dict.fromkeys(frame["group"]))
    colours = _colours(groups)
    for group in groups:
        part = frame["group"] == group
        rows = frame[part]
        err = np.vstack([rows["accuracy"] - rows["ci_low"], rows["ci_high"] - rows["accuracy"]])
        ax.errorbar(rows["accuracy"], positions[part.to_numpy()], xerr=err, fmt="o", markersize=4 if labelled else 2.5,
                    capsize=2 if labelled else 0, color=colours[group], ecolor=colours[group],
                    elinewidth=1 if labelled else 0.6,
                    label=group if color_by else None)
    if labelled:
        ax.set_yticks(positions, frame["book"].str.slice(0, 40))
    else:
        ax.set_yticks([])
        ax.set_ylabel(f"{len(frame)} books, ranked")
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel(f"name-cloze accuracy (95% CI, {CI_NAMES.get(frame['ci_method'].iloc[0], frame['ci_method'].iloc[0])})")
    ax.set_title(f"Per-book accuracy: {frame['model'].iloc[0]}")
    ax.grid(axis="x", alpha=0.3)
    if color_by:
        ax.legend(title=color_by, loc="lower right", fontsize="small")


# ---------------------------------------------------------------------------- category means


def categories_frame(project: "Project", tag: str = "decade", model: str | None = None,
                     exclude_flagged: Any = False, **_: Any) -> pd.DataFrame:
    """Mean per-book accuracy per tag value (one model, or every model when ``model`` is 'all')."""
    models = None if model == "all" else _one_model(project, model)
    return analysis.category_means(project, tag, models, exclude_flagged=_flag(exclude_flagged))


def draw_categories(frame: pd.DataFrame, fig: "Figure", **_: Any) -> None:
    ax = fig.add_subplot()
    values = sorted(frame["value"].unique())
    models = list(dict.fromkeys(frame["model"]))
    width = 0.8 / len(models)
    x = np.arange(len(values))
    for i, model in enumerate(models):
        rows = frame[frame["model"] == model].set_index("value").reindex(values)
        err = np.vstack([rows["mean_accuracy"] - rows["ci_low"], rows["ci_high"] - rows["mean_accuracy"]])
        err = np.nan_to_num(err, nan=0.0)
        ax.bar(x + (i - (len(models) - 1) / 2) * width, rows["mean_accuracy"], width, yerr=err, capsize=3,
               label=model, color=_colours(models)[model] if len(models) > 1 else "0.55", edgecolor="black",
               linewidth=0.5)
    counts = frame.groupby("value")["books"].agg(lambda b: "/".join(str(int(n)) for n in dict.fromkeys(b)))
    labels = [f"{v}\n({counts[v]} book{'' if counts[v] == '1' else 's'})" for v in values]
    ax.set_xticks(x, labels, rotation=30 if len(values) > 6 else 0, ha="right" if len(values) > 6 else "center")
    ax.set_ylabel("mean per-book accuracy (95% t interval)")
    ax.set_xlabel(frame["tag"].iloc[0])
    ax.set_ylim(0, 1)
    ax.set_title("Name-cloze accuracy by " + frame["tag"].iloc[0])
    if len(models) > 1:
        ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)


# ---------------------------------------------------------------------------- model against model


def models_frame(project: "Project", model_a: str | None = None, model_b: str | None = None,
                 exclude_flagged: Any = False, **_: Any) -> pd.DataFrame:
    """The paired per-book accuracies of two models (columns of ``analysis.compare_models``)."""
    a, b = _two_models(project, model_a, model_b)
    flagged = _flag(exclude_flagged)
    # the figure states the same test as the tables (ties and zero differences handled there)
    frame, tests = analysis.model_comparison(project, a, b, exclude_flagged=flagged)
    frame.insert(0, "model_b", b)
    frame.insert(0, "model_a", a)
    wilcoxon = tests[tests["test"].str.startswith("Wilcoxon")]
    frame["wilcoxon_p"] = wilcoxon["p_value"].iloc[0] if len(wilcoxon) else math.nan
    return frame


def draw_models(frame: pd.DataFrame, fig: "Figure", **_: Any) -> None:
    fig.set_size_inches(5.5, 5.5)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="equal accuracy")
    ax.scatter(frame["accuracy_b"], frame["accuracy_a"], s=18, color="tab:blue", alpha=0.8)
    a, b = frame["model_a"].iloc[0], frame["model_b"].iloc[0]
    ax.set_xlabel(f"accuracy of {b}")
    ax.set_ylabel(f"accuracy of {a}")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    p = frame["wilcoxon_p"].iloc[0]
    note = f"Wilcoxon signed-rank p = {p:.3g}" if p == p else "no difference to test"
    ax.set_title(f"{a} vs {b}: {len(frame)} books\n{note}", fontsize="medium")
    ax.legend(loc="upper left", fontsize="small")
    ax.grid(alpha=0.3)


# ---------------------------------------------------------------------------- accuracy against year


def year_frame(project: "Project", model: str | None = None, exclude_flagged: Any = False, **_: Any) -> pd.DataFrame:
    """One model's books with a year: year, accuracy and its CI, n."""
    model = _one_model(project, model)
    books = analysis.book_accuracy(project, model, exclude_flagged=_flag(exclude_flagged))
    books = books[(books["n"] > 0) & books["year"].notna()]
    return books[["model", "kind", "book_id", "book", "year", "accuracy", "ci_low", "ci_high", "n"]].sort_values(
        "year").reset_index(drop=True)


def draw_year(frame: pd.DataFrame, fig: "Figure", **_: Any) -> None:
    from scipy.stats import spearmanr

    ax = fig.add_subplot()
    err = np.vstack([frame["accuracy"] - frame["ci_low"], frame["ci_high"] - frame["accuracy"]])
    ax.errorbar(frame["year"].astype(float), frame["accuracy"], yerr=err, fmt="o", markersize=4, capsize=2,
                color="tab:blue", ecolor="0.6", elinewidth=0.8)
    if len(frame) >= 3 and frame["accuracy"].nunique() > 1 and frame["year"].nunique() > 1:
        result = spearmanr(frame["year"].astype(float), frame["accuracy"].astype(float))
        note = f"Spearman \u03c1 = {result.statistic:.2f}, p = {result.pvalue:.3g}, {len(frame)} books"
    else:
        note = f"{len(frame)} books (too few or too alike for a correlation)"
    ax.set_xlabel("year of first publication")
    ax.set_ylabel("name-cloze accuracy (95% CI)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"Accuracy against year: {frame['model'].iloc[0]}\n{note}", fontsize="medium")
    ax.grid(alpha=0.3)


# ---------------------------------------------------------------------------- tables


def passage_results_table(project: "Project", model: str | None = None, **_: Any) -> pd.DataFrame:
    return analysis.passage_results(project, model or None)


def book_accuracy_table(project: "Project", model: str | None = None, ci: str = "wilson",
                        exclude_flagged: Any = False, **_: Any) -> pd.DataFrame:
    return analysis.book_accuracy(project, model or None, ci=ci, exclude_flagged=_flag(exclude_flagged))


def passages_table(project: "Project", **_: Any) -> pd.DataFrame:
    from workbench.probes.cloze.passages import passages_frame

    return passages_frame(project)


def extractions_table(project: "Project", **_: Any) -> pd.DataFrame:
    from workbench.probes.cloze.passages import extractions_frame

    return extractions_frame(project)


register_chart(ChartSpec("cloze-accuracy", "Name cloze: per-book accuracy", accuracy_frame, draw_accuracy,
                         "Books ranked by name-cloze accuracy with 95% CIs, coloured by a tag"))
register_chart(ChartSpec("cloze-categories", "Name cloze: accuracy by category", categories_frame, draw_categories,
                         "Mean per-book accuracy by a book tag (genre, decade, source ...)"))
register_chart(ChartSpec("cloze-models", "Name cloze: model against model", models_frame, draw_models,
                         "Per-book accuracy of two models, with the diagonal and a Wilcoxon test",
                         size_inches=(5.5, 5.5)))
register_chart(ChartSpec("cloze-year", "Name cloze: accuracy against year", year_frame, draw_year,
                         "Per-book accuracy against year of publication, with Spearman's rho"))
register_table(TableSpec("cloze-passage-results", "Name cloze: answers per passage", passage_results_table,
                         "book, passage, gold name, raw answer, parsed answer, correct, status and error"))
register_table(TableSpec("cloze-book-accuracy", "Name cloze: accuracy per book", book_accuracy_table,
                         "n, correct, accuracy with 95% CI, failures, candidates, flag, mean log-probability"))
register_table(TableSpec("cloze-passages", "Name cloze: passages", passages_table,
                         "the stored passages with their offsets into the book"))
register_table(TableSpec("cloze-extractions", "Name cloze: extractions", extractions_table,
                         "candidates found and passages sampled per book"))
