"""A tiny causal model that has learnt one text by heart (so greedy decoding gives it back), and a project
holding that text as a book beside a book it never saw (tagged member=no)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.tiny_model_builders import TINY_TEXT

#: what the model learns by heart: the first paragraphs of the tiny models' training text
MEMORIZED = TINY_TEXT[:900]
UNSEEN = ("Quiet barges drifted past the mills at dusk while a clerk named Thaddeus Brill counted sacks of barley "
          "and wrote the totals on a slate. His sister Perpetua mended sails in the loft above, singing old hymns "
          "that nobody in the valley remembered. When the frost came early the river froze from bank to bank, and "
          "the children skated to the far village for chestnuts and gossip. The miller swore the ice would hold "
          "until March; it cracked in January, and a cart of turnips went under with its driver clinging to the "
          "reins. ") * 2


@pytest.fixture(scope="session")
def memorizing_dir(tmp_path_factory: pytest.TempPathFactory, tiny_causal_dir: Path) -> Path:
    """The tiny causal model trained on ``MEMORIZED`` until it knows it (seeded: the same model every time)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory = tmp_path_factory.mktemp("memorizing")
    tokenizer = AutoTokenizer.from_pretrained(tiny_causal_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_causal_dir)
    ids = torch.tensor(tokenizer(MEMORIZED, add_special_tokens=False)["input_ids"])
    bos, window = tokenizer.bos_token_id, 48
    rows = [ids[s : s + window] for s in range(0, len(ids) - window + 1, 12)] + [ids[-window:]]
    batch = torch.stack([torch.cat([torch.tensor([bos]), row]) for row in rows])
    torch.manual_seed(0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3)
    model.train()
    for _ in range(120):
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if loss.item() < 0.02:
            break
    model.eval()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture
def two_books(project):
    """(project, id of the memorized book, id of the unseen book tagged member=no)."""
    from workbench.corpus.importer import store_book
    from workbench.corpus.sources import BookDraft

    seen, _ = store_book(project, BookDraft("text", "marrow.txt", MEMORIZED, title="Marrow Point"))
    unseen, _ = store_book(project, BookDraft("text", "barges.txt", UNSEEN, title="Barges",
                                              tags={"member": "no"}))
    return project, seen, unseen
