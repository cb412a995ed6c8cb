"""The window replacing or closing its project while background work still writes to it: the work
finishes on its own connection, nothing it wrote is lost and no "closed database" error box appears."""

from __future__ import annotations

import time

from PySide6.QtCore import QSettings

from ui.main_window import MainWindow
from workbench import jobs
from workbench.project import Project


def test_new_project_while_a_run_writes_to_the_old_one_asks_then_stops_it_losing_nothing(qtbot, tmp_path,
                                                                                         monkeypatch):
    old_path, new_path = tmp_path / "old.palimpsest", tmp_path / "new.palimpsest"
    Project.create(old_path).close()
    window = MainWindow(settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    assert window.open_project(old_path)
    project = window.project
    run_id = jobs.create_run(project, "test")
    units = [jobs.Unit(i) for i in range(400)]

    def process(chunk, state):
        for unit in chunk:
            time.sleep(0.01)
            yield unit, jobs.Outcome(raw="x")

    errors, reports, questions = [], [], []
    window.ops.run(lambda state: jobs.run_job(project, run_id, units, process, state, commit_every=4),
                   label="Running", project=project, on_error=lambda m, d: errors.append(m),
                   on_done=reports.append, on_cancelled=reports.append)
    qtbot.waitUntil(lambda: jobs.run_counts(project, run_id)["ok"] >= 4, timeout=10_000)
    monkeypatch.setattr("ui.main_window.QFileDialog.getSaveFileName", lambda *a, **k: (str(new_path), ""))

    answers = iter([False, True])
    monkeypatch.setattr("ui.dialogs.ask", lambda parent, message, *a, **k: questions.append(message) or next(answers))
    window.new_project()  # "no": the old project stays open and the run goes on
    assert window.project is project and window.ops.user_work_running
    window.new_project()  # "yes": the run stops, the new project opens
    assert "Work is still running" in questions[0] and len(questions) == 2
    assert window.project.path == new_path
    qtbot.waitUntil(lambda: bool(reports or errors), timeout=30_000)
    assert errors == []
    window.shutdown()
    with Project.open(old_path) as old:
        done = jobs.run_counts(old, run_id)
        assert done["failed"] == 0 and 4 <= done["ok"] < 400  # what was written is kept; the rest can resume
        assert jobs.get_run(old, run_id)["status"] != "done"
