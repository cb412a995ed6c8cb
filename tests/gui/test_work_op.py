"""Planned work from the app, the one way (``ui.work_op.WorkOp``): a paid API is asked about once, in one wording,
the work runs off the GUI thread, its outcome is said, and the views that show what it changed reload (a view
off screen reloads when shown) -- announced on the window's change bus instead of every page rereading
everything when shown."""

from __future__ import annotations

import pytest

from tests.fixtures.cloze_books import SHORT_TEMPLATE, write_book
from ui.widgets.one_operation import OneOperation
from ui.widgets.page import Page
from ui.work_op import WorkOp
from workbench.corpus.importer import import_paths
from workbench.models.catalog import ModelSpec, add_model
from workbench.models.prices import set_price
from workbench.probes.cloze.extract import extract_books
from workbench.probes.cloze.plan import ProbePlan, plan_work
from workbench.probes.cloze.rules import project_settings
from workbench.prompt_templates import save_template

WAIT_MS = 120_000


class Starter(Page, OneOperation):
    """A page that starts work: a slot, a progress row, a summary box."""

    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self.work = ops.slot(self)
        from PySide6.QtWidgets import QLabel

        self.lay_out_work("no project", QLabel("body"))
        self.refreshed = 0

    def refresh(self) -> None:
        self.refreshed += 1


class Watcher(Page):
    """A page that shows name-cloze results (and nothing else)."""

    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self.refreshed = 0
        ops.changes.listen(self, {"cloze-results"}, self.refresh)

    def refresh(self) -> None:
        self.refreshed += 1


class Unconcerned(Watcher):
    def __init__(self, ops, parent=None):
        Page.__init__(self, ops, parent)
        self.refreshed = 0
        ops.changes.listen(self, {"rep-results"}, self.refresh)


@pytest.fixture
def cloze_project(project, tmp_path):
    folder = tmp_path / "books"
    folder.mkdir()
    import_paths(project, [write_book(folder, "quay-tales", 12), write_book(folder, "snow-house", 2)])
    save_template(project, "short", SHORT_TEMPLATE, "cloze")
    extract_books(project, settings=project_settings(project, per_book=3, seed=4, fast=True))
    return project


def pages(qtbot, project, *classes):
    from ui.background import BackgroundOps

    ops = BackgroundOps()
    made = []
    for page_class in classes:
        page = page_class(ops)
        qtbot.addWidget(page)
        page.set_project(project)
        made.append(page)
    return ops, made


def test_a_paid_cloze_work_asks_once_runs_and_the_pages_showing_its_results_reload(
        qtbot, cloze_project, messages, fault_proxy, llama_server):
    project = cloze_project
    add_model(project, ModelSpec(label="api", backend="openai", ref=llama_server.model, base_url=fault_proxy.base_url))
    set_price(project, llama_server.model, 2.5, 10.0)
    ops, (starter, watcher, hidden, unconcerned) = pages(qtbot, project, Starter, Watcher, Watcher, Unconcerned)
    hidden.off_screen = True  # another page is on screen
    before = (starter.refreshed, watcher.refreshed, hidden.refreshed, unconcerned.refreshed)

    operation = WorkOp(starter, plan_work(project, ProbePlan(models=["api"], template="short", max_tokens=2))).run()
    assert operation is not None and operation.label == "Estimating what it costs"
    qtbot.waitUntil(lambda: not ops.busy, timeout=WAIT_MS)

    assert len(messages["questions"]) == 1  # asked once, before anything was sent
    question = messages["questions"][0]
    assert question.startswith("Name cloze on api.") and "api is a paid API: 5 requests" in question
    assert len(fault_proxy.posts()) == 5 and messages["errors"] == []
    assert starter.summary.text() == "api: 5 of 5 passages answered."
    assert starter.refreshed == before[0] + 1  # the page that started it reloads once, at the end
    assert watcher.refreshed == before[1] + 1  # a page showing name-cloze results reloads
    assert hidden.refreshed == before[2] and hidden.refresh_due  # off screen: read when shown
    assert unconcerned.refreshed == before[3]  # a page showing other results is left alone
    ops.join()


def test_declining_the_cost_question_sends_nothing_and_announces_nothing(qtbot, cloze_project, messages,
                                                                       fault_proxy, llama_server):
    project = cloze_project
    add_model(project, ModelSpec(label="api", backend="openai", ref=llama_server.model, base_url=fault_proxy.base_url))
    ops, (starter, watcher) = pages(qtbot, project, Starter, Watcher)
    refreshed = watcher.refreshed
    messages["answer"] = False
    WorkOp(starter, lambda: plan_work(project, ProbePlan(models=["api"], template="short"))).run()
    qtbot.waitUntil(lambda: not ops.busy, timeout=WAIT_MS)
    assert len(messages["questions"]) == 1 and fault_proxy.posts() == []
    assert "Nothing was started." in starter.summary.text()
    assert "no price is known" in starter.summary.text()  # the model has no price: said, not guessed
    assert project.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    assert watcher.refreshed == refreshed
    ops.join()


def test_a_plan_the_core_refuses_is_said_and_nothing_starts(qtbot, cloze_project, messages):
    ops, (starter,) = pages(qtbot, cloze_project, Starter)
    assert WorkOp(starter, lambda: plan_work(cloze_project, ProbePlan(models=["nobody"]))).run() is None
    assert "no model called 'nobody'" in messages["errors"][0] and not ops.busy


def test_the_bias_page_asks_before_running_rep_prompts_on_a_paid_api(qtbot, project, shown_page, messages):
    """The REP runs tab sent paid requests without a question; now it asks like every other page."""
    from ui.rep.page import RepPage
    from ui.rep.runs_tab import checked

    add_model(project, ModelSpec(label="paid", backend="openai", ref="gpt-test", base_url="http://127.0.0.1:9/v1"))
    set_price(project, "gpt-test", 2.5, 10.0)
    page = shown_page(RepPage, project)
    tab = page.runs_tab
    tab.refresh()
    for i in range(tab.models.count()):
        tab.models.item(i).setCheckState(tab.models.item(i).checkState().Checked)
    assert checked(tab.models) == ["paid"]
    tab.samples.setValue(1)
    messages["answer"] = False
    tab.start()
    qtbot.waitUntil(lambda: not tab.work.busy and bool(messages["questions"]), timeout=WAIT_MS)
    assert len(messages["questions"]) == 1 and "paid is a paid API" in messages["questions"][0]
    assert project.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
