"""Decade fine-tuning data: chat JSONL of passage starts and continuations from tagged books."""

import json

import pytest

from tests.fixtures.rep_data import FIFTIES_A, FIFTIES_B
from workbench.errors import UserError
from workbench.probes.rep.finetune import FinetuneSettings, export_finetune, passages, split_passage


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_passages_are_whole_sentences_of_about_the_chosen_size():
    chunks = passages(FIFTIES_A, 30)
    assert len(chunks) >= 3
    for chunk in chunks:
        assert chunk[-1] in '.!?"'  # ends at a sentence end
        assert len(chunk.split()) >= 15
    assert " ".join(chunks).split() == FIFTIES_A.split()[: len(" ".join(chunks).split())]


def test_split_passage_cuts_between_words():
    start, rest = split_passage("one two three four five six", 0.5)
    assert (start, rest) == ("one two three", "four five six")
    start, rest = split_passage("alpha beta", 0.9)
    assert (start, rest) == ("alpha", "beta")


def test_export_for_a_decade_uses_only_its_books(project, decade_books, tmp_path):
    out = tmp_path / "fifties.jsonl"
    settings = FinetuneSettings(chunk_words=25, seed=3, system="You write fiction.")
    report = export_finetune(project, out, tag="decade=1950s", settings=settings)
    rows = read_jsonl(out)
    assert report.books == 2 and report.examples == len(rows) > 4
    for row in rows:
        roles = [m["role"] for m in row["messages"]]
        assert roles == ["system", "user", "assistant"]
        user, assistant = row["messages"][1]["content"], row["messages"][2]["content"]
        assert user.startswith(settings.instruction)
        assert assistant.strip()
    text = " ".join((FIFTIES_A + FIFTIES_B).split())
    for row in rows:
        start = row["messages"][1]["content"][len(settings.instruction):].strip()
        assert f"{start} {row['messages'][2]['content']}" in text  # start + continuation = a stretch of a 1950s book
    assert not any("Seattle" in json.dumps(r) for r in rows)
    assert report.words == sum(len(s.split()) for r in rows for s in (r["messages"][1]["content"][len(settings.instruction):],
                                                                     r["messages"][2]["content"]))


def test_export_is_seeded(project, decade_books, tmp_path):
    one = export_finetune(project, tmp_path / "a.jsonl", tag="decade=1950s", settings=FinetuneSettings(chunk_words=25, seed=1))
    two = export_finetune(project, tmp_path / "b.jsonl", tag="decade=1950s", settings=FinetuneSettings(chunk_words=25, seed=1))
    three = export_finetune(project, tmp_path / "c.jsonl", tag="decade=1950s", settings=FinetuneSettings(chunk_words=25, seed=2))
    assert one.path.read_text() == two.path.read_text()
    assert sorted(read_jsonl(one.path), key=json.dumps) == sorted(read_jsonl(three.path), key=json.dumps)
    assert one.path.read_text() != three.path.read_text()
    limited = export_finetune(project, tmp_path / "d.jsonl", tag="decade=1950s",
                              settings=FinetuneSettings(chunk_words=25, seed=1, max_examples=2))
    assert limited.examples == 2 and "system" not in limited.path.read_text()


def test_export_refuses_unknown_tags_and_wrong_endings(project, decade_books, tmp_path):
    with pytest.raises(UserError, match="No book is tagged decade=1880s"):
        export_finetune(project, tmp_path / "x.jsonl", tag="decade=1880s")
    with pytest.raises(UserError, match=".jsonl"):
        export_finetune(project, tmp_path / "x.json", tag="decade=1950s")
