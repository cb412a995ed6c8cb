"""Name-cloze charts and CSV tables, registered in the export registry.

Charts (``palimpsest chart PROJECT NAME --out FILE.pdf|svg|png [--option key=value]``):

- ``cloze-accuracy``    per-book accuracy, ranked, with 95% CI whiskers; options ``model``, ``color_by``
                        (a book tag, ``decade`` or ``source``), ``ci`` (wilson/bootstrap), ``exclude_flagged``,
                        ``top_n``. Up to ``MAX_LABELLED_BOOKS`` books, a row per book with its title; more,
                        and a panel names the ``top_n`` best and worst (the ``named`` column says which)
                        beside every book ranked with thin, translucent intervals;
- ``cloze-categories``  mean per-book accuracy by a book tag with 95% t intervals; options ``tag``
                        (default ``decade``), ``model``, ``exclude_flagged``;
- ``cloze-models``      per-book accuracy of two models against each other with the diagonal and the
                        Wilcoxon signed-rank p; options ``model_a``, ``model_b``, ``exclude_flagged``. Above
                        ``OVERPLOT_BOOKS`` books the points are translucent, with each model's
                        distribution along its axis;
- ``cloze-year``        per-book accuracy against year of publication with Spearman's rho; options
                        ``model``, ``exclude_flagged`` (translucent above ``OVERPLOT_BOOKS`` books).

Without a model option a chart shows the model with the most answered passages, then the newest run
(``model_choice``). The Charts page of the window shows these four (``page="charts"``), drawn by the same
``draw`` as the exported figure: each book is a mark naming it on hover, and a click lists its passages; the
controls come from each chart's ``options``, the sentence under it from ``chart_notes``.

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
from workbench.export.registry import (
    FLAG,
    NUMBER,
    ChartOption,
    ChartSpec,
    Marks,
    TableSpec,
    hover_text,
    register_chart,
    register_table,
)
from workbench.probes.cloze import analysis
from workbench.probes.cloze.model_choice import models_by_preference

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from workbench.project import Project

#: up to this many books the ranked chart names every book; above, it names the ``top_n`` best and worst
MAX_LABELLED_BOOKS = 40
DEFAULT_TOP_N = 15
MAX_TOP_N = MAX_LABELLED_BOOKS // 2  # the named panel never holds more rows than a chart naming every book
#: above this many books the scatter and the year chart draw translucent points (and the scatter each
#: model's distribution along its axis), so that where books pile up shows as darker, not as one blot
OVERPLOT_BOOKS = 60
INTERVAL_ALPHA = 0.3  # the thin intervals of the full ranking
TITLE_CHARS = 40
CROWDED_ALPHA = 0.4  # the points of a crowded chart: four books on one spot look nearly solid
HISTOGRAM_BINS = 25
SCATTER_COLOUR = "tab:blue"
NAMED_BAND_COLOUR = "#fbefc8"  # the ranks of the named books, in the full ranking (pale, unlike the grey intervals)
NO_GROUP = "(no tag)"
NO_GROUP_COLOUR = "#595959"
INTERVAL_GREY = "#a6a6a6"  # intervals when the points are coloured by a tag
TAB10 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
VIRIDIS = ["#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962", "#addc30", "#fde725"]
VIRIDIS_END = 0.85  # viridis' last yellows are too pale on white
CI_NAMES = {"wilson": "Wilson", "bootstrap": "bootstrap"}
FLAGGED_LABEL = "flagged (fewer passages than asked for)"
ALL_MODELS = "all"
BUILT_IN_GROUPS = ("decade", "source")


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _one_model(project: "Project", model: str | None) -> str:
    if model:
        return model
    labels = models_by_preference(project)  # the default: the model with the most answers (model_choice)
    if not labels:
        raise UserError("No model has name-cloze results yet: run the probe or import results first.")
    return labels[0]


def _two_models(project: "Project", model_a: str | None, model_b: str | None) -> tuple[str, str]:
    if model_a and model_b:
        return model_a, model_b
    labels = models_by_preference(project)
    others = [m for m in labels if m not in (model_a, model_b)]
    chosen = [m for m in (model_a, model_b) if m] + others
    if len(chosen) < 2:
        raise UserError("Comparing models needs name-cloze results from two models. Choose model_a and model_b.")
    return chosen[0], chosen[1]


# ---------------------------------------------------------------------------- ranked per-book accuracy


def accuracy_frame(project: "Project", model: str | None = None, color_by: str | None = None, ci: str = "wilson",
                   exclude_flagged: Any = False, top_n: Any = DEFAULT_TOP_N, **_: Any) -> pd.DataFrame:
    """One model's books ranked by accuracy: rank, book, accuracy, ci_low, ci_high, n, failed, group, and
    ``named``: whether the figure names the book (``named_ranks``: all of a few books, else the ``top_n``
    best and worst)."""
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
    books["named"] = named_ranks(len(books), top_n)
    columns = ["rank", "model", "kind", "book_id", "book", "year", "accuracy", "ci_low", "ci_high", "ci_method",
               "n", "failed", "flagged", "group", "named"]
    return books[columns].reset_index(drop=True)


def _top_n(value: Any) -> int:
    try:
        count = int(str(value).strip())
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_TOP_N:
        raise UserError(f"top_n is how many of the best (and of the worst) books the chart names: a whole number "
                        f"from 1 to {MAX_TOP_N}, not '{value}'.")
    return count


def named_ranks(count: int, top_n: Any = DEFAULT_TOP_N) -> np.ndarray:
    """Which of ``count`` ranked books (best first) a chart names: every one of up to ``MAX_LABELLED_BOOKS``,
    else the ``top_n`` best and the ``top_n`` worst (the rest are drawn, unnamed, in the full ranking)."""
    top = _top_n(top_n)
    ranks = np.arange(1, count + 1)
    if count <= MAX_LABELLED_BOOKS:
        return np.ones(count, dtype=bool)
    return (ranks <= top) | (ranks > count - top)


def named_panel(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The best and the worst books a ranked chart names in a panel of their own, each best first; None when
    it names every book (one panel, a row each). Read from the frame's ``named`` column."""
    named = frame["named"].to_numpy(bool) if "named" in frame else named_ranks(len(frame))
    if named.all():
        return None
    ranks = frame["rank"].to_numpy()
    middle = len(frame) / 2
    return frame[named & (ranks <= middle)], frame[named & (ranks > middle)]


