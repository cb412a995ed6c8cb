"""The same run started twice at once (two commands, two windows) does every unit once and is one run.

Real processes, as two ``palimpsest cloze run`` commands would be: the second one must see what the first
did while it waited for the run's lock, not a list of pending units it made before taking the lock; and two
programs asking for the same work at the same moment must end up with one run, not two.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from workbench import jobs

ROOT = Path(__file__).resolve().parents[2]

RUNNER = """
import sys, time
from pathlib import Path
from workbench import jobs
from workbench.errors import UserError
from workbench.project import Project

path, run_id, go, ready, units = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), int(sys.argv[5])
project = Project.open(path)
ready.touch()
while not go.exists():
    time.sleep(0.01)

def process(chunk, state):
    for unit in chunk:
        time.sleep(0.15)  # a model thinking
        print("processed", unit.item_id, flush=True)
        yield unit, jobs.Outcome(raw="answer", prompt_tokens=3, completion_tokens=1)

try:
    report = jobs.run_job(project, run_id, [jobs.Unit(i) for i in range(units)], process, commit_every=1)
    print("report", report.processed, flush=True)
except UserError as exc:
    print("refused", exc, flush=True)
project.close()
"""


def start(script: str, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def wait_for(condition, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_a_second_command_on_the_same_run_does_not_redo_what_the_first_did_while_it_waited(project, tmp_path):
    units = 8
    run_id = jobs.create_run(project, "test")
    path = project.path
    go_a, go_b, ready_a, ready_b = (tmp_path / name for name in ("go-a", "go-b", "ready-a", "ready-b"))
    first = start(RUNNER, path, run_id, go_a, ready_a, units)
    second = start(RUNNER, path, run_id, go_b, ready_b, units)
    try:
        wait_for(lambda: ready_a.exists() and ready_b.exists(), "both programs to open the project")
        go_a.touch()
        wait_for(lambda: jobs.run_counts(project, run_id)["ok"] >= 1, "the first program to get going")
        go_b.touch()  # the second starts while the first still has most of the units to do
        outputs = [child.communicate(timeout=120)[0] for child in (first, second)]
    finally:
        for child in (first, second):
            if child.poll() is None:
                child.kill()
                child.wait()
    processed = [line for out in outputs for line in out.splitlines() if line.startswith("processed")]
    assert sorted(processed) == sorted(f"processed {i}" for i in range(units)), outputs
    run = jobs.get_run(project, run_id)
    assert run["usage"]["calls"] == units and run["usage"]["prompt_tokens"] == 3 * units
    assert jobs.run_counts(project, run_id) == {"ok": units, "failed": 0}


ASKER = """
import sys, time
from pathlib import Path
from workbench import jobs
from workbench.project import Project

path, go, ready, configs = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
project = Project.open(path)
ready.touch()
while not go.exists():
    time.sleep(0.001)
for k in range(configs):
    jobs.find_or_create_run(project, "cloze", model_id=None, params={"temperature": 0.0},
                            config={"passage_ids": [k, k + 1]})
project.close()
"""


def test_programs_asking_for_the_same_work_at_the_same_moment_get_one_run(project, tmp_path):
    configs, programs = 40, 3
    path = project.path
    go = tmp_path / "go"
    readies = [tmp_path / f"ready-{n}" for n in range(programs)]
    children = [start(ASKER, path, go, ready, configs) for ready in readies]
    try:
        wait_for(lambda: all(r.exists() for r in readies), "every program to open the project")
        go.touch()
        for child in children:
            out = child.communicate(timeout=120)[0]
            assert child.returncode == 0, out
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    per_config = project.db.execute("SELECT config, COUNT(*) FROM runs GROUP BY config").fetchall()
    assert len(per_config) == configs
    assert {n for _, n in per_config} == {1}
