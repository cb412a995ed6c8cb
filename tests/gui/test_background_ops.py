"""The one background helper: work off the GUI thread, progress and results on it, cancel, join."""

import ast
import threading
import time
from pathlib import Path

import shiboken6
from PySide6.QtCore import Qt, QThread
from PySide6.QtWidgets import QApplication, QWidget

import ui
from ui.background import BackgroundOps
from ui.widgets.progress_row import ProgressRow
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


# ---------------------------------------------------------------------------------------------- one operation per widget
class Owner(QWidget):
    """A widget that owns a slot; what reaches its callbacks is written to ``heard``."""

    def __init__(self, heard: list):
        super().__init__()
        self.heard = heard

    def done(self, result):
        self.heard.append(("done", result))

    def failed(self, message, details):
        self.heard.append(("error", message))

    def progressed(self, progress):
        self.heard.append(("progress", progress.done))

    def cancelled(self, message):
        self.heard.append(("cancelled", message))

    def ended(self):
        self.heard.append(("end", None))

    def callbacks(self):
        return dict(on_done=self.done, on_error=self.failed, on_progress=self.progressed,
                    on_cancelled=self.cancelled, on_end=self.ended)


def gated(gate: threading.Event, result, progress: tuple[int, int] | None = None):
    """Work that waits for ``gate``, then reports ``progress`` and returns ``result`` (it never checks Cancel)."""

    def work(state):
        assert gate.wait(10)
        if progress is not None:
            state.progress(*progress, force=True)
        return result

    return work


def test_starting_again_cancels_the_operation_it_replaces_and_its_result_never_arrives(qtbot):
    ops, heard = BackgroundOps(), []
    owner = Owner(heard)
    slot = ops.slot(owner)
    first_gate, second_gate = threading.Event(), threading.Event()
    first = slot.start(gated(first_gate, "first", (1, 2)), label="Counting", **owner.callbacks())
    second = slot.start(gated(second_gate, "second", (3, 4)), label="Counting again", **owner.callbacks())
    assert first.state.cancelled and not second.state.cancelled
    first_gate.set()  # the first one finishes after all, with progress and a result
    qtbot.waitUntil(lambda: not first.running, timeout=5000)
    assert heard == [] and slot.busy and slot.operation is second
    second_gate.set()
    qtbot.waitUntil(lambda: not ops.busy, timeout=5000)
    assert heard == [("progress", 3), ("done", "second"), ("end", None)]
    assert not slot.busy


def test_busy_state_and_progress_row_follow_the_newest_operation(qtbot):
    ops, heard = BackgroundOps(), []
    owner = Owner(heard)
    slot = ops.slot(owner)
    row = ProgressRow(slot)
    busy = []
    slot.busy_changed.connect(busy.append)
    first_gate, second_gate = threading.Event(), threading.Event()
    slot.start(gated(first_gate, 1, (9, 10)), label="Counting")
    assert busy == [True] and not row.isHidden() and row.label.text() == "Counting"
    second = slot.start(gated(second_gate, 2, (3, 4)), label="Counting again")
    assert busy == [True] and row.operation is second and row.label.text() == "Counting again"
    first_gate.set()
    qtbot.waitUntil(lambda: len(ops.operations) == 1, timeout=5000)  # the first one has ended
    assert slot.busy and not row.isHidden() and row.bar.maximum() == 0  # its progress never reached the row
    qtbot.mouseClick(row.cancel_button, Qt.MouseButton.LeftButton)  # Cancel stops the newest one
    assert second.state.cancelled and row.cancel_button.text() == "Stopping…"
    second_gate.set()
    qtbot.waitUntil(lambda: not slot.busy, timeout=5000)
    assert busy == [True, False] and row.isHidden() and row.operation is None


def test_a_deleted_owner_hears_nothing(qtbot):
    ops, heard = BackgroundOps(), []
    owner = Owner(heard)
    slot = ops.slot(owner)
    gate = threading.Event()
    slot.start(gated(gate, "late", (1, 1)), label="Reading", **owner.callbacks())
    owner.deleteLater()
    qtbot.waitUntil(lambda: not shiboken6.isValid(owner), timeout=5000)
    gate.set()
    qtbot.waitUntil(lambda: not ops.busy, timeout=5000)
    QApplication.processEvents()
    assert heard == []


