"""The Leakage page's charts in pyqtgraph, drawn from the export registry's frames (the frames the
publication figures draw). A point stands for a passage (overlap) or a book (frequency, membership):
hovering names it; clicking it hands the passage or the book to the tab."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt

from ui.leakage.passage_dialog import times
from ui.widgets.frame_table import is_missing
from ui.widgets.marked_plot import GRID_ALPHA, LazyMarks, Mark, MarkedPlot, hover_html
from workbench.probes.leakage.charts import FLAG_COLOUR, LINE_COLOUR, PLAIN_COLOUR, SCORE_TITLES, UNIT_TITLES

# matplotlib's tab10, the colours of the publication figure's groups
GROUP_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                 "#bcbd22", "#17becf")
MEMBER_GROUPS = (("yes", "members", FLAG_COLOUR), ("no", "non-members", PLAIN_COLOUR))
JITTER = 0.12  # half the width of a strip of points, in group widths
BOX_WIDTH = 0.5
CLICK_PASSAGE = "click to read the passage"
CLICK_BOOK = "click to find the book in the table"
MESSAGE_MIN_PX, MESSAGE_MARGIN_PX = 240, 40  # a message's text width: the plot's, less a margin


def chance_line(value) -> str:
    if is_missing(value):
        return ""
    return f"chance of it by accident {float(value):.2g}" + (" (below 0.05)" if float(value) < 0.05 else "")


def _dots(colour: str, size: int = 8) -> dict:
    return {"size": size, "brush": pg.mkBrush(colour), "pen": pg.mkPen("w", width=0.5)}


def _powers_of_ten(top: float) -> list[tuple[float, str]]:
    """Ticks at 1, 10, 100 … up to ``top`` (a log10 value)."""
    return [(float(k), f"{10 ** k:,}") for k in range(0, max(1, math.ceil(top)) + 1)]


class LeakagePlot(MarkedPlot):
    def show_message(self, text: str) -> None:
        """The message wrapped to the plot's width (a note on what to tag runs to several lines)."""
        super().show_message(text)
        self.message.setTextWidth(max(MESSAGE_MIN_PX, self.width() - MESSAGE_MARGIN_PX))

    def show_chart(self, name: str, frame: pd.DataFrame, score: str | None = None) -> None:
        {"leakage-overlap": self.show_overlap, "leakage-overlap-frequency": self.show_overlap_frequency,
         "leakage-frequency": self.show_frequency,
         "membership-roc": lambda f: self.show_roc(f, score)}.get(name, lambda f: self.show_membership(f, score))(frame)

    # ------------------------------------------------------------------ passages
    def _passage_marks(self, frame: pd.DataFrame, xs: np.ndarray, ys: np.ndarray) -> None:
        """A mark per passage; its hover text is written when the pointer comes near (57,000 passages' texts,
        written at once, held the window for seconds)."""
        rows = frame.reset_index(drop=True)

        def describe(i: int) -> tuple[str, dict]:
            row = rows.iloc[i]
            longest, tokens = int(row["longest"]), int(row["tokens"])
            share = f" ({longest / tokens:.0%})" if tokens else ""
            lines = [f"longest overlap {longest} of {tokens} tokens{share}",
                     f"found {times(int(row['frequency']))} in the corpus", chance_line(row["chance_p"])] if longest \
                else ["no token of it is in the corpus"]
            text = hover_html(f"{row['book']}, passage {row['passage_id']}", lines + [CLICK_PASSAGE])
            return text, {"item_id": int(row["item_id"]), "book": row["book"], "passage_id": str(row["passage_id"])}

        self.marks = LazyMarks(xs, ys, describe)

    def _flagged_points(self, item: pg.PlotItem, frame: pd.DataFrame, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        flagged = frame["unlikely_by_chance"].fillna(False).astype(bool).to_numpy()
        for part, colour in ((~flagged, PLAIN_COLOUR), (flagged, FLAG_COLOUR)):
            if part.any():
                # each place drawn once: passages at the same place (whole numbers of tokens) look the same
                # drawn once or a thousand times, and 57,000 dots held the window for a third of a second
                places = pd.DataFrame({"x": xs[part], "y": ys[part]}).drop_duplicates()
                item.addItem(pg.ScatterPlotItem(x=places["x"].to_numpy(), y=places["y"].to_numpy(), **_dots(colour)))
        self._passage_marks(frame, xs, ys)
        return flagged

    def _flag_legend(self, flagged: np.ndarray, extra: dict[str, str] | None = None) -> None:
        self.set_legend({f"unlikely by chance ({int(flagged.sum())})": FLAG_COLOUR,
                         f"could be chance ({int((~flagged).sum())})": PLAIN_COLOUR, **(extra or {})})

    def show_overlap(self, frame: pd.DataFrame) -> None:
        """The study's Figure 1: longest overlap against passage length, with y = x (the whole passage)."""
        item = self.reset("leakage-overlap")
        xs, ys = frame["tokens"].to_numpy(float), frame["longest"].to_numpy(float)
        top = max(1.0, float(xs.max())) * 1.04
        item.addItem(pg.PlotDataItem([0, top], [0, top], pen=pg.mkPen(LINE_COLOUR, width=1.5,
                                                                      style=Qt.PenStyle.DashLine)))
        flagged = self._flagged_points(item, frame, xs, ys)
        item.setXRange(0, top, padding=0)
        item.setYRange(0, top, padding=0)
        corpus = frame["corpus"].iloc[0]
        self.title(f"Longest overlap with {corpus} ({len(frame):,} passages)")
        self.axis_label("bottom", "passage length (tokens)")
        self.axis_label("left", "longest overlap (tokens)")
        whole = int((frame["longest"] >= frame["tokens"]).sum())
        self.set_caption(f"{int(flagged.sum()):,} of {len(frame):,} passages share a sequence with {corpus} that is "
                         f"unlikely to occur by chance; {whole:,} occur whole (on the dashed line). "
                         "Click a point to read its passage.")
        self._flag_legend(flagged, {"y = x: whole passage": LINE_COLOUR})
        item.showGrid(x=True, y=True, alpha=GRID_ALPHA)

    def show_overlap_frequency(self, frame: pd.DataFrame) -> None:
        """The study's Figure 2: how often the longest overlap occurs in the corpus, against its length."""
        item = self.reset("leakage-overlap-frequency")
        shown = frame[(frame["longest"] > 0) & (frame["frequency"] > 0)].reset_index(drop=True)
        corpus = frame["corpus"].iloc[0]
        if shown.empty:
            self.show_message(f"No passage shares even one token with {corpus}.")
            return
        xs, ys = shown["longest"].to_numpy(float), np.log10(shown["frequency"].to_numpy(float))
        flagged = self._flagged_points(item, shown, xs, ys)
        high = max(1.0, float(ys.max()))
        item.getAxis("left").setTicks([_powers_of_ten(high)])
        item.setYRange(-0.1, high * 1.08, padding=0)
        item.setXRange(0, float(xs.max()) * 1.05 + 1, padding=0)
        self.title(f"Frequency of the longest overlap in {corpus}")
        self.axis_label("bottom", "longest overlap (tokens)")
        self.axis_label("left", "times found in the corpus (log scale)")
        self.set_caption("Long overlaps found only a few times point to the text itself; short ones found often are "
                         "common phrases. Click a point to read its passage.")
        self._flag_legend(flagged)
        item.showGrid(x=True, y=True, alpha=GRID_ALPHA)

    # ------------------------------------------------------------------ books
    def show_frequency(self, frame: pd.DataFrame) -> None:
        """Mean n-gram count of each book in the corpus against its name-cloze accuracy, by group, with rho."""
        item = self.reset("leakage-frequency")
        xs = np.log10(1 + frame["mean_count"].to_numpy(float))
        ys = frame["accuracy"].to_numpy(float)
        legend = {}
        for number, (group, part) in enumerate(frame.groupby("group", sort=True)):
            colour = GROUP_COLOURS[number % len(GROUP_COLOURS)]
            rows = frame.index.get_indexer(part.index)
            item.addItem(pg.ScatterPlotItem(x=xs[rows], y=ys[rows], **_dots(colour, 9)))
            rho = part["rho_group"].iloc[0]
            legend[f"{group or '(no group)'}" + ("" if is_missing(rho) else f": ρ = {rho:.2f}")
                   + f" ({len(part)})"] = colour
        for x, y, row in zip(xs, ys, frame.itertuples(index=False)):
            text = hover_html(row.book, [f"{row.group}" if row.group else "",
                                         f"mean count of its n-grams {row.mean_count:,.2f}; "
                                         f"{int(row.zero_counts)} of {int(row.passages)} not found",
                                         f"name-cloze accuracy {row.accuracy:.0%}", CLICK_BOOK])
            self.marks.append(Mark(float(x), float(y), text, {"book_id": int(row.book_id), "book": row.book}))
        high = max(math.log10(2), float(xs.max()))  # at least up to a mean count of 1
        item.getAxis("bottom").setTicks([[(math.log10(1 + v), f"{v:g}") for v in (0, 1, 10, 100, 1000, 10000, 100000)
                                          if math.log10(1 + v) <= high + 0.3]])
        item.getAxis("left").setTicks([[(v, f"{v:.0%}") for v in (0, 0.25, 0.5, 0.75, 1.0)]])
        item.setXRange(-0.05 * high, high * 1.08, padding=0)
        item.setYRange(-0.03, 1.03, padding=0)
        first = frame.iloc[0]
        rho = first["rho_all"]
        self.title(f"Book frequency in {first['corpus']} and name-cloze accuracy")
        self.axis_label("bottom", "mean n-gram count in the corpus (log scale)")
        self.axis_label("left", "name-cloze accuracy")
        self.set_caption((f"All {len(frame)} books: Spearman's ρ = {rho:.2f}." if not is_missing(rho) else
                          f"{len(frame)} books: too few or too alike for a correlation.")
                         + " Click a point to find the book in the table.")
        self.set_legend(legend)
        item.showGrid(x=True, y=True, alpha=GRID_ALPHA)

    def show_membership(self, frame: pd.DataFrame, score: str | None) -> None:
        """One membership score per book, members beside non-members (box: quartiles and median), with AUC."""
        item = self.reset("membership-scores")
        scores = [s for s in SCORE_TITLES if s in set(frame["score"])]
        score = score if score in scores else scores[0]
        part = frame[frame["score"] == score]
        legend, ticks = {}, []
        for position, (tag, name, colour) in enumerate(MEMBER_GROUPS):
            books = part[part["member"] == tag].reset_index(drop=True)
            ticks.append((position, f"{name} ({len(books)})"))
            if books.empty:
                continue
            values = books["value"].to_numpy(float)
            low, median, high = np.percentile(values, [25, 50, 75])
            item.addItem(pg.BarGraphItem(x0=[position - BOX_WIDTH / 2], y0=[low], width=[BOX_WIDTH], height=[high - low],
                                         brush=pg.mkBrush(235, 235, 235), pen=pg.mkPen("#909090")))
            item.addItem(pg.PlotDataItem([position - BOX_WIDTH / 2, position + BOX_WIDTH / 2], [median, median],
                                         pen=pg.mkPen("#404040", width=2)))
            xs = position + np.random.default_rng(position + 1).uniform(-JITTER, JITTER, values.size)
            item.addItem(pg.ScatterPlotItem(x=xs, y=values, **_dots(colour, 9)))
            for x, y, row in zip(xs, values, books.itertuples(index=False)):
                self.marks.append(Mark(float(x), float(y), hover_html(row.book, [
                    f"{SCORE_TITLES[score]} {y:.3g} (mean of {int(row.passages)} passages)", f"member tag: {tag}",
                    CLICK_BOOK]), {"book_id": int(row.book_id), "book": row.book}))
            legend[f"{name} ({len(books)})"] = colour
        item.getAxis("bottom").setTicks([ticks])
        item.setXRange(-0.6, 1.6, padding=0)
        values = part["value"].to_numpy(float)
        spread = float(values.max() - values.min()) or abs(float(values.max())) or 1.0
        item.setYRange(float(values.min()) - 0.08 * spread, float(values.max()) + 0.08 * spread, padding=0)
        first = part.iloc[0]
        auc = first["auc"]
        interval = "" if is_missing(first["auc_low"]) else f" [{first['auc_low']:.2f}, {first['auc_high']:.2f}]"
        self.title(f"{SCORE_TITLES[score]} by book: {first['model']}")
        self.axis_label("left", f"{SCORE_TITLES[score]} (mean over the book's passages)")
        self.set_caption(f"ROC AUC {auc:.2f}{interval} (95% bootstrap CI): how well {SCORE_TITLES[score]} tells "
                         "members from non-members (1: perfectly; 0.5: not at all; below 0.5: the other way round)." if not is_missing(auc) else
                         "Tag books member=yes and others member=no (Library page) to get the ROC AUC.")
        self.set_legend(legend)
        item.showGrid(x=False, y=True, alpha=GRID_ALPHA)

    def show_roc(self, frame: pd.DataFrame, score: str | None) -> None:
        """The ROC curve of one membership score over books and over passages, with the diagonal of no skill."""
        item = self.reset("membership-roc")
        scores = [s for s in SCORE_TITLES if s in set(frame["score"])]
        score = score if score in scores else scores[0]
        part = frame[frame["score"] == score]
        item.addItem(pg.PlotDataItem([0, 1], [0, 1], pen=pg.mkPen("#909090", width=1, style=Qt.PenStyle.DashLine)))
        legend = {}
        for number, unit in enumerate(("book", "passage")):
            curve = part[part["unit"] == unit]
            if curve.empty:
                continue
            colour = GROUP_COLOURS[number]
            item.addItem(pg.PlotDataItem(curve["fpr"].to_numpy(float), curve["tpr"].to_numpy(float),
                                         pen=pg.mkPen(colour, width=2)))
            first = curve.iloc[0]
            interval = "" if is_missing(first["auc_low"]) else f" [{first['auc_low']:.2f}, {first['auc_high']:.2f}]"
            legend[f"{UNIT_TITLES[unit]}: AUC {first['auc']:.2f}{interval} ({int(first['members'])} v "
                   f"{int(first['non_members'])})"] = colour
        item.setXRange(0, 1, padding=0.02)
        item.setYRange(0, 1, padding=0.02)
        self.title(f"ROC of {SCORE_TITLES[score]}: {part['model'].iloc[0] if 'model' in part else ''}")
        self.axis_label("bottom", "false positive rate (non-members taken for members)")
        self.axis_label("left", "true positive rate (members found)")
        self.set_caption("Each curve runs through every threshold of the score; the dashed line is guessing. "
                         "Passages of one book are not independent: their interval redraws whole books.")
        self.set_legend(legend)
        item.showGrid(x=True, y=True, alpha=GRID_ALPHA)
