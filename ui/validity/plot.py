"""The Validity page's charts in pyqtgraph, drawn from the export registry's frames (the same frames the
publication figures draw). Points stand for a group, a book or a passage: hovering names it, clicking it
hands its group, book or passage to the page, which opens the answers behind it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt

from ui.widgets.frame_table import is_missing
from ui.widgets.marked_plot import GRID_ALPHA, Mark, MarkedPlot, hover_html
from workbench.probes.validity.charts import GROUP_COLOURS, GROUP_NAMES

DRAWN_GROUPS = ("middle", "", "bottom", "top")  # the order points are drawn in: top and bottom on top


def _number(value, digits: int = 1) -> str:
    return "—" if is_missing(value) else f"{float(value):,.{digits}f}"


def _minutes(value: float) -> str:
    from workbench.annotation.durations import describe_minutes

    return "—" if is_missing(value) else describe_minutes(float(value))


SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _log_ticks(low: float, high: float) -> list[tuple[float, str]]:
    """Ticks at the powers of ten between ``low`` and ``high`` (given as log10 values): 0.1 to 1000 written out,
    others as 10⁶ (a column of '100000' and '1e+06' was wider than the axis and ran into its title)."""
    return [(float(k), f"{10 ** k:g}" if -1 <= k <= 3 else "10" + str(k).translate(SUPERSCRIPTS))
            for k in range(math.floor(low), math.ceil(high) + 1)]


class ValidityPlot(MarkedPlot):
    def show(self, name: str, frame: pd.DataFrame) -> None:
        if frame.empty:
            self.show_message("Nothing to draw for these choices.")
            return
        {"validity-year-groups": self.show_year_groups, "validity-year-error": self.show_year_error,
         "validity-narrative-time": self.show_narrative, "name-cloze-errors": self.show_null}[name](frame)

    # ------------------------------------------------------------------ year: MAE by group
    def show_year_groups(self, frame: pd.DataFrame) -> None:
        if frame["mae"].isna().all():
            self.show_message("No answer gave a year, so there is no error to draw: every answer counts as missing "
                              "(see the Missing column). Read some answers (double-click a book) to see what the "
                              "model wrote.")
            return
        item = self.reset("validity-year-groups")
        ticks = []
        for x, row in enumerate(frame.itertuples(index=False)):
            colour = GROUP_COLOURS.get(row.group, "#444444")
            ticks.append((x, f"{GROUP_NAMES.get(row.group, row.group)}: {int(row.predicted)} of {int(row.books)} "
                             f"dated, {_number(100 * row.missing_share, 0)}% missing" if row.books else
                          f"{row.group}: no answers"))
            if is_missing(row.mae):
                continue
            if not is_missing(row.mae_ci_low):
                item.addItem(pg.ErrorBarItem(x=np.array([x]), y=np.array([row.mae]), top=np.array([row.mae_ci_high - row.mae]),
                                             bottom=np.array([row.mae - row.mae_ci_low]), beam=0.15,
                                             pen=pg.mkPen(colour, width=2)))
            item.addItem(pg.ScatterPlotItem(x=[x], y=[row.mae], size=13, brush=pg.mkBrush(colour),
                                            pen=pg.mkPen("w", width=0.8)))
            text = hover_html(f"{GROUP_NAMES.get(row.group, row.group)} books", [
                f"mean absolute error {_number(row.mae)} years (95% CI {_number(row.mae_ci_low)}–{_number(row.mae_ci_high)})",
                f"{int(row.predicted)} of {int(row.books)} books dated; {int(row.missing)} missing",
                "click to read the answers"])
            self.marks.append(Mark(float(x), float(row.mae), text, {"group": row.group}))
        item.getAxis("bottom").setTicks([ticks])
        top = np.nanmax(frame["mae_ci_high"].fillna(frame["mae"]).to_numpy(float)) if frame["mae"].notna().any() else 1
        item.setXRange(-0.5, len(frame) - 0.5, padding=0)
        item.setYRange(0, max(1.0, top * 1.1), padding=0)
        first = frame.iloc[0]
        self.axis_label("left", "mean absolute error, years (95% bootstrap CI)")
        self.title(f"Year of first publication: {first['model']}, grouped by {first['by']} ({first['groups']}s)")
        p = first["difference_p_value"]
        self.set_caption(f"Top minus bottom: {_number(first['difference_mae'])} years"
                         + (f", permutation p = {p:.3g}." if not is_missing(p) else " (too few books to test)."))
        item.showGrid(x=False, y=True, alpha=GRID_ALPHA)

    # ------------------------------------------------------------------ year: error against accuracy
    def show_year_error(self, frame: pd.DataFrame) -> None:
        item = self.reset("validity-year-error")
        y_all = np.log10(1 + frame["abs_error"].to_numpy(float))  # 0 stays at the bottom
        for group in DRAWN_GROUPS:
            part = (frame["group"] == group).to_numpy()
            if not part.any():
                continue
            item.addItem(pg.ScatterPlotItem(x=frame["accuracy"].to_numpy(float)[part], y=y_all[part],
                                            size=9 if group in ("top", "bottom") else 6,
                                            brush=pg.mkBrush(GROUP_COLOURS[group]), pen=pg.mkPen("w", width=0.4)))
        for y, row in zip(y_all, frame.itertuples(index=False)):
            text = hover_html(row.book, [f"{GROUP_NAMES.get(row.group, row.group)} · accuracy {row.accuracy:.0%}",
                                         f"true {row.year}, answered {row.predicted:.0f}: off by "
                                         f"{row.abs_error:.0f} years", "click to read the answer"])
            self.marks.append(Mark(float(row.accuracy), float(y), text, {"book_id": int(row.book_id), "book": row.book}))
        high = max(1.0, float(np.nanmax(y_all)))
        item.getAxis("left").setTicks([[(math.log10(1 + v), f"{v:g}") for v in (0, 1, 10, 100, 1000, 10000)
                                        if math.log10(1 + v) <= high + 0.3]])
        item.setYRange(-0.05, high + 0.1, padding=0)
        item.setXRange(-0.02, max(0.2, float(frame["accuracy"].max())) + 0.02, padding=0)
        first = frame.iloc[0]
        self.axis_label("bottom", f"name-cloze accuracy of {first['by']}")
        self.axis_label("left", "absolute error of the year (years, log scale)")
        rho = first["spearman_rho"]
        self.title(f"Year error against memorization: {first['model']}")
        self.set_caption(f"Spearman ρ = {rho:.2f}, p = {first['spearman_p']:.3g}, {len(frame)} books."
                         if not is_missing(rho) else f"{len(frame)} books: too few or too alike for a correlation.")
        self.set_legend({f"{GROUP_NAMES[g]} ({int((frame['group'] == g).sum())})": GROUP_COLOURS[g]
                         for g in ("top", "middle", "bottom", "") if (frame["group"] == g).any()}, first["groups"])
        item.showGrid(x=True, y=True, alpha=GRID_ALPHA)

    # ------------------------------------------------------------------ narrative time
    def show_narrative(self, frame: pd.DataFrame) -> None:
        item = self.reset("validity-narrative-time")
        x_all = np.log10(frame["reference_minutes"].to_numpy(float))
        y_all = np.log10(frame["predicted_minutes"].to_numpy(float))
        low, high = float(min(x_all.min(), y_all.min())) - 0.3, float(max(x_all.max(), y_all.max())) + 0.3
        item.addItem(pg.PlotDataItem([low, high], [low, high], pen=pg.mkPen("#999999", width=1,
                                                                            style=Qt.PenStyle.DashLine)))
        for group in DRAWN_GROUPS:
            part = (frame["group"] == group).to_numpy()
            if part.any():
                item.addItem(pg.ScatterPlotItem(x=x_all[part], y=y_all[part], size=9 if group in ("top", "bottom") else 6,
                                                brush=pg.mkBrush(GROUP_COLOURS[group]), pen=pg.mkPen("w", width=0.4)))
        for x, y, row in zip(x_all, y_all, frame.itertuples(index=False)):
            text = hover_html(row.book, [f"{GROUP_NAMES.get(row.group, row.group)} · accuracy "
                                         f"{'—' if is_missing(row.accuracy) else f'{row.accuracy:.0%}'}",
                                         f"reference {_minutes(row.reference_minutes)}, predicted "
                                         f"{_minutes(row.predicted_minutes)}", "click to read the passage"])
            self.marks.append(Mark(float(x), float(y), text, {"book_id": int(row.book_id), "book": row.book,
                                                              "passage_id": int(row.passage_id)}))
        for axis in ("left", "bottom"):
            item.getAxis(axis).setTicks([_log_ticks(low, high)])
        item.setXRange(low, high, padding=0)
        item.setYRange(low, high, padding=0)
        first = frame.iloc[0]
        self.axis_label("bottom", f"reference minutes ({first['reference']}, log scale)")
        self.axis_label("left", "predicted minutes (log scale)")
        self.title(f"Narrative time: {first['model']}, grouped by {first['by']}")

        def rho(group: str) -> str:
            value = first[f"{group}_spearman_rho"]
            if is_missing(value):
                return f"{group}: no ρ"
            return f"{group} ρ = {value:.2f} [{_number(first[f'{group}_ci_low'], 2)}, {_number(first[f'{group}_ci_high'], 2)}]"

        self.set_caption(f"Spearman's ρ with 95% bootstrap CI: {rho('top')}; {rho('bottom')}; {rho('all')}.")
        self.set_legend({f"{GROUP_NAMES[g]} ({int((frame['group'] == g).sum())})": GROUP_COLOURS[g]
                         for g in ("top", "middle", "bottom", "") if (frame["group"] == g).any()}, first["groups"])
        item.showGrid(x=True, y=True, alpha=GRID_ALPHA)

    # ------------------------------------------------------------------ the error analysis's null distribution
    def show_null(self, frame: pd.DataFrame) -> None:
        item = self.reset("name-cloze-errors")
        values = frame["log_odds"].to_numpy(float)
        finite = values[np.isfinite(values)]
        observed = float(frame["observed"].iloc[0])
        if len(finite):
            counts, edges = np.histogram(finite, bins=min(60, max(10, len(np.unique(finite)))))
            centres, width = (edges[:-1] + edges[1:]) / 2, float(edges[1] - edges[0])
            item.addItem(pg.BarGraphItem(x=centres, height=counts, width=width * 0.95, brush=pg.mkBrush("#9a9a9a"),
                                         pen=pg.mkPen("w", width=0.5)))
            item.setYRange(0, float(counts.max()) * 1.08, padding=0)
            for centre, count, left, right in zip(centres, counts, edges[:-1], edges[1:]):
                self.marks.append(Mark(float(centre), float(count), hover_html(
                    f"{count:,} deals", [f"log-odds between {left:.2f} and {right:.2f}"])))
        first = frame.iloc[0]
        drawn = first["tie_rule"] == "draw" and int(first["draws"] or 0) > 0
        low, high = float(first["log_odds_p5"]), float(first["log_odds_p95"])
        if drawn and math.isfinite(low) and math.isfinite(high):  # o over the draws of the ties
            item.addItem(pg.LinearRegionItem((low, high), movable=False, brush=pg.mkBrush(192, 57, 43, 40),
                                             pen=pg.mkPen(None)))
        if math.isfinite(observed):
            item.addItem(pg.InfiniteLine(observed, angle=90, pen=pg.mkPen(GROUP_COLOURS["top"], width=3)))
            lows = [observed] + ([float(finite.min())] if len(finite) else []) + ([low] if drawn else [])
            highs = [observed] + ([float(finite.max())] if len(finite) else []) + ([high] if drawn else [])
            lows, highs = [v for v in lows if math.isfinite(v)], [v for v in highs if math.isfinite(v)]
            span = max(highs) - min(lows) or 1.0
            item.setXRange(min(lows) - 0.05 * span, max(highs) + 0.08 * span, padding=0)
        self.axis_label("bottom", "log-odds o = log(errors naming S / errors naming U), per name")
        self.axis_label("left", "deals of the names")
        ties = "ties drawn at random" if drawn else "every tied book and name in"
        self.title(f"Errors of {first['model']} on held-out books (grouped by {first['grouped_by']}, "
                   f"{first['groups']}s; {ties})")
        sizes = (f"{int(first['seen_names']):,} names each" if first["seen_names"] == first["unseen_names"] else
                 f"{int(first['seen_names']):,} names in S, {int(first['unseen_names']):,} in U")
        spread = (f" Over {int(first['draws'])} draws of the tied books and names, o ran from {low:.2f} to {high:.2f} "
                  "(5th-95th percentile, shaded); the draw shown is the median one." if drawn else "")
        self.set_caption(f"Observed o = {observed:.2f} (red line): {int(first['in_seen'])} of {int(first['errors'])} "
                         f"errors name a character of S, {int(first['in_unseen'])} one of U ({sizes}); "
                         f"p = {first['p_value']:.2g} from {len(frame):,} deals.{spread}")
        item.showGrid(x=False, y=True, alpha=GRID_ALPHA)
