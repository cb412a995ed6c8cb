"""The Jobs page: running work with progress and Cancel; runs with counts, cost, Continue and Retry failed."""

from __future__ import annotations

import pytest

import workbench.models.catalog as registry
from tests.fixtures.fault_proxy import Fault
from ui.jobs.page import JobsPage
from workbench import jobs, runs
from workbench.models import prices
from workbench.models.base import GenerationParams, prompt_request
from workbench.models.calls import generation_process
from workbench.models.catalog import ModelSpec
from workbench.progress import TaskState
from workbench.progress import describe_duration as format_eta

KIND = "gui-test"


def make_resumer(fail_items: set[int] | None = None):
    """What a probe registers: rebuild the run's units and process from its row, then run the job."""

    def resume(project, run_id, state, retry_failed):
        run = jobs.get_run(project, run_id)
        spec = registry.get_model(project, run["model_id"])
        units = [jobs.Unit(i) for i in range(run["config"]["items"])]
        params = GenerationParams.from_dict(run["params"])
        with registry.open_backend(spec, project, use_cache=False) as backend:
            build = lambda u: prompt_request(backend, f"Item {u.item_id}", params)  # noqa: E731
            inner = generation_process(backend, build)

            def process(chunk, st):
                for unit, outcome in inner(chunk, st):
                    if fail_items and unit.item_id in fail_items:
                        outcome = jobs.Outcome.failure("The server failed (HTTP 500): injected")
                    yield unit, outcome

            return jobs.run_job(project, run_id, units, process, state, retry_failed=retry_failed,
                                chunk_size=4, commit_every=1)

    return resume


@pytest.fixture
def resumable():
    runs.declare_run_kind(runs.RunKind(KIND, resume=make_resumer()))
    yield
    runs.forget_run_kind(KIND)


@pytest.fixture
def page(shown_page, project):
    return shown_page(JobsPage, project, size=(1200, 700))


def new_run(project, url: str, items: int = 6) -> int:
    spec = registry.add_model(project, ModelSpec(label=f"m{items}-{url[-8:]}", backend="openai", ref="tiny",
                                                 base_url=url, params={"concurrency": 1, "max_retries": 0}))
    return jobs.create_run(project, KIND, model_id=spec.id, params=GenerationParams(max_tokens=3).as_dict(),
                           config={"items": items})


def row_of(page, run_id: int) -> dict[str, str]:
    page.select_run(run_id)
    row = min(i.row() for i in page.runs_table.selectedIndexes())
    headers = [page.runs_table.horizontalHeaderItem(c).text() for c in range(page.runs_table.columnCount())]
    return {h: page.runs_table.item(row, c).text() for c, h in enumerate(headers)}


def wait_idle(qtbot, page):
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=120_000)


def test_runs_are_listed_with_counts_tokens_and_cost(page, project, llama_server, resumable):
    run_id = new_run(project, llama_server.base_url)
    prices.set_price(project, "tiny", 1000, 1000)
    state = TaskState()
    state._on_partial = lambda _: state.cancel()
    jobs.resume_run(project, run_id, state)
    page.refresh()
    row = row_of(page, run_id)
    assert (row["Kind"], row["Status"], row["Answered"], row["Failed"], row["Model calls"]) == (
        KIND, "cancelled", "1 of 6", "0", "1")
    assert row["Cost"].startswith("$") and row["Cost"] != "$0"
    assert page.continue_button.isEnabled() and not page.retry_button.isEnabled()
    assert "Stopped at your request" in page.details.toPlainText()


