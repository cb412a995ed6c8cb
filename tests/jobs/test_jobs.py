"""The job runner: resumable, no duplicates, failures kept, fatal stops, cancel, progress, SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fixtures.fault_proxy import Fault
from workbench import jobs, runs
from workbench.errors import UserError
from workbench.jobs import Outcome, Unit
from workbench.models.base import GenerationParams, prompt_request
from workbench.models.calls import generation_process
from workbench.models.openai_backend import OpenAIBackend
from workbench.progress import TaskState
from workbench.project import Project

UNITS = [Unit(i, s) for i in range(10) for s in range(2)]


def answering(seen: list[Unit] | None = None, fail=lambda u: False, fatal_at: int | None = None):
    """A process that answers each unit with its own name (records what it was given)."""
    count = 0

    def process(units, state):
        nonlocal count
        for unit in units:
            if seen is not None:
                seen.append(unit)
            count += 1
            if fatal_at is not None and count > fatal_at:
                yield unit, Outcome.failure("The server refused the API key.", fatal=True)
                return
            if fail(unit):
                yield unit, Outcome.failure(f"no answer for {unit.item_id}", extra={"failure_kind": "server"})
            else:
                yield unit, Outcome(raw=f"answer {unit.item_id}/{unit.sample}", prompt_tokens=3, completion_tokens=2)
            state.check()

    return process


def counts_per_unit(project, run_id) -> dict[tuple[int, int], int]:
    rows = project.db.execute(
        "SELECT item_id, sample, COUNT(*) FROM responses WHERE run_id = ? GROUP BY item_id, sample", [run_id])
    return {(i, s): n for i, s, n in rows}


def cancel_after(n: int) -> TaskState:
    state = TaskState()
    seen = []

    def on_partial(result):
        seen.append(result)
        if len(seen) >= n:
            state.cancel()

    state._on_partial = on_partial
    return state


# ---------------------------------------------------------------------------------------------- basics
def test_a_run_stores_every_unit_once_with_usage(project):
    run_id = jobs.create_run(project, "test", params={"temperature": 0})
    report = jobs.run_job(project, run_id, UNITS + UNITS[:3], answering())  # duplicates in the list are ignored
    assert (report.total, report.processed, report.failed, report.status) == (20, 20, 0, "done")
    assert set(counts_per_unit(project, run_id).values()) == {1} and len(counts_per_unit(project, run_id)) == 20
    run = jobs.get_run(project, run_id)
    assert run["status"] == "done" and run["total"] == 20 and run["finished_at"]
    assert run["usage"] == {"prompt_tokens": 60, "completion_tokens": 40, "calls": 20, "cached": 0}
    frame = jobs.responses_frame(project, run_id)
    assert frame.loc[0, "raw"] == "answer 0/0"


def test_resuming_a_cancelled_run_does_only_what_is_missing(project):
    run_id = jobs.create_run(project, "test")
    report = jobs.run_job(project, run_id, UNITS, answering(), cancel_after(7), commit_every=100)
    assert report.status == "cancelled" and "Start the run again" in report.message
    assert jobs.get_run(project, run_id)["status"] == "cancelled"
    kept = set(counts_per_unit(project, run_id))
    assert 7 <= len(kept) < 20  # everything handed over before the cancel was saved, not just full batches

    seen: list[Unit] = []
    report = jobs.run_job(project, run_id, UNITS, answering(seen))
    assert set(seen) == set(UNITS) - {Unit(i, s) for i, s in kept}
    assert (report.done_before, report.processed, report.done) == (len(kept), 20 - len(kept), 20)
    counts = counts_per_unit(project, run_id)
    assert len(counts) == 20 and set(counts.values()) == {1}
    assert jobs.get_run(project, run_id)["status"] == "done"


def test_failures_are_stored_with_their_reasons(project):
    run_id = jobs.create_run(project, "test")
    report = jobs.run_job(project, run_id, UNITS, answering(fail=lambda u: u.item_id % 3 == 0))
    assert report.failed == 8 and report.status == "done"
    assert jobs.run_counts(project, run_id) == {"ok": 12, "failed": 8}
    failed = jobs.responses_frame(project, run_id).query("status == 'failed'")
    assert set(failed["error"]) == {"no answer for 0", "no answer for 3", "no answer for 6", "no answer for 9"}
    assert failed["raw"].isna().all()
    assert all('"failure_kind": "server"' in e for e in failed["extra"])
    row = jobs.runs_frame(project).iloc[0]
    assert (row["ok"], row["failed"]) == (12, 8)


def test_retry_failed_only_redoes_just_the_failures(project):
    run_id = jobs.create_run(project, "test")
    jobs.run_job(project, run_id, UNITS, answering(fail=lambda u: u.item_id % 3 == 0))
    before = jobs.responses_frame(project, run_id).set_index(["item_id", "sample"])

    seen: list[Unit] = []
    report = jobs.run_job(project, run_id, UNITS, answering(seen), retry_failed=True)
    assert sorted(seen) == sorted(u for u in UNITS if u.item_id % 3 == 0)
    assert (report.done_before, report.processed, report.failed) == (12, 8, 0)
    after = jobs.responses_frame(project, run_id).set_index(["item_id", "sample"])
    assert len(after) == 20 and (after["status"] == "ok").all()
    ok_before = before[before["status"] == "ok"].index
    assert (after.loc[ok_before, "created_at"] == before.loc[ok_before, "created_at"]).all()  # untouched
    # nothing left to retry: the process is not even called
    seen.clear()
    assert jobs.run_job(project, run_id, UNITS, answering(seen), retry_failed=True).processed == 0
    assert seen == []


def test_a_fatal_outcome_stops_the_run_and_keeps_everything_before_it(project):
    run_id = jobs.create_run(project, "test")
    closed = []

    def process(units, state):
        try:
            yield from answering(fatal_at=5)(units, state)
        finally:
            closed.append(True)

    with pytest.raises(UserError) as info:
        jobs.run_job(project, run_id, UNITS, process, commit_every=1000, commit_seconds=1000)
    message = str(info.value)
    assert "refused the API key" in message and "5 of 20" in message and "start the run again" in message
    assert len(counts_per_unit(project, run_id)) == 5  # flushed although the batch was not full
    assert jobs.run_counts(project, run_id) == {"ok": 5, "failed": 0}  # the fatal unit is not stored
    assert jobs.get_run(project, run_id)["status"] == "interrupted"
    assert closed == [True]  # the process was closed (its requests stopped)

    report = jobs.run_job(project, run_id, UNITS, answering())
    assert (report.done_before, report.processed) == (5, 15)
    assert set(counts_per_unit(project, run_id).values()) == {1}


def test_an_unexpected_error_marks_the_run_interrupted_and_keeps_the_rows(project):
    run_id = jobs.create_run(project, "test")

    def process(units, state):
        for n, unit in enumerate(units):
            if n == 4:
                raise RuntimeError("a bug")
            yield unit, Outcome(raw="x")

    with pytest.raises(RuntimeError):
        jobs.run_job(project, run_id, UNITS, process)
    run = jobs.get_run(project, run_id)
    assert run["status"] == "interrupted" and "a bug" in run["note"]
    assert len(counts_per_unit(project, run_id)) == 4


def test_progress_counts_failures_and_estimates_the_time_left(project):
    updates = []
    state = TaskState(on_progress=updates.append, min_interval=0)
    run_id = jobs.create_run(project, "test")
    jobs.run_job(project, run_id, UNITS, answering(fail=lambda u: u.item_id == 0), state)
    assert updates[0].done == 0 and updates[0].eta_seconds is None
    assert any(p.eta_seconds is not None for p in updates[1:-1])
    last = updates[-1]
    assert (last.done, last.total, last.failed) == (20, 20, 2)
    assert last.message == "20 of 20 done"
    assert [p.done for p in updates] == sorted(p.done for p in updates)


def test_progress_on_a_continued_run_starts_from_what_was_done(project):
    run_id = jobs.create_run(project, "test")
    jobs.run_job(project, run_id, UNITS[:12], answering(fail=lambda u: u.item_id == 1))
    updates = []
    jobs.run_job(project, run_id, UNITS, answering(), TaskState(on_progress=updates.append, min_interval=0))
    assert (updates[0].done, updates[0].total, updates[0].failed) == (12, 20, 2)


def test_one_run_cannot_execute_twice_at_once(project):
    run_id = jobs.create_run(project, "test")
    errors = []

    def process(units, state):
        try:
            jobs.run_job(project, run_id, units, answering())
        except UserError as exc:
            errors.append(str(exc))
        yield from answering()(units, state)

    jobs.run_job(project, run_id, UNITS[:2], process)
    assert errors and "already running" in errors[0]
    assert not jobs.is_active(project, run_id)


def test_a_run_left_running_by_a_crash_shows_as_interrupted(project):
    run_id = jobs.create_run(project, "test")
    with project.db.conn:
        project.db.execute("UPDATE runs SET status = 'running' WHERE id = ?", [run_id])
    assert jobs.runs_frame(project).iloc[0]["status"] == "interrupted"


# ---------------------------------------------------------------------------------------------- resumers
def test_resume_run_calls_the_resumer_registered_for_the_kind(project):
    calls = []

    def resume(project_, run_id, state, retry_failed):
        calls.append((run_id, retry_failed))
        return jobs.run_job(project_, run_id, UNITS, answering(), state, retry_failed=retry_failed)

    runs.declare_run_kind(runs.RunKind("test-resumable", resume=resume))
    try:
        run_id = jobs.create_run(project, "test-resumable")
        jobs.run_job(project, run_id, UNITS, answering(), cancel_after(3))
        assert jobs.can_resume("test-resumable")
        report = jobs.resume_run(project, run_id, TaskState(), retry_failed=False)
        assert report.status == "done" and calls == [(run_id, False)]
        jobs.resume_run(project, run_id, retry_failed=True)
        assert calls[-1] == (run_id, True)
    finally:
        runs.forget_run_kind("test-resumable")


def test_a_run_nobody_can_resume_says_what_to_do(project):
    run_id = jobs.create_run(project, "nobody-resumes-this")
    assert not jobs.can_resume("nobody-resumes-this")
    with pytest.raises(UserError, match="Start it again from the page that created it"):
        jobs.resume_run(project, run_id)


# ---------------------------------------------------------------------------------------------- real model
def build_request(backend):
    params = GenerationParams(max_tokens=4, temperature=0.8, seed=11)
    return lambda unit: prompt_request(backend, f"Tell me about item {unit.item_id}.", params, sample=unit.sample)


def test_a_refused_key_mid_run_stops_it_and_the_rest_follows_later(project, fault_proxy):
    fault_proxy.script(*[Fault.ok()] * 6)
    fault_proxy.always(Fault.status_error(401, "bad key"))
    run_id = jobs.create_run(project, "test")
    refused = pytest.raises(UserError, match="asks for an API key .HTTP 401.*6 of 20.* is saved")
    with OpenAIBackend("tiny", base_url=fault_proxy.base_url, concurrency=1) as backend, refused:
        jobs.run_job(project, run_id, UNITS, generation_process(backend, build_request(backend)))
    assert jobs.run_counts(project, run_id) == {"ok": 6, "failed": 0}
    assert len(fault_proxy.posts()) == 7  # the six answers and the refusal; nothing sent after it

    fault_proxy.always(None)
    with OpenAIBackend("tiny", base_url=fault_proxy.base_url, concurrency=4) as backend:
        report = jobs.run_job(project, run_id, UNITS, generation_process(backend, build_request(backend)))
    assert (report.done_before, report.processed, report.failed) == (6, 14, 0)
    assert set(counts_per_unit(project, run_id).values()) == {1} and len(counts_per_unit(project, run_id)) == 20


CHILD = """
import sys
from workbench import jobs
from workbench.models.base import GenerationParams, prompt_request
from workbench.models.calls import generation_process
from workbench.models.openai_backend import OpenAIBackend
from workbench.project import Project

