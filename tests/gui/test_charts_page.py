"""The Charts page on real results (published-style answers imported through the core): every chart draws
the export registry's own frame, hover names the book, a click lists the book's passages, the view is
kept in the project, and exports write real PDF, SVG, PNG and CSV files. With many books and models the ranked
chart of more books than it can name gives ranks on its axis, and a chart chosen together with a choice only it
offers works in one call."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage

from tests.fixtures.books import gutenberg_text
from tests.fixtures.chart_frames import paired_frame, ranked_frame
from tests.fixtures.chart_view import (
    box_marks,
    drawn_points,
    face_colours,
    legend_texts,
    line_collections,
    marks_on,
    scatter_collections,
    tick_labels,
    wait_drawn,
)
from tests.fixtures.cloze_books import write_book, write_gpt4books
from ui.background import BackgroundOps
from ui.cloze.charts_page import VIEW_SETTING, ChartsPage
from ui.widgets.chart_view import ChartView
from workbench.corpus.importer import import_paths
from workbench.export import registry
from workbench.probes.cloze.charts import MAX_LABELLED_BOOKS, rank_steps
from workbench.probes.cloze.extract import extract_books
from workbench.probes.cloze.gpt4books import import_gpt4books
from workbench.probes.cloze.rules import project_settings

WAIT_MS = 60_000
#: book number, title, year, genre, answers of model-a and model-b (True = right)
BOOKS = [
    (4001, "Quay Tales", 1851, "gothic", [True, True, True, True, False], [True, False, False, True, False]),
    (4002, "The Snow House", 1870, "gothic", [True, False, False, False, False], [False, False, False, False, True]),
    (4003, "Orchard Letters", 1888, "comic", [False, False, False, False], [False, False, False, False]),
    (4004, "Lamps at Midnight", 1899, "comic", [True, True, True, True, True], [True, True, True, False, True]),
]
NAMES = ["Harriet", "Tobias", "Oswald", "Philippa", "Barnaby"]


def passage(number: int, k: int) -> str:
    return f"Scene {k} of book {number}: the rain had not stopped, and [MASK] waited by the window for news."


def write_results(folder, model_index: int):
    files = []
    for number, _, _, _, *answers in BOOKS:
        rows = []
        for k, right in enumerate(answers[model_index]):
            gold = NAMES[k % len(NAMES)]
            rows.append((f"<name>{gold if right else 'Nobody'}</name>", gold, passage(number, k)))
        files.append(write_gpt4books(folder, f"pg{number}", rows))
    return files


@pytest.fixture
def results(project, tmp_path):
    """Four Project Gutenberg-style books (titles, years, genre tags) and two models' published answers."""
    books = tmp_path / "books"
    books.mkdir()
    paths = []
    for index, (number, title, *_) in enumerate(BOOKS):
        body = write_book(tmp_path, f"body{number}", 3, first=3 * index).read_text()
        path = books / f"pg{number}.txt"
        path.write_text(gutenberg_text(body, title=title, number=number))
        paths.append(path)
    meta = tmp_path / "meta.csv"
    meta.write_text("file,year,genre\n" + "".join(f"pg{n}.txt,{year},{genre}\n" for n, _, year, genre, *_ in BOOKS))
    import_paths(project, paths, metadata_csv=meta)
    for index, label in enumerate(["model-a", "model-b"]):
        folder = tmp_path / label
        folder.mkdir()
        summary = import_gpt4books(project, write_results(folder, index), label)
        assert not summary["new_book"].any()  # every file found its library book
    return project


@pytest.fixture
def page(qtbot, shown_page, results, messages):
    page = shown_page(ChartsPage, results)
    wait_idle(qtbot, page)
    yield page
    if page.passages_dialog is not None:
        page.passages_dialog.close()


def wait_idle(qtbot, page):
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=WAIT_MS)


def show(qtbot, page, **choices):
    page.choose(**choices)
    wait_idle(qtbot, page)
    qtbot.wait(10)


def scatter_points(page) -> int:
    return drawn_points(page.view.figure)


def viewport_pos(page, mark) -> QPoint:
    return page.view.pos_of(mark)


def mark_of(page, title: str):
    return next(m for m in page.view.marks if m.target["book"] == title)


def control(page, name: str):
    return page.controls.widget(name)


