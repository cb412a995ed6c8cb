"""A transformers model whose weights come only as pickle files (.bin, no safetensors) loads, but never
silently: adding it, testing it and every run that loads it warn that a pickle file can run hidden code; and
where loading it relies on a PyTorch new enough for transformers to read pickles safely (2.6), an older one
gets a plain message saying what to do."""

from __future__ import annotations

import shutil

import pytest

from workbench import jobs
from workbench.cli import main
from workbench.jobs import Unit
from workbench.models.base import GenerationParams, prompt_request
from workbench.models.calls import generation_process
from workbench.models.catalog import ModelSpec, add_model, model_warnings, open_backend
from workbench.models.hf_locate import pickle_loading_problem, weight_warnings


@pytest.fixture(scope="module")
def pickle_only(tiny_causal_dir, tmp_path_factory):
    import torch
    from safetensors.torch import load_file

    folder = tmp_path_factory.mktemp("models") / "only-pickle"
    shutil.copytree(tiny_causal_dir, folder)
    torch.save(load_file(folder / "model.safetensors"), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    return folder


def test_a_pickle_only_folder_is_named_in_a_warning_and_a_safetensors_one_is_not(pickle_only, tiny_causal_dir):
    [warning] = weight_warnings(pickle_only)
    assert "pickle" in warning and "safetensors" in warning and "trust" in warning
    assert weight_warnings(tiny_causal_dir) == []


def test_adding_and_testing_a_pickle_only_model_warns(project, pickle_only, tiny_causal_dir, capsys):
    path = str(project.path)
    project.close()
    assert main(["model", "add", path, "--label", "pickled", "--backend", "hf", "--ref", str(pickle_only)]) == 0
    out = capsys.readouterr().out
    assert "Added pickled" in out and "Warning:" in out and "pickle" in out
    assert main(["model", "test", path, "pickled", "--prompt", "Hello"]) == 0
    out = capsys.readouterr().out
    assert "Warning:" in out and "pickle" in out and "Answer:" in out
    assert main(["model", "add", path, "--label", "safe", "--backend", "hf", "--ref", str(tiny_causal_dir)]) == 0
    assert "Warning" not in capsys.readouterr().out


def test_a_run_that_loads_a_pickle_only_model_says_so_in_its_notes(project, pickle_only):
    spec = add_model(project, ModelSpec(label="pickled", backend="hf", ref=str(pickle_only)))
    assert model_warnings(spec) == weight_warnings(pickle_only, "pickled")
    run_id = jobs.create_run(project, "test", model_id=spec.id)
    params = GenerationParams(max_tokens=2, min_tokens=1)
    with open_backend(spec, project) as backend:
        process = generation_process(backend, lambda unit: prompt_request(backend, "Once upon a time", params))
        report = jobs.run_job(project, run_id, [Unit(0), Unit(1)], process)
    assert report.status == "done" and report.failed_total == 0
    assert "pickle" in jobs.get_run(project, run_id)["note"]


def test_pickle_loading_with_a_pytorch_older_than_2_6_says_what_to_do():
    message = pickle_loading_problem("pythia-70m", "2.5.1+cpu")
    assert message is not None
    assert "2.6" in message and "2.5.1" in message and "pip install" in message and "safetensors" in message
    assert pickle_loading_problem("pythia-70m", "2.6.0") is None
    assert pickle_loading_problem("pythia-70m", "2.13.0+cu124") is None


def test_the_models_page_warns_when_a_pickle_only_model_is_added_and_tested(shown_page, project, pickle_only, qtbot):
    from ui.models.page import ModelsPage

    page = shown_page(ModelsPage, project, size=(1100, 700))
    page.add_model()
    page.dialog.label_edit.setText("pickled")
    page.dialog.backend_box.setCurrentIndex(page.dialog.backend_box.findData("hf"))
    page.dialog.ref_edit.setText(str(pickle_only))
    page.dialog.accept()
    assert "pickle" in page.test_result.text()
    page.select_label("pickled")
    page.test_button.click()
    qtbot.waitUntil(lambda: page.test_op is None, timeout=60_000)
    text = page.test_result.text()
    assert text.startswith("pickled answered in ") and "pickle files" in text
