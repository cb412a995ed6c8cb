"""A run whose requests fail says so: a run where every unit failed is marked failed (not done), the command
exits non-zero and says how to ask again for just those, and a server answering HTTP 500 is tried a bounded
number of times per unit, with the waits between tries, as the run's notes state."""

from __future__ import annotations

import re

import pytest

from tests.fixtures.fault_proxy import Fault
from workbench import jobs
from workbench.cli import main
from workbench.jobs import Outcome, Unit
from workbench.models.catalog import ModelSpec, add_model


def failing(units, state):
    for unit in units:
        yield unit, Outcome.failure("The server failed (HTTP 500, after 1 retry): injected")


def half_failing(units, state):
    for unit in units:
        yield unit, (Outcome(raw="x") if unit.item_id % 2 else Outcome.failure("The prompt is too long."))


def test_a_run_where_every_unit_failed_is_marked_failed_not_done(project):
    run_id = jobs.create_run(project, "test")
    report = jobs.run_job(project, run_id, [Unit(i) for i in range(4)], failing)
    assert report.status == "failed" and report.failed == 4
    assert report.message.startswith("All 4 items failed")  # what the pages show for a run that did not finish
    run = jobs.get_run(project, run_id)
    assert run["status"] == "failed" and run["finished_at"]
    assert "All 4 items failed" in run["note"] and "HTTP 500" in run["note"]
    assert jobs.runs_frame(project).set_index("id").loc[run_id, "status"] == "failed"


def test_a_run_with_some_failures_is_done_and_its_note_counts_them(project):
    run_id = jobs.create_run(project, "test")
    report = jobs.run_job(project, run_id, [Unit(i) for i in range(4)], half_failing)
    assert report.status == "done" and report.failed == 2 and report.failed_total == 2
    assert "2 of 4 items failed" in jobs.get_run(project, run_id)["note"]
    # asking again for just the failures, which now succeed, leaves a clean run
    again = jobs.run_job(project, run_id, [Unit(i) for i in range(4)],
                         lambda units, state: ((u, Outcome(raw="y")) for u in units), retry_failed=True)
    assert again.status == "done" and again.failed_total == 0
    assert jobs.get_run(project, run_id)["note"] == ""


@pytest.fixture
def api_model(project, fault_proxy, llama_server):
    """An API model behind the fault proxy, whose client retries once (two tries per request)."""
    add_model(project, ModelSpec(label="api", backend="openai", ref=llama_server.model, base_url=fault_proxy.base_url,
                                 params={"max_retries": 1, "concurrency": 2}))
    path = project.path
    project.close()  # the command line opens the file itself
    return path


def rep_run(path, *extra):
    return main(["rep", "run", str(path), "--model", "api", "--demographic", "gender", "--samples", "1",
                 "--max-tokens", "2", "--yes", *map(str, extra)])


def test_a_server_answering_500_gets_a_bounded_number_of_tries_and_the_command_fails(api_model, fault_proxy, capsys):
    fault_proxy.always(Fault.server_error(500))
    assert rep_run(api_model) == 1
    out = capsys.readouterr().out
    from workbench.project import Project

    with Project.open(api_model) as project:
        run = jobs.get_run(project, 1)
    units = run["total"]
    assert units == 5
    assert len(fault_proxy.posts()) == 2 * units  # the first try and one retry for each unit, no more
    assert run["status"] == "failed"
    assert "All 5 items failed" in run["note"] and "HTTP 500" in run["note"]
    assert "tried up to 2 times" in run["note"] and "waiting" in run["note"]
    assert f"palimpsest continue {api_model} 1 --retry-failed" in out
    assert "All 5 items failed" in out

    # the server recovers: retrying the failures finishes the run, and the command succeeds
    fault_proxy.reset()
    capsys.readouterr()
    assert main(["continue", str(api_model), "1", "--retry-failed", "--yes"]) == 0
    with Project.open(api_model) as project:
        assert jobs.get_run(project, 1)["status"] == "done"
        assert jobs.run_counts(project, 1) == {"ok": 5, "failed": 0}


def test_a_command_whose_run_has_failures_left_exits_non_zero(api_model, fault_proxy, capsys):
    # the first POSTs fail: at least one unit's two tries (which units, depends on which request goes first)
    fault_proxy.script(*[Fault.server_error(500)] * 4)
    assert rep_run(api_model) == 1
    out = capsys.readouterr().out
    assert re.search(r"[34] of 5 answered, [12] failed \(5 asked now\)", out) and re.search(r"[12] of 5 items failed", out)
    assert "--retry-failed" in out