def test_continue_finishes_a_stopped_run_in_the_background(page, project, llama_server, resumable, qtbot, messages):
    run_id = new_run(project, llama_server.base_url)
    state = TaskState()
    state._on_partial = lambda _: state.cancel()
    jobs.resume_run(project, run_id, state)
    page.refresh()
    page.select_run(run_id)
    page.continue_button.click()
    assert page.ops.busy
    wait_idle(qtbot, page)
    assert messages["errors"] == messages["infos"] == []
    row = row_of(page, run_id)
    assert (row["Status"], row["Answered"], row["Model calls"]) == ("done", "6 of 6", "6")
    assert not page.continue_button.isEnabled()
    counts = project.db.execute("SELECT item_id, COUNT(*) FROM responses WHERE run_id = ? GROUP BY item_id",
                                [run_id]).fetchall()
    assert sorted(counts) == [(i, 1) for i in range(6)]


def test_retry_failed_only_redoes_the_failures(page, project, llama_server, qtbot, messages):
    runs.declare_run_kind(runs.RunKind(KIND, resume=make_resumer(fail_items={1, 4})))
    try:
        run_id = new_run(project, llama_server.base_url)
        jobs.resume_run(project, run_id)
        page.refresh()
        row = row_of(page, run_id)
        assert (row["Status"], row["Failed"]) == ("done", "2")
        assert "2 × The server failed (HTTP 500): injected" in page.details.toPlainText()
        assert page.retry_button.isEnabled() and not page.continue_button.isEnabled()
        runs.declare_run_kind(runs.RunKind(KIND, resume=make_resumer()))  # the server is fine again
        page.retry_button.click()
        wait_idle(qtbot, page)
    finally:
        runs.forget_run_kind(KIND)
    row = row_of(page, run_id)
    assert (row["Failed"], row["Answered"], row["Model calls"]) == ("0", "6 of 6", "8")
    assert messages["errors"] == messages["infos"] == []


def test_running_work_shows_progress_and_cancel_stops_it(page, project, fault_proxy, resumable, qtbot, messages):
    fault_proxy.always(Fault.slow(0.3))
    run_id = new_run(project, fault_proxy.base_url, items=40)
    page.select_run(run_id)
    page.refresh()
    page.select_run(run_id)
    page.continue_button.click()
    qtbot.waitUntil(lambda: len(page.op_rows) == 1 and page.op_rows[0].bar.maximum() == 40, timeout=30_000)
    row = page.op_rows[0]
    assert row.isVisible() and not page.ops_hint.isVisible()
    assert row.label.text() == f"Continuing run {run_id} ({KIND})"
    qtbot.waitUntil(lambda: row.bar.value() >= 2, timeout=30_000)
    assert row.eta.text().startswith("about ")
    row.cancel_button.click()
    assert row.cancel_button.text() == "Stopping…"
    wait_idle(qtbot, page)
    assert page.ops_hint.isVisible() and page.op_rows == []
    row = row_of(page, run_id)
    assert row["Status"] == "cancelled"
    done = int(row["Answered"].split(" of ")[0])
    assert 2 <= done < 40
    assert len(messages["questions"]) == 1  # the model is an API not marked free: asked before it continued
    assert page.status_line.text().endswith("Stopped at your request. Everything answered so far is saved; "
                                            "start it again to continue.")


def test_continue_on_a_paid_api_asks_once_and_no_sends_nothing(page, project, fault_proxy, resumable, qtbot,
                                                               messages):
    """Continue resumed a run on a paid API without a word; now it says what the items left cost and asks."""
    run_id = new_run(project, fault_proxy.base_url)
    prices.set_price(project, "tiny", 2.5, 10.0)
    state = TaskState()
    state._on_partial = lambda _: state.cancel()
    jobs.resume_run(project, run_id, state)
    sent = len(fault_proxy.posts())
    page.refresh()
    page.select_run(run_id)
    messages["answer"] = False
    page.continue_button.click()
    wait_idle(qtbot, page)
    assert len(messages["questions"]) == 1
    question = messages["questions"][0]
    assert question.startswith(f"Continuing run {run_id} ({KIND}).") and "is a paid API: 5 requests" in question
    assert len(fault_proxy.posts()) == sent  # No: nothing sent
    assert row_of(page, run_id)["Answered"] == "1 of 6" and page.continue_button.isEnabled()
    assert page.status_line.text().startswith("Nothing was started.")

    messages["answer"] = True
    page.continue_button.click()
    wait_idle(qtbot, page)
    assert len(messages["questions"]) == 2 and messages["errors"] == []
    assert len(fault_proxy.posts()) == sent + 5
    assert row_of(page, run_id)["Answered"] == "6 of 6"
    assert page.status_line.text() == f"Run {run_id}: 6 of 6 items answered."


