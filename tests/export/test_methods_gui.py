"""The Jobs page's "Methods text…" button: the selected run, or all runs, written in the background."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.rep_data import external_model, store_run
from ui.jobs.page import JobsPage
from workbench.models.base import GenerationParams
from workbench.probes.rep.run import run_config
from workbench.probes.rep.sets import get_set


@pytest.fixture
def two_runs(project):
    race = get_set(project, "race")
    ids = []
    for label, decade in (("m1950s", "1950s"), ("m1990s", "1990s")):
        external_model(project, label, decade=decade)
        ids.append(store_run(project, "rep", label, GenerationParams(temperature=1.0, max_tokens=30, seed=0),
                             run_config([race], 1), {(race.prompt_ids[r.key], 0): " a man" for r in race.parsed.roles}))
    return ids


@pytest.fixture
def page(shown_page, project, messages):
    return shown_page(JobsPage, project, size=(1200, 700))


def test_the_button_offers_the_selected_run_or_all_runs(page, project, two_runs):
    page.refresh()  # the runs were stored after the page opened
    assert page.methods_button.isEnabled() and page.methods_button.menu() is page.methods_menu
    page.runs_table.clearSelection()
    page.methods_menu.aboutToShow.emit()
    assert not page.methods_selected.isEnabled() and page.methods_all.isEnabled()
    page.select_run(two_runs[0])
    page.methods_menu.aboutToShow.emit()
    assert page.methods_selected.isEnabled()
    assert page.methods_selected.text() == f"Of run {two_runs[0]} (selected)…"
    assert page.selected_run_ids() == [two_runs[0]]


def test_methods_text_of_the_selected_run_and_of_all_runs(qtbot, page, project, two_runs, messages, tmp_path):
    page.refresh()
    page.select_run(two_runs[1])
    page.export_methods(str(tmp_path / "one.md"), page.selected_run_ids())
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=30_000)
    one = (tmp_path / "one.md").read_text(encoding="utf-8")
    assert f"### Run {two_runs[1]}: m1990s" in one and f"### Run {two_runs[0]}:" not in one
    assert messages["errors"] == [] and messages["infos"] == [
        f"Wrote the methods text to {tmp_path / 'one.md'}, and its JSON record to one.json beside it."]
    assert [r["id"] for r in json.loads((tmp_path / "one.json").read_text(encoding="utf-8"))["runs"]] == [two_runs[1]]

    page.export_methods(str(tmp_path / "all.md"))
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=30_000)
    every = (tmp_path / "all.md").read_text(encoding="utf-8")
    assert all(f"### Run {run_id}:" in every for run_id in two_runs)

    page.export_methods(str(tmp_path / "all.pdf"))
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=30_000)
    assert "give the file an .md ending" in messages["errors"][-1]
