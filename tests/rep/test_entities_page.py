"""The Entities tab of the Bias (REP) page and its fine-tuning data dialog, driven as a scholar would."""

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from scipy.stats import mannwhitneyu

from tests.fixtures.rep_data import external_model, store_run
from workbench import jobs
from workbench.models.base import GenerationParams
from workbench.probes.rep.entities import EEP_KIND
from workbench.probes.rep.run import run_config
from workbench.probes.rep.sets import get_set

WAIT_MS = 120_000


def open_tab(qtbot, page, project):
    page.set_project(project)
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=WAIT_MS)
    page.tabs.setCurrentWidget(page.entities_tab)
    return page.entities_tab


def wait_idle(qtbot, page):
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=WAIT_MS)


def cells(table, column_name):
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    column = headers.index(column_name)
    return [table.item(r, column).text() for r in range(table.rowCount())]


def click_row(table, row):
    QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton,
                     pos=table.visualItemRect(table.item(row, 0)).center())


def tick(widget, wanted):
    for i in range(widget.count()):
        item = widget.item(i)
        on = item.data(Qt.ItemDataRole.UserRole) in wanted
        item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)


def store_eep(project, model, texts):
    """Completions of the first EEP stem, stored through the real job runner."""
    eep = get_set(project, "eep")
    key = eep.parsed.prompts[0].key
    items = {(eep.prompt_ids[key], s): text for s, text in enumerate(texts)}
    return store_run(project, EEP_KIND, model, GenerationParams(temperature=1.0, max_tokens=50, seed=0),
                     run_config([eep], len(texts)), items)


@pytest.fixture
def stored_completions(project, decade_books):
    external_model(project, "base")
    external_model(project, "tuned-1950s", decade="1950s", **{"fine-tuned": ""})
    store_eep(project, "base", ["We drove to Seattle in the rain.", "nothing here at all"])
    store_eep(project, "tuned-1950s",
              ["We took the train to Chicago.", "Harriet Quill wrote to Chicago and to Seattle."])
    return project


def test_comparing_stored_completions_shows_overlap_the_test_and_the_matched_entities(
        qtbot, page, stored_completions, messages):
    tab = open_tab(qtbot, page, stored_completions)
    assert [tab.models.item(i).text() for i in range(tab.models.count())] == [
        "base (base)", "tuned-1950s (decade 1950s, fine-tuned)"]
    assert tab.stems.count() == len(get_set(stored_completions, "eep").parsed.prompts)
    tab.books.set_choice("decade=1950s")
    assert tab.books.count.text() == "2 books"
    qtbot.mouseClick(tab.compare_button, Qt.MouseButton.LeftButton)
    assert tab.progress.isVisible() and not tab.run_button.isEnabled()
    wait_idle(qtbot, page)
    assert not messages and tab.run_button.isEnabled()

    # one row per model and prompt, and one over all prompts
    assert cells(tab.summary, "Model") == ["base", "base", "tuned-1950s", "tuned-1950s"]
    assert cells(tab.summary, "Prompt") == ["saturday_city", "all prompts"] * 2
    assert cells(tab.summary, "Completions") == ["2"] * 4
    assert cells(tab.summary, "With entities") == ["1", "1", "2", "2"]
    means = cells(tab.summary, "Mean overlap (95% interval)")
    assert means[1] == "0.0%"  # one completion with entities: no interval
    assert means[3].startswith("83.3% (")  # (1 + 2/3) / 2
    assert "4 completions of 2 model(s) compared with the books tagged decade=1950s" in tab.status.text()

    # base against fine-tuned, with the test named and its p-value
    expected = mannwhitneyu([1.0, 2 / 3], [0.0], alternative="two-sided")
    assert cells(tab.comparison, "Base models") == ["0.0% (n = 1)"]
    assert cells(tab.comparison, "Fine-tuned models") == ["83.3% (n = 2)"]
    assert cells(tab.comparison, "Test") == ["Mann-Whitney U, two-sided"]
    assert cells(tab.comparison, "p-value") == [f"{expected.pvalue:.3f}"]
    assert cells(tab.comparison, "U") == [f"{expected.statistic:.1f}"]

    # a click on a summary row lists its completions; a click on one shows it with its matches marked
    click_row(tab.summary, 3)
    assert tab.responses.rowCount() == 2
    assert tab.responses_label.text() == "2 completion(s) of tuned-1950s, all prompts"
    assert cells(tab.responses, "Entities in the books") == ["1 of 1 (100.0%)", "2 of 3 (66.7%)"]
    assert cells(tab.responses, "Matched entities")[1] == "chicago; harriet quill"
    click_row(tab.responses, 1)
    detail = tab.detail.toHtml()
    marked = [part.split(">", 1)[1].split("<", 1)[0] for part in detail.split("background-color:#ffe58a")[1:]]
    assert marked == ["Harriet Quill", "Chicago"]
    assert "2 of its 3 distinct named entities occur in the books" in tab.detail.toPlainText()
    click_row(tab.summary, 0)
    assert cells(tab.responses, "Entities in the books") == ["0 of 1 (0.0%)", "no entities"]

    # the same completions against another decade's books, without asking any model
    tab.books.set_choice("decade=1990s")
    qtbot.mouseClick(tab.compare_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, page)
    assert cells(tab.summary, "Mean overlap (95% interval)")[1] == "100.0%"
    assert len(jobs.runs_frame(stored_completions, kind=EEP_KIND)) == 2
    assert not messages


