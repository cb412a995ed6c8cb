"""The model registry: storing, validating, listing, removing and opening the project's models."""

from __future__ import annotations

import pytest

import workbench.models.catalog as registry
from tests.fixtures.fake_keys import fake_key
from workbench import jobs
from workbench.errors import UserError
from workbench.models.base import BackendError
from workbench.models.cache import CachedBackend
from workbench.models.catalog import ModelSpec
from workbench.models.openai_backend import OpenAIBackend


def api_model(url: str, label: str = "tiny-api", **kw) -> ModelSpec:
    return ModelSpec(label=label, backend="openai", ref="tiny", base_url=url, **kw)


def test_a_model_round_trips_with_params_and_tags(project):
    added = registry.add_model(project, ModelSpec(
        label="llama-1950s", backend="openai", ref="tiny", base_url="http://127.0.0.1:9/v1",
        api_key_env="MY_KEY_VAR", params={"concurrency": 4, "chat": False},
        tags={"decade": "1950s", "fine-tuned": ""}))
    assert added.id is not None
    again = registry.get_model(project, "llama-1950s")
    assert again == added
    assert again.params == {"concurrency": 4, "chat": False}
    assert again.tags == {"decade": "1950s", "fine-tuned": ""}
    assert registry.get_model(project, added.id).label == "llama-1950s"
    assert [m.label for m in registry.list_models(project)] == ["llama-1950s"]


def test_update_changes_only_what_is_given(project):
    registry.add_model(project, api_model("http://127.0.0.1:9/v1", tags={"decade": "1950s"}))
    updated = registry.update_model(project, "tiny-api", label="tiny-renamed", tags={"decade": "1960s"})
    assert updated.label == "tiny-renamed" and updated.base_url == "http://127.0.0.1:9/v1"
    assert registry.get_model(project, "tiny-renamed").tags == {"decade": "1960s"}
    with pytest.raises(UserError, match="no model called 'tiny-api'"):
        registry.get_model(project, "tiny-api")


def test_models_frame_shows_where_the_key_comes_from_and_the_tags(project):
    registry.add_model(project, api_model("http://127.0.0.1:9/v1", api_key_env="MY_KEY_VAR",
                                          tags={"decade": "1950s", "fine-tuned": ""}))
    row = registry.models_frame(project).iloc[0]
    assert row["api_key"] == "env MY_KEY_VAR"
    assert row["tags"] == "decade=1950s, fine-tuned"
    assert row["chat"] == "yes" and row["runs"] == 0


@pytest.mark.parametrize(
    "spec, message",
    [
        (ModelSpec(label="", backend="openai", ref="x"), "Give the model a label"),
        (ModelSpec(label="m", backend="gpt", ref="x"), "Unknown backend 'gpt'"),
        (ModelSpec(label="m", backend="gguf", ref="/nowhere/model.gguf"), "There is no GGUF file at"),
        (ModelSpec(label="m", backend="hf", ref="/nowhere/folder"), "There is no model folder"),
        (ModelSpec(label="m", backend="openai", ref=""), "Enter the model's name"),
        (ModelSpec(label="m", backend="openai", ref="x", base_url="localhost:8000"), "is not a web address"),
        (ModelSpec(label="m", backend="openai", ref="x", api_key_env=fake_key("proj-abcdef0123456789abcdef")),
         "looks like an API key itself"),
        (ModelSpec(label="m", backend="openai", ref="x", api_key_env="MY KEY"), "not an environment variable name"),
        (ModelSpec(label="m", backend="openai", ref="x", api_key_env="A", api_key_keyring="b"), "not both"),
        (ModelSpec(label="m", backend="openai", ref="x", params={"n_gpu_layers": 5}), "no parameter n_gpu_layers"),
        (ModelSpec(label="m", backend="hf", ref="gpt2", base_url="http://x/v1"), "only apply to openai"),
        (ModelSpec(label="m", backend="openai", ref="x", base_url="http://me:hunter2@host/v1"), "never stores keys"),
        (ModelSpec(label="m", backend="openai", ref="x", base_url="https://host/v1?api-key=abc"), "never stores keys"),
    ],
)
def test_invalid_models_are_refused_plainly(project, spec, message):
    with pytest.raises(UserError, match=message):
        registry.add_model(project, spec)
    assert registry.list_models(project) == []