def rank_steps(count: int, most: int = 10) -> list[int]:
    """Ranks to mark on an axis of ``count`` ranked books: 1, then every round step (at most about ``most``
    marks), and the last rank unless it would crowd the mark before it."""
    step = next(s for s in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10**9)
                if count / s <= most)
    ranks = [1] + [r for r in range(step, count + 1, step) if r > 1]
    if ranks[-1] != count and count - ranks[-1] >= step / 2:
        ranks.append(count)
    return ranks


def short_title(title: Any, chars: int = TITLE_CHARS) -> str:
    text = str(title)
    return text if len(text) <= chars else text[: chars - 1] + "\u2026"


def group_order(groups: Any) -> list[str]:
    """The groups of a chart in the order of its legend: sorted (decades read in order), untagged books last."""
    found = {str(g) for g in groups}
    return sorted(found - {NO_GROUP}) + ([NO_GROUP] if NO_GROUP in found else [])


def group_colours(groups: list[str]) -> dict[str, str]:
    """A colour per group, the same in the figure and the window: matplotlib's tab10 for up to ten groups;
    more are spread along viridis in their order (tab10 would repeat colours), grey for untagged books."""
    tagged = [g for g in groups if g != NO_GROUP]
    if len(tagged) <= len(TAB10):
        colours = dict(zip(tagged, TAB10))
    else:
        where = np.linspace(0.0, VIRIDIS_END, len(tagged)) * (len(VIRIDIS) - 1)
        rgb = np.array([[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in VIRIDIS], dtype=float)
        mixed = [np.interp(where, np.arange(len(VIRIDIS)), rgb[:, channel]) for channel in range(3)]
        colours = {g: "#" + "".join(f"{round(channel[i]):02x}" for channel in mixed) for i, g in enumerate(tagged)}
    return {g: NO_GROUP_COLOUR if g == NO_GROUP else colours[g] for g in groups}


def _legend(fig: "Figure", ax, colours: dict[str, str], title: str, *, flagged: bool = False) -> None:
    """The groups' legend beside the plot (many groups would cover the points inside it); a hollow ring for
    flagged books when some are drawn."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], linestyle="", marker="o", color=colour, label=group) for group, colour in colours.items()]
    if flagged:
        handles.append(Line2D([], [], linestyle="", marker="o", markerfacecolor="white",
                              markeredgecolor=NO_GROUP_COLOUR, label=FLAGGED_LABEL))
    if len(handles) <= 6:
        ax.legend(handles=handles, title=title, loc="lower right", fontsize="small")
    else:
        fig.legend(handles=handles, title=title, loc="outside right upper", fontsize="small",
                   ncols=1 if len(handles) <= 24 else 2)


def _ci_label(frame: pd.DataFrame) -> str:
    method = frame["ci_method"].iloc[0]
    return f"name-cloze accuracy (95% CI, {CI_NAMES.get(method, method)})"


def _pct(value: Any) -> str:
    return "\u2014" if value is None or value != value else f"{float(value):.0%}"


def _flagged(rows: pd.DataFrame) -> np.ndarray:
    return rows["flagged"].fillna(False).astype(bool).to_numpy() if "flagged" in rows else np.zeros(len(rows), bool)


def _whiskered_rows(ax, rows: pd.DataFrame, positions: np.ndarray, colours: list[str], interval_colour: str, *,
                    small: bool) -> None:
    """Books as points (each in its colour; a flagged book hollow) with their 95% intervals as whiskers."""
    err = np.vstack([rows["accuracy"] - rows["ci_low"], rows["ci_high"] - rows["accuracy"]])
    ax.errorbar(rows["accuracy"], positions, xerr=err, fmt="none", capsize=2 if small else 1.5, ecolor=interval_colour,
                elinewidth=1 if small else 0.8)
    _book_points(ax, rows["accuracy"], positions, colours, _flagged(rows), size=16 if small else 9)


def _book_points(ax, x: Any, y: Any, colours: list[str], flagged: np.ndarray, *, size: float) -> None:
    """Filled points, and hollow rings for flagged books (fewer passages than asked for)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    faces = ["white" if f else c for f, c in zip(flagged, colours)]
    ax.scatter(x, y, s=size, c=faces, edgecolors=colours, linewidths=np.where(flagged, 1.0, 0.0), zorder=3)


def accuracy_marks(ax, rows: pd.DataFrame, positions: Any, color_by: str | None) -> Marks:
    """A mark per book: its rank, accuracy, interval and group on hover; a click opens its passages."""
    values = {name: rows[name].tolist() for name in ("rank", "accuracy", "n", "ci_low", "ci_high", "group", "year",
                                                      "flagged", "failed", "book", "book_id", "model")}

    def text(i: int) -> str:
        def value(name: str) -> Any:
            return values[name][i]

        year = value("year")
        extra = [f"{color_by}: {value('group')}" if color_by and value("group") != NO_GROUP else "",
                 "" if year is None or year != year else str(int(year)),
                 "flagged: fewer passages than asked for" if value("flagged") is True else "",
                 f"{value('failed')} failed" if value("failed") else ""]
        return hover_text(value("book"), f"Rank {value('rank')}: {_pct(value('accuracy'))} of {value('n')} answered "
                                         f"passages correct, 95% CI {_pct(value('ci_low'))}\u2013{_pct(value('ci_high'))}",
                          " \u00b7 ".join(e for e in extra if e))

    def target(i: int) -> dict[str, Any]:
        return {"book_id": int(values["book_id"][i]), "book": values["book"][i], "models": [values["model"][i]]}

    return Marks(ax, rows["accuracy"].to_numpy(float), np.asarray(positions, dtype=float), text, target)


def draw_accuracy(frame: pd.DataFrame, fig: "Figure", color_by: str | None = None, **_: Any) -> list[Marks]:
    colours = group_colours(group_order(frame["group"]))
    # coloured by a tag, the points carry the colours and the intervals are grey
    point_colours = frame["group"].map(colours).tolist() if color_by else [NO_GROUP_COLOUR] * len(frame)
    interval_colour = INTERVAL_GREY if color_by else NO_GROUP_COLOUR
    panel = named_panel(frame)
    if panel is None:  # a few books: one row each, every title on the axis
        fig.set_size_inches(7.0, max(3.0, 1.2 + 0.22 * len(frame)))
        ax = fig.add_subplot()
        positions = np.arange(len(frame))[::-1]  # rank 1 at the top
        _whiskered_rows(ax, frame, positions, point_colours, interval_colour, small=True)
        ax.set_yticks(positions, [short_title(b) for b in frame["book"]])
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel(_ci_label(frame))
        ax.set_title(f"Per-book accuracy: {frame['model'].iloc[0]}")
        ax.grid(axis="x", alpha=0.3)
        marks = [accuracy_marks(ax, frame, positions, color_by)]
        legend_ax = ax
    else:
        marks = _draw_many_books(frame, fig, panel, point_colours, interval_colour, color_by)
        legend_ax = fig.axes[1]
    flagged = bool(_flagged(frame).any())
    if color_by or flagged:
        _legend(fig, legend_ax, colours if color_by else {}, color_by or "", flagged=flagged)
    return marks


def _draw_many_books(frame: pd.DataFrame, fig: "Figure", panel: tuple[pd.DataFrame, pd.DataFrame],
                     point_colours: list[str], interval_colour: str, color_by: str | None) -> list[Marks]:
    """Many books: the best and worst named in a panel of their own (the paper's table as a figure), beside
    every book ranked with thin, translucent intervals (the shape of the whole distribution)."""
    best, worst = panel
    count, rows = len(frame), len(best) + len(worst) + 1  # a row between them says how many are left out
    wide = len(set(point_colours)) > 6  # room for the legend beside the plots
    fig.set_size_inches(11.5 if wide else 10.0, max(4.8, 1.5 + 0.16 * rows))
    named_ax, all_ax = fig.subplots(1, 2, sharex=True)
    named = pd.concat([best, worst])
    positions = np.concatenate([np.arange(rows - 1, len(worst), -1), np.arange(len(worst) - 1, -1, -1)])
    named_colours = [point_colours[i] for i in np.flatnonzero(frame.index.isin(named.index))]
    _whiskered_rows(named_ax, named, positions, named_colours, interval_colour, small=False)
    between = count - len(named)
    ticks = [f"{rank}. {short_title(book, TITLE_CHARS - 5)}" for rank, book in zip(named["rank"], named["book"])]
    named_ax.set_yticks([*positions, len(worst)], [*ticks, f"\u22ee  {between} more books"], fontsize="small")
    named_ax.get_yticklabels()[-1].set_color("0.4")
    named_ax.set_ylim(-0.7, rows - 0.3)
    named_ax.axhline(len(worst), color="0.8", linewidth=0.8, linestyle=":")
    named_ax.set_title(f"The {len(best)} best and {len(worst)} worst books", fontsize="medium")

    all_ax.hlines(frame["rank"], frame["ci_low"], frame["ci_high"], colors=interval_colour, alpha=INTERVAL_ALPHA,
                  linewidth=0.6)
    _book_points(all_ax, frame["accuracy"], frame["rank"], point_colours, _flagged(frame), size=4 if count > 300 else 8)
    for first, last, what in ((1, len(best), f"named: best {len(best)}"),
                              (count - len(worst) + 1, count, f"named: worst {len(worst)}")):
        all_ax.axhspan(first - 0.5, last + 0.5, color=NAMED_BAND_COLOUR, zorder=0, linewidth=0)
        shown = frame[(frame["rank"] >= first) & (frame["rank"] <= last)]
        left = float(shown["accuracy"].mean()) > 0.5  # the words go where the band's points are not
        all_ax.text(0.0 if left else 1.0, (first + last) / 2, what, ha="left" if left else "right", va="center",
                    fontsize="x-small", color="0.35")
    steps = rank_steps(count)
    all_ax.set_yticks(steps, [str(r) for r in steps])
    all_ax.set_ylim(count + 0.5, 0.5)  # rank 1 at the top
    all_ax.set_ylabel("rank (1 = best)")
    all_ax.set_title(f"All {count} books, ranked", fontsize="medium")
    for ax in (named_ax, all_ax):
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel(_ci_label(frame))
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(f"Per-book accuracy: {frame['model'].iloc[0]}")
    return [accuracy_marks(named_ax, named, positions, color_by), accuracy_marks(all_ax, frame, frame["rank"], color_by)]


# ---------------------------------------------------------------------------- category means


def categories_frame(project: "Project", tag: str = "decade", model: str | None = None,
                     exclude_flagged: Any = False, **_: Any) -> pd.DataFrame:
    """Mean per-book accuracy per tag value (one model, or every model when ``model`` is 'all')."""
    models = None if model == "all" else _one_model(project, model)
    return analysis.category_means(project, tag, models, exclude_flagged=_flag(exclude_flagged))


def draw_categories(frame: pd.DataFrame, fig: "Figure", **_: Any) -> list[Marks]:
    ax = fig.add_subplot()
    values = sorted(frame["value"].unique())
    models = list(dict.fromkeys(frame["model"]))
    width = 0.8 / len(models)
    x = np.arange(len(values))
    bars: dict[str, list] = {"x": [], "height": [], "text": []}
    for i, model in enumerate(models):
        rows = frame[frame["model"] == model].set_index("value").reindex(values)
        err = np.vstack([rows["mean_accuracy"] - rows["ci_low"], rows["ci_high"] - rows["mean_accuracy"]])
        err = np.nan_to_num(err, nan=0.0)
        left = x + (i - (len(models) - 1) / 2) * width
        ax.bar(left, rows["mean_accuracy"], width, yerr=err, capsize=3,
               label=model, color=group_colours(models)[model] if len(models) > 1 else "0.55", edgecolor="black",
               linewidth=0.5)
        for position, value, row in zip(left, values, rows.itertuples()):
            if row.mean_accuracy != row.mean_accuracy:
                continue
            ci = ("no interval (one book)" if row.ci_low != row.ci_low
                  else f"95% CI {_pct(row.ci_low)}\u2013{_pct(row.ci_high)}")
            bars["x"].append(position - width / 2)
            bars["height"].append(float(row.mean_accuracy))
            bars["text"].append(hover_text(value, f"{model}: mean accuracy {_pct(row.mean_accuracy)}, {ci}",
                                           f"{int(row.books)} books, {int(row.passages):,} passages"))
    counts = frame.groupby("value")["books"].agg(lambda b: "/".join(str(int(n)) for n in dict.fromkeys(b)))
    labels = [f"{v}\n({counts[v]} book{'' if counts[v] == '1' else 's'})" for v in values]
    ax.set_xticks(x, labels, rotation=30 if len(values) > 6 else 0, ha="right" if len(values) > 6 else "center")
    ax.set_ylabel("mean per-book accuracy (95% t interval)")
    ax.set_xlabel(frame["tag"].iloc[0])
    ax.set_ylim(0, 1)
    ax.set_title("Name-cloze accuracy by " + frame["tag"].iloc[0] + ("" if len(models) > 1 else f": {models[0]}"))
    if len(models) > 1:
        ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    texts = bars["text"]
    return [Marks(ax, np.array(bars["x"]), np.zeros(len(texts)), texts.__getitem__, None,
                  width=np.full(len(texts), width), height=np.array(bars["height"]))]


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


def crowded(frame: pd.DataFrame) -> bool:
    """Whether a chart of one point per book treats overplotting (``OVERPLOT_BOOKS``)."""
    return len(frame) > OVERPLOT_BOOKS


def accuracy_bins(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Books per accuracy bin (25 bins over 0-1), for a scatter's margins: counts and bin edges."""
    return np.histogram(values.astype(float).dropna(), bins=HISTOGRAM_BINS, range=(0.0, 1.0))


def draw_models(frame: pd.DataFrame, fig: "Figure", **_: Any) -> list[Marks]:
    a, b = frame["model_a"].iloc[0], frame["model_b"].iloc[0]
    x, y = frame["accuracy_b"], frame["accuracy_a"]
    p = frame["wilcoxon_p"].iloc[0]
    note = f"Wilcoxon signed-rank p = {p:.3g}" if p == p else "no difference to test"
    title = f"{a} vs {b}: {len(frame)} books\n{note}"
    if crowded(frame):  # translucent points, and each model's distribution along its axis
        fig.set_size_inches(6.0, 6.0)
        grid = fig.add_gridspec(2, 2, width_ratios=(4, 1), height_ratios=(1, 4))
        ax = fig.add_subplot(grid[1, 0])
        top = fig.add_subplot(grid[0, 0], sharex=ax)
        right = fig.add_subplot(grid[1, 1], sharey=ax)
        counts, edges = accuracy_bins(x)
        top.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color=SCATTER_COLOUR, alpha=0.6, linewidth=0)
        counts, edges = accuracy_bins(y)
        right.barh(edges[:-1], counts, height=np.diff(edges), align="edge", color=SCATTER_COLOUR, alpha=0.6,
                   linewidth=0)
        top.set_ylabel("books")
        right.set_xlabel("books")
        top.tick_params(labelbottom=False)
        right.tick_params(labelleft=False)
        for margin in (top, right):
            margin.grid(alpha=0.3)
        ax.scatter(x, y, s=10 if len(frame) > 300 else 18, color=SCATTER_COLOUR, alpha=CROWDED_ALPHA, linewidths=0)
        fig.suptitle(title, fontsize="medium")
    else:
        fig.set_size_inches(5.5, 5.5)
        ax = fig.add_subplot()
        ax.scatter(x, y, s=18, color=SCATTER_COLOUR, alpha=0.8)
        ax.set_aspect("equal")
        ax.set_title(title, fontsize="medium")
    ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="equal accuracy")
    ax.set_xlabel(f"accuracy of {b}")
    ax.set_ylabel(f"accuracy of {a}")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.legend(loc="upper left", fontsize="small")
    ax.grid(alpha=0.3)
    values = {name: frame[name].tolist() for name in ("book", "book_id", "accuracy_a", "accuracy_b", "n_a", "n_b")}

    def text(i: int) -> str:
        return hover_text(values["book"][i], f"{a}: {_pct(values['accuracy_a'][i])} of {values['n_a'][i]}",
                          f"{b}: {_pct(values['accuracy_b'][i])} of {values['n_b'][i]}")

    def target(i: int) -> dict[str, Any]:
        return {"book_id": int(values["book_id"][i]), "book": values["book"][i], "models": [a, b]}

    return [Marks(ax, x.to_numpy(float), y.to_numpy(float), text, target)]


