"""The Bias (REP) page, driven as a scholar would: results and click-through, sets editing, a run, export."""

import random

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tests.fixtures.chart_view import mark_where, wait_drawn
from tests.fixtures.rep_data import external_model, store_rep_run
from workbench import jobs
from workbench.probes.rep.sets import get_set

WAIT_MS = 60_000
WORDS = [" a woman", " a man", " the neighbour"]


@pytest.fixture
def results(project):
    gender = get_set(project, "gender")
    rng = random.Random(2)
    for decade, weights in (("1950s", [1, 8, 1]), ("1990s", [4, 4, 2])):
        external_model(project, f"m{decade}", decade=decade, **{"fine-tuned": ""})
        completions = {(r.key, s): rng.choices(WORDS, weights)[0] for r in gender.parsed.roles for s in range(10)}
        store_rep_run(project, f"m{decade}", gender, completions, samples=10)
    return project


def open_project(qtbot, page, project):
    page.set_project(project)
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=WAIT_MS)


def test_results_table_chart_and_click_through(qtbot, page, results, messages):
    open_project(qtbot, page, results)
    tab = page.results_tab
    assert "100 completions from 2 model(s)" in tab.summary.text()
    assert tab.table.rowCount() == 2 * 5 * 4  # models x roles x categories
    assert tab.plot.kind == "rep-decade-shares" and tab.chart_options()["role"] == "gender/homemaker"

    # a real click on the bottom ("woman") segment of the first bar
    segment = mark_where(tab.plot, year=1950, category="woman")
    QTest.mouseClick(tab.plot.canvas, Qt.MouseButton.LeftButton, pos=tab.plot.pos_of(segment))
    qtbot.waitUntil(lambda: tab.responses.rowCount() > 0, timeout=5000)
    columns = [tab.responses.horizontalHeaderItem(c).text() for c in range(tab.responses.columnCount())]
    raws = {tab.responses.item(r, columns.index("Completion")).text() for r in range(tab.responses.rowCount())}
    decades = {tab.responses.item(r, columns.index("Decade")).text() for r in range(tab.responses.rowCount())}
    assert raws == {"a woman"} and decades == {"1950s"}
    assert "category woman" in tab.responses_label.text()

    tab.choose_chart("rep-trends")
    wait_drawn(qtbot, tab.plot, "rep-trends")
    picked = []
    tab.plot.picked.connect(picked.append)
    man_1990 = mark_where(tab.plot, year=1990, category="man")
    assert "man, 1990s" in tab.plot.hover_at(tab.plot.pos_of(man_1990))
    tab.plot.click_at(tab.plot.pos_of(man_1990))
    assert picked[-1] == {"year": 1990, "demographic": "gender", "role": "homemaker", "category": "man"}
    tab.choose_chart("rep-heatmap")
    wait_drawn(qtbot, tab.plot, "rep-heatmap")
    tab.plot.click_at(tab.plot.pos_of(mark_where(tab.plot, role="nurse", category="man")))
    assert picked[-1] == {"model": "m1950s", "demographic": "gender", "role": "nurse", "category": "man"}
    assert {tab.responses.item(r, columns.index("Role")).text() for r in range(tab.responses.rowCount())} == {"nurse"}

    tab.table_choice.setCurrentText("Tests across decades")
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=WAIT_MS)  # computed on a worker
    assert tab.table.rowCount() == 5 * (1 + 4)
    assert not messages


def test_export_figure_from_the_page(qtbot, page, results, tmp_path):
    open_project(qtbot, page, results)
    page.results_tab.export_figure(str(tmp_path / "bars.pdf"))
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=WAIT_MS)
    assert (tmp_path / "bars.pdf").read_bytes()[:5] == b"%PDF-" and (tmp_path / "bars.csv").exists()


def test_editing_a_set_shows_the_broken_line_then_saves_a_version(qtbot, page, project):
    open_project(qtbot, page, project)
    tab = page.sets_tab
    names = [tab.sets.item(i).data(Qt.ItemDataRole.UserRole) for i in range(tab.sets.count())]
    assert names[:4] == ["gender", "race", "religion", "sexual_orientation"] and "eep" in names
    tab.sets.setCurrentRow(names.index("race"))
    assert tab.roles.rowCount() == 5 and tab.words.rowCount() == 3
    text = tab.editor.toPlainText()
    broken_line = next(i for i, line in enumerate(text.splitlines(), start=1) if line.startswith('key = "surgeon"'))
    tab.editor.setPlainText(text.replace('key = "surgeon"', 'key = "Surgeon!"'))
    qtbot.mouseClick(tab.save_button, Qt.MouseButton.LeftButton)
    assert f"line {broken_line}" in tab.status.text()
    assert tab.editor.textCursor().blockNumber() == broken_line - 1
    tab.editor.setPlainText(text.replace("outside the station", "outside the cinema"))
    qtbot.mouseClick(tab.save_button, Qt.MouseButton.LeftButton)
    assert "version 2" in tab.status.text()
    assert get_set(project, "race").parsed.role("stabbing_suspect").stem.count("cinema") == 1