# ---------------------------------------------------------------------------------------------- drawing
@pytest.mark.parametrize("chart, choices, points, caption", [
    ("cloze-accuracy", {"model": "model-a"}, 4, "4 books ranked by name-cloze accuracy of model-a"),
    ("cloze-models", {"model": "model-a", "model_b": "model-b"}, 4, "Wilcoxon signed-rank"),
    ("cloze-year", {"model": "model-b"}, 4, "Spearman rank correlation of accuracy with year"),
])
def test_each_book_chart_draws_the_registry_frame(qtbot, page, results, chart, choices, points, caption):
    show(qtbot, page, chart=chart, **choices)
    expected = registry.chart(chart).frame(results, **page.options())
    pd.testing.assert_frame_equal(page.frame.reset_index(drop=True), expected.reset_index(drop=True))
    assert scatter_points(page) == points and len(page.view.marks) == points
    assert caption in page.view.caption.text()
    assert not [text for text in legend_texts(page.view.figure) if text != "equal accuracy"]  # no groups to name


def test_the_ranked_chart_names_books_on_its_axis_best_first(qtbot, page):
    show(qtbot, page, chart="cloze-accuracy", model="model-a")
    ticks = tick_labels(page.view.figure.axes[0])
    by_height = [title for _, title in sorted(ticks, reverse=True)]
    assert by_height == ["Lamps at Midnight", "Quay Tales", "The Snow House", "Orchard Letters"]


def test_category_means_draw_one_bar_per_tag_value_with_a_legend_for_several_models(qtbot, page, results):
    show(qtbot, page, chart="cloze-categories", tag="genre", model="model-a")
    bars = box_marks(page.view)
    assert [title for title, _, _ in bars] == ["comic", "gothic"]
    frame = registry.chart("cloze-categories").frame(results, tag="genre", model="model-a")
    assert [round(top, 6) for _, top, _ in bars] == [round(v, 6) for v in frame["mean_accuracy"]]
    assert not legend_texts(page.view.figure)
    show(qtbot, page, model="all")
    legend = legend_texts(page.view.figure)
    assert len(box_marks(page.view)) == 4 and legend
    assert "model-a" in legend and "model-b" in legend


def test_colouring_by_a_tag_colours_points_and_adds_a_legend(qtbot, page):
    show(qtbot, page, chart="cloze-accuracy", model="model-a", color_by="genre")
    legend = legend_texts(page.view.figure)
    assert legend and "genre" in legend and "gothic" in legend and "comic" in legend
    colours = set(face_colours(page.view.figure.axes[0]))
    assert colours == {"#1f77b4", "#ff7f0e"}  # the publication figure's first two colours


def test_leaving_out_flagged_books(qtbot, page, results):
    # 'Quay Tales' has 3 scenes, so extracting 5 passages flags it
    book_id = results.db.execute("SELECT id FROM books WHERE title = 'Quay Tales'").fetchone()[0]
    extract_books(results, [book_id], project_settings(results, per_book=5, fast=True))
    show(qtbot, page, chart="cloze-accuracy", model="model-a")
    assert "Quay Tales" in [m.target["book"] for m in page.view.marks]
    assert "flagged (fewer passages than asked for)" in legend_texts(page.view.figure)  # drawn hollow
    ax = page.view.figure.axes[0]
    row = dict((text, y) for y, text in tick_labels(ax))["Quay Tales"]
    fills = {float(y): colour for (_, y), colour in zip(scatter_collections(ax)[0].get_offsets(), face_colours(ax))}
    assert fills.pop(row) == "#ffffff" and "#ffffff" not in fills.values()
    show(qtbot, page, exclude_flagged=True)
    assert "Quay Tales" not in [m.target["book"] for m in page.view.marks] and len(page.view.marks) == 3
    assert "Flagged books" in page.view.caption.text()


def test_a_project_without_results_says_what_to_do(qtbot, project, messages):
    page = ChartsPage(BackgroundOps())
    qtbot.addWidget(page)
    page.show()
    page.set_project(project)
    assert "No name-cloze results yet" in page.view.message.text()
    assert not page.export_button.isEnabled()
    page.ops.join()


