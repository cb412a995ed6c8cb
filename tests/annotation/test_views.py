"""The Annotate page's choices as a Qt-free state (issue 21.6): ``AnnotationChoices`` and the queries that take it.
The agreement and the disagreements are those of the chosen task (and ratio); the page's widgets change its choices
and its tables are the queries' frames; ``palimpsest annotate agreement|disagreements`` print the same frames. No
query names a book of a blinded task."""

from __future__ import annotations

import io
from dataclasses import replace

import pandas as pd
import pytest

from tests.fixtures.annotation_data import SECRET_AUTHOR, SECRET_TITLE, add_book, invented_novel, write_csv
from workbench.annotation.annotation_import import import_annotations
from workbench.annotation.items import add_book_passages, list_items
from workbench.annotation.tasks import create_task
from workbench.annotation.views import (
    AnnotationChoices,
    agreement_frame,
    agreement_shown,
    disputes_table,
    tasks_table,
)
from workbench.cli import main


def same(shown: pd.DataFrame, frame: pd.DataFrame) -> None:
    expected = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
    got = pd.read_csv(io.StringIO(shown[list(frame.columns)].to_csv(index=False)))
    pd.testing.assert_frame_equal(got, expected)


@pytest.fixture
def rated(project, tmp_path):
    """Two blinded narrative-time tasks of one secret book's passages: in 'close' Ann and Bob are at most 1.5 times
    apart; in 'far' Bob says three times Ann's minutes."""
    book = add_book(project, SECRET_TITLE, SECRET_AUTHOR, invented_novel(1))
    tasks = {}
    for name, ratio in (("close", 1.5), ("far", 3.0)):
        task = create_task(project, name, "narrative-time", blinded=True)
        add_book_passages(project, task, [book], per_book=4)
        keys = [item.item_key for item in list_items(project, task)]
        rows = ([["Ann", k, f"{n + 1} hours"] for n, k in enumerate(keys)]
                + [["Bob", k, f"{(n + 1) * (ratio if n % 2 else 1):g} hours"] for n, k in enumerate(keys)])
        import_annotations(project, task, write_csv(tmp_path / f"{name}.csv", ["annotator", "item_id", "value"], rows))
        tasks[name] = task.id
    return project, tasks


def test_the_agreement_and_disputes_are_the_chosen_tasks_at_the_chosen_ratio(rated):
    project, tasks = rated
    close, far = AnnotationChoices(task=tasks["close"]), AnnotationChoices(task=tasks["far"])
    assert disputes_table(project, close).empty  # 1.5 times apart is within the default ratio of 2
    assert len(disputes_table(project, far)) == 2  # items 2 and 4: three times apart
    assert len(disputes_table(project, replace(close, factor=1.2))) == 2  # a stricter ratio
    shown = agreement_shown(project, far)
    assert "ci" in shown and "ci_low" not in shown and {"ci_low", "ci_high"} <= set(agreement_frame(project, far))
    assert list(shown["statistic"]) == list(agreement_frame(project, far)["statistic"])
    assert agreement_frame(project, AnnotationChoices()).empty
    table = tasks_table(project)
    assert list(table["Task"]) == ["close", "far"] and set(table["Blinded"]) == {"yes"}
    assert not table.apply(lambda column: column.astype(str).str.contains(SECRET_TITLE).any()).any()  # blinded


def test_the_page_keeps_its_choices_and_shows_the_querys_frames(qtbot, shown_page, rated):
    from ui.annotate.page import AnnotatePage

    project, tasks = rated
    page = shown_page(AnnotatePage, project)
    page.task_combo.setCurrentIndex(page.task_combo.findData(tasks["far"]))
    assert page.choices.task == tasks["far"]
    page.annotator_combo.setCurrentIndex(page.annotator_combo.findText("Bob"))
    assert page.choices.annotator == "Bob"
    same(page.tasks_view.frame, tasks_table(project))
    page.tabs.setCurrentWidget(page.results)
    qtbot.waitUntil(lambda: not page.results.computing.busy and page.results.frames[0] is not None, timeout=60_000)
    agreement, disputes = page.results.frames
    same(agreement, agreement_shown(project, page.choices))
    same(disputes, disputes_table(project, page.choices))
    assert page.results.disputes.rowCount() == len(disputes) == 2
    assert page.results.agreement.rowCount() == len(agreement)


def test_the_commands_print_the_querys_frames(rated, capsys):
    project, tasks = rated
    capsys.readouterr()
    assert main(["annotate", "disagreements", str(project.path), "--task", "close", "--factor", "1.2",
                 "--format", "csv"]) == 0
    printed = pd.read_csv(io.StringIO(capsys.readouterr().out))
    same(printed, disputes_table(project, AnnotationChoices(task="close", factor=1.2)))
    assert len(printed) == 2
    assert main(["annotate", "agreement", str(project.path), "--task", "far", "--format", "csv"]) == 0
    printed = pd.read_csv(io.StringIO(capsys.readouterr().out))
    expected = agreement_frame(project, AnnotationChoices(task=tasks["far"]))
    same(printed, expected)  # the bootstrap is seeded by the task's seed: the same interval both times
