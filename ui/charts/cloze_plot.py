"""The interactive name-cloze chart (pyqtgraph), drawn from the export registry's frames.

One widget shows any of the four charts: a caption (what is plotted, and its test), the plot, and a
legend row below the plot (outside it, so it never covers data). The plot is a grid of panels, laid out
as the publication figure is: many books ranked get a panel naming the best and the worst beside the
full ranking (thin, translucent intervals); a crowded scatter gets each model's distribution along its
axes. Every point that stands for a book, in any panel, is a ``Mark``: hovering near one shows a label
naming the book, clicking it emits ``book_clicked`` with the book and the model(s) behind the point. Bars
(category means) show their numbers on hover.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from functools import partial
from typing import Callable

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QWidget

from ui.charts.palette import (
    BAR_COLOUR,
    INTERVAL_GREY,
    NAMED_BAND_COLOUR,
    SINGLE_COLOUR,
    WHISKER_COLOUR,
    group_colours,
    translucent,
)
from ui.widgets.frame_table import is_missing
from ui.widgets.marked_plot import (
    TEXT_COLOUR,
    clear_panel,
    hover_from,
    hover_html,
    lay_out_chart,
    show_message_in,
)
from workbench.probes.cloze.charts import (
    CROWDED_ALPHA,
    INTERVAL_ALPHA,
    MAX_LABELLED_BOOKS,
    NO_GROUP,
    TITLE_CHARS,
    accuracy_bins,
    crowded,
    group_order,
    named_panel,
    rank_steps,
    short_title,
)

HOVER_PX = 12  # how near (in pixels) the pointer must be to a point to name it
LABEL_GAP_PX = 7  # the hover label sits this far from the point
GRID_ALPHA = 0.18
CI_NAMES = {"wilson": "Wilson", "bootstrap": "percentile bootstrap"}
__all__ = ["MAX_LABELLED_BOOKS", "ChartView", "rank_ticks"]


@dataclass
class Mark:
    """A point standing for one book (x, y in the coordinates of its panel; None: the main one)."""

    x: float
    y: float
    book_id: int
    book: str
    models: list[str] = field(default_factory=list)
    panel: pg.PlotItem | None = None
    describe: Callable[[], str] = str  # writes the HTML shown on hover (when the pointer first gets there)

    @property
    def text(self) -> str:
        return self.describe()


@dataclass
class Bar:
    left: float
    right: float
    bottom: float
    top: float
    text: str


def _pct(value) -> str:
    return "—" if is_missing(value) else f"{float(value):.0%}"


def rank_ticks(count: int, most: int = 10) -> list[tuple[float, str]]:
    """Ticks naming ranks (1 is the best book, drawn at the top: rank r sits at ``count - r``)."""
    return [(float(count - r), str(r)) for r in rank_steps(count, most)]


def legend_html(colours: dict[str, str], title: str, *, flagged: bool = False) -> str:
    """Coloured dots with their names; a hollow dot for flagged books when some are shown."""
    entries = [f"<span style='color:{colour}; font-size:14pt;'>&#9679;</span>&nbsp;{html.escape(str(name))}"
               for name, colour in colours.items()]
    text = f"<b>{html.escape(title)}:</b>&nbsp;&nbsp;" if entries else ""
    if flagged:
        entries.append(f"<span style='color:{TEXT_COLOUR}; font-size:14pt;'>&#9675;</span>&nbsp;flagged "
                       "(fewer passages than asked for)")
    return text + "&nbsp;&nbsp; ".join(entries)  # a plain space between entries: a long legend wraps


def _ci_label(frame: pd.DataFrame) -> str:
    method = frame["ci_method"].iloc[0]
    return f"name-cloze accuracy (95% CI, {CI_NAMES.get(method, method)})"


class ChartView(QWidget):
    book_clicked = Signal(dict)  # {"book_id", "book", "models"}

    def __init__(self, parent=None):
        super().__init__(parent)
        self.kind = ""
        self.marks: list[Mark] = []
        self.bars: list[Bar] = []
        self.hover_text = ""
        self.plot = pg.GraphicsLayoutWidget()
        self.plot.setBackground("w")
        self.plot.setObjectName("cloze-plot")
        self.plot.setAntialiasing(True)
        self.plot.ci.setContentsMargins(4, 4, 4, 4)
        self.plot.ci.layout.setHorizontalSpacing(16)  # room for the last value of a left panel's axis
        self.main = self._panel()
        self.side = self._panel()  # the named best and worst books beside a long ranking
        self.top_margin = self._panel()  # a crowded scatter's distributions along its axes
        self.right_margin = self._panel()
        self.caption, self.legend = lay_out_chart(self, self.plot)
        self.hover_labels = {id(panel): self._hover_label() for panel in (self.main, self.side)}
        self.hover_label = self.hover_labels[id(self.main)]
        self.panels: list[pg.PlotItem] = []
        self._arrangement = ""
        self._arrange("single")
        # every move, unthrottled (pyqtgraph's sigMouseMoved drops moves closer than 10 ms, so the label
        # could name the book the pointer has just left)
        self.plot.viewport().installEventFilter(self)
        self.plot.scene().sigMouseClicked.connect(self._scene_clicked)
        self.message = pg.TextItem("", color=(90, 90, 90), anchor=(0.5, 0.5))

    # ------------------------------------------------------------------ common
    @property
    def item(self) -> pg.PlotItem:
        """The main panel (the only one of most charts)."""
        return self.main

    @staticmethod
    def _panel() -> pg.PlotItem:
        panel = pg.PlotItem()
        panel.setMenuEnabled(False)
        panel.hideButtons()
        return panel

    @staticmethod
    def _hover_label() -> pg.TextItem:
        label = pg.TextItem("", anchor=(0, 1), fill=pg.mkBrush(255, 255, 255, 235), border=pg.mkPen("#909090"))
        label.setZValue(1000)
        return label

    def _arrange(self, arrangement: str) -> None:
        """Put the panels of ``arrangement`` in the grid: 'single' (the main panel), 'ranked' (named books |
        all books) or 'margins' (a scatter with its distributions above and to the right)."""
        if arrangement == self._arrangement:
            return
        grid = self.plot.ci
        grid.clear()
        placed = {"single": [(self.main, 0, 0)],
                  "ranked": [(self.side, 0, 0), (self.main, 0, 1)],
                  "margins": [(self.top_margin, 0, 0), (self.main, 1, 0), (self.right_margin, 1, 1)]}[arrangement]
        for panel, row, column in placed:
            grid.addItem(panel, row, column)
        # (columns, rows); an empty row or column keeps its stretch in the grid unless it is set to 0
        stretch = {"single": ((1, 0), (1, 0)), "ranked": ((1, 1), (1, 0)), "margins": ((4, 1), (1, 4))}[arrangement]
        for index, factor in enumerate(stretch[0]):
            grid.layout.setColumnStretchFactor(index, factor)
        for index, factor in enumerate(stretch[1]):
            grid.layout.setRowStretchFactor(index, factor)
        self.panels = [panel for panel, _, _ in placed]
        self._arrangement = arrangement

    def _reset(self, kind: str, arrangement: str = "single") -> pg.PlotItem:
        self.kind = kind
        self.marks, self.bars = [], []
        self.hover_text = ""
        self._arrange(arrangement)
        for panel in self.panels:
            clear_panel(panel, left_width=48)
            label = self.hover_labels.get(id(panel))
            if label is not None:
                label.hide()
                panel.addItem(label, ignoreBounds=True)
        for panel in (self.main, self.side, self.top_margin, self.right_margin):
            panel.setXLink(None)
            panel.setYLink(None)
        self.legend.hide()
        return self.main

    def _title(self, text: str, panel: pg.PlotItem | None = None) -> None:
        (panel or self.main).setTitle(html.escape(text), color=TEXT_COLOUR, size="11pt")

    def _label(self, axis: str, text: str, panel: pg.PlotItem | None = None) -> None:
        (panel or self.main).setLabel(axis, html.escape(text), color=TEXT_COLOUR)

    def _show_legend(self, colours: dict[str, str], title: str, *, flagged: bool = False) -> None:
        self.legend.setText(legend_html(colours, title, flagged=flagged))
        self.legend.show()

    def set_caption(self, text: str) -> None:
        self.caption.setText(text)
        self.caption.setVisible(bool(text))

    def show_message(self, text: str) -> None:
        item = self._reset("message")
        self.set_caption("")
        show_message_in(item, self.message, text)

    def _book_points(self, panel: pg.PlotItem, rows: pd.DataFrame, y: np.ndarray, colours: list[str], *,
                     size: float, interval_pen: pg.QtGui.QPen, beam: float) -> None:
        """Books as points at (accuracy, y), each in its colour, with their 95% intervals (one pen); flagged
        books (fewer passages than asked for) are drawn hollow. Two items however many groups: an item per
        group made colouring 571 books by decade take 0.15 s of the GUI thread."""
        x = rows["accuracy"].to_numpy(float)
        panel.addItem(pg.ErrorBarItem(x=x, y=y, left=x - rows["ci_low"].to_numpy(float),
                                      right=rows["ci_high"].to_numpy(float) - x, beam=beam, pen=interval_pen))
        flagged = rows["flagged"].fillna(False).astype(bool).to_numpy()
        brushes = {colour: pg.mkBrush(colour) for colour in set(colours)}
        rings = {colour: pg.mkPen(colour, width=1.5) for colour in set(colours)}
        hollow, edge = pg.mkBrush("w"), pg.mkPen("w", width=0.5) if size > 5 else pg.mkPen(None)
        panel.addItem(pg.ScatterPlotItem(
            x=x, y=y, size=size, brush=[hollow if f else brushes[c] for f, c in zip(flagged, colours)],
            pen=[rings[c] if f else edge for f, c in zip(flagged, colours)]))

    def _accuracy_marks(self, panel: pg.PlotItem | None, rows: pd.DataFrame, y: np.ndarray,
                        colour_by: str | None) -> None:
        """A mark per book; its hover text is written when the pointer reaches it."""
        values = {name: rows[name].tolist() for name in ("rank", "accuracy", "n", "ci_low", "ci_high", "group",
                                                          "year", "flagged", "failed", "book", "book_id", "model")}
        for i, position in enumerate(y):
            self.marks.append(Mark(values["accuracy"][i], float(position), int(values["book_id"][i]),
                                   values["book"][i], [values["model"][i]], panel,
                                   partial(self._accuracy_text, values, i, colour_by)))

    def _accuracy_text(self, values: dict[str, list], i: int, colour_by: str | None) -> str:
        def value(name: str):
            return values[name][i]

        details = [f"Rank {value('rank')}: {_pct(value('accuracy'))} of {value('n')} answered passages correct,"
                   f" 95% CI {_pct(value('ci_low'))}–{_pct(value('ci_high'))}"]
        extra = [f"{colour_by}: {value('group')}" if colour_by and value("group") != NO_GROUP else "",
                 "" if is_missing(value("year")) else str(value("year")),
                 "flagged: fewer passages than asked for" if value("flagged") is True else "",
                 f"{value('failed')} failed" if value("failed") else ""]
        details.append(" · ".join(e for e in extra if e))
        return hover_html(value("book"), details)

    def _title_axis(self, panel: pg.PlotItem, ticks: list[tuple[float, str]]) -> None:
        left = panel.getAxis("left")
        left.setTicks([ticks])
        metrics = QFontMetrics(left.style.get("tickFont") or self.plot.font())
        left.setWidth(min(max((metrics.horizontalAdvance(t) for _, t in ticks), default=40) + 16, 340))

    # ------------------------------------------------------------------ ranked per-book accuracy
    def show_accuracy(self, frame: pd.DataFrame, colour_by: str | None) -> None:
        panel = named_panel(frame)
        item = self._reset("cloze-accuracy", "single" if panel is None else "ranked")
        count = len(frame)
        colours = group_colours(group_order(frame["group"]))
        # coloured by a tag: the points carry the colours, the intervals are grey
        point_colours = frame["group"].map(colours).tolist() if colour_by else [SINGLE_COLOUR] * count
        interval_colour = INTERVAL_GREY if colour_by else SINGLE_COLOUR
        if panel is None:  # a few books: a row each, every title on the axis
            positions = np.arange(count, dtype=float)[::-1]  # rank 1 at the top
            self._book_points(item, frame, positions, point_colours, size=9,
                              interval_pen=pg.mkPen(interval_colour, width=1.3), beam=0.3)
            self._accuracy_marks(None, frame, positions, colour_by)
            self._title_axis(item, [(p, short_title(b)) for p, b in zip(positions, frame["book"])])
            self._title(f"Per-book accuracy: {frame['model'].iloc[0]}")
        else:
            self._show_many_books(frame, panel, point_colours, interval_colour, colour_by)
        self._label("bottom", _ci_label(frame))
        for shown in self.panels:
            shown.getAxis("bottom").setTickSpacing(0.2, 0.1)
            shown.showGrid(x=True, y=False, alpha=GRID_ALPHA)
            shown.setXRange(-0.02, 1.02, padding=0)
        item.setYRange(-0.7, count - 0.3, padding=0)
        if panel is not None:  # room for the side panel's last value (pyqtgraph hides a label that overhangs)
            self.side.setXRange(-0.02, 1.05, padding=0)
        any_flagged = bool(frame["flagged"].fillna(False).astype(bool).any())
        if colour_by or any_flagged:
            self._show_legend(colours if colour_by else {}, colour_by or "", flagged=any_flagged)

    def _show_many_books(self, frame: pd.DataFrame, panel: tuple[pd.DataFrame, pd.DataFrame],
                         point_colours: list[str], interval_colour: str, colour_by: str | None) -> None:
        """All books ranked (thin, translucent intervals; ranks on the axis) beside a panel naming the best
        and the worst, as the publication figure does. Rank r sits at ``count - r`` in the main panel."""
        count = len(frame)
        positions = count - frame["rank"].to_numpy(float)
        best, worst = panel
        for first, last in ((1, len(best)), (count - len(worst) + 1, count)):  # where the named books rank
            band = pg.BarGraphItem(x0=[-0.02], width=[1.04], y0=[count - last - 0.5], height=[last - first + 1],
                                   brush=pg.mkBrush(NAMED_BAND_COLOUR), pen=pg.mkPen(None))
            band.setZValue(-10)
            self.main.addItem(band)
        self._book_points(self.main, frame, positions, point_colours, size=4 if count > 300 else 6,
                          interval_pen=pg.mkPen(translucent(interval_colour, INTERVAL_ALPHA), width=1), beam=0)
        self._accuracy_marks(None, frame, positions, colour_by)
        self.main.getAxis("left").setTicks([rank_ticks(count)])
        self._label("left", f"rank of {count} books (hover to name one)")
        self._title(f"Per-book accuracy: {frame['model'].iloc[0]}, all {count} books")

        named = pd.concat([best, worst])
        rows = len(named) + 1  # a row between the best and the worst says how many are left out
        side_positions = np.concatenate([np.arange(rows - 1, len(worst), -1), np.arange(len(worst) - 1, -1, -1)])
        side_positions = side_positions.astype(float)
        named_colours = [point_colours[i] for i in np.flatnonzero(frame.index.isin(named.index))]
        self._book_points(self.side, named, side_positions, named_colours, size=7,
                          interval_pen=pg.mkPen(interval_colour, width=1.2), beam=0.25)
        self._accuracy_marks(self.side, named, side_positions, colour_by)
        ticks = [(p, f"{rank}. {short_title(book, TITLE_CHARS - 5)}")
                 for p, rank, book in zip(side_positions, named["rank"], named["book"])]
        self._title_axis(self.side, [*ticks, (float(len(worst)), f"⋮  {count - len(named)} more books")])
        self.side.addItem(pg.InfiniteLine(pos=len(worst), angle=0, pen=pg.mkPen("#c8c8c8", style=Qt.PenStyle.DotLine)))
        self._title(f"The {len(best)} best and {len(worst)} worst", self.side)
        self._label("bottom", _ci_label(frame), self.side)
        self.side.setYRange(-0.7, rows - 0.3, padding=0)

    # ------------------------------------------------------------------ category means
    def show_categories(self, frame: pd.DataFrame) -> None:
        item = self._reset("cloze-categories")
        values = sorted(frame["value"].astype(str).unique())
        models = list(dict.fromkeys(frame["model"]))
        colours = group_colours(models) if len(models) > 1 else {models[0]: BAR_COLOUR}
        width = 0.8 / len(models)
        frame = frame.assign(value=frame["value"].astype(str))
        for i, model in enumerate(models):
            rows = frame[frame["model"] == model].set_index("value").reindex(values)
            x = np.arange(len(values)) + (i - (len(models) - 1) / 2) * width
            means = rows["mean_accuracy"].to_numpy(float)
            present = ~np.isnan(means)
            item.addItem(pg.BarGraphItem(x=x[present], height=means[present], width=width * 0.92,
                                         brush=pg.mkBrush(colours[model]), pen=pg.mkPen("#303030", width=0.6)))
            with_ci = present & ~np.isnan(rows["ci_low"].to_numpy(float))
            if with_ci.any():
                low, high = rows["ci_low"].to_numpy(float), rows["ci_high"].to_numpy(float)
                item.addItem(pg.ErrorBarItem(x=x[with_ci], y=means[with_ci], top=(high - means)[with_ci],
                                             bottom=(means - low)[with_ci], beam=width * 0.3,
                                             pen=pg.mkPen("#202020", width=1.2)))
            for xi, value, row in zip(x, values, rows.itertuples()):
                if is_missing(row.mean_accuracy):
                    continue
                ci = ("no interval (one book)" if is_missing(row.ci_low)
                      else f"95% CI {_pct(row.ci_low)}–{_pct(row.ci_high)}")
                text = hover_html(f"{value}", [f"{model}: mean accuracy {_pct(row.mean_accuracy)}, {ci}",
                                                     f"{int(row.books)} books, {int(row.passages):,} passages"])
                self.bars.append(Bar(xi - width / 2, xi + width / 2, 0.0, float(row.mean_accuracy), text))
        books = frame.groupby("value")["books"].max()
        item.getAxis("bottom").setTicks([[(i, f"{v} ({int(books[v])})") for i, v in enumerate(values)]])
        tag = frame["tag"].iloc[0]
        self._label("bottom", f"{tag} (books)")
        self._label("left", "mean per-book accuracy (95% t interval)")
        self._title(f"Name-cloze accuracy by {tag}" + ("" if len(models) > 1 else f": {models[0]}"))
        item.getAxis("left").setTickSpacing(0.2, 0.1)
        item.showGrid(x=False, y=True, alpha=GRID_ALPHA)
        item.setXRange(-0.6, len(values) - 0.4, padding=0)
        item.setYRange(-0.01, 1.02, padding=0)
        if len(models) > 1:
            self._show_legend(colours, "model")

    # ------------------------------------------------------------------ model against model
    def show_models(self, frame: pd.DataFrame) -> None:
        many = crowded(frame)
        item = self._reset("cloze-models", "margins" if many else "single")
        a, b = frame["model_a"].iloc[0], frame["model_b"].iloc[0]
        item.addItem(pg.PlotDataItem([0, 1], [0, 1], pen=pg.mkPen("#999999", width=1, style=Qt.PenStyle.DashLine)))
        x, y = frame["accuracy_b"].to_numpy(float), frame["accuracy_a"].to_numpy(float)
        item.addItem(self._points(x, y, many, size=7 if len(frame) > 300 else 9))
        if many:  # each model's distribution along its axis
            self._margins(frame)
        values = {name: frame[name].tolist() for name in ("book", "book_id", "accuracy_a", "accuracy_b", "n_a", "n_b")}

        def describe(i: int) -> str:
            return hover_html(values["book"][i], [f"{a}: {_pct(values['accuracy_a'][i])} of {values['n_a'][i]}",
                                                        f"{b}: {_pct(values['accuracy_b'][i])} of {values['n_b'][i]}"])

        self.marks = [Mark(float(x[i]), float(y[i]), int(values["book_id"][i]), values["book"][i], [a, b],
                           describe=partial(describe, i)) for i in range(len(frame))]
        self._label("bottom", f"accuracy of {b}")
        self._label("left", f"accuracy of {a}")
        self._title(f"{a} against {b} (dashed: equal accuracy)", self.top_margin if many else None)
        for name in ("left", "bottom"):
            item.getAxis(name).setTickSpacing(0.2, 0.1)
        item.showGrid(x=True, y=True, alpha=GRID_ALPHA)
        item.setXRange(-0.02, 1.02, padding=0)
        item.setYRange(-0.02, 1.02, padding=0)

    @staticmethod
    def _points(x: np.ndarray, y: np.ndarray, crowded_chart: bool, size: float = 7) -> pg.ScatterPlotItem:
        """One point per book; in a crowded chart translucent, so where books pile up shows darker."""
        if crowded_chart:
            return pg.ScatterPlotItem(x=x, y=y, size=size, pen=pg.mkPen(None),
                                      brush=pg.mkBrush(translucent(SINGLE_COLOUR, CROWDED_ALPHA)))
        return pg.ScatterPlotItem(x=x, y=y, size=9, brush=pg.mkBrush(SINGLE_COLOUR), pen=pg.mkPen("w", width=0.5))

    def _margins(self, frame: pd.DataFrame) -> None:
        """How many books fall in each accuracy bin, for each model, along the scatter's axes."""
        brush, pen = pg.mkBrush(translucent(SINGLE_COLOUR, 0.6)), pg.mkPen(None)
        counts, edges = accuracy_bins(frame["accuracy_b"])
        self.top_margin.addItem(pg.BarGraphItem(x0=edges[:-1], width=np.diff(edges), height=counts, brush=brush,
                                                pen=pen))
        self.top_margin.setXLink(self.main)
        self.top_margin.getAxis("bottom").setStyle(showValues=False)
        self._label("left", "books", self.top_margin)
        counts, edges = accuracy_bins(frame["accuracy_a"])
        self.right_margin.addItem(pg.BarGraphItem(x0=0, y0=edges[:-1], height=np.diff(edges), width=counts,
                                                  brush=brush, pen=pen))
        self.right_margin.setYLink(self.main)
        self.right_margin.getAxis("left").setStyle(showValues=False)
        self.right_margin.getAxis("left").setWidth(8)
        self._label("bottom", "books", self.right_margin)

    # ------------------------------------------------------------------ accuracy against year
    def show_year(self, frame: pd.DataFrame) -> None:
        item = self._reset("cloze-year")
        many = crowded(frame)
        x, y = frame["year"].to_numpy(float), frame["accuracy"].to_numpy(float)
        whiskers = pg.mkPen(translucent(WHISKER_COLOUR, INTERVAL_ALPHA) if many else WHISKER_COLOUR,
                            width=1 if many else 1.2)
        item.addItem(pg.ErrorBarItem(x=x, y=y, top=frame["ci_high"].to_numpy(float) - y,
                                     bottom=y - frame["ci_low"].to_numpy(float), beam=0, pen=whiskers))
        item.addItem(self._points(x, y, many))
        values = {name: frame[name].tolist() for name in ("book", "book_id", "model", "n", "ci_low", "ci_high")}

        def describe(i: int) -> str:
            return hover_html(values["book"][i], [
                f"{int(x[i])}: {_pct(y[i])} correct of {values['n'][i]}, "
                f"95% CI {_pct(values['ci_low'][i])}–{_pct(values['ci_high'][i])}"])

        self.marks = [Mark(float(x[i]), float(y[i]), int(values["book_id"][i]), values["book"][i],
                           [values["model"][i]], describe=partial(describe, i)) for i in range(len(frame))]
        span = max(float(x.max() - x.min()), 10.0)
        self._label("bottom", "year of first publication")
        self._label("left", "name-cloze accuracy (95% CI)")
        self._title(f"Accuracy against year: {frame['model'].iloc[0]}")
        item.getAxis("left").setTickSpacing(0.2, 0.1)
        item.showGrid(x=True, y=True, alpha=GRID_ALPHA)
        item.setXRange(float(x.min()) - span * 0.05, float(x.max()) + span * 0.05, padding=0)
        item.setYRange(-0.02, 1.02, padding=0)

    # ------------------------------------------------------------------ hover and click
    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        hover_from(event, self.plot, self.hover_at)
        return False

    def _panel_of(self, mark: Mark) -> pg.PlotItem:
        return mark.panel or self.main

    def scene_pos_of(self, mark: Mark) -> QPointF:
        return self._panel_of(mark).getViewBox().mapViewToScene(QPointF(mark.x, mark.y))

    def panel_at(self, scene_pos: QPointF) -> pg.PlotItem | None:
        """The panel whose plotting area holds ``scene_pos``."""
        return next((p for p in self.panels if p.getViewBox().sceneBoundingRect().contains(scene_pos)), None)

    def mark_near(self, scene_pos: QPointF) -> Mark | None:
        """The mark nearest the pointer in the panel under it, if it is within ``HOVER_PX`` pixels."""
        panel = self.panel_at(scene_pos)
        marks = [m for m in self.marks if self._panel_of(m) is panel]
        if not marks:
            return None
        view_box = panel.getViewBox()
        point = view_box.mapSceneToView(scene_pos)
        pixel_x, pixel_y = view_box.viewPixelSize()
        xs = np.array([m.x for m in marks])
        ys = np.array([m.y for m in marks])
        distances = np.hypot((xs - point.x()) / pixel_x, (ys - point.y()) / pixel_y)
        nearest = int(np.argmin(distances))
        return marks[nearest] if distances[nearest] <= HOVER_PX else None

    def bar_at(self, scene_pos: QPointF) -> Bar | None:
        point = self.main.getViewBox().mapSceneToView(scene_pos)
        for bar in self.bars:
            if bar.left <= point.x() <= bar.right and bar.bottom <= point.y() <= bar.top:
                return bar
        return None

    def hover_at(self, scene_pos: QPointF) -> str:
        """Name what is under the pointer (a book, or a bar's numbers) in a label beside it."""
        panel = self.panel_at(scene_pos)
        found = None
        if panel is not None:
            mark = self.mark_near(scene_pos)
            if mark is not None:
                found = (mark.text, QPointF(mark.x, mark.y))
            elif panel is self.main:
                bar = self.bar_at(scene_pos)
                if bar is not None:
                    found = (bar.text, panel.getViewBox().mapSceneToView(scene_pos))
        for label in self.hover_labels.values():
            label.hide()
        if found is None or id(panel) not in self.hover_labels:
            self.hover_text = ""
            return ""
        text, where = found
        self.hover_text = text
        label = self.hover_labels[id(panel)]
        label.setHtml(text)
        view_box = panel.getViewBox()
        (x0, x1), (y0, y1) = view_box.viewRange()
        # keep the label inside the plot (it opens towards the middle) and off the point itself
        right, up = where.x() < (x0 + x1) / 2, where.y() < (y0 + y1) / 2
        pixel_x, pixel_y = view_box.viewPixelSize()
        label.setAnchor((0 if right else 1, 1 if up else 0))
        label.setPos(QPointF(where.x() + (1 if right else -1) * LABEL_GAP_PX * pixel_x,
                             where.y() + (1 if up else -1) * LABEL_GAP_PX * pixel_y))
        label.show()
        return text

    def click_at(self, scene_pos: QPointF) -> Mark | None:
        mark = self.mark_near(scene_pos)
        if mark is not None:
            self.book_clicked.emit({"book_id": mark.book_id, "book": mark.book, "models": list(mark.models)})
        return mark

    def _scene_clicked(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.click_at(event.scenePos())