def test_a_run_from_the_page_with_a_tiny_model(qtbot, page, project, decade_models, messages):
    open_project(qtbot, page, project)
    tab = page.runs_tab
    page.tabs.setCurrentWidget(tab)
    for widget, wanted in ((tab.models, {"tiny-1950s"}), (tab.demographics, {"race"})):
        for i in range(widget.count()):
            item = widget.item(i)
            on = item.data(Qt.ItemDataRole.UserRole) in wanted
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
    texts = [tab.models.item(i).text() for i in range(tab.models.count())]
    assert "tiny-1950s (decade 1950s, fine-tuned)" in texts and "tiny-judge (base)" in texts
    tab.samples.setValue(2)
    tab.max_tokens.setValue(6)
    qtbot.mouseClick(tab.start_button, Qt.MouseButton.LeftButton)
    assert tab.progress.isVisible()
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=WAIT_MS)
    runs = jobs.runs_frame(project, kind="rep")
    assert len(runs) == 1 and runs.iloc[0]["ok"] == 10 and runs.iloc[0]["status"] == "done"
    assert tab.runs.rowCount() == 1 and not messages
    assert "10 completions from 1 model(s)" in page.results_tab.summary.text()


def _column(table, title):
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    index = headers.index(title)
    return [table.item(r, index).text() for r in range(table.rowCount())]


def test_results_speak_plainly(qtbot, page, results, messages):
    """No machine words on the Results tab: shares as percentages, intervals as one cell, roles by name."""
    import re

    open_project(qtbot, page, results)
    tab = page.results_tab
    assert tab.classifier.currentText() == "Word lists" and tab.classifier_key() == "lexical"
    assert tab.controls.widget("role").currentText() == "Gender: person who keeps the house"
    headers = [tab.table.horizontalHeaderItem(c).text() for c in range(tab.table.columnCount())]
    assert {"Model", "Role", "Category", "Share", "95% CI (Wilson)", "Count"} <= set(headers)
    assert not [h for h in headers if "_" in h or h != h.strip() or h.islower()]
    assert all(re.fullmatch(r"\d+%", share) for share in _column(tab.table, "Share"))
    assert all(re.fullmatch(r"\d+% – \d+%", ci) for ci in _column(tab.table, "95% CI (Wilson)"))
    assert all(re.fullmatch(r"\d+ of \d+", c) for c in _column(tab.table, "Count"))
    assert "top_student" not in _column(tab.table, "Role") and "best student" in _column(tab.table, "Role")
    assert tab.table.verticalHeader().isHidden()

    tab.table_choice.setCurrentText("Tests across decades")
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=WAIT_MS)  # computed on a worker
    assert set(_column(tab.table, "Test")) == {"Chi-square", "Kruskal-Wallis"}
    assert "all categories" in _column(tab.table, "Category")
    assert all(p == "" or p == "< 0.001" or re.fullmatch(r"\d\.\d{3}", p) for p in _column(tab.table, "p"))

    # the model choice only shows where it matters (the heatmap)
    assert tab.controls.widget("model") is None
    tab.choose_chart("rep-heatmap")
    assert tab.controls.widget("model").isVisible()
    assert not messages


def test_rep_runs_are_listed_in_plain_words(qtbot, page, results):
    open_project(qtbot, page, results)
    kinds = _column(page.runs_tab.runs, "Kind")
    assert kinds and set(kinds) == {"Role-specific elicitation prompts (REP)"}
    assert all("per prompt" in about for about in _column(page.runs_tab.runs, "About"))
    assert page.runs_tab.runs_hint.isHidden()  # the "no runs yet" hint goes once there are runs


def test_exporting_the_shown_table_writes_the_computed_frame(qtbot, page, results, tmp_path, messages):
    import pandas as pd

    open_project(qtbot, page, results)
    page.results_tab.export_table(str(tmp_path / "shares.csv"))
    frame = pd.read_csv(tmp_path / "shares.csv")
    assert {"share", "ci_low", "ci_high"} <= set(frame.columns)  # the CSV keeps the numbers, not their wording
    assert "Wrote" in page.results_tab.summary.text() and not messages
