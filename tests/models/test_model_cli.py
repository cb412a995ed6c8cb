"""``palimpsest model …``, ``cache``, ``runs`` and ``continue`` on a real project and a real local server."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import workbench.models.catalog as registry
from workbench import jobs, runs
from workbench.cli import main
from workbench.cli.common import progress_state
from workbench.models.base import GenerationParams, prompt_request
from workbench.models.calls import generation_process
from workbench.progress import TaskState
from workbench.project import Project


def palimpsest(*argv: str) -> int:
    return main([str(a) for a in argv])


def new_project(tmp_path: Path) -> Path:
    path = tmp_path / "cli.palimpsest"
    assert palimpsest("new", path) == 0
    return path


def test_add_list_edit_and_remove(tmp_path, capsys):
    path = new_project(tmp_path)
    assert palimpsest("model", "add", path, "--label", "api", "--backend", "openai", "--ref", "tiny",
                      "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "MY_KEY_VAR",
                      "--param", "concurrency=4", "--tag", "decade=1950s", "--tag", "fine-tuned") == 0
    assert palimpsest("model", "edit", path, "api", "--new-label", "api-1950s", "--tag", "decade=1960s",
                      "--remove-tag", "fine-tuned", "--param", "timeout=30") == 0
    capsys.readouterr()
    assert palimpsest("model", "list", path, "--format", "json") == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["label"], row["api_key"], row["tags"]) == ("api-1950s", "env MY_KEY_VAR", "decade=1960s")
    assert row["params"] == "concurrency=4, timeout=30"
    assert palimpsest("model", "remove", path, "api-1950s") == 0
    capsys.readouterr()
    assert palimpsest("model", "list", path) == 0
    assert "(nothing yet)" in capsys.readouterr().out


def test_mistakes_get_one_plain_sentence(tmp_path, capsys):
    path = new_project(tmp_path)
    capsys.readouterr()
    assert palimpsest("model", "add", path, "--label", "g", "--backend", "gguf", "--ref", tmp_path / "no.gguf") == 1
    err = capsys.readouterr().err
    assert "There is no GGUF file at" in err and "Traceback" not in err
    assert palimpsest("model", "test", path, "nothing") == 1
    assert "no model called 'nothing'" in capsys.readouterr().err
    assert palimpsest("model", "add", path, "--label", "m", "--backend", "openai", "--ref", "x",
                      "--param", "chat") == 1
    assert "name=value" in capsys.readouterr().err


def test_model_test_answers_through_a_local_llama_cpp_server(tmp_path, llama_server):
    path = new_project(tmp_path)
    assert palimpsest("model", "add", path, "--label", "tiny-local", "--backend", "openai", "--ref", "tiny",
                      "--base-url", llama_server.base_url) == 0
    command = shutil.which("palimpsest", path=str(Path(sys.executable).parent)) or "palimpsest"
    done = subprocess.run([command, "model", "test", str(path), "tiny-local"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    answer = next(line for line in lines if line.startswith("Answer: "))
    latency = next(line for line in lines if line.startswith("Latency: "))
    assert len(answer) > len("Answer: ") and latency.endswith(" s")
    print(done.stdout)  # shown with pytest -s: the answer and latency from the local server


def test_prices_and_cache(tmp_path, capsys, llama_server):
    path = new_project(tmp_path)
    assert palimpsest("model", "prices", path, "--set", "tiny", "1.5", "3") == 0
    capsys.readouterr()
    assert palimpsest("model", "prices", path, "--format", "csv") == 0
    out = capsys.readouterr().out
    assert "tiny,1.5,3.0,project" in out and "gpt-4o-mini*,0.15,0.6,default" in out
    assert palimpsest("model", "prices", path, "--set", "tiny", "free", "3") == 1
    assert "not a number" in capsys.readouterr().err

    with Project.open(path) as project:
        spec = registry.add_model(project, registry.ModelSpec(label="t", backend="openai", ref="tiny",
                                                              base_url=llama_server.base_url))
        with registry.open_backend(spec, project) as backend:
            list(backend.generate([prompt_request(backend, "hello", GenerationParams(max_tokens=3))]))
    capsys.readouterr()
    assert palimpsest("cache", path) == 0
    out = capsys.readouterr().out
    assert "openai" in out and "1 cached answer, " in out
    assert palimpsest("cache", path, "--clear") == 0
    assert "Removed 1 cached answer." in capsys.readouterr().out


def resume_tiny(project, run_id, state, retry_failed):
    """What a probe's resumer does: rebuild units and process from the run row, then run the job."""
    run = jobs.get_run(project, run_id)
    spec = registry.get_model(project, run["model_id"])
    units = [jobs.Unit(i, s) for i in range(run["config"]["items"]) for s in range(run["config"]["samples"])]
    params = GenerationParams.from_dict(run["params"])
    with registry.open_backend(spec, project) as backend:
        build = lambda u: prompt_request(backend, f"Item {u.item_id}", params, sample=u.sample)  # noqa: E731
        return jobs.run_job(project, run_id, units, generation_process(backend, build), state,
                            retry_failed=retry_failed)


def test_runs_lists_tokens_and_cost_and_continue_finishes_a_run(tmp_path, capsys, llama_server):
    path = new_project(tmp_path)
    runs.declare_run_kind(runs.RunKind("cli-test", resume=resume_tiny))
    try:
        with Project.open(path) as project:
            spec = registry.add_model(project, registry.ModelSpec(label="tiny-local", backend="openai", ref="tiny",
                                                                  base_url=llama_server.base_url))
            from workbench.models.prices import set_price

            set_price(project, "tiny", 1000, 2000)
            run_id = jobs.create_run(project, "cli-test", model_id=spec.id,
                                     params=GenerationParams(max_tokens=3, seed=1).as_dict(),
                                     config={"items": 4, "samples": 2})
            state = TaskState()
            state._on_partial = lambda _: state.cancel()  # stop after the first answer
            jobs.resume_run(project, run_id, state)
        capsys.readouterr()
        assert palimpsest("continue", path, run_id, "--yes") == 0  # a priced API: asked unless --yes
        captured = capsys.readouterr()
        assert "8 of 8 answered" in captured.out
        assert "Run 1: 8/8 done" in captured.err  # the plain progress line (stderr is not a terminal here)
        assert palimpsest("runs", path, "--format", "json") == 0
        (row,) = json.loads(capsys.readouterr().out)
        assert (row["status"], row["ok"], row["failed"], row["model"]) == ("done", 8, 0, "tiny-local")
        assert row["calls"] == 8 and row["completion_tokens"] > 0
        assert row["cost"] > 0
        assert palimpsest("continue", path, run_id, "--failed-only", "--yes") == 0
        assert "0 asked now" in capsys.readouterr().out
    finally:
        runs.forget_run_kind("cli-test")


def test_plain_progress_lines_when_not_on_a_terminal():
    stream = io.StringIO()
    state = progress_state("Cloze", stream, line_every=3600)
    state.progress(0, 10, force=True)
    state.progress(5, 10, eta_seconds=75)  # within the interval: not shown
    state.progress(10, 10, failed=2)
    state.progress(10, 10, failed=2)  # the end, reported twice, shown once
    assert stream.getvalue().splitlines() == ["Cloze: 0/10 done", "Cloze: 10/10 done, 2 failed"]
