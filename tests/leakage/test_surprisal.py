"""Word-level surprisal with the leading-white-space correction, checked against separate model calls."""

import math

import numpy as np
import pytest

from workbench.probes.leakage import surprisal

TEXT = "The ferry left the harbour at dawn,\nand the gulls followed it."


def model_and_tokenizer(folder):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)


def next_distribution(model, ids):
    import torch

    with torch.no_grad():
        return torch.softmax(model(torch.tensor([ids])).logits[0, -1].float(), -1).numpy()


def reference_surprisal(folder, text):
    """Each word's bits from its own forward passes: P(its tokens) x B(after) / B(before), where B is the
    probability mass of tokens that begin a word (leading space or line break, or end of text)."""
    model, tokenizer = model_and_tokenizer(folder)
    pieces = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    begins = np.array([p[0] in "\u0120\u010a" for p in pieces], dtype=float)
    begins[tokenizer.eos_token_id] = 1.0
    encoded = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
    ids, offsets = encoded["input_ids"], encoded["offset_mapping"]
    words = text.split()
    # tokens per word: a word starts at a token whose text (leading white space aside) begins a new word
    groups, current = [], []
    for token_id, (start, end) in zip(ids, offsets):
        piece = text[start:end]
        if current and (piece[:1].isspace()):
            groups.append(current)
            current = []
        current.append(token_id)
    groups.append(current)
    assert len(groups) == len(words)
    context = [tokenizer.eos_token_id]  # the start token (this tokenizer's start token is its end-of-text token)
    out = []
    for number, group in enumerate(groups):
        before = next_distribution(model, context) @ begins
        logp = 0.0
        for token_id in group:
            logp += math.log(next_distribution(model, context)[token_id])
            context = context + [token_id]
        after = next_distribution(model, context) @ begins
        logp += math.log(after) - (math.log(before) if number else 0.0)
        out.append(-logp / math.log(2))
    return out


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "stimulus.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def test_surprisal_equals_the_word_probabilities_computed_one_by_one(scoring_models, text_file, tiny_causal_dir):
    report, item = surprisal.run_surprisal(scoring_models, "tiny", text_file)
    assert report.failed == 0
    frame = surprisal.surprisal_frame(scoring_models, "tiny", item)
    assert list(frame.columns[:4]) == ["word", "position", "surprisal", "tokens"]
    assert frame["word"].tolist() == TEXT.split()
    assert frame["position"].tolist() == list(range(1, len(TEXT.split()) + 1))
    assert frame["corrected"].all()
    assert np.allclose(frame["surprisal"], reference_surprisal(tiny_causal_dir, TEXT), atol=1e-3)
    # the line break belongs to the word after it
    assert frame.loc[frame["word"] == "and", "pieces"].iloc[0].startswith("\n")


def test_without_the_correction_a_word_is_the_sum_of_its_tokens(scoring_models, text_file):
    _, item = surprisal.run_surprisal(scoring_models, "tiny", text_file)
    plain = surprisal.surprisal_frame(scoring_models, "tiny", item, correct=False)
    corrected = surprisal.surprisal_frame(scoring_models, "tiny", item)
    assert not plain["corrected"].any()
    assert not np.allclose(plain["surprisal"], corrected["surprisal"])
    assert (plain["surprisal"] > 0).all() and plain["tokens"].sum() >= len(TEXT.split())


def test_word_assignment_of_tokens():
    text = "ab cd\n\nef"
    words = [(0, 2, "ab"), (3, 5, "cd"), (7, 9, "ef")]
    offsets = [(0, 1), (1, 2), (2, 5), (5, 7), (7, 9)]  # "a" "b" " cd" "\n\n" "ef"
    assert surprisal._token_owners(text, offsets, words) == [0, 0, 1, 2, 2]


def test_an_unknown_model_or_file_is_a_plain_error(scoring_models, tmp_path):
    from workbench.errors import UserError

    with pytest.raises(UserError, match="no text file"):
        surprisal.run_surprisal(scoring_models, "tiny", tmp_path / "missing.txt")
    (tmp_path / "blank.txt").write_text("  \n", encoding="utf-8")
    with pytest.raises(UserError, match="holds no text"):
        surprisal.run_surprisal(scoring_models, "tiny", tmp_path / "blank.txt")
