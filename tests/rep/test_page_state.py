"""The Bias (REP) page binds to state (issue 21.6): each results view's options live in a Qt-free ``...Choices``
in ``workbench.probes.rep.views``; the page shows what the core's query gives for its choices, and the CLI
prints the same query's frame for the same options."""

import io
import random

import pandas as pd
import pytest
from PySide6.QtCore import Qt

from tests.fixtures.rep_data import external_model, store_rep_run
from tests.rep.test_entities_page import click_row, stored_completions  # noqa: F401 (a fixture)
from ui.widgets.cells_table import table_cells
from workbench.cli import main
from workbench.probes.rep import stats, views
from workbench.probes.rep.sets import get_set

WAIT_MS = 120_000
WORDS = [" a woman", " a man", " the neighbour"]


@pytest.fixture
def results(project):
    """Two dated models on the gender set (10 samples per role) and one on religion."""
    gender, religion = get_set(project, "gender"), get_set(project, "religion")
    rng = random.Random(3)
    for decade, weights in (("1950s", [1, 8, 1]), ("1990s", [4, 4, 2])):
        external_model(project, f"m{decade}", decade=decade)
        completions = {(r.key, s): rng.choices(WORDS, weights)[0] for r in gender.parsed.roles for s in range(10)}
        store_rep_run(project, f"m{decade}", gender, completions, samples=10)
    store_rep_run(project, "m1990s", religion, {(r.key, s): " a Christian" for r in religion.parsed.roles
                                                for s in range(4)}, samples=4)
    return project


def shown(table):
    """A table widget's headers and cell texts."""
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    return headers, [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(table.rowCount())]


def as_shown(frame):
    """What ``fill_table`` shows of ``frame``."""
    cells = table_cells(frame)
    return cells.headers, [[text for text, _ in row] for row in cells.rows]


def settle(qtbot, page):
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=WAIT_MS)


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, _ = capsys.readouterr()
    return code, out


def same_csv(printed: str, frame: pd.DataFrame) -> None:
    expected = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(printed)), expected)


# ---------------------------------------------------------------------------------------------- core
def test_the_results_query_filters_by_its_choices(results):
    everything = views.results_frame(results, views.ResultsChoices())
    assert set(everything["model"]) == {"m1950s", "m1990s"} and set(everything["demographic"]) == {"gender", "religion"}

    choices = views.ResultsChoices(table="shares", models=["m1990s"], demographics=["gender"])
    frame = views.results_frame(results, choices)
    assert set(frame["model"]) == {"m1990s"} and set(frame["demographic"]) == {"gender"}
    assert len(frame) == 5 * 4  # the gender set's roles x categories
    assert frame["n"].eq(10).all()
    shown_table = views.results_table(results, choices)
    assert list(shown_table["Model"]) == ["m1990s"] * 20
    assert list(shown_table["Count"]) == [f"{c} of {n}" for c, n in zip(frame["count"], frame["n"])]

    tests = views.results_frame(results, views.ResultsChoices(table="tests", demographics=["gender"]))
    expected = stats.decade_tests(stats.rep_counts(results, demographics=["gender"]))
    pd.testing.assert_frame_equal(tests, expected)
    ols = views.results_frame(results, views.ResultsChoices(table="trends", method="ols"))
    assert set(ols["method"]) == {"ols"}

    with pytest.raises(Exception, match="no REP table called 'pies'"):
        views.ResultsChoices(table="pies")


def test_the_entities_query_takes_the_books_and_models_chosen(stored_completions):  # noqa: F811
    fifties = views.entities_result(stored_completions, views.EntitiesChoices(tag="decade=1950s"))
    assert list(fifties.summary["model"]) == ["base", "base", "tuned-1950s", "tuned-1950s"]
    choices = views.EntitiesChoices(models=["tuned-1950s"], tag="decade=1990s")
    nineties = views.entities_result(stored_completions, choices)
    assert set(nineties.summary["model"]) == {"tuned-1950s"}
    # Seattle is in the 1990s book only; Chicago and Harriet Quill in the 1950s books
    assert list(nineties.per_response["common_entities"]) == ["", "seattle"]
    assert list(fifties.per_response.query("model == 'tuned-1950s'")["common_entities"]) == [
        "chicago", "chicago; harriet quill"]
    table = views.entities_summary_table(stored_completions, choices)
    assert list(table["Mean overlap (95% interval)"]) == [
        views._with_interval(m, lo, hi) for m, lo, hi in
        zip(nineties.summary["overlap_pct"], nineties.summary["ci_low_pct"], nineties.summary["ci_high_pct"])]