def test_the_chosen_view_is_kept_in_the_project(qtbot, page, results):
    show(qtbot, page, chart="cloze-year", model="model-b")
    assert results.get_setting(VIEW_SETTING)["chart"] == "cloze-year"
    other = ChartsPage(BackgroundOps())
    qtbot.addWidget(other)
    other.set_project(results)
    assert other.chart_name() == "cloze-year" and control(other, "model").currentData() == "model-b"
    other.ops.join()


# ---------------------------------------------------------------------------------------------- hover and click
def test_hovering_a_point_names_its_book(qtbot, page):
    show(qtbot, page, chart="cloze-accuracy", model="model-a")
    mark = mark_of(page, "The Snow House")
    qtbot.mouseMove(page.view.canvas, viewport_pos(page, mark))
    qtbot.waitUntil(lambda: "The Snow House" in page.view.hover_text, timeout=5000)
    assert page.view.hover_label.isVisible() and "20% of 5 answered passages correct" in page.view.hover_text
    corner = QPoint(3, 3)  # the figure's corner, far from every point
    qtbot.mouseMove(page.view.canvas, corner)
    qtbot.waitUntil(lambda: page.view.hover_text == "", timeout=5000)
    assert not page.view.hover_label.isVisible()


def test_hovering_in_the_scatter_and_the_year_chart(qtbot, page):
    show(qtbot, page, chart="cloze-models", model="model-a", model_b="model-b")
    qtbot.mouseMove(page.view.canvas, viewport_pos(page, mark_of(page, "Quay Tales")))
    qtbot.waitUntil(lambda: "Quay Tales" in page.view.hover_text, timeout=5000)
    assert "model-a: 80% of 5" in page.view.hover_text and "model-b: 40% of 5" in page.view.hover_text
    show(qtbot, page, chart="cloze-year", model="model-a")
    qtbot.mouseMove(page.view.canvas, viewport_pos(page, mark_of(page, "Orchard Letters")))
    qtbot.waitUntil(lambda: "Orchard Letters" in page.view.hover_text, timeout=5000)
    assert "1888" in page.view.hover_text


def test_clicking_a_book_opens_its_passages(qtbot, page):
    show(qtbot, page, chart="cloze-accuracy", model="model-a")
    qtbot.mouseClick(page.view.canvas, Qt.MouseButton.LeftButton,
                     pos=viewport_pos(page, mark_of(page, "Quay Tales")))
    qtbot.waitUntil(lambda: page.passages_dialog is not None and page.passages_dialog.isVisible(), timeout=WAIT_MS)
    dialog = page.passages_dialog
    assert dialog.windowTitle() == "Passages of Quay Tales"
    table = dialog.table
    assert table.rowCount() == 5 and set(table.column_texts("Model")) == {"model-a"}
    assert all("book 4001" in text for text in table.column_texts("Passage"))
    assert table.column_texts("True name") == NAMES
    assert table.column_texts("Raw response") == [f"<name>{n}</name>" for n in NAMES[:4]] + ["<name>Nobody</name>"]
    assert table.column_texts("Parsed answer") == NAMES[:4] + ["Nobody"]
    assert table.column_texts("Correct") == ["right"] * 4 + ["wrong"]
    assert "model-a: 4 of 5 right" in dialog.heading.text()
    assert "[Harriet]" in dialog.detail.toPlainText()  # the true name written into the gap
    dialog.filter.setCurrentText("Wrong")
    assert table.rowCount() == 1 and table.column_texts("True name") == ["Barnaby"]


def test_clicking_a_book_in_the_scatter_lists_both_models(qtbot, page):
    show(qtbot, page, chart="cloze-models", model="model-a", model_b="model-b")
    page.view.click_at(page.view.pos_of(mark_of(page, "Lamps at Midnight")))
    qtbot.waitUntil(lambda: page.passages_dialog is not None, timeout=WAIT_MS)
    table = page.passages_dialog.table
    assert table.rowCount() == 10 and table.column_texts("Model").count("model-b") == 5
    assert table.column_texts("Correct").count("wrong") == 1