# ---------------------------------------------------------------------------- accuracy against year


def year_frame(project: "Project", model: str | None = None, exclude_flagged: Any = False, **_: Any) -> pd.DataFrame:
    """One model's books with a year: year, accuracy and its CI, n."""
    model = _one_model(project, model)
    books = analysis.book_accuracy(project, model, exclude_flagged=_flag(exclude_flagged))
    books = books[(books["n"] > 0) & books["year"].notna()]
    return books[["model", "kind", "book_id", "book", "year", "accuracy", "ci_low", "ci_high", "n"]].sort_values(
        "year").reset_index(drop=True)


def draw_year(frame: pd.DataFrame, fig: "Figure", **_: Any) -> list[Marks]:
    from scipy.stats import spearmanr

    ax = fig.add_subplot()
    err = np.vstack([frame["accuracy"] - frame["ci_low"], frame["ci_high"] - frame["accuracy"]])
    years = frame["year"].astype(float)
    if crowded(frame):  # thin translucent whiskers and points: where books pile up shows as darker
        ax.errorbar(years, frame["accuracy"], yerr=err, fmt="none", ecolor="0.5", elinewidth=0.5, alpha=INTERVAL_ALPHA)
        ax.scatter(years, frame["accuracy"], s=8, color=SCATTER_COLOUR, alpha=CROWDED_ALPHA, linewidths=0, zorder=3)
    else:
        ax.errorbar(years, frame["accuracy"], yerr=err, fmt="o", markersize=4, capsize=2, color=SCATTER_COLOUR,
                    ecolor="0.6", elinewidth=0.8)
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
    values = {name: frame[name].tolist() for name in ("book", "book_id", "model", "year", "accuracy", "n", "ci_low",
                                                      "ci_high")}

    def text(i: int) -> str:
        return hover_text(values["book"][i], f"{int(values['year'][i])}: {_pct(values['accuracy'][i])} correct of "
                                             f"{values['n'][i]}, 95% CI {_pct(values['ci_low'][i])}\u2013"
                                             f"{_pct(values['ci_high'][i])}")

    def target(i: int) -> dict[str, Any]:
        return {"book_id": int(values["book_id"][i]), "book": values["book"][i], "models": [values["model"][i]]}

    return [Marks(ax, years.to_numpy(float), frame["accuracy"].to_numpy(float), text, target)]


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


