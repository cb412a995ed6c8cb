"""Run lock files do not pile up in the temporary folder: a run removes its lock file when it ends (however
it ends), a file left by a program that was killed goes the next time the run is looked at, and removing
them never lets two programs hold the same run's lock at once."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench import jobs, run_lock
from workbench.errors import CancelledError
from workbench.jobs import Outcome, Unit
from workbench.progress import TaskState

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def lock_folder(tmp_path, monkeypatch):
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr("workbench.run_lock.tempfile.gettempdir", lambda: str(temporary))
    return run_lock._folder(str(temporary))


def answers(units, state):
    return ((u, Outcome(raw="x")) for u in units)


def test_a_finished_run_leaves_no_lock_file(project, lock_folder):
    run_id = jobs.create_run(project, "test")
    jobs.run_job(project, run_id, [Unit(i) for i in range(3)], answers)
    assert list(lock_folder.iterdir()) == []


def test_a_cancelled_run_and_a_run_that_broke_leave_no_lock_file(project, lock_folder):
    state = TaskState()
    state.cancel()
    jobs.run_job(project, jobs.create_run(project, "test"), [Unit(0)], answers, state)

    def broken(units, state):
        raise RuntimeError("a bug")
        yield

    with pytest.raises(RuntimeError):
        jobs.run_job(project, jobs.create_run(project, "test"), [Unit(0)], broken)
    assert list(lock_folder.iterdir()) == []
    with pytest.raises(CancelledError):
        state.check()


def test_a_lock_file_left_by_a_killed_program_goes_when_the_run_is_next_looked_at(project, lock_folder):
    run_id = jobs.create_run(project, "test")
    left = run_lock._lock_file(project.path, run_id)
    left.touch()  # what a program killed while running leaves behind (its lock went with it)
    assert not jobs.is_active(project, run_id)
    assert not left.exists()


CONTENDER = """
import os, random, sys, time
from pathlib import Path
from workbench import run_lock

project, log, rounds, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
while not go.exists():
    time.sleep(0.001)
done = 0
while done < rounds:
    lock = run_lock.RunLock(project, 7)
    if not lock.acquire():
        continue
    with open(log, "a") as fh:
        fh.write(f"enter {os.getpid()}\\n")
    time.sleep(0.005)
    with open(log, "a") as fh:
        fh.write(f"leave {os.getpid()}\\n")
    lock.release()
    done += 1
    time.sleep(random.uniform(0, 0.06))  # let the others in (a waiting lock looks again every 50 ms)
"""


def test_removing_the_lock_file_never_lets_two_programs_hold_the_lock_at_once(tmp_path):
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    log = tmp_path / "log"
    project = tmp_path / "study.palimpsest"
    env = {**os.environ, "TMPDIR": str(temporary)}
    go = tmp_path / "go"
    children = [subprocess.Popen([sys.executable, "-c", CONTENDER, str(project), str(log), "25", str(go)], cwd=ROOT,
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                for _ in range(4)]
    time.sleep(2)  # let every program start and wait for the signal, so that they contend
    go.touch()
    for child in children:
        out = child.communicate(timeout=300)[0]
        assert child.returncode == 0, out
    lines = log.read_text().splitlines()
    assert len(lines) == 4 * 25 * 2
    holder = None
    for line in lines:  # every 'enter' is followed by the same program's 'leave' before anyone else enters
        what, pid = line.split()
        if what == "enter":
            assert holder is None, "two programs held the run's lock at once"
            holder = pid
        else:
            assert holder == pid
            holder = None
    assert [p.name for p in (temporary / f"palimpsest-runs-{os.getuid()}").iterdir()] == []
