"""The Charts page with many books and models: the ranked chart of more books than it can name gives ranks
on its axis (each tick at the book of that rank), and choosing a chart together with a choice that only
that chart offers ("all models" for the category means) works in one call."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.gui.test_charts_page import BOOKS, messages, page, results, show  # noqa: F401 (fixtures)
from ui.charts.cloze_plot import MAX_LABELLED_BOOKS, ChartView, rank_ticks
from workbench.export import registry

COUNT = 237


def ranked_frame(count: int) -> pd.DataFrame:
    """A frame of the registry's ranked chart: ``count`` made-up books, best first."""
    accuracy = np.linspace(0.95, 0.05, count)
    return pd.DataFrame({
        "rank": np.arange(1, count + 1), "model": "m", "kind": "cloze", "book_id": np.arange(1000, 1000 + count),
        "book": [f"Book number {i}" for i in range(count)], "year": 1850, "accuracy": accuracy,
        "ci_low": accuracy - 0.04, "ci_high": accuracy + 0.04, "ci_method": "wilson", "n": 100, "failed": 0,
        "flagged": False, "group": "(no tag)",
    })


@pytest.fixture
def view(qtbot):
    view = ChartView()
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    return view


def left_ticks(view) -> list[tuple[float, str]]:
    return view.item.getAxis("left")._tickLevels[0]


def test_a_long_ranking_gives_ranks_on_its_axis_at_the_books_of_those_ranks(view):
    frame = ranked_frame(COUNT)
    view.show_accuracy(frame, None)
    ticks = left_ticks(view)
    ranks = [int(text) for _, text in ticks]
    assert ranks[0] == 1 and ranks == sorted(ranks) and 5 <= len(ranks) <= 12
    for position, text in ticks:
        mark = next(m for m in view.marks if m.y == position)
        assert mark.book == frame["book"].iloc[int(text) - 1]  # the book of that rank sits at its tick
    assert view.item.getAxis("left").style["showValues"]
    assert f"rank of {COUNT} books" in view.item.getAxis("left").labelText


def test_after_a_long_ranking_a_short_one_names_its_books_again(view):
    view.show_accuracy(ranked_frame(COUNT), None)
    short = ranked_frame(5)
    view.show_accuracy(short, None)
    assert [title for _, title in sorted(left_ticks(view), reverse=True)] == list(short["book"])


@pytest.mark.parametrize("count", [MAX_LABELLED_BOOKS + 1, 100, 200, 237, 1000, 25_000])
def test_rank_ticks_are_round_few_and_start_at_one(count):
    ticks = rank_ticks(count)
    ranks = [int(text) for _, text in ticks]
    assert ranks[0] == 1 and all(1 <= r <= count for r in ranks) and len(ranks) <= 12
    assert all(position == count - rank for (position, _), rank in zip(ticks, ranks))
    steps = {b - a for a, b in zip(ranks[1:-1], ranks[2:-1])}
    assert len(steps) <= 1  # evenly spaced between the first and the last


def test_choosing_a_chart_and_its_all_models_choice_at_once(qtbot, page, results):
    show(qtbot, page, chart="cloze-accuracy", model="model-a")
    show(qtbot, page, chart="cloze-categories", model="all", group_by="genre")
    assert page.chart_name() == "cloze-categories" and page.model.currentData() == "all"
    assert set(page.frame["model"]) == {"model-a", "model-b"}
    expected = registry.chart("cloze-categories").frame(results, **page.options())
    pd.testing.assert_frame_equal(page.frame.reset_index(drop=True), expected.reset_index(drop=True))
    assert len(page.view.bars) == 2 * len({genre for *_, genre, _, _ in BOOKS})


def test_choosing_an_unknown_value_leaves_the_page_usable(qtbot, page):
    from workbench.errors import UserError

    with pytest.raises(UserError):
        page.choose(chart="cloze-accuracy", model="no-such-model")
    page.model.setCurrentIndex(page.model.findData("model-b"))  # the controls answer the user again
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=60_000)
    qtbot.wait(10)
    assert page.frame["model"].iloc[0] == "model-b"
