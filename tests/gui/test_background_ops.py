"""The one background helper: work off the GUI thread, progress and results on it, cancel, join."""

import threading
import time

from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication

from ui.background import BackgroundOps
from workbench.errors import UserError


def test_work_runs_off_the_gui_thread_and_reports_on_it(qtbot):
    ops = BackgroundOps()
    main_thread = QThread.currentThread()
    seen = {"progress_threads": set(), "partials": [], "work_thread": None}

    def work(state):
        seen["work_thread"] = threading.get_ident()
        for i in range(5):
            state.progress(i + 1, 5, force=True)
            state.partial(i)
        return "finished"

    def on_progress(p):
        seen["progress_threads"].add(QThread.currentThread() is main_thread)

    results = []
    ops.run(work, label="Testing", on_done=results.append, on_progress=on_progress,
                 on_partial=seen["partials"].append)
    qtbot.waitUntil(lambda: results == ["finished"], timeout=5000)
    assert seen["work_thread"] != threading.get_ident()
    assert seen["progress_threads"] == {True}
    assert seen["partials"] == [0, 1, 2, 3, 4]
    qtbot.waitUntil(lambda: not ops.busy, timeout=5000)


def test_cancel_is_cooperative_and_reported(qtbot):
    ops = BackgroundOps()
    started = threading.Event()
    cancelled = []

    def work(state):
        started.set()
        while True:
            state.check()
            time.sleep(0.01)

    op = ops.run(work, label="Looping", on_cancelled=cancelled.append)
    started.wait(5)
    op.cancel()
    qtbot.waitUntil(lambda: bool(cancelled), timeout=5000)
    assert "Stopped" in cancelled[0]
    assert ops.join(5000)


def test_user_errors_and_bugs_become_messages(qtbot):
    ops = BackgroundOps()
    errors = []
    ops.run(lambda state: (_ for _ in ()).throw(UserError("The file is empty.")), on_error=lambda m, d: errors.append((m, d)))
    qtbot.waitUntil(lambda: len(errors) == 1, timeout=5000)
    assert errors[0] == ("The file is empty.", "")

    ops.run(lambda state: 1 / 0, label="Dividing", on_error=lambda m, d: errors.append((m, d)))
    qtbot.waitUntil(lambda: len(errors) == 2, timeout=5000)
    message, details = errors[1]
    assert "dividing" in message and "ZeroDivisionError" in details


def test_join_cancels_and_waits(qtbot):
    ops = BackgroundOps()
    stopped = threading.Event()

    def work(state):
        try:
            while True:
                state.check()
                time.sleep(0.01)
        finally:
            stopped.set()

    ops.run(work)
    time.sleep(0.05)
    assert ops.join(5000)
    assert stopped.is_set()
    QApplication.processEvents()


def test_worker_connections_are_released(qtbot, project):
    ops = BackgroundOps()
    done = []

    def work(state):
        return project.db.execute("SELECT COUNT(*) FROM books").fetchone()[0]

    ops.run(work, project=project, on_done=done.append)
    qtbot.waitUntil(lambda: done == [0], timeout=5000)
    qtbot.waitUntil(lambda: not ops.busy, timeout=5000)
    # Only the test thread's own connection remains open.
    assert project.open_connections() <= 1


def _slow_run(project, units=60, pause=0.02, deaf_for=0.0):
    """A run whose process sleeps between answers (and ignores Cancel for ``deaf_for`` seconds)."""
    from workbench import jobs

    run_id = jobs.create_run(project, "test")
    started = time.monotonic()

    def process(chunk, state):
        for unit in chunk:
            time.sleep(pause)
            yield unit, jobs.Outcome(raw="x")
            if time.monotonic() - started > deaf_for:
                state.check()

    def work(state):
        return jobs.run_job(project, run_id, [jobs.Unit(i) for i in range(units)], process, state, commit_every=4)

    return run_id, work


def test_a_worker_outliving_join_then_project_close_finishes_without_an_error(qtbot, project):
    """The window's shutdown: join (which may time out on work slow to stop), then close the project.
    The worker must not meet a closed database: no error box, and its last batch is saved."""
    from workbench import jobs

    ops = BackgroundOps()
    errors, ended = [], []
    run_id, work = _slow_run(project, units=40, deaf_for=0.6)
    ops.run(work, project=project, on_error=lambda m, d: errors.append((m, d)), on_end=lambda: ended.append(1))
    qtbot.waitUntil(lambda: jobs.run_counts(project, run_id)["ok"] >= 4, timeout=10_000)
    assert not ops.join(100)  # still busy: it does not listen to Cancel yet
    project.close()
    qtbot.waitUntil(lambda: ended == [1], timeout=30_000)
    assert errors == []
    assert project.open_connections() == 0
    from workbench.project import Project

    with Project.open(project.path) as reopened:
        run = jobs.get_run(reopened, run_id)
        counts = jobs.run_counts(reopened, run_id)
        assert run["status"] == "cancelled"
        assert counts["ok"] >= 4 and counts["ok"] + counts["failed"] <= 40


def test_join_then_close_the_usual_shutdown_reports_a_cancel_not_an_error(qtbot, project):
    from workbench import jobs

    ops = BackgroundOps()
    errors, reports = [], []
    run_id, work = _slow_run(project, units=200)
    ops.run(work, project=project, on_error=lambda m, d: errors.append(m), on_done=reports.append)
    qtbot.waitUntil(lambda: jobs.run_counts(project, run_id)["ok"] >= 4, timeout=10_000)
    assert ops.join(10_000)
    project.close()
    qtbot.waitUntil(lambda: len(reports) == 1, timeout=10_000)
    assert errors == [] and reports[0].status == "cancelled"
    assert project.open_connections() == 0


def test_a_views_read_cut_short_by_closing_the_project_is_not_an_error(qtbot, tmp_path):
    from workbench import Project

    project = Project.create(tmp_path / "p.palimpsest")
    project.close()
    ops = BackgroundOps()
    errors, cancelled = [], []

    def read(state):
        return project.db.execute("select 1").fetchone()

    ops.run(read, project=project, background_read=True, on_error=lambda m, d: errors.append(m),
            on_cancelled=cancelled.append)
    ops.run(read, project=project, on_error=lambda m, d: errors.append(m))  # work the user asked for: told
    qtbot.waitUntil(lambda: not ops.busy, timeout=5000)
    assert cancelled == ["The project was closed."]
    assert errors == ["This project has been closed. Open it again to continue."]