# ---------------------------------------------------------------------------- the charts' choices


def model_choices(project: "Project", chosen: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every model with name-cloze answers (in label order)."""
    return [(m, m) for m in analysis.model_labels(project)]


def model_or_all_choices(project: "Project", chosen: dict[str, Any]) -> list[tuple[str, Any]]:
    models = model_choices(project, chosen)
    return ([("all models", ALL_MODELS)] if len(models) > 1 else []) + models


def preferred_model(project: "Project", chosen: dict[str, Any]) -> str | None:
    """The default model: the one with the most answered passages, then the newest run (``model_choice``)."""
    labels = models_by_preference(project)
    return labels[0] if labels else None


def other_model_choices(project: "Project", chosen: dict[str, Any]) -> list[tuple[str, Any]]:
    """The models a comparison's first model may be compared with: the others."""
    return [(m, m) for m in analysis.model_labels(project) if m != chosen.get("model_a")]


def other_model(project: "Project", chosen: dict[str, Any]) -> str | None:
    """The default second model: the preferred one that is not the first."""
    labels = [m for m in models_by_preference(project) if m != chosen.get("model_a")]
    return labels[0] if labels else None


def _groups(project: "Project") -> list[tuple[str, str]]:
    from workbench.corpus.library import tag_keys

    tags = tag_keys(project)
    return [(t, t) for t in tags] + [(g, g) for g in BUILT_IN_GROUPS if g not in tags]


def colour_choices(project: "Project", chosen: dict[str, Any]) -> list[tuple[str, Any]]:
    return [("one colour", "")] + _groups(project)


def group_choices(project: "Project", chosen: dict[str, Any]) -> list[tuple[str, Any]]:
    return _groups(project)


MODEL = ChartOption("model", "Model", choices=model_choices, default=preferred_model,
                    tooltip="The model whose results are drawn")
EXCLUDE_FLAGGED = ChartOption("exclude_flagged", "Leave out flagged books", FLAG, default=False,
                              tooltip="Books with fewer passages than asked for (the paper drops them)")


def _note(name: str):
    def caption(project: "Project", frame: pd.DataFrame, **options: Any) -> str:
        from workbench.probes.cloze.chart_notes import chart_note

        return chart_note(project, name, frame, **options)
    return caption


def _empty(name: str):
    def empty(project: "Project", **options: Any) -> str:
        from workbench.probes.cloze.chart_notes import empty_note

        return empty_note(project, name, **options)
    return empty


register_chart(ChartSpec(
    "cloze-accuracy", "Name cloze: per-book accuracy", accuracy_frame, draw_accuracy,
    "Books ranked by name-cloze accuracy with 95% CIs, coloured by a tag", page="charts",
    options=(MODEL,
             ChartOption("color_by", "Colour by", choices=colour_choices, default="",
                         tooltip="Colour the books by a tag (set tags on the Library page)"),
             ChartOption("top_n", "Name", NUMBER, default=DEFAULT_TOP_N, low=1, high=MAX_TOP_N,
                         suffix=" best and worst", matters=lambda frame: len(frame) > MAX_LABELLED_BOOKS,
                         tooltip=f"With more than {MAX_LABELLED_BOOKS} books the chart names this many of the best "
                                 "and of the worst books beside the full ranking (hover over any point to name its book)"),
             EXCLUDE_FLAGGED),
    caption=_note("cloze-accuracy"), empty=_empty("cloze-accuracy")))
register_chart(ChartSpec(
    "cloze-categories", "Name cloze: accuracy by category", categories_frame, draw_categories,
    "Mean per-book accuracy by a book tag (genre, decade, source ...)", page="charts",
    options=(ChartOption("model", "Model", choices=model_or_all_choices, default=preferred_model,
                         tooltip="The model whose results are drawn (or every model, side by side)"),
             ChartOption("tag", "Group by", choices=group_choices, tooltip="Average the books of each value of a tag"),
             EXCLUDE_FLAGGED),
    caption=_note("cloze-categories"), empty=_empty("cloze-categories")))
register_chart(ChartSpec(
    "cloze-models", "Name cloze: model against model", models_frame, draw_models,
    "Per-book accuracy of two models, with the diagonal and a Wilcoxon test", size_inches=(5.5, 5.5), page="charts",
    options=(ChartOption("model_a", "Model", choices=model_choices, default=preferred_model, remember_as="model",
                         tooltip="The model on the vertical axis"),
             ChartOption("model_b", "against", choices=other_model_choices, default=other_model,
                         tooltip="The second model (horizontal axis)"),
             EXCLUDE_FLAGGED),
    caption=_note("cloze-models"), empty=_empty("cloze-models")))
register_chart(ChartSpec(
    "cloze-year", "Name cloze: accuracy against year", year_frame, draw_year,
    "Per-book accuracy against year of publication, with Spearman's rho", page="charts",
    options=(MODEL, EXCLUDE_FLAGGED), caption=_note("cloze-year"), empty=_empty("cloze-year")))
register_table(TableSpec("cloze-passage-results", "Name cloze: answers per passage", passage_results_table,
                         "book, passage, gold name, raw answer, parsed answer, correct, status and error"))
register_table(TableSpec("cloze-book-accuracy", "Name cloze: accuracy per book", book_accuracy_table,
                         "n, correct, accuracy with 95% CI, failures, candidates, flag, mean log-probability"))
register_table(TableSpec("cloze-passages", "Name cloze: passages", passages_table,
                         "the stored passages with their offsets into the book"))
register_table(TableSpec("cloze-extractions", "Name cloze: extractions", extractions_table,
                         "candidates found and passages sampled per book"))
