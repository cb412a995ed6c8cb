"""The job runner with a real server, several requests in flight and the response cache in the path:
SIGKILL then resume, Cancel while answers are slow, fatal failures, retry of failures, usage counts."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.fixtures.fault_proxy import Fault
from tests.fixtures.servers import free_port
from workbench import jobs
from workbench.errors import UserError
from workbench.jobs import Unit
from workbench.models.base import GenerationParams, prompt_request
from workbench.models.cache import CachedBackend
from workbench.models.calls import generation_process
from workbench.models.openai_backend import OpenAIBackend
from workbench.progress import TaskState
from workbench.project import Project

ROOT = Path(__file__).resolve().parents[2]  # the repository, so that children import this checkout
PARAMS = GenerationParams(max_tokens=4, temperature=0.8, seed=11)  # seeded: cacheable


def cached(project, url: str, **kw) -> CachedBackend:
    kw.setdefault("concurrency", 4)
    return CachedBackend(OpenAIBackend("tiny", base_url=url, **kw), project)


def build_request(backend):
    return lambda unit: prompt_request(backend, f"Tell me about item {unit.item_id}.", PARAMS, sample=unit.sample)


def counts_per_unit(project, run_id) -> dict[tuple[int, int], int]:
    rows = project.db.execute(
        "SELECT item_id, sample, COUNT(*) FROM responses WHERE run_id = ? GROUP BY item_id, sample", [run_id])
    return {(i, s): n for i, s, n in rows}


def count(path: Path, sql: str, params=()) -> int:
    conn = sqlite3.connect(str(path), timeout=30)
    try:
        return conn.execute(sql, params).fetchone()[0]
    finally:
        conn.close()


def stacks(threads) -> str:
    import traceback

    frames = sys._current_frames()
    return "\n".join(t.name + ":\n" + "".join(traceback.format_stack(frames[t.ident])) for t in threads
                     if t.ident in frames)


def request_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("openai-request") and t.is_alive()]


# ---------------------------------------------------------------------------------------------- SIGKILL
CHILD = """
import sys
from workbench import jobs
from workbench.models.base import GenerationParams, prompt_request
from workbench.models.cache import CachedBackend
from workbench.models.calls import generation_process
from workbench.models.openai_backend import OpenAIBackend
from workbench.project import Project

path, run_id, url, items, samples = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
project = Project.open(path)
backend = CachedBackend(OpenAIBackend("tiny", base_url=url, concurrency=4), project)
params = GenerationParams(max_tokens=4, temperature=0.8, seed=11)
units = [jobs.Unit(i, s) for i in range(items) for s in range(samples)]
build = lambda unit: prompt_request(backend, f"Tell me about item {unit.item_id}.", params, sample=unit.sample)
jobs.run_job(project, run_id, units, generation_process(backend, build), commit_every=4, commit_seconds=30)
print("finished", flush=True)
"""


def test_sigkill_with_requests_in_flight_and_the_cache_then_resume_gives_every_unit_once(project, fault_proxy):
    items, samples = 30, 2
    total = items * samples
    run_id = jobs.create_run(project, "test")
    path = project.path
    project.close()
    fault_proxy.always(Fault.slow(0.2))
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(run_id), fault_proxy.base_url, str(items), str(samples)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        # kill it once answers are cached that are not stored as responses yet (the batch in flight)
        while not (count(path, "SELECT COUNT(*) FROM responses") >= 8
                   and count(path, "SELECT COUNT(*) FROM response_cache") % 4):
            assert child.poll() is None, child.stdout.read().decode()
            assert time.monotonic() < deadline, "the child never got going"
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    stored = count(path, "SELECT COUNT(*) FROM responses WHERE run_id = ?", [run_id])
    in_cache = count(path, "SELECT COUNT(*) FROM response_cache")
    assert 8 <= stored < total and in_cache > stored

    fault_proxy.reset()
    reopened = Project.open(path)
    try:
        assert reopened.integrity_problems() == []
        assert jobs.runs_frame(reopened).iloc[0]["status"] == "interrupted"
        units = [Unit(i, s) for i in range(items) for s in range(samples)]
        with cached(reopened, fault_proxy.base_url) as backend:
            report = jobs.run_job(reopened, run_id, units, generation_process(backend, build_request(backend)))
        assert (report.done_before, report.processed) == (stored, total - stored)
        assert report.cached == in_cache - stored  # answered before the kill, never paid for twice
        assert len(fault_proxy.posts()) == total - in_cache
        counts = counts_per_unit(reopened, run_id)
        assert len(counts) == total and set(counts.values()) == {1}
        assert jobs.run_counts(reopened, run_id) == {"ok": total, "failed": 0}
        assert jobs.get_run(reopened, run_id)["status"] == "done"
    finally:
        reopened.close()


SLOW_CHILD = """
import sys, time
from workbench import jobs
from workbench.project import Project

