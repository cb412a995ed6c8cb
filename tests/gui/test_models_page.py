"""The Models page: add, edit, remove, test in the background, the cache size and Clear, the price table."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

import workbench.models.catalog as registry
from tests.fixtures.fake_keys import fake_key
from tests.fixtures.servers import free_port
from ui.background import BackgroundOps
from ui.models.model_dialog import KEY_ENV, ModelDialog
from ui.models.page import ModelsPage
from workbench import jobs
from workbench.models import prices
from workbench.models.base import GenerationParams, prompt_request
from workbench.models.cache import cache_size
from workbench.models.catalog import ModelSpec


@pytest.fixture
def page(shown_page, project):
    return shown_page(ModelsPage, project, size=(1100, 700))


def labels(page) -> list[str]:
    return [page.table.item(r, 0).text() for r in range(page.table.rowCount())]


def fill(dialog: ModelDialog, *, label: str, backend: str = "openai", ref: str = "tiny", url: str = "",
         key_env: str = "", params: str = "", tags: dict[str, str] | None = None) -> None:
    dialog.label_edit.setText(label)
    dialog.backend_box.setCurrentIndex(dialog.backend_box.findData(backend))
    dialog.ref_edit.setText(ref)
    dialog.url_edit.setText(url)
    if key_env:
        dialog.key_box.setCurrentIndex(dialog.key_box.findData(KEY_ENV))
        dialog.key_name_edit.setText(key_env)
    dialog.params_edit.setText(params)
    for key, value in (tags or {}).items():
        dialog.add_tag_row(key, value)


def test_adding_a_model_through_the_dialog(page, project):
    assert "No models yet" in page.hint.text()
    page.add_model()
    dialog = page.dialog
    assert dialog.isVisible()
    assert "never stores the key itself" in dialog.key_note.text()
    fill(dialog, label="api-1950s", url="http://127.0.0.1:9/v1", key_env="MY_KEY_VAR", params="concurrency=4",
         tags={"decade": "1950s", "fine-tuned": ""})
    dialog.accept()
    assert not dialog.isVisible()
    spec = registry.get_model(project, "api-1950s")
    assert (spec.api_key_env, spec.params, spec.tags) == ("MY_KEY_VAR", {"concurrency": 4},
                                                          {"decade": "1950s", "fine-tuned": ""})
    assert labels(page) == ["api-1950s"]
    assert page.table.item(0, 4).text() == "variable MY_KEY_VAR (not set)"  # the key is missing in this session
    assert "export MY_KEY_VAR=" in page.table.item(0, 4).toolTip()
    assert page.table.selectedIndexes()  # the new model is selected


def test_costs_nothing_is_ticked_for_a_server_of_ones_own_and_kept_out_of_the_parameters(page, project):
    registry.add_model(project, ModelSpec(label="here", backend="openai", ref="tiny",
                                          base_url="http://127.0.0.1:9/v1", params={"timeout": 30}))
    page.refresh()
    page.select_label("here")
    page.edit_selected()
    dialog = page.dialog
    assert not dialog.free_box.isHidden() and not dialog.free_box.isChecked()
    dialog.free_box.setChecked(True)
    dialog.accept()
    assert registry.get_model(project, "here").params == {"timeout": 30, "free": True}
    page.edit_selected()
    dialog = page.dialog
    assert dialog.free_box.isChecked() and dialog.params_edit.text() == "timeout=30"
    dialog.free_box.setChecked(False)
    dialog.accept()
    assert registry.get_model(project, "here").params == {"timeout": 30}
    page.edit_selected()
    page.dialog.backend_box.setCurrentIndex(page.dialog.backend_box.findData("gguf"))
    assert page.dialog.free_box.isHidden()  # a model on this computer costs nothing anyway
    page.dialog.reject()


def test_a_mistake_keeps_the_dialog_open_with_the_reason(page, project):
    page.add_model()
    dialog = page.dialog
    fill(dialog, label="pasted", key_env=fake_key("proj-Abc123def456ghi789jkl"))
    dialog.accept()
    assert dialog.isVisible()
    assert "looks like an API key itself" in dialog.show_error_text()
    assert registry.list_models(project) == []
    fill(dialog, label="gguf", backend="gguf", ref="/nowhere/model.gguf")
    dialog.accept()
    assert "There is no GGUF file" in dialog.show_error_text()
    dialog.reject()


def test_editing_a_model_changes_its_tags(page, project):
    registry.add_model(project, ModelSpec(label="m", backend="openai", ref="tiny", base_url="http://127.0.0.1:9/v1",
                                          tags={"decade": "1950s"}))
    page.refresh()
    page.select_label("m")
    page.edit_selected()
    dialog = page.dialog
    assert dialog.tags() == {"decade": "1950s"}
    assert dialog.url_edit.text() == "http://127.0.0.1:9/v1"
    dialog.tags_table.item(0, 1).setText("1960s")
    dialog.add_tag_row("fine-tuned", "")
    dialog.accept()
    assert registry.get_model(project, "m").tags == {"decade": "1960s", "fine-tuned": ""}
    assert page.table.item(0, column(page, "Tags")).text() == "decade=1960s, fine-tuned"


def test_the_test_button_shows_the_answer_and_latency(page, project, llama_server, qtbot):
    registry.add_model(project, ModelSpec(label="local", backend="openai", ref="tiny", base_url=llama_server.base_url))
    page.refresh()
    page.select_label("local")
    assert page.test_button.isEnabled()
    page.test_button.click()
    assert not page.test_button.isEnabled()  # one test at a time; the window stays responsive
    qtbot.waitUntil(lambda: page.test_op is None, timeout=60_000)
    text = page.test_result.text()
    assert text.startswith("local answered in ") and " s: " in text
    assert page.test_button.isEnabled()


def test_a_failed_test_says_why(page, project, qtbot):
    url = f"http://127.0.0.1:{free_port()}/v1"
    registry.add_model(project, ModelSpec(label="down", backend="openai", ref="tiny", base_url=url,
                                          params={"max_retries": 0}))
    page.refresh()
    page.select_label("down")
    page.test_selected()
    qtbot.waitUntil(lambda: page.test_op is None, timeout=60_000)
    assert "down did not answer. Could not connect to " + url in page.test_result.text()


def test_removing_a_model_used_by_runs_asks_first(page, project, messages):
    spec = registry.add_model(project, ModelSpec(label="used", backend="external", ref="gpt-4"))
    run_id = jobs.create_run(project, "test", model_id=spec.id)
    jobs.run_job(project, run_id, [jobs.Unit(1)], lambda units, state: [(u, jobs.Outcome(raw="x")) for u in units])
    page.refresh()
    page.select_label("used")
    messages["answer"] = False
    page.remove_selected()
    assert "1 run(s) holding 1 response(s)" in messages["questions"][-1]
    assert labels(page) == ["used"]
    messages["answer"] = True
    page.remove_selected()
    assert labels(page) == [] and registry.list_models(project) == []


def test_cache_size_and_clear(page, project, llama_server, messages):
    spec = registry.add_model(project, ModelSpec(label="local", backend="openai", ref="tiny",
                                                 base_url=llama_server.base_url))
    with registry.open_backend(spec, project) as backend:
        list(backend.generate([prompt_request(backend, f"q{i}", GenerationParams(max_tokens=2)) for i in range(3)]))
    page.refresh()
    assert page.cache_label.text().startswith("3 cached answers, ")
    assert page.clear_cache_button.isEnabled()
    page.clear_cache_button.click()
    assert "Forget all 3 cached answers" in messages["questions"][-1]
    assert cache_size(project) == (0, 0)
    assert page.cache_label.text() == "0 cached answers, 0 bytes"


def price_row(page, model: str) -> int:
    return next(r for r in range(page.price_table.rowCount()) if page.price_table.item(r, 0).text() == model)


def test_prices_are_edited_in_the_table(page, project, messages):
    assert "2025-06-01" in page.price_note.text()
    row = price_row(page, "gpt-4o-mini*")
    assert page.price_table.item(row, 3).text() == "default"
    page.price_table.item(row, 1).setText("0.2")  # the user's own price for a default entry
    page.add_price_row()
    last = page.price_table.rowCount() - 1
    for column, text in enumerate(["tiny", "1.5", "3"]):
        page.price_table.item(last, column).setText(text)
    page.save_prices_button.click()
    assert messages["errors"] == messages["infos"] == []
    mini = prices.price_for(project, "gpt-4o-mini")
    assert (mini.input_per_million, mini.output_per_million, mini.source) == (0.2, 0.6, "project")
    assert prices.price_for(project, "tiny").input_per_million == 1.5
    assert prices.price_for(project, "gpt-4o").source == "default"  # untouched defaults stay defaults
    assert page.price_table.item(price_row(page, "tiny"), 3).text() == "yours"

    page.price_table.item(price_row(page, "tiny"), 1).setText("cheap")
    page.save_prices_button.click()
    assert "not a number" in messages["errors"][-1]
    assert prices.price_for(project, "tiny").input_per_million == 1.5  # nothing half-saved

    page.price_table.selectRow(price_row(page, "tiny"))
    page.remove_price_rows()
    page.save_prices_button.click()
    assert prices.price_for(project, "tiny") is None


def test_without_a_project_the_page_says_so(qtbot):
    ops = BackgroundOps()
    page = ModelsPage(ops)
    qtbot.addWidget(page)
    page.set_project(None)
    assert "Open or create a project" in page.hint.text()
    assert not page.add_button.isEnabled()
    QApplication.processEvents()


def test_a_set_key_variable_and_imported_results_read_plainly(page, project, monkeypatch):
    monkeypatch.setenv("PALIMPSEST_TEST_KEY_VAR", "x" * 8)
    registry.add_model(project, ModelSpec(label="api", backend="openai", ref="tiny", base_url="http://127.0.0.1:9/v1",
                                          api_key_env="PALIMPSEST_TEST_KEY_VAR"))
    registry.add_model(project, ModelSpec(label="published", backend="external", ref=""))
    page.refresh()
    rows = {page.table.item(r, 0).text(): r for r in range(page.table.rowCount())}
    assert page.table.item(rows["api"], 4).text() == "variable PALIMPSEST_TEST_KEY_VAR"
    assert "it is set" in page.table.item(rows["api"], 4).toolTip()
    assert page.table.item(rows["published"], 2).text() == "results imported from files"


def column(page, title: str) -> int:
    headers = [page.table.horizontalHeaderItem(c).text() for c in range(page.table.columnCount())]
    return headers.index(title)


def test_the_table_shows_what_each_model_costs_and_how_many_requests_it_sends_at_once(page, project, messages):
    page.add_model()
    dialog = page.dialog
    fill(dialog, label="mine", url="http://127.0.0.1:9/v1")
    assert dialog.concurrency_box.value() == registry.DEFAULT_CONCURRENCY and not dialog.concurrency_box.isHidden()
    dialog.concurrency_box.setValue(24)
    dialog.free_box.setChecked(True)
    dialog.accept()
    assert messages["questions"] == []  # a server of one's own: nothing to confirm
    assert registry.get_model(project, "mine").params == {"free": True, "concurrency": 24}
    page.add_model()
    dialog = page.dialog
    fill(dialog, label="gpt", ref="gpt-4o-mini")
    dialog.free_box.setChecked(True)
    messages["answer"] = False
    dialog.accept()
    assert "api.openai.com is a paid service" in messages["questions"][-1]
    assert "--yes" not in messages["questions"][-1]
    assert dialog.isVisible() and registry.list_models(project)[0].label == "mine"
    dialog.free_box.setChecked(False)
    dialog.accept()
    rows = {page.table.item(r, 0).text(): r for r in range(page.table.rowCount())}
    costs, at_once = column(page, "Costs"), column(page, "At once")
    assert page.table.item(rows["mine"], costs).text() == "marked free"
    assert page.table.item(rows["gpt"], costs).text() == "paid"
    assert "ask before anything is sent" in page.table.item(rows["gpt"], costs).toolTip()
    assert page.table.item(rows["mine"], at_once).text() == "24"
    assert page.table.item(rows["gpt"], at_once).text() == str(registry.DEFAULT_CONCURRENCY)
    page.edit_selected()
    assert page.dialog.concurrency_box.value() == registry.DEFAULT_CONCURRENCY
    page.dialog.reject()