def test_continue_on_a_model_marked_free_starts_at_once(page, project, llama_server, resumable, qtbot, messages):
    spec = registry.add_model(project, ModelSpec(label="mine", backend="openai", ref="tiny",
                                                 base_url=llama_server.base_url, params={"free": True}))
    run_id = jobs.create_run(project, KIND, model_id=spec.id, params=GenerationParams(max_tokens=3).as_dict(),
                             config={"items": 3})
    page.refresh()
    page.select_run(run_id)
    page.continue_button.click()
    wait_idle(qtbot, page)
    assert messages["questions"] == [] and row_of(page, run_id)["Answered"] == "3 of 3"


def test_a_run_no_probe_can_resume_cannot_be_continued(page, project):
    finished = jobs.create_run(project, "other")  # a finished run beside a pending one: dates and models missing
    jobs.run_job(project, finished, [jobs.Unit(1)], lambda units, state: [(u, jobs.Outcome(raw="x")) for u in units])
    run_id = jobs.create_run(project, "unknown-kind")
    page.refresh()
    assert row_of(page, run_id)["Finished"] == "" and row_of(page, run_id)["Model"] == ""
    assert row_of(page, finished)["Finished"] != ""
    page.select_run(run_id)
    assert not page.continue_button.isEnabled()
    assert "page that created it" in page.continue_button.toolTip()


def test_time_left_reads_naturally():
    assert format_eta(None) == "estimating…"
    assert format_eta(42) == "about 42 s"
    assert format_eta(125) == "about 2 min 05 s"
    assert format_eta(3 * 3600 + 60) == "about 3 h 01 min"


def test_runs_are_named_in_plain_words(page, project):
    """Kinds as words (not 'rep-judge'), what each run covered, and the settings without JSON."""
    judge = jobs.create_run(project, "rep-judge", params=GenerationParams(max_tokens=16).as_dict(),
                            config={"set": {"name": "sexual_orientation", "version": 1}})
    imported = jobs.create_run(project, "cloze", config={"imported_from": "pg1342.tsv", "passage_ids": [1, 2, 3]})
    page.refresh()
    assert row_of(page, judge)["Kind"] == "REP judge labelling completions"
    assert row_of(page, judge)["About"] == "sexual orientation"
    assert row_of(page, judge)["Status"] == "not started"
    assert row_of(page, imported)["About"] == "imported from pg1342.tsv; 3 passages"
    page.select_run(judge)
    details = page.details.toPlainText()
    assert "longest answer (tokens) 16" in details and "{" not in details and "max_tokens" not in details



def test_a_run_where_every_item_failed_answered_none_and_a_run_without_a_model_costs_nothing(page, project):
    failed = jobs.create_run(project, "reading-answer")
    jobs.run_job(project, failed, [jobs.Unit(i) for i in range(41)],
                 lambda units, state: [(u, jobs.Outcome.failure("The prompt is too long for the model.")) for u in units])
    overlap = jobs.create_run(project, "leakage-overlap")
    jobs.run_job(project, overlap, [jobs.Unit(1)], lambda units, state: [(u, jobs.Outcome(raw="{}")) for u in units])
    page.refresh()
    row = row_of(page, failed)
    assert (row["Kind"], row["Status"], row["Answered"], row["Failed"]) == (
        "Reading questions answered", "failed", "0 of 41", "41")
    row = row_of(page, overlap)
    assert (row["Kind"], row["Cost"]) == ("Overlap with a reference corpus", "none (no model)")