def test_queued_reloads_run_after_the_current_one_and_only_the_newest_waits(qtbot):
    ops, heard = BackgroundOps(), []
    owner = Owner(heard)
    slot = ops.slot(owner)
    gate, free = threading.Event(), threading.Event()
    free.set()
    assert slot.queue(gated(gate, "first"), on_done=owner.done) is not None  # nothing ran: it starts at once
    assert slot.queue(gated(free, "second"), on_done=owner.done) is None  # waits
    assert slot.queue(gated(free, "third"), on_done=owner.done) is None  # waits in the second one's place
    gate.set()
    qtbot.waitUntil(lambda: not ops.busy and not slot.busy, timeout=5000)
    assert heard == [("done", "first"), ("done", "third")]


def test_drop_ignores_the_operation_and_frees_the_widget_at_once(qtbot):
    ops, heard = BackgroundOps(), []
    owner = Owner(heard)
    slot = ops.slot(owner)
    gate = threading.Event()
    operation = slot.start(gated(gate, "stale"), **owner.callbacks())
    slot.queue(gated(gate, "queued"), on_done=owner.done)
    slot.drop()
    assert not slot.busy and operation.state.cancelled
    gate.set()
    qtbot.waitUntil(lambda: not ops.busy, timeout=5000)
    assert heard == []


def test_an_error_nobody_asked_for_is_shown_over_the_owner(qtbot, monkeypatch):
    shown = []
    monkeypatch.setattr("ui.dialogs.show_error", lambda parent, message, details="": shown.append((parent, message)))
    ops = BackgroundOps()
    owner = Owner([])
    ops.slot(owner).start(lambda state: (_ for _ in ()).throw(UserError("The file is empty.")))
    qtbot.waitUntil(lambda: bool(shown), timeout=5000)
    assert shown == [(owner, "The file is empty.")]


def test_a_row_that_starts_watching_late_still_shows_the_last_report(qtbot):
    """The Jobs page makes a row when an operation has started; the first report may be on its way by then."""
    ops = BackgroundOps()
    reported, gate = threading.Event(), threading.Event()

    def work(state):
        state.progress(12, 40, force=True)
        reported.set()
        assert gate.wait(10)

    operation = ops.run(work, label="Continuing run 3")
    assert reported.wait(10)  # sent by the worker, not yet delivered here
    row = ProgressRow()
    row.watch(operation)
    qtbot.waitUntil(lambda: row.bar.maximum() == 40 and row.bar.value() == 12, timeout=5000)
    gate.set()
    qtbot.waitUntil(lambda: not ops.busy and row.isHidden(), timeout=5000)


def test_callbacks_of_background_work_in_the_gui_are_never_lambdas():
    """A lambda (or a nested function) given as a callback keeps its widget alive as long as the operation
    lives; bound methods do not. The work itself may be a lambda over plain data."""
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    root = Path(ui.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        nested = {inner.name for outer in ast.walk(tree) if isinstance(outer, functions)
                  for inner in ast.walk(outer) if inner is not outer and isinstance(inner, functions)}
        for call in (node for node in ast.walk(tree) if isinstance(node, ast.Call)):
            for keyword in call.keywords:
                value = keyword.value
                if (keyword.arg or "").startswith("on_") and (
                        isinstance(value, ast.Lambda) or isinstance(value, ast.Name) and value.id in nested):
                    offenders.append(f"{path.relative_to(root.parent)}:{call.lineno} {keyword.arg}")
    assert offenders == []


def test_a_worker_lets_go_of_its_work_before_the_operation_ends_so_nothing_qt_is_freed_on_it(qtbot):
    """By the time ``ended`` reaches the GUI thread the worker holds nothing of the operation or of its work any
    more, and every operation is freed on the GUI thread (an operation once was a Qt object whose wrapper could
    be freed before it: the window crashed when Qt deleted it)."""
    import weakref

    ops = BackgroundOps()
    released_when_ended: list[bool] = []
    freed_in: list[int] = []

    class Sentinel:  # held only by the work function
        pass

    for _ in range(100):
        sentinel = Sentinel()
        alive = weakref.ref(sentinel)
        op = ops.run(lambda state, held=sentinel: None, label="Nothing",
                     on_end=lambda alive=alive: released_when_ended.append(alive() is None))
        weakref.finalize(op, lambda: freed_in.append(threading.get_ident()))
        del sentinel, op
    qtbot.waitUntil(lambda: len(released_when_ended) == 100 and not ops.busy, timeout=20_000)
    qtbot.waitUntil(lambda: len(freed_in) == 100, timeout=5000)  # deleteLater has run on the main thread
    assert released_when_ended == [True] * 100
    assert set(freed_in) == {threading.get_ident()}