def test_running_the_prompts_from_the_tab_with_tiny_models(qtbot, page, project, decade_books, decade_models, messages):
    tab = open_tab(qtbot, page, project)
    tick(tab.models, {"tiny-1950s", "tiny-judge"})
    tab.samples.setValue(2)
    tab.max_tokens.setValue(6)
    tab.books.set_choice("decade=1950s")
    qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    assert tab.progress.isVisible()
    wait_idle(qtbot, page)
    assert not messages
    stems = len(get_set(project, "eep").parsed.prompts)
    runs = jobs.runs_frame(project, kind=EEP_KIND)
    assert sorted(runs["model"]) == ["tiny-1950s", "tiny-judge"]
    assert (runs["ok"] == 2 * stems).all() and (runs["status"] == "done").all()
    assert tab.summary.rowCount() == 2 * (stems + 1)
    assert set(cells(tab.summary, "Decade, stage")) == {"1950s, fine-tuned", "base"}
    assert cells(tab.comparison, "Test") == ["Mann-Whitney U, two-sided"]
    assert f"{4 * stems} new completion(s) sampled" in tab.status.text()
    assert page.runs_tab.runs.rowCount() == 2  # the runs are listed on the Runs tab too
    # asked again, the runs are complete: nothing new is sampled
    qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, page)
    assert "0 new completion(s) sampled" in tab.status.text()
    assert len(jobs.runs_frame(project, kind=EEP_KIND)) == 2


def test_cancel_stops_a_run_and_keeps_what_it_finished(qtbot, page, project, decade_books, decade_models, messages):
    tab = open_tab(qtbot, page, project)
    tick(tab.models, {"tiny-1950s"})
    tab.samples.setValue(60)
    tab.max_tokens.setValue(12)
    tab.books.set_choice("decade=1950s")
    qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.progress.bar.value() >= 1, timeout=WAIT_MS)
    qtbot.mouseClick(tab.progress.cancel_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, page)
    run = jobs.runs_frame(project, kind=EEP_KIND).iloc[0]
    assert run["status"] == "cancelled" and 0 < run["ok"] < run["total"]
    assert "Stopped at your request" in tab.status.text()
    assert not tab.progress.isVisible() and tab.summary.rowCount() == 0
    assert not messages


def test_running_needs_models_and_books(qtbot, page, stored_completions, messages):
    tab = open_tab(qtbot, page, stored_completions)
    qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    assert messages == ["Tick at least one model to run the prompts on."]
    tick(tab.models, {"tuned-1950s"})
    tab.books.set_choice("")
    qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    assert "Choose the books to compare with" in messages[-1]
    tab.books.set_choice("decade=1950s")
    qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)  # imported results cannot be sampled
    assert "tuned-1950s holds imported results and cannot be run" in messages[-1]
    tab.books.set_choice("decade=1880s")
    assert tab.books.count.text() == "No book matches yet."
    qtbot.mouseClick(tab.compare_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, page)
    assert messages[-1] == "No book is tagged decade=1880s. Tag books on the Library page first."
    assert not page.ops.busy


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_fine_tuning_data_from_the_tab(qtbot, page, project, decade_books, tmp_path, monkeypatch, messages):
    questions = []
    monkeypatch.setattr("ui.dialogs.ask", lambda parent, question: questions.append(question) or False)
    tab = open_tab(qtbot, page, project)
    tab.books.set_choice("decade=1950s")
    qtbot.mouseClick(tab.finetune_button, Qt.MouseButton.LeftButton)
    dialog = tab.finetune_dialog
    assert dialog.isVisible()
    assert dialog.books.choice() == ("decade=1950s", None)  # starts from the tab's books
    assert dialog.out.text().endswith("finetune-decade-1950s.jsonl")
    dialog.chunk_words.setValue(25)
    dialog.seed.setValue(3)
    dialog.out.setText(str(tmp_path / "fifties"))  # the ending is added
    qtbot.mouseClick(dialog.write_button, Qt.MouseButton.LeftButton)
    assert dialog.progress.isVisible() and not dialog.write_button.isEnabled()
    wait_idle(qtbot, page)
    out = tmp_path / "fifties.jsonl"
    rows = read_jsonl(out)
    assert len(rows) > 4
    assert dialog.result.text().startswith(f"Wrote {len(rows)} examples (")
    assert dialog.result.text().endswith(f"from 2 books) to {out}.")
    assert all([m["role"] for m in row["messages"]] == ["user", "assistant"] for row in rows)
    assert not any("Seattle" in json.dumps(row) for row in rows)  # the 1990s book stays out
    assert dialog.write_button.isEnabled() and not messages

    # writing again over the file asks first; "no" leaves it alone
    before = out.read_text(encoding="utf-8")
    dialog.seed.setValue(4)
    qtbot.mouseClick(dialog.write_button, Qt.MouseButton.LeftButton)
    assert questions == ["fifties.jsonl already exists. Replace it?"] and not page.ops.busy
    assert out.read_text(encoding="utf-8") == before

    # a file that is not JSON lines is refused with a sentence, nothing is written
    dialog.out.setText(str(tmp_path / "fifties.json"))
    qtbot.mouseClick(dialog.write_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, page)
    assert "give the file a .jsonl ending" in messages[-1]
    assert not (tmp_path / "fifties.json").exists()
