"""The publication figures at many books: the ranked chart names exactly the best and worst books beside the
full ranking, crowded charts draw translucent points (the scatter with each model's distribution), colours
stay distinct for many groups, and a chart without a model option shows the model with the most answers."""

from __future__ import annotations

import csv

import matplotlib
import numpy as np
import pytest

from tests.fixtures.chart_frames import paired_frame, ranked_frame
from tests.fixtures.cloze_texts import gpt4books_rows
from workbench.cli import main
from workbench.errors import UserError
from workbench.export.registry import chart, render_figure
from workbench.probes.cloze.charts import (
    CROWDED_ALPHA,
    MAX_LABELLED_BOOKS,
    MAX_TOP_N,
    OVERPLOT_BOOKS,
    group_colours,
    named_ranks,
)
from workbench.probes.cloze.gpt4books import import_gpt4books
from workbench.probes.cloze.model_choice import models_by_preference

matplotlib.use("Agg")


def test_every_book_is_named_up_to_the_limit_then_the_best_and_worst():
    assert named_ranks(MAX_LABELLED_BOOKS, 5).all()
    named = named_ranks(571, 15)
    assert list(np.flatnonzero(named) + 1) == list(range(1, 16)) + list(range(557, 572))
    for wrong in ("0", "abc", MAX_TOP_N + 1):
        with pytest.raises(UserError, match="top_n"):
            named_ranks(571, wrong)
    assert named_ranks(100, "3").sum() == 6  # options come from the command line as text


@pytest.mark.parametrize("count, top_n", [(41, 15), (571, 20)])
def test_the_ranked_figure_names_exactly_the_best_and_worst_books_in_order(count, top_n):
    frame = ranked_frame(count, top_n)
    fig = render_figure(chart("cloze-accuracy"), frame)
    named_ax, all_ax = fig.axes
    rows = sorted(zip(named_ax.get_yticks(), (t.get_text() for t in named_ax.get_yticklabels())), reverse=True)
    books = list(frame["book"])
    assert [text for _, text in rows] == ([f"{r}. {books[r - 1]}" for r in range(1, top_n + 1)]
                                          + [f"\u22ee  {count - 2 * top_n} more books"]
                                          + [f"{r}. {books[r - 1]}" for r in range(count - top_n + 1, count + 1)])
    points = sum(len(c.get_offsets()) for c in all_ax.collections if hasattr(c, "get_sizes") and len(c.get_sizes()))
    assert points == count  # the full ranking draws every book, rank 1 at the top
    assert all_ax.get_ylim() == (count + 0.5, 0.5)
    intervals = [c for c in all_ax.collections if type(c).__name__ == "LineCollection"]
    assert intervals and all(c.get_alpha() < 0.5 for c in intervals)


def test_a_few_books_get_one_panel_with_every_title():
    fig = render_figure(chart("cloze-accuracy"), ranked_frame(12))
    (ax,) = fig.axes
    rows = sorted(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels())), reverse=True)
    assert [text for _, text in rows] == [f"Book number {i}" for i in range(12)]  # best at the top


def test_a_crowded_scatter_is_translucent_with_each_models_distribution():
    few = render_figure(chart("cloze-models"), paired_frame(OVERPLOT_BOOKS))
    assert len(few.axes) == 1 and few.axes[0].collections[0].get_alpha() == 0.8
    frame = paired_frame(OVERPLOT_BOOKS + 50)
    many = render_figure(chart("cloze-models"), frame)
    scatter, top, right = many.axes
    points = scatter.collections[0]
    assert points.get_alpha() == CROWDED_ALPHA and len(points.get_offsets()) == len(frame)
    assert sum(p.get_height() for p in top.patches) == len(frame)
    assert sum(p.get_width() for p in right.patches) == len(frame)


def test_many_groups_get_distinct_colours_the_untagged_grey():
    for count in (3, 10, 27):
        groups = [f"{1750 + 10 * i}s" for i in range(count)] + ["(no tag)"]
        colours = group_colours(groups)
        assert len(set(colours.values())) == count + 1 and colours["(no tag)"] == "#595959"


# ---------------------------------------------------------------------------------------------- the default model
def _import(project, tmp_path, label: str, books: range):
    """Published-style answers of ``label``: ten passages for each book."""
    folder = tmp_path / label
    folder.mkdir(exist_ok=True)
    paths = []
    for book in books:
        path = folder / f"book{book}.tsv"
        path.write_text(gpt4books_rows(book, 3), encoding="utf-8")
        paths.append(path)
    import_gpt4books(project, paths, label)


def test_the_default_model_has_the_most_answers_then_the_newest_run(project, tmp_path, capsys):
    _import(project, tmp_path, "zeta", range(1, 4))  # 30 answers
    _import(project, tmp_path, "alpha", range(1, 3))  # 20 answers, imported later
    assert models_by_preference(project) == ["zeta", "alpha"]  # not alphabetical
    _import(project, tmp_path, "beta", range(1, 4))  # as many as zeta, and newer
    assert models_by_preference(project) == ["beta", "zeta", "alpha"]
    out = tmp_path / "ranked.png"
    assert main(["chart", str(project.path), "cloze-accuracy", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.with_suffix(".csv").open(encoding="utf-8")))
    assert {r["model"] for r in rows} == {"beta"}
    assert main(["chart", str(project.path), "cloze-models", "--out", str(tmp_path / "pair.png")]) == 0
    pair = list(csv.DictReader((tmp_path / "pair.csv").open(encoding="utf-8")))
    assert (pair[0]["model_a"], pair[0]["model_b"]) == ("beta", "zeta")
