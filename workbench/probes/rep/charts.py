"""REP charts for the export registry: each a frame of exactly what is plotted plus a matplotlib drawing.

- ``rep-decade-shares``: stacked bars of one role's category shares per decade (unparsed in grey);
- ``rep-trends``: one role's decade shares per category with Wilson intervals, the fitted quadratic
  and its 95% band;
- ``rep-heatmap``: share of each category for each role, for one model (a panel per demographic);
- ``rep-spread``: the spread of category shares per demographic and decade.

Options (all text, as typed on the command line): ``role`` (``ceo`` or ``gender/ceo``; default: the
first role with results), ``classifier`` (``lexical`` or ``judge:MODEL``), ``model`` (heatmap;
default: the first model with results).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from workbench.errors import UserError
from workbench.export.registry import ChartSpec, TableSpec, register_chart, register_table
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

UNPARSED_COLOUR = "#b0b0b0"
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


def _caption(demographic: str, role: str, classifier: str) -> str:
    return f"{demographic.replace('_', ' ')} / {role.replace('_', ' ')} ({classifier})"


# ---------------------------------------------------------------------------------------------- stacked bars
def decade_shares_from_counts(counts: pd.DataFrame, role: str | None = None, classifier: str = LEXICAL) -> pd.DataFrame:
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
    return frame.sort_values(["year"], kind="stable").reset_index(drop=True)


def decade_shares_frame(project: "Project", role: str | None = None, classifier: str = LEXICAL) -> pd.DataFrame:
    return decade_shares_from_counts(rep_counts(project, classifier), role, classifier)


def draw_decade_shares(frame: pd.DataFrame, fig: "Figure", **_: object) -> None:
    ax = fig.add_subplot()
    decades = list(dict.fromkeys(frame.sort_values("year")["decade"]))
    categories = list(dict.fromkeys(frame["category"]))
    colours = category_colours(categories)
    bottom = np.zeros(len(decades))
    for category in categories:
        values = frame[frame["category"] == category].set_index("decade")["share"].reindex(decades).fillna(0).to_numpy()
        ax.bar(decades, values * 100, bottom=bottom * 100, color=colours[category], label=category,
               edgecolor="white", linewidth=0.5)
        bottom += values
    totals = frame.drop_duplicates("decade").set_index("decade")["n"].reindex(decades)
    ax.set_xticks(range(len(decades)), [f"{d}\nn={int(n)}" + ("*" if n < 30 else "") for d, n in totals.items()])
    ax.set_ylabel("share of completions (%)")
    ax.set_ylim(0, 100)
    first = frame.iloc[0]
    ax.set_title(f"Who fills the role, by decade: {_caption(first['demographic'], first['role'], first['classifier'])}",
                 fontsize=10)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=8)
    if (totals < 30).any():
        ax.annotate("* fewer than 30 completions", (0, -0.22), xycoords="axes fraction", fontsize=7)


# ---------------------------------------------------------------------------------------------- trends
def trends_from_counts(counts: pd.DataFrame, role: str | None = None, classifier: str = LEXICAL,
                       method: str = "binomial") -> pd.DataFrame:
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
    return frame


def trends_frame(project: "Project", role: str | None = None, classifier: str = LEXICAL,
                 method: str = "binomial") -> pd.DataFrame:
    return trends_from_counts(rep_counts(project, classifier), role, classifier, method)


def draw_trends(frame: pd.DataFrame, fig: "Figure", *, categories: str | None = None, **_: object) -> None:
    """``categories``: comma-separated categories to draw (default: all but unclear/none)."""
    ax = fig.add_subplot()
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
    ax.set_title(f"Trend across decades: {_caption(first['demographic'], first['role'], frame['classifier'].iloc[0])}",
                 fontsize=10)
    if frame[frame["kind"] == "fit"].empty:
        note = "points: decade shares with 95% Wilson intervals (a quadratic trend needs at least three decades)"
    else:
        how = "logit-quadratic binomial fit" if frame["method"].iloc[0] == "binomial" else "quadratic least-squares fit"
        note = f"points: decade shares with 95% Wilson intervals; lines: {how} with its 95% band"
    ax.set_xlabel(note, fontsize=7)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=8)


# ---------------------------------------------------------------------------------------------- heatmap
def heatmap_from_counts(counts: pd.DataFrame, model: str | None = None, classifier: str = LEXICAL) -> pd.DataFrame:
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
    return frame


def heatmap_frame(project: "Project", model: str | None = None, classifier: str = LEXICAL) -> pd.DataFrame:
    return heatmap_from_counts(rep_counts(project, classifier), model, classifier)


def draw_heatmap(frame: pd.DataFrame, fig: "Figure", **_: object) -> None:
    demographics = list(dict.fromkeys(frame["demographic"]))
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
        ax.set_xticks(range(len(categories)), categories, fontsize=8)
        ax.set_yticks(range(len(roles)), [r.replace("_", " ") for r in roles], fontsize=8)
        for (i, j), value in np.ndenumerate(grid.to_numpy()):
            if not np.isnan(value):
                ax.text(j, i, f"{value * 100:.0f}", ha="center", va="center", fontsize=7,
                        color="white" if value > 0.6 else "black")
        ax.set_title(demographic.replace("_", " "), fontsize=9)
    first = frame.iloc[0]
    fig.suptitle(f"Category shares (%) per role: {first['model']} ({first['classifier']})", fontsize=10)
    if image is not None:
        fig.colorbar(image, ax=list(axes), shrink=0.8, label="share (%)")


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
                         draw_decade_shares, "Stacked bars of one role's category shares per decade."))
register_chart(ChartSpec("rep-trends", "REP: trends across decades", trends_frame, draw_trends,
                         "Decade shares of one role's categories with the fitted quadratic and its 95% band."))
register_chart(ChartSpec("rep-heatmap", "REP: roles x categories for one model", heatmap_frame, draw_heatmap,
                         "Share of each category for each role of one model.", size_inches=(7.0, 8.0)))
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