path, run_id, url, items, samples = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
project = Project.open(path)
backend = OpenAIBackend("tiny", base_url=url, concurrency=2)
params = GenerationParams(max_tokens=4, temperature=0.8, seed=11)
units = [jobs.Unit(i, s) for i in range(items) for s in range(samples)]
build = lambda unit: prompt_request(backend, f"Tell me about item {unit.item_id}.", params, sample=unit.sample)
jobs.run_job(project, run_id, units, generation_process(backend, build), commit_every=4, commit_seconds=0.5)
print("finished", flush=True)
"""


def stored_rows(path: Path, run_id: int) -> int:
    conn = sqlite3.connect(str(path), timeout=30)
    try:
        return conn.execute("SELECT COUNT(*) FROM responses WHERE run_id = ?", [run_id]).fetchone()[0]
    finally:
        conn.close()


def test_a_run_killed_with_sigkill_resumes_with_every_item_exactly_once(project, fault_proxy, llama_server):
    items, samples = 30, 2
    total = items * samples
    run_id = jobs.create_run(project, "test")
    path = project.path
    project.close()
    fault_proxy.always(Fault.slow(0.25))  # slow enough that the kill lands in the middle
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(run_id), fault_proxy.base_url, str(items), str(samples)],
        cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        while stored_rows(path, run_id) < 8:
            assert child.poll() is None, child.stdout.read().decode()
            assert time.monotonic() < deadline, "the child stored nothing"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    at_kill = stored_rows(path, run_id)
    assert 8 <= at_kill < total  # killed in the middle
    print(f"SIGKILL after {at_kill} of {total} responses were stored")

    reopened = Project.open(path)
    try:
        assert reopened.db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert jobs.runs_frame(reopened).iloc[0]["status"] == "interrupted"
        units = [Unit(i, s) for i in range(items) for s in range(samples)]
        with OpenAIBackend("tiny", base_url=llama_server.base_url, concurrency=2) as backend:
            report = jobs.run_job(reopened, run_id, units, generation_process(backend, build_request(backend)))
        assert report.done_before == at_kill and report.processed == total - at_kill
        counts = counts_per_unit(reopened, run_id)
        assert len(counts) == total and set(counts.values()) == {1}
        assert reopened.db.execute("SELECT COUNT(*) FROM responses WHERE run_id = ?", [run_id]).fetchone()[0] == total
        assert jobs.run_counts(reopened, run_id) == {"ok": total, "failed": 0}
        assert reopened.db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        reopened.close()


def test_every_probe_that_makes_runs_can_resume_them_without_being_imported_first():
    import subprocess
    import sys

    code = ("from workbench import jobs\n"
            "print(all(jobs.can_resume(k) for k in ('cloze', 'rep', 'rep-judge', 'summary')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "True", done.stderr
