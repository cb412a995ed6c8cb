"""A pyqtgraph plot whose points can be named on hover and clicked: the base of interactive charts.

A chart draws its items on ``self.item`` and adds a ``Mark`` per point that stands for something (a book,
a passage, a group): its position in plot coordinates, the HTML shown when the pointer comes near, and
``data`` handed to ``picked`` when it is clicked. Hovering is followed on every mouse move (pyqtgraph's
own signal drops moves closer than 10 ms, so a label could name the point the pointer has just left).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

HOVER_PX = 12  # how near (in pixels) the pointer must be to a point to name it
LABEL_GAP_PX = 7
TEXT_COLOUR = "#202020"
GRID_ALPHA = 0.18


@dataclass
class Mark:
    x: float
    y: float
    text: str  # HTML shown on hover
    data: dict[str, Any] = field(default_factory=dict)  # what a click hands over


class LazyMarks(Sequence[Mark]):
    """Marks at ``xs``, ``ys`` whose hover text and click data ``describe(i)`` writes only when asked (a hover,
    a click): a chart of 57,000 passages spent seconds of the window's thread writing texts nobody reads."""

    def __init__(self, xs: np.ndarray, ys: np.ndarray, describe: Callable[[int], tuple[str, dict[str, Any]]]):
        self.xs, self.ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
        self.describe = describe

    def __len__(self) -> int:
        return len(self.xs)

    def __getitem__(self, index):  # a Mark, or a list of them for a slice
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        text, data = self.describe(index)
        return Mark(float(self.xs[index]), float(self.ys[index]), text, data)


def mark_positions(marks: Sequence[Mark]) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(marks, LazyMarks):
        return marks.xs, marks.ys
    return np.array([m.x for m in marks], dtype=float), np.array([m.y for m in marks], dtype=float)


def hover_from(event: QEvent, plot: pg.PlotWidget, hover_at: Callable[[QPointF], None]) -> None:
    """A mouse move over ``plot`` as a scene position for ``hover_at``; leaving it, a position far away."""
    if event.type() == QEvent.Type.MouseMove:
        hover_at(plot.mapToScene(event.position().toPoint()))
    elif event.type() == QEvent.Type.Leave:
        hover_at(QPointF(-1e9, -1e9))


def hover_html(title: str, lines: list[str]) -> str:
    body = "<br>".join(html.escape(line) for line in lines if line)
    return f"<div style='color:{TEXT_COLOUR};'><b>{html.escape(str(title))}</b><br>{body}</div>"


def clear_panel(panel: pg.PlotItem, left_width: int) -> None:
    """Empty ``panel`` for a new chart: no items, grid, title or axis labels; both axes shown with automatic
    ticks and their numbers; the view fixed (no mouse panning or zooming)."""
    panel.clear()
    panel.showGrid(x=False, y=False)
    panel.getViewBox().setMouseEnabled(x=False, y=False)
    for name in ("left", "bottom"):
        panel.showAxis(name)
        axis = panel.getAxis(name)
        axis.setTicks(None)
        axis.setPen(TEXT_COLOUR)
        axis.setTextPen(TEXT_COLOUR)
        axis.setStyle(showValues=True)
        axis.setTickSpacing()  # automatic again
        axis.enableAutoSIPrefix(False)  # 0.2, not 200 (x0.001)
    panel.getAxis("left").setWidth(left_width)
    panel.setLabel("left", "")
    panel.setLabel("bottom", "")
    panel.setTitle("")


def lay_out_chart(owner: QWidget, plot: QWidget) -> tuple[QLabel, QLabel]:
    """``owner``'s layout for a chart: a caption above ``plot`` and a legend (hidden until it has text) below;
    the caption and the legend."""
    caption = QLabel("")
    caption.setWordWrap(True)
    caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    legend = QLabel("")
    legend.setWordWrap(True)
    legend.setAlignment(Qt.AlignmentFlag.AlignCenter)
    legend.hide()
    layout = QVBoxLayout(owner)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(caption)
    layout.addWidget(plot, 1)
    layout.addWidget(legend)
    return caption, legend


def show_message_in(panel: pg.PlotItem, message: pg.TextItem, text: str) -> None:
    """``text`` in the middle of an emptied ``panel``, without axes (a message on empty axes looks like a
    broken chart)."""
    for name in ("left", "bottom"):
        panel.hideAxis(name)
    message.setText(text)
    panel.addItem(message)
    message.setPos(0.5, 0.5)
    panel.setXRange(0, 1, padding=0)
    panel.setYRange(0, 1, padding=0)


