"""REP charts for the export registry: each a frame of exactly what is plotted plus a matplotlib drawing.

- ``rep-decade-shares``: stacked bars of one role's category shares per decade (unparsed in grey);
- ``rep-trends``: one role's decade shares per category with Wilson intervals, the fitted quadratic
  and its 95% band;
- ``rep-heatmap``: share of each category for each role, for one model (a panel per demographic);
- ``rep-spread``: the spread of category shares per demographic and decade.

Options (all text, as typed on the command line): ``role`` (``ceo`` or ``gender/ceo``; default: the
first role with results), ``classifier`` (``lexical`` or ``judge:MODEL``), ``model`` (heatmap;
default: the first model with results), ``demographic`` (heatmap: one demographic; default: a panel each).

The Bias page's Results tab shows the first three (``page="rep.results"``), drawn by these same functions
from the counts it has made already (``counts``, with the roles' names in its sets: ``role_names``): a click
on a bar, a point or a cell lists the completions behind it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.errors import UserError
from workbench.export.registry import (
    ChartOption,
    ChartSpec,
    Marks,
    TableSpec,
    hover_text,
    register_chart,
    register_table,
)
from workbench.probes.rep.classify import LEXICAL
from workbench.probes.rep.stats import (
    ROLE_KEYS,
    by_decade,
    decade_tests,
    rep_counts,
    spread,
    trends,
    with_shares,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from workbench.project import Project

PAGE = "rep.results"
UNPARSED_COLOUR = "#b0b0b0"
BAR_WIDTH = 0.8
CLICK = "click to list the completions"
PALETTE = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb", "#332288", "#117733"]


def category_colours(categories) -> dict[str, str]:
    colours = {}
    for index, category in enumerate(dict.fromkeys(categories)):
        colours[category] = UNPARSED_COLOUR if category == "unparsed" else (
            "#dddddd" if category == "unclear/none" else PALETTE[index % len(PALETTE)])
    return colours


def resolve_role(counts: pd.DataFrame, role: str | None) -> tuple[str, str]:
    """(demographic, role) from 'role' or 'demographic/role'; the first role with results by default."""
    pairs = list(dict.fromkeys(zip(counts["demographic"], counts["role"])))
    if not pairs:
        raise UserError("There are no REP results yet: run the REP prompts on a model first.")
    if not role:
        return pairs[0]
    demographic, _, key = role.rpartition("/")
    matches = [p for p in pairs if p[1] == key and (not demographic or p[0] == demographic)]
    if len(matches) != 1:
        known = ", ".join(f"{d}/{r}" for d, r in pairs)
        problem = "is ambiguous; write it as demographic/role" if matches else "has no results"
        raise UserError(f"The role '{role}' {problem}. Roles with results: {known}.")
    return matches[0]


def _named(frame: pd.DataFrame, role_names: dict | None) -> pd.DataFrame:
    """``frame`` with each role's name in its set beside its key (``role_name``; the key in words without one)."""
    if frame.empty:
        return frame
    names = role_names or {}
    frame = frame.copy()
    at = list(frame.columns).index("role") + 1 if "role" in frame.columns else len(frame.columns)
    frame.insert(at, "role_name", [names.get((d, r)) or str(r).replace("_", " ")
                                   for d, r in zip(frame["demographic"], frame["role"])])
    return frame


def _role_title(row: Any) -> str:
    return f"{str(row['demographic']).replace('_', ' ')} / {row['role_name']}"


def _counts(project: "Project", classifier: str, counts: pd.DataFrame | None) -> pd.DataFrame:
    return rep_counts(project, classifier) if counts is None else counts