# ---------------------------------------------------------------------------------------------- the page
def test_the_results_tab_shows_the_query_for_its_choices(qtbot, page, results, messages):
    page.set_project(results)
    settle(qtbot, page)
    tab = page.results_tab
    assert tab.choices == views.ResultsChoices(chart="rep-decade-shares", chart_options=tab.controls.values())
    assert shown(tab.table) == as_shown(views.results_table(results, tab.choices))

    tab.table_choice.setCurrentText("Tests across decades")
    assert tab.choices.table == "tests"
    settle(qtbot, page)
    assert shown(tab.table) == as_shown(views.results_table(results, tab.choices))

    role = tab.controls.widget("role")
    role.setCurrentIndex(role.count() - 1)
    assert tab.choices.options["role"] == role.currentData()
    tab.choose_chart("rep-heatmap")
    assert tab.choices.chart == "rep-heatmap"
    model = tab.controls.widget("model")
    model.setCurrentIndex(model.findData("m1990s"))
    assert tab.choices.options["model"] == "m1990s"
    settle(qtbot, page)
    frame = views.results_chart_frame(results, tab.choices)
    assert set(frame["model"]) == {"m1990s"}
    assert tab.plot.frame.reset_index(drop=True).equals(frame.reset_index(drop=True))

    # the state, not the widgets, is what is read: a table asked for through it is the one shown
    tab.choose_table("spread")
    settle(qtbot, page)
    assert tab.table_choice.currentText() == "Spread per demographic"
    assert shown(tab.table) == as_shown(views.results_table(results, tab.choices))
    assert not messages


def test_the_entities_tab_compares_what_its_choices_say(qtbot, page, stored_completions, messages):  # noqa: F811
    page.set_project(stored_completions)
    settle(qtbot, page)
    tab = page.entities_tab
    item = next(tab.models.item(i) for i in range(tab.models.count())
                if tab.models.item(i).data(Qt.ItemDataRole.UserRole) == "tuned-1950s")
    item.setCheckState(Qt.CheckState.Checked)
    assert tab.choices.models == ("tuned-1950s",)
    tab.books.set_choice("decade=1990s")
    assert (tab.choices.tag, tab.choices.book_set) == ("decade=1990s", None)
    tab.compare_button.click()
    settle(qtbot, page)
    assert shown(tab.summary) == as_shown(views.entities_summary_table(stored_completions, tab.choices))
    assert shown(tab.comparison) == as_shown(views.entities_comparison_table(stored_completions, tab.choices))
    click_row(tab.summary, 1)
    rows, _ = views.entities_result(stored_completions, tab.choices).summary_row_completions(1)
    assert shown(tab.responses) == as_shown(views.eep_responses_view(rows))
    assert not messages


def test_the_sets_classify_and_runs_tabs_show_the_core_tables(qtbot, page, results, messages):
    page.set_project(results)
    settle(qtbot, page)
    sets = page.sets_tab
    names = [sets.sets.item(i).data(Qt.ItemDataRole.UserRole) for i in range(sets.sets.count())]
    sets.sets.setCurrentRow(names.index("religion"))
    assert sets.choices == views.SetChoices("religion")
    assert shown(sets.roles) == as_shown(views.set_roles_table(results, sets.choices))
    assert shown(sets.words) == as_shown(views.set_words_table(results, sets.choices))

    classify = page.classify_tab
    classify.task_name.setText("  second look ")
    assert classify.choices == views.AgreementChoices(task="second look")
    assert shown(page.runs_tab.runs) == as_shown(views.runs_table(results))
    assert not messages


# ---------------------------------------------------------------------------------------------- the CLI
def test_rep_stats_prints_the_results_query(results, capsys):
    path = results.path
    code, out = run_cli(capsys, "rep", "stats", path, "--table", "tests", "--demographic", "gender",
                        "--format", "csv")
    assert code == 0
    same_csv(out, views.results_frame(results, views.ResultsChoices(table="tests", demographics=("gender",))))
    code, out = run_cli(capsys, "rep", "stats", path, "--model", "m1950s", "--format", "csv")
    assert code == 0
    same_csv(out, views.results_frame(results, views.ResultsChoices(models=("m1950s",))))


def test_rep_entities_stored_prints_the_entities_query(stored_completions, capsys):  # noqa: F811
    code, out = run_cli(capsys, "rep", "entities", stored_completions.path, "--stored", "--tag", "decade=1990s",
                        "--model", "base", "--format", "csv")
    assert code == 0
    choices = views.EntitiesChoices(models=("base",), tag="decade=1990s")
    same_csv(out, views.entities_result(stored_completions, choices).summary)
    code, out = run_cli(capsys, "rep", "entities", stored_completions.path, "--tag", "decade=1990s")
    assert code == 1