def test_a_file_that_is_not_gguf_is_refused(project, tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(UserError, match="is not a GGUF model file"):
        registry.add_model(project, ModelSpec(label="m", backend="gguf", ref=str(fake)))


def test_labels_are_unique(project):
    registry.add_model(project, api_model("http://127.0.0.1:9/v1"))
    with pytest.raises(UserError, match="already a model called 'tiny-api'"):
        registry.add_model(project, api_model("http://127.0.0.1:10/v1"))
    registry.add_model(project, api_model("http://127.0.0.1:9/v1", label="other"))
    with pytest.raises(UserError, match="already a model called 'tiny-api'"):
        registry.update_model(project, "other", label="tiny-api")


def test_openai_itself_reads_the_usual_variable_by_default(project):
    spec = registry.add_model(project, ModelSpec(label="gpt", backend="openai", ref="gpt-4o-mini"))
    assert spec.api_key_env == "OPENAI_API_KEY"


def test_removing_a_model_with_runs_needs_confirmation(project):
    spec = registry.add_model(project, api_model("http://127.0.0.1:9/v1"))
    run_id = jobs.create_run(project, "test", model_id=spec.id)
    jobs.run_job(project, run_id, [jobs.Unit(1), jobs.Unit(2)],
                 lambda units, state: [(u, jobs.Outcome(raw="x")) for u in units])
    with pytest.raises(UserError, match="1 run\\(s\\) with 2 response\\(s\\)"):
        registry.remove_model(project, "tiny-api")
    assert registry.list_models(project)
    registry.remove_model(project, "tiny-api", with_runs=True)
    assert registry.list_models(project) == []
    assert project.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0
    assert project.db.execute("SELECT COUNT(*) FROM model_tags").fetchone()[0] == 0


def test_a_model_without_runs_is_removed_at_once(project):
    registry.add_model(project, api_model("http://127.0.0.1:9/v1", tags={"a": "b"}))
    registry.remove_model(project, "tiny-api")
    assert registry.list_models(project) == []


def test_pairs_from_the_command_line_are_typed():
    assert registry.parse_pairs(["chat=false", "concurrency=4", "timeout=2.5", "device=cuda:0"],
                                what="parameter", typed=True) == {
        "chat": False, "concurrency": 4, "timeout": 2.5, "device": "cuda:0"}
    assert registry.parse_pairs(["decade=1950s", "fine-tuned"], what="tag", typed=False) == {
        "decade": "1950s", "fine-tuned": ""}
    with pytest.raises(UserError, match="name=value"):
        registry.parse_pairs(["chat"], what="parameter", typed=True)


def test_open_backend_wraps_the_model_in_the_projects_cache(project, llama_server):
    spec = registry.add_model(project, api_model(llama_server.base_url, params={"concurrency": 2}))
    with registry.open_backend(spec, project) as backend:
        assert isinstance(backend, CachedBackend) and isinstance(backend.inner, OpenAIBackend)
        assert backend.inner.concurrency == 2
    with registry.open_backend(spec) as backend:
        assert isinstance(backend, OpenAIBackend)


def test_imported_results_cannot_be_run(project):
    spec = registry.add_model(project, ModelSpec(label="gpt4-published", backend="external", ref="gpt-4"))
    with pytest.raises(BackendError, match="imported results"):
        registry.open_backend(spec, project)


def test_model_test_answers_through_a_local_server(project, llama_server):
    spec = registry.add_model(project, api_model(llama_server.base_url))
    answer, seconds = registry.test_model(spec)
    assert isinstance(answer, str) and seconds > 0
    assert project.db.execute("SELECT COUNT(*) FROM response_cache").fetchone()[0] == 0  # never cached


def test_model_test_says_when_the_server_is_down(project):
    from tests.fixtures.servers import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    spec = registry.add_model(project, api_model(url, params={"max_retries": 0}))
    with pytest.raises(BackendError, match="Could not connect to " + url.replace(".", r"\.")):
        registry.test_model(spec)


def test_a_gguf_model_opens_through_llama_cpp(project, tiny_gguf_path):
    spec = registry.add_model(project, ModelSpec(label="tiny-gguf", backend="gguf", ref=str(tiny_gguf_path),
                                                 params={"n_ctx": 256}))
    answer, seconds = registry.test_model(spec)
    assert isinstance(answer, str) and seconds > 0


def test_local_model_files_are_stored_by_full_path(project, tiny_gguf_path, monkeypatch):
    monkeypatch.chdir(tiny_gguf_path.parent)
    spec = registry.add_model(project, ModelSpec(label="local", backend="gguf", ref=tiny_gguf_path.name))
    assert spec.ref == str(tiny_gguf_path.resolve())
    assert registry.get_model(project, "local").ref == str(tiny_gguf_path.resolve())