# ---------------------------------------------------------------------------------------------- the charts' choices
def role_choices(project: "Project", chosen: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every role with results, as 'Demographic: role name' for 'demographic/role' (from the counts a page has
    made already, ``chosen['counts']``, else counted here)."""
    counts = _counts(project, chosen.get("classifier") or LEXICAL, chosen.get("counts"))
    if counts.empty:
        return []
    names = chosen.get("role_names") or {}
    pairs = dict.fromkeys(zip(counts["demographic"], counts["role"]))
    return [(f"{str(d).replace('_', ' ').capitalize()}: {names.get((d, r)) or str(r).replace('_', ' ')}", f"{d}/{r}")
            for d, r in pairs]


def model_choices(project: "Project", chosen: dict[str, Any]) -> list[tuple[str, Any]]:
    counts = _counts(project, chosen.get("classifier") or LEXICAL, chosen.get("counts"))
    return [(m, m) for m in dict.fromkeys(counts["model"])] if not counts.empty else []


def demographic_choices(project: "Project", chosen: dict[str, Any]) -> list[tuple[str, Any]]:
    counts = _counts(project, chosen.get("classifier") or LEXICAL, chosen.get("counts"))
    if counts.empty:
        return []
    if chosen.get("model"):
        counts = counts[counts["model"] == chosen["model"]]
    found = [(str(d).replace("_", " ").capitalize(), d) for d in dict.fromkeys(counts["demographic"])]
    return found + ([("every demographic", "")] if len(found) > 1 else [])


ROLE = ChartOption("role", "Role", choices=role_choices,
                   tooltip="The role the chart shows (the heatmap shows every role of a demographic)")


# ---------------------------------------------------------------------------------------------- stacked bars
def decade_shares_from_counts(counts: pd.DataFrame, role: str | None = None, classifier: str = LEXICAL,
                              role_names: dict | None = None) -> pd.DataFrame:
    """Per decade and category of one role: count, n, share and Wilson CI; "unparsed" as a category."""
    if counts.empty or counts["year"].isna().all():
        return pd.DataFrame()
    demographic, key = resolve_role(counts[counts["year"].notna()], role)
    part = counts[(counts["demographic"] == demographic) & (counts["role"] == key)]
    pooled = by_decade(part)
    per_model = part.drop_duplicates(["model", "role"]).dropna(subset=["year"])
    unparsed = per_model.groupby("year", as_index=False)["unparsed"].sum().rename(columns={"unparsed": "count"})
    unparsed["year"] = unparsed["year"].astype(int)
    unparsed = unparsed.merge(pooled.drop_duplicates("year")[[*ROLE_KEYS, "year", "n", "models"]], on="year")
    unparsed["category"] = "unparsed"
    if unparsed["count"].sum() > 0:  # the lexical baseline never leaves anything unparsed
        pooled = pd.concat([pooled, unparsed[pooled.columns]], ignore_index=True)
    frame = with_shares(pooled)
    frame.insert(3, "decade", frame["year"].map(lambda y: f"{y}s"))
    frame["classifier"] = classifier
    return _named(frame.sort_values(["year"], kind="stable").reset_index(drop=True), role_names)


def decade_shares_frame(project: "Project", role: str | None = None, classifier: str = LEXICAL,
                        counts: pd.DataFrame | None = None, role_names: dict | None = None, **_: Any) -> pd.DataFrame:
    """``counts`` (and ``role_names``): what a page has counted already, instead of counting again."""
    return decade_shares_from_counts(_counts(project, classifier, counts), role, classifier, role_names)


def draw_decade_shares(frame: pd.DataFrame, fig: "Figure", **_: object) -> list[Marks]:
    if "role_name" not in frame:
        frame = _named(frame, None)
    ax = fig.add_subplot()
    decades = list(dict.fromkeys(frame.sort_values("year")["decade"]))
    categories = list(dict.fromkeys(frame["category"]))
    colours = category_colours(categories)
    bottom = np.zeros(len(decades))
    boxes: list[tuple[float, float, float, dict, str]] = []
    first = frame.iloc[0]
    for category in categories:
        rows = frame[frame["category"] == category].set_index("decade").reindex(decades)
        values = rows["share"].fillna(0).to_numpy()
        ax.bar(decades, values * 100, bottom=bottom * 100, color=colours[category], label=category,
               edgecolor="white", linewidth=0.5, width=BAR_WIDTH)
        for index, (decade, row) in enumerate(rows.iterrows()):
            if row["share"] != row["share"] or not values[index]:
                continue
            boxes.append((index - BAR_WIDTH / 2, bottom[index] * 100, values[index] * 100,
                          {"year": int(row["year"]), "demographic": first["demographic"], "role": first["role"],
                           "category": category},
                          hover_text(f"{category}, {decade}", f"{values[index]:.0%} of {int(row['n'])} completions "
                                     f"({int(row['count'])}), 95% Wilson CI {row['ci_low']:.0%}\u2013{row['ci_high']:.0%}",
                                     CLICK)))
        bottom += values
    totals = frame.drop_duplicates("decade").set_index("decade")["n"].reindex(decades)
    ax.set_xticks(range(len(decades)), [f"{d}\nn={int(n)}" + ("*" if n < 30 else "") for d, n in totals.items()])
    ax.set_ylabel("share of completions (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"Who fills the role, by decade: {_role_title(first)} ({first['classifier']})", fontsize=10)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=8)
    if (totals < 30).any():
        ax.annotate("* fewer than 30 completions", (0, -0.22), xycoords="axes fraction", fontsize=7)
    return [Marks(ax, np.array([b[0] for b in boxes]), np.array([b[1] for b in boxes]), lambda i: boxes[i][4],
                  lambda i: dict(boxes[i][3]), width=np.full(len(boxes), BAR_WIDTH),
                  height=np.array([b[2] for b in boxes]))]


# ---------------------------------------------------------------------------------------------- trends
def trends_from_counts(counts: pd.DataFrame, role: str | None = None, classifier: str = LEXICAL,
                       method: str = "binomial", role_names: dict | None = None) -> pd.DataFrame:
    """Observed decade shares (with Wilson CIs) and the fitted quadratic curve with its band, stacked:
    ``kind`` is 'observed' or 'fit'."""
    if counts.empty or counts["year"].isna().all():
        return pd.DataFrame()
    demographic, key = resolve_role(counts[counts["year"].notna()], role)
    part = counts[(counts["demographic"] == demographic) & (counts["role"] == key)]
    observed = with_shares(by_decade(part))
    observed = observed.assign(kind="observed", fit=np.nan, band_low=np.nan, band_high=np.nan)
    _, curves = trends(part, method=method)
    curves = curves.assign(kind="fit")
    columns = [*ROLE_KEYS, "category", "kind", "year", "count", "n", "share", "ci_low", "ci_high", "fit",
               "band_low", "band_high"]
    frame = pd.concat([observed.reindex(columns=columns), curves.reindex(columns=columns)], ignore_index=True)
    frame["classifier"] = classifier
    frame["method"] = method
    return _named(frame, role_names)


def trends_frame(project: "Project", role: str | None = None, classifier: str = LEXICAL,
                 method: str = "binomial", counts: pd.DataFrame | None = None, role_names: dict | None = None,
                 **_: Any) -> pd.DataFrame:
    return trends_from_counts(_counts(project, classifier, counts), role, classifier, method, role_names)


def draw_trends(frame: pd.DataFrame, fig: "Figure", *, categories: str | None = None, **_: object) -> list[Marks]:
    """``categories``: comma-separated categories to draw (default: all but unclear/none)."""
    if "role_name" not in frame:
        frame = _named(frame, None)
    ax = fig.add_subplot()
    marks: list[tuple[float, float, dict, str]] = []
    observed = frame[frame["kind"] == "observed"]
    every = list(dict.fromkeys(observed["category"]))
    colours = category_colours(every)
    chosen = [c.strip() for c in categories.split(",")] if categories else [c for c in every if c != "unclear/none"]
    shift = np.linspace(-1.5, 1.5, len(chosen)) if len(chosen) > 1 else [0.0]
    for offset, category in zip(shift, chosen):
        points = observed[observed["category"] == category].sort_values("year")
        if points.empty:
            continue
        colour = colours[category]
        share = points["share"] * 100
        ax.errorbar(points["year"] + offset, share,
                    yerr=[(share - points["ci_low"] * 100).clip(lower=0), (points["ci_high"] * 100 - share).clip(lower=0)],
                    fmt="o", color=colour, capsize=3, markersize=4, label=category)
        marks.extend((float(row["year"] + offset), float(row["share"] * 100),
                      {"year": int(row["year"]), "demographic": row["demographic"], "role": row["role"],
                       "category": category},
                      hover_text(f"{category}, {int(row['year'])}s", f"{row['share']:.0%} of {int(row['n'])} completions "
                                 f"({int(row['count'])}), 95% Wilson CI {row['ci_low']:.0%}\u2013{row['ci_high']:.0%}",
                                 CLICK))
                     for _, row in points.iterrows())
        curve = frame[(frame["kind"] == "fit") & (frame["category"] == category)].sort_values("year")
        if not curve.empty:
            ax.plot(curve["year"], curve["fit"] * 100, color=colour, linewidth=1.5)
            if curve["band_low"].notna().any():  # a share cannot leave 0-100 %, so the band is drawn clipped
                ax.fill_between(curve["year"], (curve["band_low"] * 100).clip(0, 100),
                                (curve["band_high"] * 100).clip(0, 100), color=colour, alpha=0.12, linewidth=0)
    years = sorted(observed["year"].unique())
    ax.set_xticks(years, [f"{int(y)}s" for y in years])
    ax.set_ylabel("share of completions (%)")
    ax.set_ylim(-3, 103)
    first = observed.iloc[0]
    ax.set_title(f"Trend across decades: {_role_title(first)} ({frame['classifier'].iloc[0]})", fontsize=10)
    if frame[frame["kind"] == "fit"].empty:
        note = "points: decade shares with 95% Wilson intervals (a quadratic trend needs at least three decades)"
    else:
        how = "logit-quadratic binomial fit" if frame["method"].iloc[0] == "binomial" else "quadratic least-squares fit"
        note = f"points: decade shares with 95% Wilson intervals; lines: {how} with its 95% band"
    ax.set_xlabel(note, fontsize=7)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=8)
    return [Marks(ax, np.array([m[0] for m in marks]), np.array([m[1] for m in marks]), lambda i: marks[i][3],
                  lambda i: dict(marks[i][2]))]


# ---------------------------------------------------------------------------------------------- heatmap
def heatmap_from_counts(counts: pd.DataFrame, model: str | None = None, classifier: str = LEXICAL,
                        demographic: str | None = None, role_names: dict | None = None) -> pd.DataFrame:
    """Share of each category for each role of one model (every demographic it was run on); answers the
    judge left without a label are their own "unparsed" column, so that each role's row adds up to 100%."""
    if counts.empty:
        return pd.DataFrame()
    models = list(dict.fromkeys(counts["model"]))
    chosen = model or models[0]
    if chosen not in models:
        raise UserError(f"'{chosen}' has no REP results. Models with results: {', '.join(models)}.")
    part = counts[counts["model"] == chosen]
    unparsed = part.drop_duplicates(ROLE_KEYS).assign(category="unparsed", count=lambda f: f["unparsed"])
    if unparsed["count"].sum() > 0:  # the word lists never leave anything unparsed
        roles = {key: index for index, key in enumerate(dict.fromkeys(zip(part["demographic"], part["role"])))}
        part = pd.concat([part, unparsed], ignore_index=True)
        order = [roles[key] for key in zip(part["demographic"], part["role"])]
        part = part.assign(_order=order).sort_values("_order", kind="stable").drop(columns="_order")
    frame = with_shares(part).reset_index(drop=True)
    frame["classifier"] = classifier
    if demographic:
        if demographic not in set(frame["demographic"]):
            raise UserError(f"{chosen} has no REP results on '{demographic}'. Its demographics: "
                            f"{', '.join(dict.fromkeys(frame['demographic']))}.")
        frame = frame[frame["demographic"] == demographic].reset_index(drop=True)
    return _named(frame, role_names)


def heatmap_frame(project: "Project", model: str | None = None, classifier: str = LEXICAL,
                  demographic: str | None = None, counts: pd.DataFrame | None = None, role_names: dict | None = None,
                  **_: Any) -> pd.DataFrame:
    return heatmap_from_counts(_counts(project, classifier, counts), model, classifier, demographic, role_names)


def draw_heatmap(frame: pd.DataFrame, fig: "Figure", **_: object) -> list[Marks]:
    if "role_name" not in frame:
        frame = _named(frame, None)
    demographics = list(dict.fromkeys(frame["demographic"]))
    cells: list[tuple[Any, float, float, dict, str]] = []
    rows = [frame.loc[frame["demographic"] == d, "role"].nunique() for d in demographics]
    fig.set_size_inches(fig.get_figwidth(), 1.0 + sum(0.8 + 0.35 * r for r in rows))
    axes = fig.subplots(len(demographics), 1, squeeze=False, height_ratios=[0.8 + 0.35 * r for r in rows])[:, 0]
    image = None
    for ax, demographic in zip(axes, demographics):
        part = frame[frame["demographic"] == demographic]
        roles = list(dict.fromkeys(part["role"]))
        categories = list(dict.fromkeys(part["category"]))
        grid = part.pivot_table(index="role", columns="category", values="share", sort=False).reindex(
            index=roles, columns=categories)
        image = ax.imshow(grid.to_numpy() * 100, cmap="Blues", vmin=0, vmax=100, aspect="auto")
        names = part.drop_duplicates("role").set_index("role")["role_name"]
        ax.set_xticks(range(len(categories)), categories, fontsize=8)
        ax.set_yticks(range(len(roles)), [names[r] for r in roles], fontsize=8)
        counts = part.pivot_table(index="role", columns="category", values="count", sort=False).reindex(
            index=roles, columns=categories).to_numpy()
        n = part.drop_duplicates("role").set_index("role")["n"].reindex(roles).to_numpy()
        for (i, j), value in np.ndenumerate(grid.to_numpy()):
            if not np.isnan(value):
                ax.text(j, i, f"{value * 100:.0f}", ha="center", va="center", fontsize=7,
                        color="white" if value > 0.6 else "black")
            cells.append((ax, j - 0.5, i - 0.5, {"model": part["model"].iloc[0], "demographic": demographic,
                                                 "role": roles[i], "category": categories[j]},
                          hover_text(f"{names[roles[i]]}: {categories[j]}",
                                     "no completions" if np.isnan(value) else
                                     f"{value:.0%} of {int(n[i])} completions ({int(counts[i, j])})", CLICK)))
        ax.set_title(demographic.replace("_", " "), fontsize=9)
    first = frame.iloc[0]
    fig.suptitle(f"Category shares (%) per role: {first['model']} ({first['classifier']})", fontsize=10)
    if image is not None:
        fig.colorbar(image, ax=list(axes), shrink=0.8, label="share (%)")
    return [Marks(ax, np.array([c[1] for c in chosen]), np.array([c[2] for c in chosen]),
                  lambda i, chosen=chosen: chosen[i][4], lambda i, chosen=chosen: dict(chosen[i][3]),
                  width=np.ones(len(chosen)), height=np.ones(len(chosen)))
            for ax in axes for chosen in [[c for c in cells if c[0] is ax]]]


# ---------------------------------------------------------------------------------------------- spread
def spread_frame(project: "Project", classifier: str = LEXICAL) -> pd.DataFrame:
    counts = rep_counts(project, classifier)
    if counts.empty:
        return pd.DataFrame()
    frame = spread(with_shares(counts))
    frame["classifier"] = classifier
    return frame


def draw_spread(frame: pd.DataFrame, fig: "Figure", **_: object) -> None:
    ax = fig.add_subplot()
    frame = frame.assign(group=[f"{d}" if isinstance(d, str) else m for d, m in zip(frame["decade"], frame["model"])])
    groups = list(dict.fromkeys(frame.sort_values(["year", "model"], na_position="last")["group"]))
    demographics = list(dict.fromkeys(frame["demographic"]))
    width = 0.8 / max(len(groups), 1)
    for index, group in enumerate(groups):
        values = frame[frame["group"] == group].groupby("demographic")["spread_pp"].mean().reindex(demographics)
        ax.bar(np.arange(len(demographics)) + index * width, values.to_numpy(), width, label=group,
               color=PALETTE[index % len(PALETTE)])
    ax.set_xticks(np.arange(len(demographics)) + width * (len(groups) - 1) / 2,
                  [d.replace("_", " ") for d in demographics])
    ax.set_ylabel("SD of category shares (percentage points)")
    ax.set_title(f"Spread of category shares per demographic ({frame['classifier'].iloc[0]})", fontsize=10)
    ax.legend(frameon=False, fontsize=8)


register_chart(ChartSpec("rep-decade-shares", "REP: category shares by decade", decade_shares_frame,
                         draw_decade_shares, "Stacked bars of one role's category shares per decade.",
                         options=(ROLE,), page=PAGE))
register_chart(ChartSpec("rep-trends", "REP: trends across decades", trends_frame, draw_trends,
                         "Decade shares of one role's categories with the fitted quadratic and its 95% band.",
                         options=(ROLE,), page=PAGE))
register_chart(ChartSpec("rep-heatmap", "REP: roles x categories for one model", heatmap_frame, draw_heatmap,
                         "Share of each category for each role of one model.", size_inches=(7.0, 8.0),
                         options=(ChartOption("model", "Model", choices=model_choices,
                                              tooltip="The model whose completions the heatmap shows"),
                                  ChartOption("demographic", "Demographic", choices=demographic_choices,
                                              tooltip="The demographic whose roles the heatmap shows (or each, "
                                                      "a panel apiece)")),
                         page=PAGE))
register_chart(ChartSpec("rep-spread", "REP: spread per demographic", spread_frame, draw_spread,
                         "Standard deviation of category shares per demographic and decade."))


def _shares_table(project: "Project", classifier: str = LEXICAL) -> pd.DataFrame:
    return with_shares(rep_counts(project, classifier))


def _tests_table(project: "Project", classifier: str = LEXICAL) -> pd.DataFrame:
    return decade_tests(rep_counts(project, classifier))


def _trends_table(project: "Project", classifier: str = LEXICAL, method: str = "binomial") -> pd.DataFrame:
    return trends(rep_counts(project, classifier), method=method)[0]


register_table(TableSpec("rep-shares", "REP: category shares", _shares_table,
                         "Counts and shares with 95% Wilson intervals per model, role and category."))
register_table(TableSpec("rep-tests", "REP: tests across decades", _tests_table,
                         "Chi-square and Kruskal-Wallis tests across decades for each role."))
register_table(TableSpec("rep-trends", "REP: quadratic trends", _trends_table,
                         "Quadratic fits of category shares over decades."))
register_table(TableSpec("rep-spread", "REP: spread per demographic", spread_frame,
                         "Standard deviation of category shares per model and demographic."))
