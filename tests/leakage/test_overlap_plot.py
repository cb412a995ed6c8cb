"""The overlap charts at scale: every passage hovers and clicks, but each place is drawn once (passages have
whole numbers of tokens, so tens of thousands of them share a few thousand places)."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.fixtures.chart_view import drawn_points, wait_drawn


def passages_frame(count: int) -> pd.DataFrame:
    """``count`` passages at four places: (40, 40) whole, (40, 5), (60, 12) flagged and (60, 0)."""
    places = [(40, 40, True), (40, 5, False), (60, 12, True), (60, 0, False)]
    rows = []
    for n in range(count):
        tokens, longest, flagged = places[n % 4]
        rows.append({"corpus": "lit", "book": f"Book {n % 7}", "passage_id": str(n + 1), "item_id": 1000 + n,
                     "tokens": tokens, "longest": longest, "frequency": 3 if longest else 0,
                     "chance_p": 0.001 if flagged else 0.5, "unlikely_by_chance": flagged,
                     "longest_text": "the harbour at dawn" if longest else "", "log_prob": -20.0})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("chart", ["leakage-overlap", "leakage-overlap-frequency"])
def test_passages_at_one_place_are_drawn_once_and_each_still_names_itself(qtbot, chart):
    from ui.background import BackgroundOps
    from ui.widgets.chart_view import ChartView

    ops = BackgroundOps()
    plot = ChartView(ops)
    qtbot.addWidget(plot)
    plot.resize(600, 400)
    plot.show()
    frame = passages_frame(2_000)
    plot.show_chart(None, chart, {}, frame=frame)
    wait_drawn(qtbot, plot, chart)
    places = 4 if chart == "leakage-overlap" else 3  # the second chart leaves out passages without an overlap
    assert drawn_points(plot.figure) == places
    shown = frame if chart == "leakage-overlap" else frame[frame["longest"] > 0]
    assert len(plot.marks) == len(shown)
    position = max(n for n, longest in enumerate(shown["longest"]) if longest == 12)
    mark = plot.marks[position]  # the last passage of one place: its own book, number and overlap
    last = shown.iloc[position]
    assert f"{last['book']}, passage {last['passage_id']}" in mark.text
    assert mark.target == {"item_id": int(last["item_id"]), "book": last["book"], "passage_id": last["passage_id"]}
    assert f"longest overlap {last['longest']} of {last['tokens']} tokens" in mark.text
    picked = []
    plot.picked.connect(picked.append)
    clicked = plot.click_at(plot.pos_of(mark))
    assert clicked is not None and picked and picked[0]["item_id"] in set(shown["item_id"])
    ops.join()


def test_the_overlap_tab_reads_the_overlaps_once_for_its_table_and_both_charts(qtbot, shown_page, mini_corpus,
                                                                                messages, monkeypatch):
    """57,000 passages' overlaps take seconds to read and derive: the table and the two charts share one read."""
    from tests.fixtures.leakage import CORPUS, add_cloze_book
    from ui.leakage.page import LeakagePage
    from workbench.probes.leakage import overlap

    add_cloze_book(mini_corpus, "Harbour", CORPUS[0].replace("Nobody", "Nobody but Ada"), ["Ada"], year=1890)
    overlap.run_overlap(mini_corpus, "mini")
    reads = []
    real = overlap.overlap_frame
    monkeypatch.setattr(overlap, "overlap_frame", lambda *args, **kwargs: reads.append(args[1:]) or real(*args, **kwargs))
    page = shown_page(LeakagePage, mini_corpus, size=(1300, 800))
    page.tabs.setCurrentWidget(page.overlap)
    tab = page.overlap
    plots = tab.charts.plots
    qtbot.waitUntil(lambda: tab.table.rowCount() == 1 and all(p.kind == name for name, p in plots.items())
                    and not tab.reading.busy and not tab.charts.drawing.busy, timeout=60_000)
    assert reads == [("mini",)]
    assert [m.target["book"] for m in plots["leakage-overlap"].marks] == ["Harbour"]
    assert not messages["errors"]


def test_a_chart_with_a_caption_is_drawn_once_at_the_size_the_caption_leaves(qtbot, project):
    """The caption is worked out first and takes its room; the chart is then drawn at the size left (drawn first
    and captioned after, it was drawn a second time, smaller: 57,000 points rendered twice)."""
    from ui.background import BackgroundOps
    from ui.widgets.chart_view import RESIZE_MS, ChartView

    ops = BackgroundOps()
    plot = ChartView(ops)
    qtbot.addWidget(plot)
    plot.resize(600, 400)
    plot.show()
    drawn = []
    plot.drawn.connect(drawn.append)
    plot.show_chart(project, "leakage-overlap", {}, frame=passages_frame(400))
    wait_drawn(qtbot, plot, "leakage-overlap")
    qtbot.wait(RESIZE_MS * 3)  # a drawing at the wrong size would be followed by another by now
    wait_drawn(qtbot, plot, "leakage-overlap")
    assert plot.caption.isVisible() and "passages share a sequence with lit" in plot.caption.text()
    assert len(drawn) == 1 and drawn[0].size == (plot.canvas.width(), plot.canvas.height())
    ops.join()
