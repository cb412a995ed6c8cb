"""Re-running costs nothing: model calls (counted at the server) when a finished temperature-0 run is
run again, and when an identical new run is started. Goal: 0 calls for both.

The model is opened the way the program opens it (``catalog.open_backend``: behind the project's
response cache); the server is a real HTTP server on 127.0.0.1 reached through the openai client.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.common import Timer, line
from benchmarks.openai_stub_server import MODEL, StubServer
from workbench import jobs
from workbench.models import catalog
from workbench.models.base import GenerationParams, prompt_request
from workbench.models.calls import generation_process
from workbench.project import Project


def execute(project: Project, spec: catalog.ModelSpec, run_id: int, units: list[jobs.Unit]) -> jobs.JobReport:
    params = GenerationParams(temperature=0.0, max_tokens=8, seed=1)
    with catalog.open_backend(spec, project) as backend:
        build = lambda u: prompt_request(backend, f"Passage {u.item_id}", params, sample=u.sample)  # noqa: E731
        return jobs.run_job(project, run_id, units, generation_process(backend, build))


def run(quick: bool):
    items = 50 if quick else 200
    units = [jobs.Unit(i, s) for i in range(items) for s in range(2)]
    with tempfile.TemporaryDirectory() as folder, StubServer(delay=0.0) as server:
        project = Project.create(Path(folder) / "bench.palimpsest")
        try:
            spec = catalog.add_model(project, catalog.ModelSpec(
                label="stub", backend="openai", ref=MODEL, base_url=server.base_url, params={"concurrency": 8}))
            first = jobs.create_run(project, "benchmark", model_id=spec.id)
            with Timer() as cold:
                execute(project, spec, first, units)
            first_calls = server.calls()

            with Timer() as rerun_timer:
                rerun = execute(project, spec, first, units)  # the finished run, again
            rerun_calls = server.calls() - first_calls

            second = jobs.create_run(project, "benchmark", model_id=spec.id)
            with Timer() as new_timer:
                fresh = execute(project, spec, second, units)  # an identical new run
            new_calls = server.calls() - first_calls - rerun_calls
            stored = project.db.execute("SELECT COUNT(*) FROM responses WHERE run_id = ?", [second]).fetchone()[0]
        finally:
            project.close()
    if first_calls != len(units) or stored != len(units) or fresh.cached != len(units):
        raise RuntimeError("the benchmark runs did not do what they should")
    yield line("rerun_finished_run_calls", rerun_calls, "calls", "0", rerun_calls == 0,
               units=len(units), first_run_calls=first_calls, already_done=rerun.done_before,
               first_s=round(cold.seconds, 2), rerun_s=round(rerun_timer.seconds, 3))
    yield line("identical_new_run_calls", new_calls, "calls", "0", new_calls == 0,
               units=len(units), from_cache=fresh.cached, new_run_s=round(new_timer.seconds, 3))
