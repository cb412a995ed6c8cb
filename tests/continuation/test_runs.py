"""The continuation probe end to end: a tiny model that learnt a book by heart gives it back word for word, and a
book it never saw does not; resuming, the local server (API path), the CLI's CSV and the evidence."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.continuation.conftest import MEMORIZED
from workbench.errors import CancelledError
from workbench.export.evidence import checked_frame, evidence_sources
from workbench.jobs import resume_run, run_counts
from workbench.models.catalog import ModelSpec, add_model
from workbench.probes.continuation.results import book_table, passage_frame
from workbench.probes.continuation.run import run_continuation
from workbench.progress import TaskState
from workbench.runs import get_run

SHORT = {"per_book": 4, "prefix_tokens": 8, "continue_tokens": 8}


@pytest.fixture
def memorized(two_books, memorizing_dir):
    project, seen, unseen = two_books
    add_model(project, ModelSpec(label="parrot", backend="hf", ref=str(memorizing_dir)))
    return project, seen, unseen


def test_a_memorized_book_is_extractable_and_an_unseen_one_is_not(memorized):
    project, seen, unseen = memorized
    report = run_continuation(project, "parrot", **SHORT)
    assert report.status == "done" and report.failed == 0 and report.total == 8
    passages = passage_frame(project, "parrot", include_text=True)
    mine = passages[passages["book_id"] == seen]
    assert len(mine) == 4 and mine["extractable"].sum() >= 3  # greedy decoding gives the learnt text back
    for row in mine.itertuples():
        assert row.prefix == MEMORIZED[row.start_char : row.prefix_end]
        if row.extractable:
            assert row.exact_prefix == 8 and row.edit_similarity == 1.0
            assert row.answer.strip() == row.true_continuation.strip()
    table = book_table(project, "parrot").set_index("book_id")
    assert table.loc[seen, "extractable"] >= 3 and table.loc[unseen, "extractable"] == 0
    assert table.loc[unseen, "unseen"] and not table.loc[seen, "unseen"]
    assert table.loc[seen, "baseline_passages"] == 4  # the unseen book's passages
    from statsmodels.stats.proportion import proportion_confint

    x = int(table.loc[seen, "extractable"])
    low, high = proportion_confint(x, 4, method="wilson")
    assert table.loc[seen, "ci_low"] == pytest.approx(low) and table.loc[seen, "ci_high"] == pytest.approx(high)
    # the answers stored are the model's own text, with their tokens; nothing of the book is in responses
    run = get_run(project, report.run_id)
    assert run.config.prefix_tokens == 8 and run.config.tokenizer.startswith("hf:")
    extra = json.loads(project.db.execute("SELECT extra FROM responses LIMIT 1").fetchone()[0])
    assert len(extra["tokens"]) == 8
    # the evidence for the exposure report, by the stated rule
    (source,) = [s for s in evidence_sources() if s.key == "continuation"]
    evidence = checked_frame(source, source.books(project, "parrot")).set_index("book_id")
    assert evidence.loc[seen, "signal"] in ("some", "strong") and evidence.loc[seen, "n"] == 4
    assert f"{x} of 4 passages" in evidence.loc[seen, "basis"]


def test_asking_again_continues_the_run_and_resume_finishes_an_interrupted_one(memorized):
    project, seen, _ = memorized
    stopped = TaskState()
    done = []

    def stop_after_three(result):
        done.append(result)
        if len(done) == 3:
            stopped.cancel()

    stopped._on_partial = stop_after_three
    report = run_continuation(project, "parrot", state=stopped, **SHORT)
    assert report.status == "cancelled" and 3 <= run_counts(project, report.run_id)["ok"] < 8
    again = resume_run(project, report.run_id)
    assert again.status == "done" and again.done_before >= 3 and again.total == 8
    assert run_counts(project, report.run_id)["ok"] == 8
    assert project.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 8  # no duplicates
    same = run_continuation(project, "parrot", **SHORT)  # the same work: the same run, nothing asked
    assert same.run_id == report.run_id and same.processed == 0


def test_the_csv_has_no_book_text_unless_asked(memorized, tmp_path, capsys):
    from workbench.cli import main

    project, seen, _ = memorized
    run_continuation(project, "parrot", **SHORT)
    path = project.path
    project.close()
    assert main(["continuation", "scores", str(path), "--model", "parrot", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {"book_id", "title", "passages", "extractable_share", "ci_low", "ci_high", "book_source"} <= set(rows[0])
    assert {r["book_id"] for r in rows} == {str(seen), str(seen + 1)}
    assert main(["continuation", "scores", str(path), "--model", "parrot", "--passages", "--format", "csv"]) == 0
    plain = capsys.readouterr().out
    assert "exact_prefix" in plain and "start_char" in plain
    words = [w for w in MEMORIZED.split() if len(w) > 6]
    assert not any(w in plain for w in words)  # offsets and lengths, not the book's words
    assert main(["continuation", "scores", str(path), "--model", "parrot", "--passages", "--include-text",
                 "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert all(MEMORIZED[int(r["start_char"]) : int(r["prefix_end"])] == r["prefix"] for r in rows
               if r["book_id"] == str(seen))
    assert any(r["prefix"].strip() for r in rows)


def test_through_an_openai_compatible_server(two_books, llama_server):
    project, seen, unseen = two_books
    add_model(project, ModelSpec(label="served", backend="openai", ref=llama_server.model,
                                 base_url=llama_server.base_url, params={"chat": False}))
    add_model(project, ModelSpec(label="served-chat", backend="openai", ref=llama_server.model,
                                 base_url=llama_server.base_url, params={"chat": True}))
    report = run_continuation(project, "served", per_book=2, prefix_tokens=6, continue_tokens=4)
    assert report.status == "done" and report.total == 4
    run = get_run(project, report.run_id)
    assert run.config.tokenizer == "words" and run.config.prompt_form == "raw"
    prompts = [p for (p,) in project.db.execute("SELECT prompt FROM responses WHERE run_id = ?", [run.id])]
    assert all(len(p.split()) == 6 for p in prompts)  # the prefix alone, six words of the book
    table = book_table(project, "served")
    assert table["passages"].sum() + table["failed"].sum() == 4
    chat = run_continuation(project, "served-chat", per_book=2, prefix_tokens=6, continue_tokens=4)
    assert get_run(project, chat.run_id).config.prompt_form == "chat"
    prompt = project.db.execute("SELECT prompt FROM responses WHERE run_id = ?", [chat.run_id]).fetchone()[0]
    assert "word for word" in prompt


def test_a_book_too_short_is_said_plainly(project, memorizing_dir):
    from workbench.corpus.importer import store_book
    from workbench.corpus.sources import BookDraft
    from workbench.errors import UserError

    store_book(project, BookDraft("text", "tiny.txt", "Only a few words here.", title="Tiny"))
    add_model(project, ModelSpec(label="parrot", backend="hf", ref=str(memorizing_dir)))
    with pytest.raises(UserError, match="long enough"):
        run_continuation(project, "parrot", **SHORT)


_ = CancelledError
