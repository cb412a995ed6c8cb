"""Models for the leakage tests: the tiny causal model and a perturbed copy (a reference model with
other weights but the same tokenizer), registered in the test's project."""

import shutil

import pytest


@pytest.fixture(scope="session")
def tiny_reference_dir(tmp_path_factory, tiny_causal_dir):
    import torch
    from transformers import AutoModelForCausalLM

    target = tmp_path_factory.mktemp("tiny-reference") / "model"
    shutil.copytree(tiny_causal_dir, target)
    model = AutoModelForCausalLM.from_pretrained(target)
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(torch.randn(parameter.shape, generator=generator) * 0.05)
    model.save_pretrained(target)
    return target


@pytest.fixture
def scoring_models(project, tiny_causal_dir, tiny_reference_dir, tiny_gguf_path):
    """'tiny' (transformers), 'tiny-ref' (other weights) and 'tiny-gguf' (tiny's weights in llama.cpp)."""
    from workbench.models.catalog import ModelSpec, add_model

    add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(tiny_causal_dir), params={"device": "cpu"}))
    add_model(project, ModelSpec(label="tiny-ref", backend="hf", ref=str(tiny_reference_dir), params={"device": "cpu"}))
    add_model(project, ModelSpec(label="tiny-gguf", backend="gguf", ref=str(tiny_gguf_path), params={"chat": False}))
    return project
