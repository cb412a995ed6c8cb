"""Fixtures for the REP tests: a few invented books tagged by decade."""

import pytest

from tests.fixtures.rep_data import FIFTIES_A, FIFTIES_B, NINETIES
from workbench.corpus.importer import store_book
from workbench.corpus.sources import BookDraft


@pytest.fixture
def messages(monkeypatch):
    """Error and information boxes of the GUI tests, collected instead of shown."""
    seen = []
    monkeypatch.setattr("ui.dialogs.show_error", lambda parent, message, details="": seen.append(message))
    monkeypatch.setattr("ui.dialogs.show_info", lambda parent, message: seen.append(message))
    return seen


@pytest.fixture
def page(shown_page, messages):
    """The Bias (REP) page, shown at a laptop's size."""
    from ui.rep.page import RepPage

    return shown_page(RepPage, size=(1280, 800))




@pytest.fixture
def decade_books(project):
    """Two books tagged decade=1950s and one tagged decade=1990s; returns their ids by decade."""
    ids = {"1950s": [], "1990s": []}
    for title, text, decade in (("Bellhaven", FIFTIES_A, "1950s"), ("Fairmont", FIFTIES_B, "1950s"),
                                ("Pike Street", NINETIES, "1990s")):
        book_id, added = store_book(project, BookDraft(source_kind="text", source_name=f"{title}.txt", text=text,
                                                       title=title, tags={"decade": decade}))
        assert added
        ids[decade].append(book_id)
    return ids


@pytest.fixture(scope="session")
def decade_model_dirs(tiny_causal_dir, tmp_path_factory):
    """Two variants of the tiny causal model, their weights nudged with different seeds: '1950s' and '1990s'."""
    import shutil

    import torch
    from transformers import AutoModelForCausalLM

    dirs = {}
    for decade, seed in (("1950s", 11), ("1990s", 29)):
        target = tmp_path_factory.mktemp(f"tiny-{decade}") / "model"
        shutil.copytree(tiny_causal_dir, target)
        model = AutoModelForCausalLM.from_pretrained(target)
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.add_(torch.randn(parameter.shape, generator=generator) * 0.05)
        model.save_pretrained(target)
        dirs[decade] = target
    return dirs


@pytest.fixture
def decade_models(project, decade_model_dirs, tiny_chat_dir):
    """Registers 'tiny-1950s' and 'tiny-1990s' (fine-tuned, tagged by decade) and 'tiny-judge' (a chat model)."""
    from workbench.models.catalog import ModelSpec, add_model

    for decade, folder in decade_model_dirs.items():
        add_model(project, ModelSpec(label=f"tiny-{decade}", backend="hf", ref=str(folder),
                                     tags={"decade": decade, "fine-tuned": ""}))
    add_model(project, ModelSpec(label="tiny-judge", backend="hf", ref=str(tiny_chat_dir)))
    return ["tiny-1950s", "tiny-1990s"]