# ---------------------------------------------------------------------------------------------- exports
@pytest.mark.parametrize("suffix", [".pdf", ".svg", ".png"])
def test_exporting_the_figure_writes_a_valid_file_and_its_csv(qtbot, page, tmp_path, suffix):
    show(qtbot, page, chart="cloze-accuracy", model="model-a", color_by="genre")
    out = tmp_path / f"accuracy{suffix}"
    page.export_figure(out)
    wait_idle(qtbot, page)
    assert page.last_export == [out, out.with_suffix(".csv")]
    if suffix == ".pdf":
        assert out.read_bytes().startswith(b"%PDF")
    elif suffix == ".svg":
        assert ElementTree.parse(out).getroot().tag.endswith("svg")
    else:
        image = QImage(str(out))
        assert not image.isNull() and round(image.dotsPerMeterX() * 0.0254) == 300
    exported = pd.read_csv(out.with_suffix(".csv"))
    assert list(exported["book"]) == list(page.frame["book"]) and set(exported["group"]) == {"gothic", "comic"}
    assert str(out) in page.status.text()


def test_the_export_dialog_adds_the_chosen_file_types_ending_to_a_bare_name(qtbot, page, tmp_path, monkeypatch):
    """The file dialog is the platform's own (it cannot be clicked offscreen): it answers as a person would who
    typed 'accuracy' and chose SVG."""
    from PySide6.QtWidgets import QFileDialog

    asked = []

    def answer(parent, caption, suggested, filters):
        asked.append((suggested, filters))
        return str(tmp_path / "accuracy"), "SVG (*.svg)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(answer))
    show(qtbot, page, chart="cloze-accuracy", model="model-a")
    page.export_figure_dialog()
    wait_idle(qtbot, page)
    assert page.last_export == [tmp_path / "accuracy.svg", tmp_path / "accuracy.csv"]
    assert ElementTree.parse(tmp_path / "accuracy.svg").getroot().tag.endswith("svg")
    (suggested, filters), = asked
    assert suggested.endswith("cloze-accuracy.pdf") and "300 dpi" in filters


def test_exporting_the_tables(qtbot, page, tmp_path):
    show(qtbot, page, chart="cloze-accuracy", model="model-b")
    page.export_table("cloze-passage-results", tmp_path / "answers.csv")
    wait_idle(qtbot, page)
    answers = pd.read_csv(tmp_path / "answers.csv")
    assert len(answers) == 19 and set(answers["model"]) == {"model-b"}
    assert {"passage", "gold", "raw", "parsed", "correct"} <= set(answers.columns)
    page.export_table("cloze-book-accuracy", tmp_path / "books.csv")
    wait_idle(qtbot, page)
    books = pd.read_csv(tmp_path / "books.csv")
    assert sorted(books["book"]) == sorted(title for _, title, *_ in BOOKS)
    assert books.set_index("book").loc["Lamps at Midnight", "correct"] == 4


def test_an_export_to_an_unknown_format_says_so(qtbot, page, tmp_path, messages):
    page.export_figure(tmp_path / "chart.jpg")
    wait_idle(qtbot, page)
    assert messages["errors"] and "PDF, SVG or PNG" in messages["errors"][0]
    assert not (tmp_path / "chart.jpg").exists()


def test_export_is_offered_only_while_the_chart_shows_something(qtbot, page, results):
    book_ids = [row[0] for row in results.db.execute("SELECT id FROM books").fetchall()]
    extract_books(results, book_ids, project_settings(results, per_book=500, fast=True))  # every book flagged
    show(qtbot, page, chart="cloze-accuracy", model="model-a", exclude_flagged=True)
    assert "fewer passages than were asked for" in page.view.message.text()
    assert "Untick 'Leave out flagged books'" in page.view.message.text()
    assert not page.export_button.isEnabled() and not page.table_button.isEnabled()
    show(qtbot, page, exclude_flagged=False)
    assert len(page.view.marks) == 4 and page.export_button.isEnabled() and page.table_button.isEnabled()


def test_a_missing_year_is_said_as_such_not_as_books_without_results(qtbot, page, results):
    results.db.execute("UPDATE books SET year = NULL")
    results.db.conn.commit()
    show(qtbot, page, chart="cloze-year", model="model-a")
    message = page.view.message.text()
    assert "None of the 4 books with results has a year of publication" in message and "metadata" in message
    show(qtbot, page, chart="cloze-categories", tag="decade")
    assert "None of the 4 books with results has a year of publication" in page.view.message.text()


# ---------------------------------------------------------------------------------------------- many books
COUNT = 237


@pytest.fixture
def view(qtbot):
    ops = BackgroundOps()
    view = ChartView(ops)
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    yield view
    ops.join()


