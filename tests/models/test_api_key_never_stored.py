"""A recognisable fake key goes through a model test, a run, failures that echo it, exports and logs:
its bytes must appear nowhere (project file and its WAL, exports, log records, messages)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import workbench.models.catalog as registry
from tests.fixtures.fake_keys import fake_key
from tests.fixtures.fault_proxy import Fault
from workbench import jobs
from workbench.cli import main
from workbench.errors import UserError
from workbench.models.base import BackendError, GenerationParams, prompt_request
from workbench.models.calls import generation_process
from workbench.models.usage import runs_overview

KEY = fake_key("palimpsest-FAKE-7c3e9d1a5b2f4e6a")
VARIABLE = "PALIMPSEST_FAKE_KEY_FOR_TESTS"
# pieces of the key a careless message might keep (servers often echo "sk-...f4e6a")
FRAGMENTS = [KEY, KEY[3:], KEY[-12:], KEY[:16]]


def assert_no_key(where: str, data: bytes | str) -> None:
    blob = data.encode("utf-8", "replace") if isinstance(data, str) else data
    for fragment in FRAGMENTS:
        assert fragment.encode() not in blob, f"the key (or part of it) is in {where}"


def test_the_key_never_leaves_memory(project, fault_proxy, monkeypatch, caplog, tmp_path, capsys):
    caplog.set_level(logging.DEBUG)  # every logger, the openai client's and httpx's included
    monkeypatch.setenv(VARIABLE, KEY)
    spec = registry.add_model(project, registry.ModelSpec(
        label="keyed", backend="openai", ref="tiny", base_url=fault_proxy.base_url, api_key_env=VARIABLE,
        params={"concurrency": 1, "max_retries": 0}))

    # a model test that works, and one where the server refuses the key and echoes it back
    answer, _ = registry.test_model(spec)
    fault_proxy.script(Fault.status_error(401, f"Incorrect API key provided: {KEY}. You can find your key at ..."))
    with pytest.raises(BackendError) as refused:
        registry.test_model(spec)
    assert VARIABLE in str(refused.value)
    assert_no_key("the refusal message", str(refused.value))

    # a run: answers, a failure whose server message echoes the key, then a refusal that stops it
    run_id = jobs.create_run(project, "test", model_id=spec.id)
    units = [jobs.Unit(i) for i in range(6)]
    params = GenerationParams(max_tokens=3)
    fault_proxy.script(Fault.ok(), Fault.status_error(400, f"Bad request from key {KEY}"), Fault.ok(),
                       Fault.status_error(401, f"Incorrect API key provided: {KEY}"))
    with registry.open_backend(spec, project) as backend:
        assert_no_key("the backend's repr", repr(backend) + repr(backend.inner))
        build = lambda u: prompt_request(backend, f"item {u.item_id}", params)  # noqa: E731
        with pytest.raises(UserError) as stopped:
            jobs.run_job(project, run_id, units, generation_process(backend, build))
    assert_no_key("the run's stop message", str(stopped.value))
    failures = jobs.responses_frame(project, run_id).query("status == 'failed'")
    assert len(failures) == 1 and "[key hidden]" in failures.iloc[0]["error"]
    with registry.open_backend(spec, project) as backend:  # finish the run
        build = lambda u: prompt_request(backend, f"item {u.item_id}", params)  # noqa: E731
        jobs.run_job(project, run_id, units, generation_process(backend, build), retry_failed=False)

    # the key really was sent: otherwise this test would prove nothing
    sent = [r.headers.get("Authorization") or r.headers.get("authorization") for r in fault_proxy.posts()]
    assert f"Bearer {KEY}" in sent

    # exports and command-line listings
    exports = tmp_path / "exports"
    exports.mkdir()
    jobs.responses_frame(project, run_id).to_csv(exports / "responses.csv")
    runs_overview(project).to_csv(exports / "runs.csv")
    registry.models_frame(project).to_json(exports / "models.json")
    for frame_name in ("runs_frame",):
        getattr(jobs, frame_name)(project).to_csv(exports / f"{frame_name}.csv")
    for export in exports.iterdir():
        assert_no_key(export.name, export.read_bytes())
    for argv in (["model", "list", project.path, "--format", "json"], ["runs", project.path, "--format", "csv"],
                 ["cache", project.path]):
        assert main([str(a) for a in argv]) == 0
    out, err = capsys.readouterr()
    assert_no_key("command output", out + err)

    # the project file, its write-ahead log, and every log record
    wal = Path(str(project.path) + "-wal")
    assert wal.exists()
    assert_no_key("the project's WAL", wal.read_bytes())
    assert_no_key("the project file (open)", project.path.read_bytes())
    assert VARIABLE.encode() in project.path.read_bytes() + wal.read_bytes()  # the NAME is stored, as it should
    assert caplog.records, "nothing was logged, so the log check would prove nothing"
    assert_no_key("the log", "\n".join(f"{r.name} {r.getMessage()} {r.args!r}" for r in caplog.records))
    assert_no_key("the log (formatted)", caplog.text)
    project.close()
    assert_no_key("the project file (closed)", project.path.read_bytes())
    for path in project.path.parent.rglob("*"):  # every file beside it (backups, exports ...)
        if path.is_file():
            assert_no_key(str(path.name), path.read_bytes())


# ---------------------------------------------------------------------------------------------- more ways out
def test_the_key_is_in_no_repr_of_the_backend_or_its_parts(monkeypatch, fault_proxy):
    """Tracebacks with local variables (pytest, rich, error reporters) print reprs of everything."""
    monkeypatch.setenv(VARIABLE, KEY)
    spec = registry.ModelSpec(label="keyed", backend="openai", ref="tiny", base_url=fault_proxy.base_url,
                              api_key_env=VARIABLE)
    with registry.open_backend(spec) as backend:
        parts = [backend, backend._context, vars(backend), getattr(backend, "_client", None)]
        assert_no_key("a repr", " ".join(repr(p) for p in parts))


OTHER_KEY = "7f3c9a1e5b2d4c6e8a0b1c2d3e4f5a6b"  # a key of a local server: not shaped like sk-...


@pytest.mark.parametrize("echo", [OTHER_KEY, OTHER_KEY[:10] + "****", "…" + OTHER_KEY[-12:],
                                  f"token={OTHER_KEY[4:20]}", OTHER_KEY[8:24] + "."])
def test_a_server_echoing_part_of_any_key_has_it_hidden(project, fault_proxy, monkeypatch, echo):
    monkeypatch.setenv(VARIABLE, OTHER_KEY)
    spec = registry.add_model(project, registry.ModelSpec(
        label="local", backend="openai", ref="tiny", base_url=fault_proxy.base_url, api_key_env=VARIABLE,
        params={"concurrency": 1, "max_retries": 0}))
    fault_proxy.script(Fault.status_error(400, f"Invalid request for key {echo} (see docs)"))
    run_id = jobs.create_run(project, "test", model_id=spec.id)
    with registry.open_backend(spec, project) as backend:
        build = lambda u: prompt_request(backend, "hello", GenerationParams(max_tokens=2))  # noqa: E731
        jobs.run_job(project, run_id, [jobs.Unit(0)], generation_process(backend, build))
    error = jobs.responses_frame(project, run_id).iloc[0]["error"]
    assert "[key hidden] (see docs)" in error and error.startswith("The server rejected the request")
    for n in range(0, len(OTHER_KEY) - 8):
        assert OTHER_KEY[n:n + 8] not in error


def test_an_address_holding_a_password_never_shows_it(monkeypatch):
    from workbench.models.openai_backend import OpenAIBackend

    address = f"http://someone:{OTHER_KEY}@127.0.0.1:{_closed_port()}/v1"
    with OpenAIBackend("tiny", base_url=address, max_retries=0) as backend:
        (_, failure), = backend.generate([prompt_request(backend, "hi", GenerationParams(max_tokens=2))])
        assert "Could not connect to http://127.0.0.1:" in failure.error
        assert OTHER_KEY not in failure.error + repr(backend) + repr(backend._context)


def _closed_port() -> int:
    from tests.fixtures.servers import free_port

    return free_port()


def test_a_key_pasted_as_the_variable_name_is_not_repeated_back(project):
    pasted = "my-" + OTHER_KEY[:20]  # not shaped like a common key, so only the name check stops it
    with pytest.raises(UserError) as refused:
        registry.add_model(project, registry.ModelSpec(label="m", backend="openai", ref="tiny", api_key_env=pasted))
    assert "not an environment variable name" in str(refused.value)
    assert OTHER_KEY[:20] not in str(refused.value)


@pytest.mark.parametrize("damaged", [KEY + " 2", KEY[:10] + "é" + KEY[10:], KEY + "\u200b"])
def test_a_key_copied_with_a_stray_character_is_refused_when_the_model_opens(monkeypatch, damaged):
    monkeypatch.setenv(VARIABLE, damaged)
    spec = registry.ModelSpec(label="m", backend="openai", ref="tiny", base_url="http://127.0.0.1:9/v1",
                              api_key_env=VARIABLE)
    with pytest.raises(BackendError, match=f"the variable {VARIABLE} contains a character") as refused:
        registry.open_backend(spec)
    assert_no_key("the refusal", str(refused.value))


def test_the_methods_export_holds_no_key_nor_its_variable(project, fault_proxy, monkeypatch, tmp_path):
    from workbench.export.methods import methods_json, methods_text

    monkeypatch.setenv(VARIABLE, KEY)
    spec = registry.add_model(project, registry.ModelSpec(
        label="keyed", backend="openai", ref="tiny", base_url=fault_proxy.base_url, api_key_env=VARIABLE,
        params={"concurrency": 1, "max_retries": 0}))
    fault_proxy.script(Fault.ok(), Fault.status_error(400, f"Bad request from key {KEY}"))
    run_id = jobs.create_run(project, "test", model_id=spec.id, params={"temperature": 0})
    with registry.open_backend(spec, project) as backend:
        build = lambda u: prompt_request(backend, f"item {u.item_id}", GenerationParams(max_tokens=2))  # noqa: E731
        jobs.run_job(project, run_id, [jobs.Unit(0), jobs.Unit(1)], generation_process(backend, build))
    for text in (methods_text(project), methods_json(project)):
        assert_no_key("the methods export", text)
        assert VARIABLE not in text


def test_the_models_page_never_shows_the_key(qtbot, project, fault_proxy, monkeypatch):
    from PySide6.QtWidgets import QWidget

    from ui.background import BackgroundOps
    from ui.models.page import ModelsPage

    monkeypatch.setenv(VARIABLE, KEY)
    registry.add_model(project, registry.ModelSpec(
        label="keyed", backend="openai", ref="tiny", base_url=fault_proxy.base_url, api_key_env=VARIABLE,
        params={"max_retries": 0}))
    ops = BackgroundOps()
    page = ModelsPage(ops)
    qtbot.addWidget(page)
    page.set_project(project)
    page.show()
    fault_proxy.script(Fault.status_error(401, f"Incorrect API key provided: {KEY[:8]}...{KEY[-6:]} / {KEY}"))
    page.select_label("keyed")
    page.test_selected()
    qtbot.waitUntil(lambda: page.test_op is None, timeout=60_000)
    assert "refused the API key" in page.test_result.text()
    shown = []
    for widget in page.findChildren(QWidget):
        for name in ("text", "toolTip", "placeholderText", "windowTitle"):
            value = getattr(widget, name, None)
            if callable(value):
                shown.append(str(value()))
    table = page.table
    shown += [table.item(r, c).text() for r in range(table.rowCount()) for c in range(table.columnCount())
              if table.item(r, c) is not None]
    assert_no_key("the Models page", "\n".join(shown))
    assert ops.join(10_000)
