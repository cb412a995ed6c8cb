"""The forgetting curve, drawn with pyqtgraph from the frame of ``workbench.probes.reading.charts.curve_frame``.

Accuracy per retention-demand bin with its 95% Wilson interval, one line per text variant (original and
substituted names), chance as a dashed line through the bins (what guessing earns on each point's questions). Clicking a point emits ``bin_clicked(variant, bin_low)``:
the page then lists the questions behind it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from ui.widgets.marked_plot import TEXT_COLOUR
from workbench.probes.reading.charts import VARIANT_STYLE, chance_lines


class CurvePlot(QWidget):
    bin_clicked = Signal(str, int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.showGrid(y=True, alpha=0.2)
        self.plot.setLabel("left", "accuracy (95% Wilson CI)", color=TEXT_COLOUR)
        self.plot.setLabel("bottom", "retention demand: words between the scene and the question", color=TEXT_COLOUR)
        self.legend = QLabel("")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.legend)
        self.points: list[tuple[float, float, str, int]] = []  # x, y, variant, bin_low
        self.chance: list[pg.PlotDataItem] = []

    def show_curve(self, frame: pd.DataFrame) -> None:
        self.plot.clear()
        self.chance = []  # the dashed chance lines: bin by bin, what guessing earns on the questions plotted
        self.plot.getAxis("bottom").setTicks([[]])  # no bins, not even the curve before's, until there are some
        self.points = []
        if frame.empty:
            self.legend.setText("No answers yet: ask a model the questions.")
            return
        frame = frame[frame["accuracy"].notna()]  # a bin whose every request failed has no accuracy to draw
        if frame.empty:
            self.legend.setText("No question has an answer yet: every request failed (the Jobs page says why).")
            return
        bins = frame.drop_duplicates("bin_low").sort_values("bin_low")
        position = {int(low): i for i, low in enumerate(bins["bin_low"])}
        entries = []
        for variant, rows in frame.groupby("variant", sort=True):
            colour, marker = VARIANT_STYLE.get(variant, ("#444444", "t"))
            shift = -0.08 if variant == "original" else 0.08  # the two lines side by side, not on top
            x = np.array([position[int(v)] + shift for v in rows["bin_low"]], dtype=float)
            y = rows["accuracy"].to_numpy(dtype=float)
            low, high = rows["ci_low"].to_numpy(dtype=float), rows["ci_high"].to_numpy(dtype=float)
            self.plot.addItem(pg.ErrorBarItem(x=x, y=y, top=high - y, bottom=y - low, beam=0.12,
                                              pen=pg.mkPen(colour, width=1.5)))
            self.plot.plot(x, y, pen=pg.mkPen(colour, width=2))
            scatter = pg.ScatterPlotItem(x=x, y=y, size=10, symbol="o" if marker == "o" else "s",
                                         brush=pg.mkBrush(colour), pen=pg.mkPen("w"))
            scatter.sigClicked.connect(self._clicked)
            self.plot.addItem(scatter)
            self.points += [(float(a), float(b), variant, int(low)) for a, b, low in zip(x, y, rows["bin_low"])]
            entries.append(f"<span style='color:{colour}; font-size:14pt;'>&#9679;</span>&nbsp;{variant} names")
        for label, colour, x, y in chance_lines(frame, position):
            self.chance.append(self.plot.plot(x, y, pen=pg.mkPen(colour, width=1.5, style=Qt.PenStyle.DashLine)))
            entries.append(f"<span style='color:{colour};'>- - -</span>&nbsp;{label}")
        self.legend.setText("&nbsp;&nbsp;&nbsp;".join(entries) + "&nbsp;&nbsp;&nbsp;<i>Click a point for its questions.</i>")
        self.plot.getAxis("bottom").setTicks([[(i, label) for i, label in enumerate(bins["bin"])]])
        self.plot.setYRange(0, 1, padding=0.06)
        self.plot.setXRange(-0.5, len(bins) - 0.5, padding=0)

    def _clicked(self, _item, spots, *_) -> None:
        if not spots:
            return
        point = spots[0].pos()
        nearest = min(self.points, key=lambda p: (p[0] - point.x()) ** 2 + (p[1] - point.y()) ** 2)
        self.bin_clicked.emit(nearest[2], nearest[3])

    def click_point(self, variant: str, bin_low: int) -> None:
        """What a click on that point does (for tests and keyboard use)."""
        self.bin_clicked.emit(variant, bin_low)