def draw(qtbot, view, name: str, frame: pd.DataFrame, **options) -> None:
    """The chart ``name`` of a made-up frame, as the registry draws it."""
    view.show_chart(None, name, options, frame=frame)
    wait_drawn(qtbot, view, name)


def left_ticks(view, ax=None) -> list[tuple[float, str]]:
    return tick_labels(ax if ax is not None else view.figure.axes[-1])


def test_a_long_ranking_gives_ranks_on_its_axis_at_the_books_of_those_ranks(qtbot, view):
    frame = ranked_frame(COUNT)
    draw(qtbot, view, "cloze-accuracy", frame)
    every = view.figure.axes[1]
    ticks = left_ticks(view, every)
    ranks = [int(text) for _, text in ticks]
    assert ranks[0] == 1 and ranks == sorted(ranks) and 5 <= len(ranks) <= 12
    (marks,) = [s.marks for s in view.sets if s.marks.ax is every]
    for position, text in ticks:
        index = int(np.flatnonzero(np.asarray(marks.y) == position)[0])
        assert marks.target(index)["book"] == frame["book"].iloc[int(text) - 1]  # that rank's book at its tick
    assert every.get_ylabel() == "rank (1 = best)"


def test_after_a_long_ranking_a_short_one_names_its_books_again(qtbot, view):
    draw(qtbot, view, "cloze-accuracy", ranked_frame(COUNT))
    short = ranked_frame(5)
    draw(qtbot, view, "cloze-accuracy", short)
    assert [title for _, title in sorted(left_ticks(view), reverse=True)] == list(short["book"])


@pytest.mark.parametrize("count", [MAX_LABELLED_BOOKS + 1, 100, 200, 237, 1000, 25_000])
def test_rank_ticks_are_round_few_and_start_at_one(count):
    ranks = rank_steps(count)
    assert ranks[0] == 1 and all(1 <= r <= count for r in ranks) and len(ranks) <= 12
    steps = {b - a for a, b in zip(ranks[1:-1], ranks[2:-1])}
    assert len(steps) <= 1  # evenly spaced between the first and the last


def test_choosing_a_chart_and_its_all_models_choice_at_once(qtbot, page, results):
    show(qtbot, page, chart="cloze-accuracy", model="model-a")
    show(qtbot, page, chart="cloze-categories", model="all", tag="genre")
    assert page.chart_name() == "cloze-categories" and control(page, "model").currentData() == "all"
    assert set(page.frame["model"]) == {"model-a", "model-b"}
    expected = registry.chart("cloze-categories").frame(results, **page.options())
    pd.testing.assert_frame_equal(page.frame.reset_index(drop=True), expected.reset_index(drop=True))
    assert len(box_marks(page.view)) == 2 * len({genre for *_, genre, _, _ in BOOKS})


def test_choosing_an_unknown_value_leaves_the_page_usable(qtbot, page):
    from workbench.errors import UserError

    with pytest.raises(UserError):
        page.choose(chart="cloze-accuracy", model="no-such-model")
    model = control(page, "model")
    model.setCurrentIndex(model.findData("model-b"))  # the controls answer the user again
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=60_000)
    qtbot.wait(10)
    assert page.frame["model"].iloc[0] == "model-b"


# ---------------------------------------------------------------------------------------------- many books, designed
def side_titles(view) -> list[str]:
    """The named panel's rows, top to bottom."""
    return [text for _, text in sorted(tick_labels(view.figure.axes[0]), reverse=True)]


@pytest.mark.parametrize("count, top_n", [(41, 15), (237, 10), (571, 20)])
def test_a_long_ranking_names_exactly_the_best_and_worst_books_in_order_beside_all_of_them(qtbot, view, count, top_n):
    frame = ranked_frame(count, top_n)
    draw(qtbot, view, "cloze-accuracy", frame, top_n=top_n)
    side, main = view.figure.axes[:2]
    assert len(view.figure.axes) == 2
    books = list(frame["book"])
    assert side_titles(view) == ([f"{r}. {books[r - 1]}" for r in range(1, top_n + 1)]
                                 + [f"\u22ee  {count - 2 * top_n} more books"]
                                 + [f"{r}. {books[r - 1]}" for r in range(count - top_n + 1, count + 1)])
    assert drawn_points(view.figure, main) == count  # the main panel draws every book
    side_marks = [m.target["book"] for m in marks_on(view, side)]
    assert side_marks == books[:top_n] + books[-top_n:]
    assert len(marks_on(view, main)) == count
    # the full ranking's intervals are thin and translucent
    intervals = line_collections(main)
    assert intervals and all(i.get_alpha() < 0.5 for i in intervals)


