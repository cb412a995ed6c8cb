"""The window's one chart renderer: any chart of the export registry, drawn by its own ``draw``.

``ChartView.show_chart(project, name, options)`` builds the chart's frame (``ChartSpec.frame``; a page that has
read the data already hands it over as ``data``, or the frame itself as ``frame``), its caption and its figure
on a worker of the view's operation slot; a drawing process turns the figure into pixels with matplotlib's Agg
backend at the view's size (and device pixel ratio), and the chart's ``Marks`` into pixels of that image
(``workbench.export.raster``: the renderer holds the interpreter's lock in long steps, which froze the window
while it ran on a worker). The window's thread only shows the image. Hovering near a mark (within ``HOVER_PX``, found
with numpy among tens of thousands) shows its text beside it; a click hands its target to ``picked``. A chart
with nothing to draw (an empty frame, or a ``UserError`` from its frame or its drawing) shows the plain sentence
saying why instead. A resize draws the figure again at the new size, once the resizing has paused.

What is exported (``export_work``: ``save_figure``, PDF, SVG or 300-dpi PNG with its CSV) is the frame on
screen drawn by the same ``draw``, at the chart's publication size.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
import pandas as pd
from PySide6.QtCore import QPoint, QPointF, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from ui.main_thread_gc import freeze_libraries_once
from ui.widgets.painted import painted_soon
from workbench.errors import UserError

if TYPE_CHECKING:
    import threading

    from matplotlib.figure import Figure

    from ui.background import Operation
    from workbench.export.registry import ChartSpec, Marks

HOVER_PX = 8  # how near (in pixels) the pointer must come to a point to name it
LABEL_GAP_PX = 10  # the hover label sits this far from the pointer
FALLBACK_SIZE = (900, 600)  # the size drawn at before the view has one of its own
RESIZE_MS = 150  # a resize draws again once it has paused this long
AFTER_WAIT_S = 2.0  # the longest a drawing waits for what it was asked to wait for (``show_chart``'s ``after``)
TEXT_COLOUR = "#202020"


# ---------------------------------------------------------------------------------------------- on the worker
@dataclass
class ScreenMarks:
    """A chart's ``Marks`` in the pixels of the image: each mark's point (a box's centre) and, for boxes, their
    left, top, right and bottom."""

    marks: "Marks"
    points: np.ndarray
    boxes: np.ndarray | None = None


@dataclass
class Drawn:
    """What a worker hands the view: the chart and options drawn, its frame and caption, the image and its size
    in logical pixels, the marks in those pixels and the figure; or, with ``message``, why there is nothing."""

    name: str
    options: dict[str, Any]
    frame: pd.DataFrame
    caption: str = ""
    image: QImage | None = None
    size: tuple[int, int] = (0, 0)
    marks: list[ScreenMarks] = field(default_factory=list)
    figure: "Figure | None" = None
    message: str = ""
    where: str = ""  # the process its pixels were drawn in: 'apart' (a drawing process) or 'here'


def render(spec: "ChartSpec", frame: pd.DataFrame, options: dict[str, Any], width: int, height: int,
           ratio: float = 1.0) -> tuple[QImage, list[ScreenMarks], "Figure", str]:
    """The chart drawn by its ``draw`` at ``width`` x ``height`` logical pixels (times ``ratio`` device pixels):
    the image, the marks in its pixels, the figure and where its pixels were drawn ('apart', 'here'). The figure
    and its marks are made here, its pixels in a drawing process (``workbench.export.raster``). A ``UserError``
    says there is nothing to draw."""
    from workbench.export.raster import rasterize_apart
    from workbench.export.registry import draw_figure

    figure, marks = draw_figure(spec, frame, **options)
    marks = [m for m in marks if len(m)]
    raster = rasterize_apart(figure, marks, width, height, ratio)
    pixels = raster.pixels
    # in the format the window paints (converted here, not at every painting on the window's thread)
    image = QImage(pixels.data, pixels.shape[1], pixels.shape[0], pixels.strides[0],
                   QImage.Format.Format_RGBA8888).convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(ratio)
    return image, [ScreenMarks(m, p, b) for m, p, b in zip(marks, raster.points, raster.boxes)], figure, raster.where


def prepare_chart(project: Any, spec: "ChartSpec", options: dict[str, Any], data: dict[str, Any],
                  frame: pd.DataFrame | None, nothing: str | None = None) -> Drawn:
    """On a worker: the chart's frame (unless given) and caption, or why there is nothing to draw (``nothing``,
    else the chart's own sentence); not drawn yet (``render_prepared``)."""
    drawn = Drawn(spec.name, dict(options), pd.DataFrame() if frame is None else frame)
    try:
        if frame is None:
            drawn.frame = spec.frame(project, **options, **data)
        if drawn.frame.empty:
            drawn.message = nothing or spec.nothing_to_draw(project, **options)
            return drawn
        if spec.caption is not None and project is not None:  # its statistics come from the project
            drawn.caption = spec.caption(project, drawn.frame, **options)
    except UserError as exc:
        drawn.message = str(exc)
    return drawn


def render_prepared(spec: "ChartSpec", prepared: Drawn, width: int, height: int, ratio: float,
                    state: Any = None) -> Drawn:
    """On a worker: a prepared chart drawn at ``width`` x ``height``. A drawing replaced meanwhile (``state``
    cancelled) will not be shown: its figure is taken apart here (``dismantle_figure``)."""
    drawn = Drawn(prepared.name, prepared.options, prepared.frame, prepared.caption, message=prepared.message)
    if not drawn.message:
        try:
            drawn.image, drawn.marks, drawn.figure, drawn.where = render(spec, drawn.frame, drawn.options, width,
                                                                         height, ratio)
            drawn.size = (width, height)
        except UserError as exc:
            drawn.message, drawn.image, drawn.marks, drawn.figure = str(exc), None, [], None
    if state is not None and state.cancelled:
        _discard(drawn)
    return drawn


def redraw(spec: "ChartSpec", shown: Drawn, width: int, height: int, ratio: float, state: Any = None) -> Drawn:
    """On a worker: the chart on show again at another size."""
    image, marks, figure, where = render(spec, shown.frame, shown.options, width, height, ratio)
    drawn = Drawn(shown.name, shown.options, shown.frame, shown.caption, image, (width, height), marks, figure,
                  where=where)
    if state is not None and state.cancelled:
        _discard(drawn)
    return drawn


def _discard(drawn: Drawn) -> None:
    from workbench.export.registry import dismantle_figure

    dismantle_figure(drawn.figure)
    drawn.figure, drawn.marks = None, []


def discard_figure(figure: "Figure", state: Any = None) -> None:
    """On a worker: a figure no longer shown, taken apart so that it is freed here (``dismantle_figure``)."""
    from workbench.export.registry import dismantle_figure

    dismantle_figure(figure)


# ---------------------------------------------------------------------------------------------- on screen
@dataclass
class Mark:
    """One mark as the view shows it: where (pixels of ``ChartView.canvas``), its hover text and click target."""

    x: float
    y: float
    text: str
    target: dict[str, Any] | None


class MarkList(Sequence[Mark]):
    """Every mark of the chart on show, made when asked for (a chart of 57,000 passages writes no text first)."""

    def __init__(self, view: "ChartView", sets: list[ScreenMarks]):
        self.view, self.sets = view, sets
        self.starts = np.cumsum([0] + [len(s.points) for s in sets])

    def __len__(self) -> int:
        return int(self.starts[-1])

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        number = int(np.searchsorted(self.starts, index, side="right")) - 1
        return self.view.mark(self.sets[number], index - int(self.starts[number]))


def hover_html(text: str) -> str:
    title, _, rest = text.partition("\n")
    lines = "<br>".join(html.escape(line) for line in rest.split("\n") if line)
    return f"<div style='color:{TEXT_COLOUR};'><b>{html.escape(title)}</b>{'<br>' + lines if lines else ''}</div>"


class Canvas(QWidget):
    """Where the image is shown and the pointer followed."""

    def __init__(self, view: "ChartView"):
        super().__init__(view)
        self.view = view
        self.setMouseTracking(True)
        self.setMinimumSize(120, 90)
        self.setAutoFillBackground(False)

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        painter = QPainter(self)
        painter.fillRect(self.rect(), Qt.GlobalColor.white)
        image = self.view.image
        if image is not None:
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            painter.drawImage(QRect(0, 0, self.width(), self.height()), image)
        painter.end()

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        self.view.hover_at(event.position())

    def leaveEvent(self, event) -> None:  # noqa: N802
        self.view.hover_at(QPointF(-1e6, -1e6))

    def mousePressEvent(self, event) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            self.view.click_at(event.position())

    def resizeEvent(self, event) -> None:  # noqa: N802
        self.view.message.setGeometry(self.rect().adjusted(24, 24, -24, -24))
        self.view.size_changed()


class ChartView(QWidget):
    """A chart of the export registry on screen (see the module's text)."""

    picked = Signal(dict)  # the target of the mark clicked
    drawn = Signal(object)  # the ``Drawn`` now on show (a message too)

    def __init__(self, ops, parent: QWidget | None = None):
        super().__init__(parent)
        self.ops = ops
        self.drawing = ops.slot(self)
        self.project = None
        self.spec: ChartSpec | None = None
        self.shown: Drawn | None = None
        self.image: QImage | None = None
        self.sets: list[ScreenMarks] = []
        self.hover_text = ""
        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.caption.hide()
        self.canvas = Canvas(self)
        self.message = QLabel("", self.canvas)
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setStyleSheet("color: #5a5a5a;")
        self.hover_label = QLabel("", self.canvas)
        self.hover_label.setTextFormat(Qt.TextFormat.RichText)
        self.hover_label.setStyleSheet("background: rgba(255, 255, 255, 240); border: 1px solid #909090; "
                                       "padding: 3px;")
        self.hover_label.hide()
        self.resizing = QTimer(self)
        self.resizing.setSingleShot(True)
        self.resizing.setInterval(RESIZE_MS)
        self.resizing.timeout.connect(self._draw_at_new_size)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.canvas, 1)
        self.show_message("")

    # ------------------------------------------------------------------ what is on show
    @property
    def kind(self) -> str:
        """The chart on show, or 'message' when a sentence stands in its place."""
        return "message" if self.shown is None or self.shown.message or self.image is None else self.shown.name

    @property
    def name(self) -> str:
        return self.shown.name if self.shown is not None else ""

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.shown.options) if self.shown is not None else {}

    @property
    def frame(self) -> pd.DataFrame:
        return self.shown.frame if self.shown is not None else pd.DataFrame()

    @property
    def figure(self) -> "Figure | None":
        return self.shown.figure if self.shown is not None else None

    @property
    def marks(self) -> MarkList:
        return MarkList(self, self.sets)

    @property
    def busy(self) -> bool:
        return self.drawing.busy

    def has_chart(self) -> bool:
        return self.kind != "message"

    # ------------------------------------------------------------------ drawing
    def _size(self) -> tuple[int, int, float]:
        width, height = self.canvas.width(), self.canvas.height()
        if not self.canvas.isVisible() or width < 150 or height < 110:
            width, height = FALLBACK_SIZE
        return width, height, float(self.devicePixelRatioF() or 1.0)

    def show_chart(self, project: Any, name: str, options: dict[str, Any], *, data: dict[str, Any] | None = None,
                   frame: pd.DataFrame | None = None, nothing: str | None = None,
                   after: "threading.Event | None" = None) -> "Operation":
        """Draw the registered chart ``name`` for ``options`` in the background (``frame``: already built;
        ``data``: what the frame function may use instead of reading it again; ``nothing``: what to say when
        the frame is empty, instead of the chart's own sentence; ``after``: the worker waits until it is set,
        at most ``AFTER_WAIT_S``)."""
        from workbench.export import registry

        spec = registry.chart(name)
        self.project, self.spec = project, spec
        options, data = dict(options), dict(data or {})

        def work(state):
            if after is not None:
                after.wait(AFTER_WAIT_S)
            return prepare_chart(project, spec, options, data, frame, nothing)

        return self.drawing.start(work,
                                  label="Drawing the chart", project=project, background_read=True,
                                  on_done=self._prepared, on_error=self._failed)

    def _prepared(self, prepared: Drawn) -> None:
        """The frame and caption are read: the caption takes its room first, then the chart is drawn at the size
        left to it (drawn first and captioned after, every captioned chart was drawn twice: the second time at
        the smaller size)."""
        if prepared.message:
            self._show(prepared)
            return
        self.caption.setText(prepared.caption)
        self.caption.setVisible(bool(prepared.caption))
        self.layout().activate()
        width, height, ratio = self._size()
        spec, project, painted = self.spec, self.project, painted_soon(self.canvas)  # the new layout first

        def work(state):
            painted.wait(AFTER_WAIT_S)
            return render_prepared(spec, prepared, width, height, ratio, state)

        self.drawing.start(work,
                           label="Drawing the chart", project=project, background_read=True, on_done=self._show,
                           on_error=self._failed)

    def _draw_at_new_size(self) -> None:
        if self.drawing.busy or self.spec is None or not self.has_chart():
            return  # the drawing under way checks the size when it ends
        width, height, ratio = self._size()
        if (width, height) == self.shown.size and self.image is not None \
                and abs(self.image.devicePixelRatio() - ratio) < 1e-6:
            return
        spec, shown = self.spec, self.shown
        self.drawing.start(lambda state: redraw(spec, shown, width, height, ratio, state), label="Drawing the chart",
                           project=self.project, background_read=True, on_done=self._show, on_error=self._failed)

    def size_changed(self) -> None:
        if self.has_chart():
            self.resizing.start()

    def _let_go(self, figure) -> None:
        """The figure of a chart no longer on show: taken apart on a worker (see ``dismantle_figure``)."""
        if figure is not None:
            self.ops.run(lambda state: discard_figure(figure), label="", background_read=True)

    def _show(self, drawn: Drawn) -> None:
        if self.shown is not None and self.shown.figure is not drawn.figure:
            self._let_go(self.shown.figure)
        self.shown = drawn
        self._hide_hover()
        if drawn.message or drawn.image is None:
            self._message(drawn.message)
        else:
            freeze_libraries_once()
            self.image, self.sets = drawn.image, drawn.marks
            self.message.hide()
            self.caption.setText(drawn.caption)
            self.caption.setVisible(bool(drawn.caption))
            self.canvas.update()
            if drawn.size != self._size()[:2]:
                self.resizing.start()  # the view changed size while the chart was drawn
        self.drawn.emit(drawn)

    def _failed(self, message: str, _details: str) -> None:
        self.show_message(message)

    def _message(self, text: str) -> None:
        self.image, self.sets = None, []
        self.caption.setText("")
        self.caption.hide()
        self.message.setText(text)
        self.message.setGeometry(self.canvas.rect().adjusted(24, 24, -24, -24))
        self.message.setVisible(bool(text))
        self.canvas.update()

    def show_message(self, text: str) -> None:
        """A sentence in place of the chart (what to do to get one); nothing drawn in the background is shown."""
        self.drawing.drop()
        if self.shown is not None:
            self._let_go(self.shown.figure)
        self.shown = None
        self._hide_hover()
        self._message(text)

    # ------------------------------------------------------------------ hover and click
    def _scale(self) -> tuple[float, float]:
        """Image pixels per canvas pixel (the image is stretched over the canvas until drawn again)."""
        if self.shown is None or not self.shown.size[0]:
            return 1.0, 1.0
        return self.shown.size[0] / max(self.canvas.width(), 1), self.shown.size[1] / max(self.canvas.height(), 1)

    def mark(self, screen: ScreenMarks, index: int) -> Mark:
        sx, sy = self._scale()
        x, y = screen.points[index]
        target = screen.marks.target(index) if screen.marks.target is not None else None
        return Mark(float(x / sx), float(y / sy), screen.marks.text(index), target)

    def pos_of(self, mark: Mark) -> QPoint:
        """Where ``mark`` is on the canvas (for a pointer sent there)."""
        return QPoint(round(mark.x), round(mark.y))

    def mark_at(self, pos: QPointF | QPoint) -> Mark | None:
        """The mark under the pointer: the nearest point within ``HOVER_PX``, else a box holding it."""
        if not self.sets:
            return None
        sx, sy = self._scale()
        x, y = pos.x() * sx, pos.y() * sy
        best: tuple[float, ScreenMarks, int] | None = None
        for screen in self.sets:
            if screen.boxes is not None:
                continue
            distances = np.hypot(screen.points[:, 0] - x, screen.points[:, 1] - y)
            distances = np.where(np.isnan(distances), np.inf, distances)
            nearest = int(np.argmin(distances))
            if distances[nearest] <= HOVER_PX * max(sx, sy) and (best is None or distances[nearest] < best[0]):
                best = (float(distances[nearest]), screen, nearest)
        if best is not None:
            return self.mark(best[1], best[2])
        for screen in reversed(self.sets):
            if screen.boxes is None:
                continue
            boxes = screen.boxes
            inside = np.flatnonzero((boxes[:, 0] <= x) & (x <= boxes[:, 2]) & (boxes[:, 1] <= y) & (y <= boxes[:, 3])
                                    & (boxes[:, 2] - boxes[:, 0] > 0) & (boxes[:, 3] - boxes[:, 1] > 0))
            if len(inside):
                return self.mark(screen, int(inside[-1]))
        return None

    def hover_at(self, pos: QPointF | QPoint) -> str:
        """Show the text of the mark under the pointer beside it (nothing when there is none); the text."""
        mark = self.mark_at(pos)
        if mark is None:
            self._hide_hover()
            return ""
        self.hover_text = mark.text
        label = self.hover_label
        label.setText(hover_html(mark.text))
        label.adjustSize()
        right = pos.x() < self.canvas.width() / 2  # the label opens towards the middle, off the point itself
        below = pos.y() < self.canvas.height() / 2
        x = pos.x() + LABEL_GAP_PX if right else pos.x() - LABEL_GAP_PX - label.width()
        y = pos.y() + LABEL_GAP_PX if below else pos.y() - LABEL_GAP_PX - label.height()
        x = min(max(0, x), max(0, self.canvas.width() - label.width()))
        y = min(max(0, y), max(0, self.canvas.height() - label.height()))
        label.move(round(x), round(y))
        label.show()
        label.raise_()
        return mark.text

    def _hide_hover(self) -> None:
        self.hover_text = ""
        self.hover_label.hide()

    def click_at(self, pos: QPointF | QPoint) -> Mark | None:
        """What a click there does: hand the target of the mark under it (if it has one) to ``picked``."""
        mark = self.mark_at(pos)
        if mark is not None and mark.target is not None:
            self.picked.emit(dict(mark.target))
        return mark

    # ------------------------------------------------------------------ export
    def export_work(self, out: str | Path, project: Any) -> Callable[[Any], list[Path]] | None:
        """Work for a worker writing the chart on show (its frame, drawn by the same ``draw`` at the publication
        size) to ``out`` with its CSV; None when no chart is on show."""
        from workbench.export import registry

        if self.spec is None or not self.has_chart():
            return None
        spec, frame, options = self.spec, self.frame, self.options
        return lambda state: registry.save_figure(spec, frame, Path(out), project=project, **options)
