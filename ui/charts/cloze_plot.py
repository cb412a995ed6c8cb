"""The interactive name-cloze chart (pyqtgraph), drawn from the export registry's frames.

One widget shows any of the four charts: a caption (what is plotted, and its test), the plot, and a
legend row below the plot (outside it, so it never covers data). Every point that stands for a book
is a ``Mark``: hovering near one shows a label naming the book, clicking it emits ``book_clicked``
with the book and the model(s) behind the point. Bars (category means) show their numbers on hover.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Qt, Signal
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from ui.charts.palette import BAR_COLOUR, SINGLE_COLOUR, WHISKER_COLOUR, group_colours
from ui.widgets.frame_table import is_missing
from workbench.probes.cloze.charts import NO_GROUP

HOVER_PX = 12  # how near (in pixels) the pointer must be to a point to name it
LABEL_GAP_PX = 7  # the hover label sits this far from the point
MAX_LABELLED_BOOKS = 40  # above this, the ranked chart gives ranks on its axis and names books on hover
TITLE_CHARS = 40
TEXT_COLOUR = "#202020"
GRID_ALPHA = 0.18
CI_NAMES = {"wilson": "Wilson", "bootstrap": "percentile bootstrap"}


@dataclass
class Mark:
    """A point standing for one book (x, y in plot coordinates)."""

    x: float
    y: float
    text: str  # HTML shown on hover
    book_id: int
    book: str
    models: list[str] = field(default_factory=list)


@dataclass
class Bar:
    left: float
    right: float
    bottom: float
    top: float
    text: str


def _pct(value) -> str:
    return "—" if is_missing(value) else f"{float(value):.0%}"


def _short(title: str) -> str:
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"


def rank_ticks(count: int, most: int = 10) -> list[tuple[float, str]]:
    """Ticks naming ranks (1 is the best book, drawn at the top: rank r sits at ``count - r``): rank 1,
    then every ``step`` ranks, a round step that gives at most about ``most`` ticks, and the last rank."""
    step = next(s for s in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10**9)
                if count / s <= most)
    ranks = [1] + [r for r in range(step, count + 1, step) if r > 1]
    if ranks[-1] != count and count - ranks[-1] >= step / 2:
        ranks.append(count)
    return [(float(count - r), str(r)) for r in ranks]


def legend_html(colours: dict[str, str], title: str, *, flagged: bool = False) -> str:
    """Coloured dots with their names; a hollow dot for flagged books when some are shown."""
    entries = [f"<span style='color:{colour}; font-size:14pt;'>&#9679;</span>&nbsp;{html.escape(str(name))}"
               for name, colour in colours.items()]
    text = f"<b>{html.escape(title)}:</b>&nbsp;&nbsp;" if entries else ""
    if flagged:
        entries.append(f"<span style='color:{TEXT_COLOUR}; font-size:14pt;'>&#9675;</span>&nbsp;flagged "
                       "(fewer passages than asked for)")
    return text + "&nbsp;&nbsp;&nbsp;".join(entries)


class ChartView(QWidget):
    book_clicked = Signal(dict)  # {"book_id", "book", "models"}

    def __init__(self, parent=None):
        super().__init__(parent)
        self.kind = ""
        self.marks: list[Mark] = []
        self.bars: list[Bar] = []
        self.hover_text = ""
        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("cloze-plot")
        self.plot.setMenuEnabled(False)
        self.plot.setAntialiasing(True)
        self.legend = QLabel("")
        self.legend.setWordWrap(True)
        self.legend.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.legend.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.legend)
        self.hover_label = pg.TextItem("", anchor=(0, 1), fill=pg.mkBrush(255, 255, 255, 235),
                                       border=pg.mkPen("#909090"))
        self.hover_label.setZValue(1000)
        # every move, unthrottled (pyqtgraph's sigMouseMoved drops moves closer than 10 ms, so the label
        # could name the book the pointer has just left)
        self.plot.viewport().installEventFilter(self)
        self.plot.scene().sigMouseClicked.connect(self._scene_clicked)
        self.message = pg.TextItem("", color=(90, 90, 90), anchor=(0.5, 0.5))

    # ------------------------------------------------------------------ common
    @property
    def item(self) -> pg.PlotItem:
        return self.plot.getPlotItem()

    def _reset(self, kind: str) -> pg.PlotItem:
        self.kind = kind
        self.marks, self.bars = [], []
        self.hover_text = ""
        item = self.item
        item.clear()
        item.showGrid(x=False, y=False)
        item.getViewBox().setMouseEnabled(x=False, y=False)
        for name in ("left", "bottom"):
            item.showAxis(name)
            axis = item.getAxis(name)
            axis.setTicks(None)
            axis.setPen(TEXT_COLOUR)
            axis.setTextPen(TEXT_COLOUR)
            axis.setStyle(showValues=True)
            axis.setTickSpacing()  # automatic again
        item.getAxis("left").setWidth(48)
        item.setLabel("left", "")
        item.setLabel("bottom", "")
        item.setTitle("")
        self.hover_label.hide()
        item.addItem(self.hover_label, ignoreBounds=True)
        self.legend.hide()
        return item

    def _title(self, text: str) -> None:
        self.item.setTitle(html.escape(text), color=TEXT_COLOUR, size="11pt")

    def _label(self, axis: str, text: str) -> None:
        self.item.setLabel(axis, html.escape(text), color=TEXT_COLOUR)

    def _show_legend(self, colours: dict[str, str], title: str, *, flagged: bool = False) -> None:
        self.legend.setText(legend_html(colours, title, flagged=flagged))
        self.legend.show()

    def set_caption(self, text: str) -> None:
        self.caption.setText(text)
        self.caption.setVisible(bool(text))

    def show_message(self, text: str) -> None:
        item = self._reset("message")
        for name in ("left", "bottom"):  # a message on empty axes looks like a broken chart
            item.hideAxis(name)
        self.set_caption("")
        self.message.setText(text)
        item.addItem(self.message)
        self.message.setPos(0.5, 0.5)
        item.setXRange(0, 1, padding=0)
        item.setYRange(0, 1, padding=0)

    # ------------------------------------------------------------------ ranked per-book accuracy
    def show_accuracy(self, frame: pd.DataFrame, colour_by: str | None) -> None:
        item = self._reset("cloze-accuracy")
        count = len(frame)
        positions = np.arange(count, dtype=float)[::-1]  # rank 1 at the top
        groups = list(dict.fromkeys(frame["group"]))
        colours = group_colours(groups)
        small = count <= MAX_LABELLED_BOOKS
        for group in groups:
            part = (frame["group"] == group).to_numpy()
            rows = frame[part]
            x, y = rows["accuracy"].to_numpy(float), positions[part]
            colour = colours[group] if colour_by else SINGLE_COLOUR
            item.addItem(pg.ErrorBarItem(x=x, y=y, left=x - rows["ci_low"].to_numpy(float),
                                         right=rows["ci_high"].to_numpy(float) - x, beam=0.3 if small else 0,
                                         pen=pg.mkPen(colour, width=1.3)))
            flagged = rows["flagged"].fillna(False).astype(bool).to_numpy()
            # flagged books (fewer passages than asked for) are drawn hollow
            brushes = [pg.mkBrush("w") if f else pg.mkBrush(colour) for f in flagged]
            pens = [pg.mkPen(colour, width=1.5) if f else pg.mkPen("w", width=0.5) for f in flagged]
            item.addItem(pg.ScatterPlotItem(x=x, y=y, size=9 if small else 6, brush=brushes, pen=pens))
        for position, row in zip(positions, frame.itertuples()):
            details = [f"{_pct(row.accuracy)} of {row.n} answered passages correct,"
                       f" 95% CI {_pct(row.ci_low)}–{_pct(row.ci_high)}"]
            extra = [f"{colour_by}: {row.group}" if colour_by and row.group != NO_GROUP else "",
                     "" if is_missing(row.year) else str(row.year),
                     "flagged: fewer passages than asked for" if row.flagged is True else "",
                     f"{row.failed} failed" if row.failed else ""]
            details.append(" · ".join(e for e in extra if e))
            self.marks.append(Mark(float(row.accuracy), float(position), self._hover_html(row.book, details),
                                   int(row.book_id), row.book, [row.model]))
        left = item.getAxis("left")
        if small:
            titles = [_short(str(b)) for b in frame["book"]]
            left.setTicks([[(p, t) for p, t in zip(positions, titles)]])
            metrics = QFontMetrics(left.style.get("tickFont") or self.plot.font())
            left.setWidth(min(max((metrics.horizontalAdvance(t) for t in titles), default=40) + 16, 340))
        else:  # too many to name: the axis gives ranks, hovering names the book
            left.setTicks([rank_ticks(count)])
            self._label("left", f"rank of {count} books (hover to name one)")
        method = frame["ci_method"].iloc[0]
        self._label("bottom", f"name-cloze accuracy (95% CI, {CI_NAMES.get(method, method)})")
        self._title(f"Per-book accuracy: {frame['model'].iloc[0]}")
        item.getAxis("bottom").setTickSpacing(0.2, 0.1)
        item.showGrid(x=True, y=False, alpha=GRID_ALPHA)
        item.setXRange(-0.02, 1.02, padding=0)
        item.setYRange(-0.7, count - 0.3, padding=0)
        any_flagged = bool(frame["flagged"].fillna(False).astype(bool).any())
        if colour_by or any_flagged:
            self._show_legend(colours if colour_by else {}, colour_by or "", flagged=any_flagged)

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
                text = self._hover_html(f"{value}", [f"{model}: mean accuracy {_pct(row.mean_accuracy)}, {ci}",
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
        item = self._reset("cloze-models")
        a, b = frame["model_a"].iloc[0], frame["model_b"].iloc[0]
        item.addItem(pg.PlotDataItem([0, 1], [0, 1], pen=pg.mkPen("#999999", width=1, style=Qt.PenStyle.DashLine)))
        x, y = frame["accuracy_b"].to_numpy(float), frame["accuracy_a"].to_numpy(float)
        item.addItem(pg.ScatterPlotItem(x=x, y=y, size=9, brush=pg.mkBrush(SINGLE_COLOUR), pen=pg.mkPen("w", width=0.5)))
        for row in frame.itertuples():
            text = self._hover_html(row.book, [f"{a}: {_pct(row.accuracy_a)} of {row.n_a}",
                                               f"{b}: {_pct(row.accuracy_b)} of {row.n_b}"])
            self.marks.append(Mark(float(row.accuracy_b), float(row.accuracy_a), text, int(row.book_id), row.book, [a, b]))
        self._label("bottom", f"accuracy of {b}")
        self._label("left", f"accuracy of {a}")
        self._title(f"{a} against {b} (dashed: equal accuracy)")
        for name in ("left", "bottom"):
            item.getAxis(name).setTickSpacing(0.2, 0.1)
        item.showGrid(x=True, y=True, alpha=GRID_ALPHA)
        item.setXRange(-0.02, 1.02, padding=0)
        item.setYRange(-0.02, 1.02, padding=0)

    # ------------------------------------------------------------------ accuracy against year
    def show_year(self, frame: pd.DataFrame) -> None:
        item = self._reset("cloze-year")
        x, y = frame["year"].to_numpy(float), frame["accuracy"].to_numpy(float)
        item.addItem(pg.ErrorBarItem(x=x, y=y, top=frame["ci_high"].to_numpy(float) - y,
                                     bottom=y - frame["ci_low"].to_numpy(float), beam=0,
                                     pen=pg.mkPen(WHISKER_COLOUR, width=1.2)))
        item.addItem(pg.ScatterPlotItem(x=x, y=y, size=9, brush=pg.mkBrush(SINGLE_COLOUR), pen=pg.mkPen("w", width=0.5)))
        for row in frame.itertuples():
            text = self._hover_html(row.book, [f"{int(row.year)}: {_pct(row.accuracy)} correct of {row.n}, "
                                               f"95% CI {_pct(row.ci_low)}–{_pct(row.ci_high)}"])
            self.marks.append(Mark(float(row.year), float(row.accuracy), text, int(row.book_id), row.book,
                                   [row.model]))
        span = max(float(x.max() - x.min()), 10.0)
        self._label("bottom", "year of first publication")
        self._label("left", "name-cloze accuracy (95% CI)")
        self._title(f"Accuracy against year: {frame['model'].iloc[0]}")
        item.getAxis("left").setTickSpacing(0.2, 0.1)
        item.showGrid(x=True, y=True, alpha=GRID_ALPHA)
        item.setXRange(float(x.min()) - span * 0.05, float(x.max()) + span * 0.05, padding=0)
        item.setYRange(-0.02, 1.02, padding=0)

    # ------------------------------------------------------------------ hover and click
    @staticmethod
    def _hover_html(title: str, lines: list[str]) -> str:
        body = "<br>".join(html.escape(line) for line in lines if line)
        return f"<div style='color:{TEXT_COLOUR};'><b>{html.escape(str(title))}</b><br>{body}</div>"

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.MouseMove:
            self.hover_at(self.plot.mapToScene(event.position().toPoint()))
        elif event.type() == QEvent.Type.Leave:
            self.hover_at(QPointF(-1e9, -1e9))
        return False

    def scene_pos_of(self, mark: Mark) -> QPointF:
        return self.item.getViewBox().mapViewToScene(QPointF(mark.x, mark.y))

    def mark_near(self, scene_pos: QPointF) -> Mark | None:
        """The mark nearest the pointer, if it is within ``HOVER_PX`` pixels."""
        if not self.marks:
            return None
        view_box = self.item.getViewBox()
        point = view_box.mapSceneToView(scene_pos)
        pixel_x, pixel_y = view_box.viewPixelSize()
        xs = np.array([m.x for m in self.marks])
        ys = np.array([m.y for m in self.marks])
        distances = np.hypot((xs - point.x()) / pixel_x, (ys - point.y()) / pixel_y)
        nearest = int(np.argmin(distances))
        return self.marks[nearest] if distances[nearest] <= HOVER_PX else None

    def bar_at(self, scene_pos: QPointF) -> Bar | None:
        point = self.item.getViewBox().mapSceneToView(scene_pos)
        for bar in self.bars:
            if bar.left <= point.x() <= bar.right and bar.bottom <= point.y() <= bar.top:
                return bar
        return None

    def hover_at(self, scene_pos: QPointF) -> str:
        """Name what is under the pointer (a book, or a bar's numbers) in a label beside it."""
        view_box = self.item.getViewBox()
        found = None
        if view_box.sceneBoundingRect().contains(scene_pos):
            mark = self.mark_near(scene_pos)
            if mark is not None:
                found = (mark.text, QPointF(mark.x, mark.y))
            else:
                bar = self.bar_at(scene_pos)
                if bar is not None:
                    found = (bar.text, view_box.mapSceneToView(scene_pos))
        if found is None:
            self.hover_text = ""
            self.hover_label.hide()
            return ""
        text, where = found
        self.hover_text = text
        self.hover_label.setHtml(text)
        (x0, x1), (y0, y1) = view_box.viewRange()
        # keep the label inside the plot (it opens towards the middle) and off the point itself
        right, up = where.x() < (x0 + x1) / 2, where.y() < (y0 + y1) / 2
        pixel_x, pixel_y = view_box.viewPixelSize()
        self.hover_label.setAnchor((0 if right else 1, 1 if up else 0))
        self.hover_label.setPos(QPointF(where.x() + (1 if right else -1) * LABEL_GAP_PX * pixel_x,
                                        where.y() + (1 if up else -1) * LABEL_GAP_PX * pixel_y))
        self.hover_label.show()
        return text

    def click_at(self, scene_pos: QPointF) -> Mark | None:
        mark = self.mark_near(scene_pos)
        if mark is not None:
            self.book_clicked.emit({"book_id": mark.book_id, "book": mark.book, "models": list(mark.models)})
        return mark

    def _scene_clicked(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.click_at(event.scenePos())
