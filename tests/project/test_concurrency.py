"""Several threads on one project file: readers never blocked nor shown half a batch, writers never
failing with "database is locked", each thread on its own connection, and closing the project never
cutting a worker's write short."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from tests.fixtures.books import novel_text
from workbench import jobs
from workbench.corpus.importer import import_paths
from workbench.errors import ProjectError
from workbench.jobs import Outcome, Unit
from workbench.project import Project
from workbench.project.connection import connect


def steady(pause: float = 0.0):
    """A process answering every unit, a little slowly so that readers meet it half-way."""

    def process(units, state):
        for unit in units:
            if pause:
                time.sleep(pause)
            yield unit, Outcome(raw=f"answer {unit.item_id}", prompt_tokens=1, completion_tokens=1)
            state.check()

    return process


class Worker(threading.Thread):
    """Runs ``fn(project)`` on its own thread, keeps what it raised, releases its connection."""

    def __init__(self, project: Project, fn):
        super().__init__(daemon=True)
        self.project, self.fn = project, fn
        self.error: BaseException | None = None
        self.result = None

    def run(self) -> None:
        try:
            self.result = self.fn(self.project)
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            self.project.release_thread_connection()


def snapshot(project: Project, run_id: int) -> tuple[int, dict]:
    """Rows stored and the usage summed so far, read in ONE statement (one snapshot), as a page refresh would."""
    count, usage = project.db.execute(
        "SELECT (SELECT COUNT(*) FROM responses WHERE run_id = ?), (SELECT usage FROM runs WHERE id = ?)",
        [run_id, run_id],
    ).fetchone()
    return count, json.loads(usage or "{}")


# ---------------------------------------------------------------------------------------------- readers
def test_the_gui_thread_reads_while_a_worker_commits_batches_never_locked_never_half_a_batch(project):
    total, batch = 1600, 16
    run_id = jobs.create_run(project, "test")
    units = [Unit(i) for i in range(total)]
    worker = Worker(project, lambda p: jobs.run_job(p, run_id, units, steady(0.0005), commit_every=batch,
                                                    commit_seconds=3600))
    worker.start()
    seen: list[int] = []
    while worker.is_alive() or not seen:
        count, usage = snapshot(project, run_id)  # the GUI thread's own connection
        assert count % batch == 0, f"a reader saw {count} rows: part of a batch"
        assert usage.get("calls", 0) == count, "rows and the run's usage come from different moments"
        jobs.runs_frame(project)  # what the Jobs page reads
        seen.append(count)
    worker.join(60)
    assert worker.error is None, worker.error
    assert snapshot(project, run_id)[0] == total
    assert any(0 < n < total for n in seen), "the reader never met the run half-way; the test proved nothing"


def test_a_reader_opening_its_own_connection_mid_run_is_not_blocked(project):
    run_id = jobs.create_run(project, "test")
    units = [Unit(i) for i in range(800)]
    worker = Worker(project, lambda p: jobs.run_job(p, run_id, units, steady(0.001), commit_every=1))
    worker.start()
    reads = 0
    while worker.is_alive():
        db = connect(project.path)  # a fresh connection each time, as a new page or a notebook would
        db.conn.execute("PRAGMA busy_timeout = 0")  # a reader must never need to wait at all
        try:
            db.execute("SELECT COUNT(*) FROM responses").fetchone()
            reads += 1
        finally:
            db.conn.close()
    worker.join(60)
    assert worker.error is None, worker.error
    assert reads > 0


# ---------------------------------------------------------------------------------------------- writers
def test_two_runs_and_an_import_write_at_once_without_locking_errors(project, tmp_path):
    folder = tmp_path / "books"
    folder.mkdir()
    for i in range(25):
        (folder / f"book{i:02d}.txt").write_text(novel_text(500 + i, chapters=2, paragraphs=3))
    runs = [jobs.create_run(project, "test") for _ in range(2)]
    units = [Unit(i, s) for i in range(150) for s in range(2)]
    workers = [
        Worker(project, lambda p, r=r: jobs.run_job(p, r, units, steady(0.0002), commit_every=1))
        for r in runs
    ] + [Worker(project, lambda p: import_paths(p, [folder]))]
    for worker in workers:
        worker.start()
    while any(w.is_alive() for w in workers):  # and the GUI thread keeps reading
        project.db.execute("SELECT COUNT(*) FROM responses").fetchone()
        project.db.execute("SELECT COUNT(*) FROM books").fetchone()
    for worker in workers:
        worker.join(120)
        assert worker.error is None, repr(worker.error)
    for run_id in runs:
        assert jobs.run_counts(project, run_id) == {"ok": 300, "failed": 0}
        assert jobs.get_run(project, run_id)["usage"]["calls"] == 300
    report = workers[-1].result
    assert len(report.added) == 25 and not report.failures
    assert project.db.execute("SELECT COUNT(*) FROM book_texts").fetchone()[0] == 25


def test_sqlite_utils_own_transactions_take_the_write_lock_up_front(project):
    """``db.atomic()`` (sqlite-utils' table methods and ``Migrations`` use it) opens a *deferred*
    transaction: one that reads, then writes after another connection wrote, fails at once with
    "database is locked" whatever the busy timeout. The project's connections make it BEGIN IMMEDIATE."""
    db = project.db

    def other_writer():
        other = connect(project.path)
        try:
            with other.transaction():
                other.execute("INSERT INTO settings (key, value) VALUES ('other', '1')")
        finally:
            other.conn.close()

    with db.atomic():
        count = db.execute("SELECT COUNT(*) FROM settings").fetchone()[0]
        writer = threading.Thread(target=other_writer)
        writer.start()
        writer.join(0.5)  # with the write lock held here, it waits for us
        db.execute("INSERT INTO settings (key, value) VALUES ('mine', ?)", [str(count)])
    writer.join(30)
    keys = {k for (k,) in db.execute("SELECT key FROM settings")}
    assert {"mine", "other"} <= keys


def test_a_stray_write_outside_a_transaction_does_not_keep_the_write_lock(project):
    """A bare ``db.conn.executemany`` outside ``transaction()`` must not open a hidden transaction that
    holds the write lock until someone happens to commit (other writers would time out)."""
    db = project.db
    db.conn.executemany("INSERT INTO settings (key, value) VALUES (?, '1')", [("a",), ("b",)])
    assert not db.conn.in_transaction
    other = connect(project.path)
    other.conn.execute("PRAGMA busy_timeout = 0")
    try:
        with other.transaction():
            other.execute("INSERT INTO settings (key, value) VALUES ('c', '1')")
        assert other.execute("SELECT COUNT(*) FROM settings WHERE key IN ('a', 'b')").fetchone()[0] == 2
    finally:
        other.conn.close()


def test_a_failed_commit_is_rolled_back_and_the_connection_stays_usable(project):
    db = project.db
    with pytest.raises(sqlite3.IntegrityError), db.transaction():
        db.execute("PRAGMA defer_foreign_keys = ON")  # the check happens at COMMIT, which then fails
        db.execute("INSERT INTO book_texts (book_id, text) VALUES (999, 'orphan')")
    assert not db.conn.in_transaction, "a failed COMMIT left the transaction (and the write lock) open"
    with db.transaction():
        db.execute("INSERT INTO settings (key, value) VALUES ('after', '1')")
    other = connect(project.path)  # the next transaction really committed
    try:
        assert other.execute("SELECT COUNT(*) FROM settings WHERE key = 'after'").fetchone()[0] == 1
        assert other.execute("SELECT COUNT(*) FROM book_texts").fetchone()[0] == 0
    finally:
        other.conn.close()


def test_commits_reach_the_disk_before_they_return(project):
    """synchronous=FULL: with WAL's NORMAL, a power cut could take back answers already reported saved."""
    assert project.db.execute("PRAGMA synchronous").fetchone()[0] == 2
    assert project.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# ---------------------------------------------------------------------------------------------- threads
def test_a_connection_used_from_another_thread_fails_at_once(project):
    db = project.db  # the test thread's connection, captured as a careless closure would
    errors: list[BaseException] = []

    def work():
        try:
            with db.transaction():
                db.execute("INSERT INTO settings (key, value) VALUES ('x', '1')")
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert len(errors) == 1 and isinstance(errors[0], sqlite3.ProgrammingError)
    assert not db.conn.in_transaction
    assert db.execute("SELECT COUNT(*) FROM settings WHERE key = 'x'").fetchone()[0] == 0


def test_each_thread_gets_its_own_connection(project):
    seen = {}

    def work(name):
        seen[name] = project.db
        project.release_thread_connection()

    threads = [threading.Thread(target=work, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen["a"] is not seen["b"] and project.db not in seen.values()


def test_closing_the_project_while_a_worker_writes_keeps_every_batch(project):
    path: Path = project.path
    total = 400
    run_id = jobs.create_run(project, "test")
    units = [Unit(i) for i in range(total)]
    started = threading.Event()

    def process(units, state):
        for unit in units:
            started.set()
            time.sleep(0.002)
            yield unit, Outcome(raw="x")

    worker = Worker(project, lambda p: jobs.run_job(p, run_id, units, process, commit_every=8))
    worker.start()
    started.wait(10)
    time.sleep(0.05)
    project.close()  # e.g. the window opening another project while the run goes on
    with pytest.raises(ProjectError):
        _ = project.db  # nothing new may start on a closed project
    worker.join(60)
    assert worker.error is None, repr(worker.error)
    assert project.open_connections() == 0
    assert not Path(str(path) + "-wal").exists() or Path(str(path) + "-wal").stat().st_size == 0
    with Project.open(path) as reopened:
        assert jobs.run_counts(reopened, run_id) == {"ok": total, "failed": 0}
        assert jobs.get_run(reopened, run_id)["status"] == "done"


def test_closing_the_project_closes_connections_of_threads_that_ended(tmp_path):
    project = Project.create(tmp_path / "p.palimpsest")

    def forgetful():
        project.db.execute("SELECT 1").fetchone()  # never releases its connection

    thread = threading.Thread(target=forgetful)
    thread.start()
    thread.join()
    project.close()
    import gc

    gc.collect()
    assert project.open_connections() == 0
    assert not (tmp_path / "p.palimpsest-wal").exists() or (tmp_path / "p.palimpsest-wal").stat().st_size == 0


def test_creating_a_project_over_the_one_open_now_is_refused(project):
    """A "New project" dialog pointed at the open file (and 'replace' confirmed) must not delete the file
    from under its connections and the run writing to it."""
    run_id = jobs.create_run(project, "test")
    jobs.run_job(project, run_id, [Unit(0)], steady())
    with pytest.raises(ProjectError, match="open now"):
        Project.create(project.path, overwrite=True)
    assert jobs.run_counts(project, run_id) == {"ok": 1, "failed": 0}
    path = project.path
    project.close()
    Project.create(path, overwrite=True).close()  # once closed, replacing it is the user's choice


def test_closing_never_waits_on_a_worker_holding_the_write_lock(project):
    """The window closes the project on its own thread: it must not sit in a checkpoint until a worker
    that is still writing lets go (that is a frozen window)."""
    holding, release = threading.Event(), threading.Event()

    def hold(p):
        with p.db.transaction():
            p.db.execute("INSERT INTO settings (key, value) VALUES ('held', '1')")
            holding.set()
            release.wait(60)

    worker = Worker(project, hold)
    worker.start()
    assert holding.wait(10)
    closer = threading.Thread(target=project.close)
    closer.start()
    closer.join(10)  # far less than the 30 s busy timeout a blocking checkpoint would wait
    returned = not closer.is_alive()
    release.set()
    worker.join(30)
    closer.join(60)
    assert returned, "closing the project waited for the worker's transaction"
    assert worker.error is None
    with Project.open(project.path) as reopened:
        assert reopened.get_setting("held") == 1
