"""The Jobs page's choices as a Qt-free state (issue 21.6): ``RunsChoices`` (kind, model) and the queries that take
it. The page's Kind list changes its choices and the table it shows is ``runs_table``'s; ``palimpsest runs`` prints
``runs_frame`` for the same choices."""

from __future__ import annotations

import io

import pandas as pd
import pytest

import workbench.models.catalog as registry
from ui.jobs.page import JobsPage
from workbench import jobs, runs
from workbench.cli import main
from workbench.models.base import GenerationParams
from workbench.models.catalog import ModelSpec
from workbench.runs.views import RUN_TABLE_COLUMNS, RunsChoices, run_kinds, runs_frame, runs_table

KINDS = ("choices-test-a", "choices-test-b")


@pytest.fixture
def three_runs(project):
    """Runs of kind a by models one and two, and of kind b by model one (never executed)."""
    for kind in KINDS:
        runs.declare_run_kind(runs.RunKind(kind, f"test runs {kind[-1]}"))
    models = {label: registry.add_model(project, ModelSpec(label=label, backend="openai", ref="tiny",
                                                           base_url="http://127.0.0.1:9/v1")).id
              for label in ("one", "two")}
    made = {(kind, label): jobs.create_run(project, kind, model_id=models[label],
                                           params=GenerationParams(max_tokens=3).as_dict(), config={"items": 2})
            for kind, label in ((KINDS[0], "one"), (KINDS[0], "two"), (KINDS[1], "one"))}
    yield project, made
    for kind in KINDS:
        runs.forget_run_kind(kind)


def test_the_runs_are_those_of_the_chosen_kind_and_model(three_runs):
    project, made = three_runs
    assert list(runs_frame(project, RunsChoices())["id"]) == sorted(made.values())
    assert list(runs_table(project, RunsChoices())["id"]) == sorted(made.values(), reverse=True)  # the page: newest first
    assert set(runs_frame(project, RunsChoices(kind=KINDS[0]))["id"]) == {made[KINDS[0], "one"], made[KINDS[0], "two"]}
    assert list(runs_frame(project, RunsChoices(kind=KINDS[0], model="one"))["id"]) == [made[KINDS[0], "one"]]
    assert list(runs_frame(project, RunsChoices(model="one"))["id"]) == [made[KINDS[0], "one"], made[KINDS[1], "one"]]
    table = runs_table(project, RunsChoices(kind=KINDS[1]))
    assert list(table.columns[:len(RUN_TABLE_COLUMNS)]) == RUN_TABLE_COLUMNS
    (row,) = table.to_dict("records")
    assert (row["Run"], row["Kind"], row["Model"], row["Status"], row["Answered"]) == (
        str(made[KINDS[1], "one"]), "Test runs b", "one", "not started", "0 of 0")
    assert [kind for _, kind in run_kinds(project)] == list(KINDS)


def test_the_page_keeps_its_choice_of_kind_and_shows_the_querys_table(qtbot, shown_page, three_runs):
    project, made = three_runs
    page = shown_page(JobsPage, project, size=(1200, 700))
    assert page.choices == RunsChoices() and page.runs_table.rowCount() == 3
    page.kind.setCurrentIndex(page.kind.findData(KINDS[0]))
    assert page.choices.kind == KINDS[0]
    pd.testing.assert_frame_equal(page.shown, runs_table(project, page.choices))
    shown = [[page.runs_table.item(r, c).text() for c in range(page.runs_table.columnCount())]
             for r in range(page.runs_table.rowCount())]
    assert shown == runs_table(project, page.choices)[RUN_TABLE_COLUMNS].values.tolist()
    assert len(shown) == 2
    page.refresh()  # a reload keeps the kind chosen
    assert page.choices.kind == KINDS[0] and page.runs_table.rowCount() == 2


def test_the_command_prints_the_querys_runs(three_runs, capsys):
    project, made = three_runs
    capsys.readouterr()
    assert main(["runs", str(project.path), "--kind", KINDS[0], "--model", "two", "--format", "csv"]) == 0
    printed = pd.read_csv(io.StringIO(capsys.readouterr().out))
    expected = runs_frame(project, RunsChoices(kind=KINDS[0], model="two")).drop(columns=["backend"])
    expected = pd.read_csv(io.StringIO(expected.to_csv(index=False)))
    pd.testing.assert_frame_equal(printed[list(expected.columns)], expected)
    assert list(printed["id"]) == [made[KINDS[0], "two"]]