path, run_id, release = sys.argv[1], int(sys.argv[2]), sys.argv[3]
project = Project.open(path)

def process(chunk, state):
    for unit in chunk:
        while unit.item_id == 2 and not __import__("os").path.exists(release):
            time.sleep(0.02)  # hold the run open until the test says so
        yield unit, jobs.Outcome(raw="x")

jobs.run_job(project, run_id, [jobs.Unit(i) for i in range(4)], process, commit_every=1, commit_seconds=0)
print("finished", flush=True)
"""


def test_a_run_going_on_in_another_program_shows_as_running_and_is_not_started_twice(project, tmp_path):
    run_id = jobs.create_run(project, "test")
    release = tmp_path / "release"
    child = subprocess.Popen([sys.executable, "-c", SLOW_CHILD, str(project.path), str(run_id), str(release)],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while jobs.run_counts(project, run_id)["ok"] < 2:
            assert child.poll() is None, child.stdout.read().decode()
            assert time.monotonic() < deadline, "the other program never got going"
            time.sleep(0.02)
        assert jobs.is_active(project, run_id)
        assert jobs.runs_frame(project).set_index("id").loc[run_id, "status"] == "running"
        calls = []

        def process(chunk, state):
            calls.extend(chunk)
            yield from ((unit, jobs.Outcome(raw="y")) for unit in chunk)

        with pytest.raises(UserError, match="running in another Palimpsest window or command"):
            jobs.run_job(project, run_id, [Unit(i) for i in range(4)], process)
        assert calls == [] and jobs.is_active(project, run_id)  # refusing did not take the run over
        release.touch()
        assert child.wait(timeout=60) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert not jobs.is_active(project, run_id)
    assert jobs.get_run(project, run_id)["status"] == "done"
    assert jobs.run_counts(project, run_id) == {"ok": 4, "failed": 0}


# ---------------------------------------------------------------------------------------------- cancel
def test_cancel_while_every_request_is_still_waiting_stops_the_run(project, fault_proxy):
    """The answers take far longer than anyone waits for a Cancel: the run must stop without them."""
    fault_proxy.always(Fault.slow(60))
    run_id = jobs.create_run(project, "test")
    units = [Unit(i) for i in range(12)]
    state = TaskState()
    backend = cached(project, fault_proxy.base_url, timeout=120, max_retries=0)
    outcome: dict = {}

    def work():
        try:
            outcome["report"] = jobs.run_job(project, run_id, units, generation_process(backend, build_request(backend)),
                                             state)
        except BaseException as exc:  # reported below
            outcome["error"] = exc
        finally:
            project.release_thread_connection()

    worker = threading.Thread(target=work)
    worker.start()
    deadline = time.monotonic() + 30
    while fault_proxy.in_flight < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fault_proxy.in_flight == 4
    state.cancel()
    worker.join(20)  # far less than the 60 s the answers need
    stopped = not worker.is_alive()
    backend.close()
    fault_proxy.stop()  # ends the slow answers
    worker.join(60)
    assert stopped, "the run waited for the slow answers instead of stopping at the Cancel"
    assert "error" not in outcome, outcome.get("error")
    assert outcome["report"].status == "cancelled"
    assert jobs.get_run(project, run_id)["status"] == "cancelled"
    assert len(fault_proxy.posts()) == 4  # the requests not started were never sent


def test_after_a_cancel_nothing_is_written_and_no_request_thread_lingers(project, fault_proxy):
    fault_proxy.always(Fault.slow(0.5))
    run_id = jobs.create_run(project, "test")
    units = [Unit(i) for i in range(16)]
    state = TaskState()
    seen = []

    def on_partial(result):
        seen.append(result)
        if len(seen) == 2:
            state.cancel()

    state._on_partial = on_partial
    with cached(project, fault_proxy.base_url, max_retries=0) as backend:
        report = jobs.run_job(project, run_id, units, generation_process(backend, build_request(backend)), state)
        assert report.status == "cancelled"
        rows = count(project.path, "SELECT COUNT(*) FROM responses")
        answers = count(project.path, "SELECT COUNT(*) FROM response_cache")
    time.sleep(1.5)  # the answers still in flight at the Cancel arrive now
    deadline = time.monotonic() + 30
    while request_threads() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert request_threads() == [], stacks(request_threads())
    assert count(project.path, "SELECT COUNT(*) FROM responses") == rows == report.processed
    assert count(project.path, "SELECT COUNT(*) FROM response_cache") == answers
    # at most the answers finished but not yet handed over, and those in flight, at the Cancel: none after it
    assert len(fault_proxy.posts()) <= report.processed + 2 * 4


# ---------------------------------------------------------------------------------------------- fatal
def test_a_refused_key_with_requests_in_flight_stores_nothing_for_the_rest(project, fault_proxy):
    fault_proxy.script(*[Fault.ok()] * 5)
    fault_proxy.always(Fault.status_error(401, "bad key"))
    run_id = jobs.create_run(project, "test")
    units = [Unit(i, s) for i in range(20) for s in range(2)]
    with cached(project, fault_proxy.base_url, max_retries=0) as backend, pytest.raises(UserError, match="HTTP 401"):
        jobs.run_job(project, run_id, units, generation_process(backend, build_request(backend)))
    counts = jobs.run_counts(project, run_id)
    assert counts["failed"] == 0 and counts["ok"] <= 5
    assert len(fault_proxy.posts()) <= 5 + 4  # once refused, nothing more is sent
    assert jobs.get_run(project, run_id)["status"] == "interrupted"
    assert count(project.path, "SELECT COUNT(*) FROM response_cache") == 5  # the good answers are kept

    fault_proxy.always(None)
    with cached(project, fault_proxy.base_url) as backend:
        report = jobs.run_job(project, run_id, units, generation_process(backend, build_request(backend)))
    assert report.processed == 40 - counts["ok"] and report.failed == 0
    assert set(counts_per_unit(project, run_id).values()) == {1} and len(counts_per_unit(project, run_id)) == 40


def test_a_server_that_is_down_stops_the_run_with_nothing_stored(project):
    run_id = jobs.create_run(project, "test")
    units = [Unit(i) for i in range(10)]
    with cached(project, f"http://127.0.0.1:{free_port()}/v1", max_retries=0) as backend, pytest.raises(UserError, match="Could not connect"):
        jobs.run_job(project, run_id, units, generation_process(backend, build_request(backend)))
    assert jobs.run_counts(project, run_id) == {"ok": 0, "failed": 0}
    assert jobs.get_run(project, run_id)["status"] == "interrupted"


# ---------------------------------------------------------------------------------------------- retry failed
def test_retry_failed_only_replaces_the_failed_rows_in_place(project, fault_proxy):
    fault_proxy.script(*[Fault.server_error(500) if n % 3 == 0 else Fault.ok() for n in range(12)])
    run_id = jobs.create_run(project, "test")
    units = [Unit(i) for i in range(12)]
    with cached(project, fault_proxy.base_url, concurrency=1, max_retries=0) as backend:
        report = jobs.run_job(project, run_id, units, generation_process(backend, build_request(backend)))
    assert report.failed == 4
    before = dict(project.db.execute("SELECT item_id, id FROM responses WHERE run_id = ?", [run_id]).fetchall())
    failed = {i for (i,) in project.db.execute("SELECT item_id FROM responses WHERE status = 'failed'")}

    fault_proxy.reset()
    with cached(project, fault_proxy.base_url) as backend:
        report = jobs.run_job(project, run_id, units, generation_process(backend, build_request(backend)),
                              retry_failed=True)
    assert (report.processed, report.failed) == (4, 0)
    assert len(fault_proxy.posts()) == 4  # only the failures were asked again
    after = dict(project.db.execute("SELECT item_id, id FROM responses WHERE run_id = ?", [run_id]).fetchall())
    assert after == before  # the same rows, updated: no second row for any item
    assert jobs.run_counts(project, run_id) == {"ok": 12, "failed": 0}
    assert {i for (i,) in project.db.execute("SELECT item_id FROM responses WHERE error IS NULL")} >= failed


# ---------------------------------------------------------------------------------------------- usage
def test_usage_counts_each_answer_once_whatever_the_backend_retried(project, fault_proxy):
    # rate limits and server errors retried inside the client, then answered
    fault_proxy.script(Fault.rate_limited(0), Fault.server_error(502), Fault.rate_limited(retry_after_ms=10))
    run_id = jobs.create_run(project, "test")
    units = [Unit(i, s) for i in range(5) for s in range(2)]
    with cached(project, fault_proxy.base_url, concurrency=2, max_retries=3) as backend:
        jobs.run_job(project, run_id, units, generation_process(backend, build_request(backend)))
    assert len(fault_proxy.posts()) == 13  # ten answers and three retried refusals
    usage = jobs.get_run(project, run_id)["usage"]
    tokens = project.db.execute(
        "SELECT SUM(prompt_tokens), SUM(completion_tokens) FROM responses WHERE run_id = ?", [run_id]).fetchone()
    assert (usage["calls"], usage["cached"]) == (10, 0)
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == tokens and tokens[0] > 0

    again = jobs.create_run(project, "test")  # the same requests: all from the cache, nothing paid
    with cached(project, fault_proxy.base_url) as backend:
        jobs.run_job(project, again, units, generation_process(backend, build_request(backend)))
    assert jobs.get_run(project, again)["usage"] == {"calls": 0, "cached": 10, "prompt_tokens": 0,
                                                     "completion_tokens": 0}
    assert len(fault_proxy.posts()) == 13


def test_a_failure_to_mark_a_run_running_does_not_leave_it_running_forever(project):
    run_id = jobs.create_run(project, "test")
    db = project.db
    with db.transaction():
        db.execute("CREATE TRIGGER refuse BEFORE UPDATE OF status ON runs WHEN NEW.status = 'running'"
                   " BEGIN SELECT RAISE(ABORT, 'disk trouble'); END")
    with pytest.raises(sqlite3.IntegrityError):
        jobs.run_job(project, run_id, [Unit(0)], lambda units, state: iter(()))
    with db.transaction():
        db.execute("DROP TRIGGER refuse")
    assert not jobs.is_active(project, run_id)
    report = jobs.run_job(project, run_id, [Unit(0)], lambda units, state: iter([(Unit(0), jobs.Outcome(raw="x"))]))
    assert report.status == "done"


def test_a_run_goes_on_when_the_temporary_folder_cannot_hold_its_lock(project, tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the lock folder would go")
    monkeypatch.setattr("workbench.run_lock.tempfile.gettempdir", lambda: str(blocked))
    run_id = jobs.create_run(project, "test")

    def process(chunk, state):
        yield from ((unit, jobs.Outcome(raw="x")) for unit in chunk)

    report = jobs.run_job(project, run_id, [Unit(i) for i in range(3)], process)
    assert report.status == "done" and jobs.run_counts(project, run_id) == {"ok": 3, "failed": 0}
    assert not jobs.is_active(project, run_id)