class MarkedPlot(QWidget):
    picked = Signal(dict)  # the clicked mark's data

    def __init__(self, parent=None):
        super().__init__(parent)
        self.kind = ""
        self.marks: list[Mark] | LazyMarks = []
        self.hover_text = ""
        self.plot = pg.PlotWidget(background="w")
        self.plot.setMenuEnabled(False)
        self.plot.setAntialiasing(True)
        self.caption, self.legend = lay_out_chart(self, self.plot)
        self.hover_label = pg.TextItem("", anchor=(0, 1), fill=pg.mkBrush(255, 255, 255, 235),
                                       border=pg.mkPen("#909090"))
        self.hover_label.setZValue(1000)
        self.plot.viewport().installEventFilter(self)
        self.plot.scene().sigMouseClicked.connect(self._scene_clicked)
        self.message = pg.TextItem("", color=(90, 90, 90), anchor=(0.5, 0.5))

    @property
    def item(self) -> pg.PlotItem:
        return self.plot.getPlotItem()

    def reset(self, kind: str) -> pg.PlotItem:
        self.kind = kind
        self.marks = []
        self.hover_text = ""
        item = self.item
        clear_panel(item, left_width=56)
        self.hover_label.hide()
        item.addItem(self.hover_label, ignoreBounds=True)
        self.legend.hide()
        return item

    def title(self, text: str) -> None:
        self.item.setTitle(html.escape(text), color=TEXT_COLOUR, size="11pt")

    def axis_label(self, axis: str, text: str) -> None:
        self.item.setLabel(axis, html.escape(text), color=TEXT_COLOUR)

    def set_caption(self, text: str) -> None:
        self.caption.setText(text)
        self.caption.setVisible(bool(text))

    def set_legend(self, entries: dict[str, str], title: str = "") -> None:
        """Coloured dots with their names, below the plot."""
        dots = [f"<span style='color:{colour}; font-size:14pt;'>&#9679;</span>&nbsp;{html.escape(name)}"
                for name, colour in entries.items()]
        head = f"<b>{html.escape(title)}:</b>&nbsp;&nbsp;" if title and dots else ""
        self.legend.setText(head + "&nbsp;&nbsp;&nbsp;".join(dots))
        self.legend.setVisible(bool(dots))

    def show_message(self, text: str) -> None:
        self.set_caption("")
        show_message_in(self.reset("message"), self.message, text)

    # ------------------------------------------------------------------ hover and click
    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        hover_from(event, self.plot, self.hover_at)
        return False

    def scene_pos_of(self, mark: Mark) -> QPointF:
        return self.item.getViewBox().mapViewToScene(QPointF(mark.x, mark.y))

    def mark_near(self, scene_pos: QPointF) -> Mark | None:
        if not self.marks:
            return None
        view_box = self.item.getViewBox()
        point = view_box.mapSceneToView(scene_pos)
        pixel_x, pixel_y = view_box.viewPixelSize()
        xs, ys = mark_positions(self.marks)
        distances = np.hypot((xs - point.x()) / pixel_x, (ys - point.y()) / pixel_y)
        nearest = int(np.argmin(distances))
        return self.marks[nearest] if distances[nearest] <= HOVER_PX else None

    def hover_at(self, scene_pos: QPointF) -> str:
        view_box = self.item.getViewBox()
        mark = self.mark_near(scene_pos) if view_box.sceneBoundingRect().contains(scene_pos) else None
        if mark is None:
            self.hover_text = ""
            self.hover_label.hide()
            return ""
        self.hover_text = mark.text
        self.hover_label.setHtml(mark.text)
        (x0, x1), (y0, y1) = view_box.viewRange()
        right, up = mark.x < (x0 + x1) / 2, mark.y < (y0 + y1) / 2
        pixel_x, pixel_y = view_box.viewPixelSize()
        self.hover_label.setAnchor((0 if right else 1, 1 if up else 0))
        self.hover_label.setPos(QPointF(mark.x + (1 if right else -1) * LABEL_GAP_PX * pixel_x,
                                        mark.y + (1 if up else -1) * LABEL_GAP_PX * pixel_y))
        self.hover_label.show()
        return mark.text

    def click_at(self, scene_pos: QPointF) -> Mark | None:
        mark = self.mark_near(scene_pos)
        if mark is not None and mark.data:
            self.picked.emit(dict(mark.data))
        return mark

    def _scene_clicked(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.click_at(event.scenePos())
