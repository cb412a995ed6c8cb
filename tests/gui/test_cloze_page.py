"""The Name cloze page, driven as a scholar would: extract passages, run a tiny local model, see per-book
accuracy; API models show their cost and ask first; answers appear while a run goes; Cancel keeps what
finished and Continue finishes it; templates are edited into new versions; published results import."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.fixtures.cloze_books import SHORT_TEMPLATE, write_book, write_gpt4books
from tests.fixtures.fault_proxy import Fault
from ui.background import BackgroundOps
from ui.cloze.books_chooser import BOOK, FLAG, IMPORTED, PASSAGES, TAGS
from ui.cloze.page import ClozePage
from workbench.corpus.importer import import_paths
from workbench.corpus.library import set_tags
from workbench.models.catalog import ModelSpec, add_model
from workbench.models.prices import set_price
from workbench.probes.cloze.extract import extract_books
from workbench.probes.cloze.rules import project_settings
from workbench.prompt_templates import save_template

WAIT_MS = 120_000


@pytest.fixture
def library(project, tmp_path):
    """Two made-up books imported from files: 'quay-tales' (12 scenes, tagged gothic) and 'snow-house'
    (2 scenes, so it has fewer passages than asked for)."""
    folder = tmp_path / "books"
    folder.mkdir()
    report = import_paths(project, [write_book(folder, "quay-tales", 12), write_book(folder, "snow-house", 2)])
    assert report.summary().startswith("Added 2 books")
    ids = dict(project.db.execute("SELECT title, id FROM books").fetchall())
    set_tags(project, ids["quay-tales"], {"genre": "gothic"})
    set_tags(project, ids["snow-house"], {"genre": "comic"})
    save_template(project, "short", SHORT_TEMPLATE, "cloze")
    return project, ids


@pytest.fixture
def page(shown_page, library, messages):
    return shown_page(ClozePage, library[0])


def wait_idle(qtbot, page):
    qtbot.waitUntil(lambda: not page.ops.busy and page.operation is None, timeout=WAIT_MS)


def extract_through_core(project, per_book=3):
    extract_books(project, settings=project_settings(project, per_book=per_book, seed=4, fast=True))


def book_rows(page) -> dict[str, int]:
    table = page.books.table
    return {table.item(r, BOOK).text(): r for r in range(table.rowCount())}


def accuracy_rows(page) -> list[dict[str, str]]:
    table = page.results.accuracy
    titles = [c.title for c in table.columns]
    return [{t: table.item(r, i).text() for i, t in enumerate(titles)} for r in range(table.rowCount())]


def stored_answers(project) -> int:
    return project.db.execute("SELECT COUNT(*) FROM responses x JOIN runs r ON r.id = x.run_id "
                              "WHERE r.kind = 'cloze'").fetchone()[0]


# ---------------------------------------------------------------------------------------------- local run
def test_extracting_and_running_a_tiny_local_model_from_the_page(qtbot, page, library, tiny_causal_dir, messages):
    project, ids = library
    add_model(project, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir)))
    page.refresh()
    assert page.books.checked_book_ids() == sorted(ids.values())  # a fresh project ticks every book

    page.books.per_book.setValue(3)
    page.books.fast.setChecked(True)
    qtbot.mouseClick(page.books.extract_button, Qt.MouseButton.LeftButton)
    assert page.progress.isVisible() and not page.books.extract_button.isEnabled()
    wait_idle(qtbot, page)
    rows = book_rows(page)
    table = page.books.table
    assert table.item(rows["quay-tales"], PASSAGES).text() == "3"
    assert table.item(rows["snow-house"], PASSAGES).text() == "2"
    assert table.item(rows["snow-house"], FLAG).text() == "fewer than 3"
    assert table.item(rows["quay-tales"], FLAG).text() == ""
    assert "flagged: snow-house" in page.summary.text()

    page.settings.set_checked_models(["tiny-base"])
    page.settings.choose_template("short")
    page.settings.max_tokens.setValue(4)
    assert page.settings.run_button.isEnabled()
    qtbot.mouseClick(page.settings.run_button, Qt.MouseButton.LeftButton)
    assert page.operation is not None and page.progress.isVisible()
    wait_idle(qtbot, page)

    assert messages["questions"] == [] and messages["errors"] == []  # a local model costs nothing: no question
    run = project.db.execute("SELECT id, kind, status, params FROM runs").fetchone()
    assert run[1] == "cloze" and run[2] == "done" and '"max_tokens": 4' in run[3]
    assert stored_answers(project) == 5
    template = project.db.execute("SELECT t.name FROM runs r JOIN prompt_templates t ON t.id = r.template_id").fetchone()
    assert template[0] == "short"
    shown = {row["Book"]: row for row in accuracy_rows(page)}
    assert set(shown) == {"quay-tales", "snow-house"}
    assert shown["quay-tales"]["Answered"] == "3" and shown["snow-house"]["Answered"] == "2"
    assert shown["snow-house"]["Flagged"] == "yes" and shown["quay-tales"]["Model"] == "tiny-base"
    assert "tiny-base: 5 of 5 passages answered." in page.summary.text()
    assert page.results.runs.column_texts("Status") == ["done"]

    # the page opens again as it was last used (the choices are kept in the project)
    again_ops = BackgroundOps()
    again = ClozePage(again_ops)
    qtbot.addWidget(again)
    again.set_project(project)
    assert again.settings.checked_models() == ["tiny-base"] and again.settings.template.currentData() == "short"
    assert again.settings.max_tokens.value() == 4 and again.books.per_book.value() == 3
    assert again.books.fast.isChecked()
    qtbot.waitUntil(lambda: not again_ops.busy, timeout=WAIT_MS)  # its results are read in the background
    assert {row["Book"] for row in accuracy_rows(again)} == {"quay-tales", "snow-house"}
    again_ops.join()


def test_ticking_books_by_tag_limits_the_run_to_them(qtbot, page, library, tiny_causal_dir):
    project, ids = library
    extract_through_core(project)
    add_model(project, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir)))
    page.refresh()
    qtbot.mouseClick(page.books.none_button, Qt.MouseButton.LeftButton)
    assert page.books.checked_book_ids() == []
    page.books.tag_box.setText("genre=gothic")
    qtbot.mouseClick(page.books.tag_button, Qt.MouseButton.LeftButton)
    assert page.books.checked_book_ids() == [ids["quay-tales"]]
    assert page.books.count_label.text().startswith("1 of 2 books ticked · 3 passages")
    page.settings.set_checked_models(["tiny-base"])
    page.settings.choose_template("short")
    page.settings.max_tokens.setValue(2)
    page.settings.run_button.click()
    wait_idle(qtbot, page)
    books = project.db.execute("SELECT DISTINCT p.book_id FROM responses x JOIN cloze_passages p ON p.id = x.item_id"
                               ).fetchall()
    assert books == [(ids["quay-tales"],)]


def test_showing_the_page_again_keeps_its_rows_unless_the_books_changed(qtbot, page, library):
    """The page reloads each time it is shown; refilling 571 unchanged rows took 50 ms of a frozen window."""
    project, ids = library
    rows = book_rows(page)
    page.books.set_checked([ids["snow-house"]], False)
    first = page.books.table.item(rows["quay-tales"], BOOK)
    page.on_shown()
    assert page.books.table.item(rows["quay-tales"], BOOK) is first  # the same rows, the same ticks
    del first  # a cell's wrapper must not outlive its row (Qt frees refilled cells without telling Python)
    assert page.books.checked_book_ids() == [ids["quay-tales"]]
    assert page.books.count_label.text().startswith("1 of 2 books ticked")
    set_tags(project, ids["quay-tales"], {"genre": "gothic", "era": "victorian"})  # changed on the Library page
    page.on_shown()
    rows = book_rows(page)
    assert "era=victorian" in page.books.table.item(rows["quay-tales"], TAGS).text()
    assert page.books.checked_book_ids() == [ids["quay-tales"]]  # ticks kept across the reload


def test_a_run_needs_a_model_and_a_book(qtbot, page, library, messages):
    project, _ = library
    extract_through_core(project)
    assert not page.settings.run_button.isEnabled()  # no model ticked
    add_model(project, ModelSpec(label="api", backend="openai", ref="gpt-test", base_url="http://127.0.0.1:9/v1"))
    page.refresh()
    page.settings.set_checked_models(["api"])
    page.books.set_all_checked(False)
    page.start_run()
    assert messages["errors"] == ["Choose at least one book (tick it in the list of books)."]
    assert page.operation is None and project.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


# ---------------------------------------------------------------------------------------------- paid APIs
def test_a_paid_model_shows_the_cost_first_and_declining_starts_nothing(qtbot, page, library, messages, monkeypatch):
    monkeypatch.setenv("TEST_API_KEY", "test-key-that-opens-nothing")
    project, _ = library
    extract_through_core(project)
    add_model(project, ModelSpec(label="api", backend="openai", ref="gpt-test", base_url="http://127.0.0.1:9/v1",
                                 api_key_env="TEST_API_KEY"))
    set_price(project, "gpt-test", 2.5, 10.0)
    page.refresh()
    page.settings.set_checked_models(["api"])
    page.settings.choose_template("short")
    messages["answer"] = False
    page.settings.run_button.click()
    qtbot.waitUntil(lambda: bool(messages["questions"]), timeout=WAIT_MS)
    wait_idle(qtbot, page)
    question = messages["questions"][0]
    assert "paid API" in question and "api is a paid API: 5 requests" in question
    assert "prompt tokens" in question and "at most 80 answer tokens" in question  # 5 x 16 tokens
    assert "$2.5 / $10 per million tokens" in question
    assert project.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    assert page.operation is None and not page.ops.busy
    assert "Nothing was started." in page.summary.text() and "api is a paid API: 5 requests" in page.summary.text()


def test_a_paid_model_without_its_key_says_so_before_any_cost_question(qtbot, page, library, messages, monkeypatch):
    monkeypatch.delenv("TEST_MISSING_KEY", raising=False)
    project, _ = library
    extract_through_core(project)
    add_model(project, ModelSpec(label="api", backend="openai", ref="gpt-test", base_url="http://127.0.0.1:9/v1",
                                 api_key_env="TEST_MISSING_KEY"))
    page.refresh()
    page.settings.set_checked_models(["api"])
    page.settings.run_button.click()
    wait_idle(qtbot, page)
    assert messages["questions"] == []  # no cost question for a run that could not start
    assert len(messages["errors"]) == 1
    assert "api cannot be asked yet" in messages["errors"][0] and "TEST_MISSING_KEY" in messages["errors"][0]
    assert project.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_answers_appear_while_the_run_goes_cancel_keeps_them_and_continue_finishes(
        qtbot, page, library, messages, fault_proxy, llama_server):
    project, _ = library
    extract_through_core(project, per_book=6)  # 6 + 2 passages
    add_model(project, ModelSpec(label="api", backend="openai", ref=llama_server.model, base_url=fault_proxy.base_url,
                                 params={"concurrency": 1}))
    page.refresh()
    page.settings.set_checked_models(["api"])
    page.settings.choose_template("short")
    page.settings.max_tokens.setValue(3)
    fault_proxy.script(Fault.ok(), Fault.ok())  # two quick answers, then slow ones: time to see them and cancel
    fault_proxy.always(Fault.slow(3))
    page.settings.run_button.click()
    qtbot.waitUntil(lambda: bool(messages["questions"]), timeout=WAIT_MS)  # the cost, estimated in the background
    assert "at most 24 answer tokens" in messages["questions"][0]

    # the table fills in while the run is still going
    qtbot.waitUntil(lambda: page.results.accuracy.rowCount() > 0, timeout=WAIT_MS)
    assert page.operation is not None
    qtbot.mouseClick(page.progress.cancel_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, page)
    kept = stored_answers(project)
    assert 0 < kept < 8
    status, note = project.db.execute("SELECT status, note FROM runs").fetchone()
    assert status == "cancelled" and "Stopped at your request" in note
    assert sum(int(r["Answered"]) + int(r["Failed"]) for r in accuracy_rows(page)) == kept
    assert "Stopped at your request" in page.summary.text()

    # Continue on the Runs tab asks only the rest
    fault_proxy.always(None)
    fault_proxy.reset()
    page.results.runs.selectRow(0)
    assert page.results.continue_button.isEnabled()
    messages["questions"].clear()
    qtbot.mouseClick(page.results.continue_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(messages["questions"]), timeout=WAIT_MS)  # what is left, estimated in the background
    assert "Continuing run" in messages["questions"][0] and f"{8 - kept} requests" in messages["questions"][0]
    wait_idle(qtbot, page)
    assert stored_answers(project) == 8
    assert len(fault_proxy.posts()) == 8 - kept
    assert project.db.execute("SELECT status FROM runs").fetchone()[0] == "done"
    assert sum(int(r["Answered"]) for r in accuracy_rows(page)) == 8


# ---------------------------------------------------------------------------------------------- templates
def test_editing_a_template_saves_a_new_version_and_bad_text_is_refused(qtbot, page, library):
    project, _ = library
    page.settings.choose_template("short")
    dialog = page.open_template_dialog(new=False)
    assert dialog.body.toPlainText() == SHORT_TEMPLATE and dialog.name.isReadOnly()
    dialog.body.setPlainText("Which name is missing?\n{passage}\nAnswer:")
    dialog.save()
    assert not dialog.isVisible()
    versions = project.db.execute("SELECT version, body FROM prompt_templates WHERE name = 'short' ORDER BY version"
                                  ).fetchall()
    assert [v for v, _ in versions] == [1, 2] and versions[0][1] == SHORT_TEMPLATE
    assert page.settings.template.currentData() == "short" and "v2" in page.settings.template.currentText()

    dialog = page.open_template_dialog(new=True)
    dialog.name.setText("no-gap")
    dialog.body.setPlainText("Name a character from any novel.")
    dialog.save()
    assert dialog.isVisible() and "{passage}" in dialog.error.text()
    assert project.db.execute("SELECT COUNT(*) FROM prompt_templates WHERE name = 'no-gap'").fetchone()[0] == 0
    dialog.reject()


# ---------------------------------------------------------------------------------------------- imports, re-extraction
def test_importing_published_results_fills_the_table(qtbot, page, library, tmp_path):
    project, ids = library
    passage = "The carriage waited in the rain while [MASK] looked for a key."
    files = [
        write_gpt4books(tmp_path, "quay-tales", [("<name>Harriet</name>", "Harriet", passage),
                                                 ("<name>Tom</name>", "Harriet", passage)]),
        write_gpt4books(tmp_path, "pg999", [("<name>Alice</name>", "Alice", passage)]),
    ]
    project.db.execute("UPDATE books SET external_id = 'quay-tales' WHERE id = ?", [ids["quay-tales"]])
    project.db.conn.commit()
    page.import_results(files, "gpt-4 (published)")
    wait_idle(qtbot, page)
    assert "Imported 3 answers for 2 book(s) under 'gpt-4 (published)'" in page.summary.text()
    assert "1 book(s) were not in the library" in page.summary.text()
    shown = {row["Book"]: row for row in accuracy_rows(page)}
    assert shown["quay-tales"]["Correct"] == "1" and shown["quay-tales"]["Accuracy"] == "50%"
    assert shown["pg999"]["Accuracy"] == "100%"
    assert "pg999" in book_rows(page)  # the new id-only book is listed, with its imported passage
    row = book_rows(page)["pg999"]
    assert page.books.table.item(row, PASSAGES).text() == "no text"
    assert page.books.table.item(row, IMPORTED).text() == "1"
    hint = page.settings.models_hint  # results are on screen: 'No models yet' would contradict them
    assert not hint.isHidden() and "gpt-4 (published) hold imported results" in hint.text()
    assert "No models yet" not in hint.text()


def test_extracting_again_over_answered_passages_asks_first(qtbot, page, library, tiny_causal_dir, messages):
    project, _ = library
    extract_through_core(project)
    add_model(project, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir)))
    from workbench.probes.cloze.run import run_cloze

    run_cloze(project, "tiny-base", template="short", params={"max_tokens": 2})
    page.refresh()
    messages["answer"] = False
    assert page.extract() is None
    assert "deletes those passages and their answers" in messages["questions"][0]
    assert stored_answers(project) == 5 and page.operation is None and not page.ops.user_work_running


def test_the_prompt_preview_shows_what_the_model_reads(qtbot, page, library):
    project, ids = library
    page.settings.choose_template("short")
    assert "No passages in the ticked books yet" in page.settings.preview.toPlainText()
    assert SHORT_TEMPLATE in page.settings.preview.toPlainText()
    extract_through_core(project)
    page.refresh()
    page.books.set_checked([ids["quay-tales"]], False)  # the first passage is then one of snow-house's
    first = project.db.execute("SELECT passage FROM cloze_passages WHERE book_id = ? ORDER BY name_start LIMIT 1",
                               [ids["snow-house"]]).fetchone()[0]
    shown = page.settings.preview.toPlainText()
    assert shown == "Fill in the name.\n" + " ".join(first.split()) + "\nAnswer:"
    page.settings.choose_kind("cloze-mlm")
    assert page.settings.preview.toPlainText() == first
    assert not page.settings.template.isEnabled() and not page.settings.temperature.isEnabled()


def test_closing_the_project_empties_the_page(qtbot, page, library):
    project, _ = library
    extract_through_core(project)
    page.refresh()
    assert page.books.table.rowCount() == 2
    page.set_project(None)
    assert page.books.table.rowCount() == 0 and page.results.accuracy.rowCount() == 0
    assert page.settings.models.count() == 0 and page.hint.isVisible() and not page.splitter.isEnabled()


def test_retry_failed_only_asks_again_just_where_the_server_failed(qtbot, page, library, messages, fault_proxy,
                                                                   llama_server):
    project, _ = library
    extract_through_core(project)
    add_model(project, ModelSpec(label="api", backend="openai", ref=llama_server.model, base_url=fault_proxy.base_url,
                                 params={"concurrency": 1, "max_retries": 0}))
    page.refresh()
    page.settings.set_checked_models(["api"])
    page.settings.choose_template("short")
    page.settings.max_tokens.setValue(2)
    fault_proxy.script(Fault.server_error(), Fault.server_error())
    page.settings.run_button.click()
    qtbot.waitUntil(lambda: page.last_result is not None, timeout=WAIT_MS)
    wait_idle(qtbot, page)
    assert "2 failed (use 'Retry failed only' to ask again)" in page.summary.text()
    assert "All failed because:" in page.summary.text()  # the reason is on this page, not only on Jobs
    assert "3 of 5 passages answered" in page.summary.text()  # a failure is not counted as an answer
    assert sum(int(r["Failed"]) for r in accuracy_rows(page)) == 2
    fault_proxy.reset()
    page.settings.retry_button.click()
    qtbot.waitUntil(lambda: len(messages["questions"]) == 2, timeout=WAIT_MS)
    assert "Only failed answers are asked again" in messages["questions"][1]
    wait_idle(qtbot, page)
    assert len(fault_proxy.posts()) == 2  # only the two failures went to the server again
    statuses = project.db.execute("SELECT status, COUNT(*) FROM responses GROUP BY status").fetchall()
    assert statuses == [("ok", 5)]
    assert sum(int(r["Failed"]) for r in accuracy_rows(page)) == 0


def test_the_masked_lm_baseline_runs_from_the_page(qtbot, page, library, tiny_mlm_dir, tiny_causal_dir, messages):
    project, _ = library
    extract_through_core(project)
    add_model(project, ModelSpec(label="tiny-bert", backend="hf", ref=str(tiny_mlm_dir)))
    add_model(project, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir)))
    page.refresh()
    page.settings.set_checked_models(["tiny-bert", "tiny-base"])
    page.settings.choose_kind("cloze-mlm")
    page.settings.run_button.click()
    wait_idle(qtbot, page)
    kinds = project.db.execute("SELECT r.kind, COUNT(*) FROM responses x JOIN runs r ON r.id = x.run_id GROUP BY r.kind"
                               ).fetchall()
    assert kinds == [("cloze-mlm", 5)]
    assert {r["Run"] for r in accuracy_rows(page)} == {"masked-LM baseline"}
    # the generating model cannot be the baseline; it says why and does not stop the other
    assert "tiny-bert: 5 of 5 passages answered." in page.summary.text()
    assert "tiny-base:" in page.summary.text() and "masked language model" in page.summary.text()


def test_the_page_fits_a_laptop_window_even_with_a_message_shown(qtbot, library, messages):
    """A message above the panes must not make the page taller than the window (it used to scroll, cutting off
    the results), and the page is no wider than a 1024-pixel screen leaves it."""
    from ui.main_window import NAV_WIDTH, _scrollable

    project, _ = library
    ops = BackgroundOps()
    page = ClozePage(ops)
    area = _scrollable(page)
    qtbot.addWidget(area)
    area.resize(1024 - NAV_WIDTH, 640)
    area.show()
    page.set_project(project)
    page.show_summary("Extracted 1,234 passages from 24 book(s). " * 6)
    qtbot.waitUntil(lambda: page.summary.isVisible())
    qtbot.wait(50)
    assert page.height() <= area.viewport().height() and page.width() <= area.viewport().width()
    assert page.books.table.columnWidth(BOOK) >= 150  # book titles stay readable
    ops.join()