def test_a_few_books_are_all_named_in_one_panel(qtbot, view):
    draw(qtbot, view, "cloze-accuracy", ranked_frame(237))
    draw(qtbot, view, "cloze-accuracy", ranked_frame(40))
    assert len(view.figure.axes) == 1 and len(left_ticks(view)) == 40
    assert len(marks_on(view, view.figure.axes[0])) == len(view.marks) == 40


def test_hovering_and_clicking_a_named_book_in_the_side_panel(qtbot, view):
    frame = ranked_frame(300)
    draw(qtbot, view, "cloze-accuracy", frame)
    worst = next(m for m in marks_on(view, view.figure.axes[0]) if m.target["book"] == frame["book"].iloc[-1])
    qtbot.mouseMove(view.canvas, view.pos_of(worst))
    qtbot.waitUntil(lambda: frame["book"].iloc[-1] in view.hover_text, timeout=5000)
    assert "Rank 300" in view.hover_text and view.hover_label.isVisible()
    with qtbot.waitSignal(view.picked) as clicked:
        view.click_at(view.pos_of(worst))
    assert clicked.args[0] == {"book_id": int(frame["book_id"].iloc[-1]), "book": frame["book"].iloc[-1],
                               "models": ["m"]}


def test_a_crowded_scatter_draws_translucent_points_and_each_models_distribution(qtbot, view):
    from workbench.probes.cloze.charts import OVERPLOT_BOOKS

    few, many = paired_frame(OVERPLOT_BOOKS), paired_frame(OVERPLOT_BOOKS + 1)
    draw(qtbot, view, "cloze-models", few)
    assert len(view.figure.axes) == 1
    (points,) = scatter_collections(view.figure.axes[0])
    assert points.get_alpha() >= 0.8
    draw(qtbot, view, "cloze-models", many)
    assert len(view.figure.axes) == 3
    main, top, right = view.figure.axes
    (points,) = scatter_collections(main)
    assert points.get_alpha() < 0.5 and len(points.get_offsets()) == len(many)
    for margin, horizontal in ((top, False), (right, True)):
        bars = margin.patches
        counts = [b.get_width() if horizontal else b.get_height() for b in bars]
        assert int(np.sum(counts)) == len(many)
        assert np.isclose(bars[0].get_y() if horizontal else bars[0].get_x(), 0.0)
    assert len(view.marks) == len(many)  # every book still hovers and clicks
    draw(qtbot, view, "cloze-models", few)  # and back to one panel
    assert len(view.figure.axes) == 1


def test_the_page_opens_on_the_model_with_the_most_answers(qtbot, results, messages):
    # both models answered 19 passages: the one imported last is the default; then model-a gets more answers
    page = ChartsPage(BackgroundOps())
    qtbot.addWidget(page)
    page.set_project(results)
    assert control(page, "model").currentData() == "model-b"
    page.choose(chart="cloze-models")
    assert control(page, "model_a").currentData() == "model-b" and control(page, "model_b").currentData() == "model-a"
    page.ops.join()
    folder = results.path.parent / "more"
    folder.mkdir()
    extra = [(f"<name>N{k}</name>", f"N{k}", f"Another scene {k}: [MASK] came back late.") for k in range(3)]
    import_gpt4books(results, [write_gpt4books(folder, "pg4001", extra)], "model-a")
    results.set_setting(VIEW_SETTING, {})  # a project opened afresh
    again = ChartsPage(BackgroundOps())
    qtbot.addWidget(again)
    again.set_project(results)
    assert control(again, "model").currentData() == "model-a"
    again.ops.join()


def test_the_number_of_named_books_is_a_chart_option_kept_with_the_view(qtbot, page, results):
    show(qtbot, page, chart="cloze-accuracy", model="model-a", top_n=7)
    assert page.options()["top_n"] == 7 and results.get_setting(VIEW_SETTING)["top_n"] == 7
    assert not control(page, "top_n").isEnabled()  # four books: every one is named anyway
    assert page.frame["named"].all()
