"""Extraction over whole books: sampling, fast mode, flags, storage, re-extraction, several processes."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.cloze_texts import novel
from workbench.corpus.library import book_text
from workbench.errors import CancelledError, UserError
from workbench.jobs import Outcome, Unit, create_run, run_job
from workbench.probes.cloze import MASK
from workbench.probes.cloze.extract import blocks, extract_books, paragraphs, sample_passages
from workbench.probes.cloze.passages import extractions_frame, passages_frame, select_passage_ids
from workbench.probes.cloze.rules import ExtractionSettings
from workbench.progress import TaskState


def test_paragraphs_and_blocks_cover_the_text_in_order():
    text = "\r\n\r\n  First one.\r\nStill first.\r\n\r\n\r\nSecond.\n \nThird here.\n"
    spans = paragraphs(text)
    assert [text[a:b] for a, b in spans] == ["First one.\r\nStill first.", "Second.", "Third here."]
    assert [text[a:b] for a, b in blocks(text, 3)] == ["First one.\r\nStill first.", "Second.\n \nThird here."]


def test_the_sample_is_seeded_and_reproducible(nlp):
    text = novel(40)
    first = sample_passages(text, ExtractionSettings(per_book=10, seed=7), nlp)
    again = sample_passages(text, ExtractionSettings(per_book=10, seed=7), nlp)
    other = sample_passages(text, ExtractionSettings(per_book=10, seed=8), nlp)
    assert first.candidates == 40 and len(first.passages) == 10
    assert first.passages == again.passages
    assert first.passages != other.passages
    assert [p.name_start for p in first.passages] == sorted(p.name_start for p in first.passages)


def test_fast_mode_is_reproducible_stops_early_and_draws_from_the_same_pool(nlp):
    text = novel(96)
    settings = ExtractionSettings(per_book=10, seed=3, fast=True, block_words=60)
    fast = sample_passages(text, settings, nlp)
    assert fast.passages == sample_passages(text, settings, nlp).passages
    assert len(fast.passages) == 10
    assert fast.blocks_read < fast.blocks  # it stopped before reading the whole book
    assert fast.candidates < 96
    full = sample_passages(text, settings.with_changes(fast=False, per_book=1000), nlp)
    assert set(fast.passages) <= set(full.passages)
    other = sample_passages(text, settings.with_changes(seed=4), nlp)
    assert other.passages != fast.passages
    # spread over the book, not just its beginning
    assert max(p.name_start for p in fast.passages) > len(text) / 2


def test_fast_mode_on_a_short_book_reads_it_all_and_flags_it(nlp):
    text = novel(6)
    sample = sample_passages(text, ExtractionSettings(per_book=10, fast=True, block_words=60), nlp)
    assert sample.blocks_read == sample.blocks
    assert sample.candidates == 6 and sample.flagged


def test_passages_are_stored_with_offsets_that_round_trip(two_books):
    project, long_id, _ = two_books
    extract_books(project, [long_id], ExtractionSettings(per_book=12, seed=1))
    text = book_text(project, long_id)
    assert "\r\n" in text  # hard-wrapped, Gutenberg-style lines survive import; offsets must still hold
    frame = passages_frame(project, [long_id])
    assert len(frame) == 12
    for row in frame.itertuples():
        assert row.passage.count(MASK) == 1
        assert text[row.name_start : row.name_end] == row.gold
        restored = row.passage.replace(MASK, row.gold)
        assert text[row.start_char : row.end_char] == restored


def test_books_with_too_few_candidates_are_flagged_and_keep_what_they_have(two_books):
    project, long_id, short_id = two_books
    summary = extract_books(project, settings=ExtractionSettings(per_book=20))
    by_book = summary.set_index("book_id")
    assert by_book.loc[long_id, "sampled"] == 20 and not by_book.loc[long_id, "flagged"]
    assert by_book.loc[short_id, "candidates"] == 6 and by_book.loc[short_id, "sampled"] == 6
    assert by_book.loc[short_id, "flagged"]
    stored = extractions_frame(project).set_index("book_id")
    assert stored.loc[short_id, "flagged"] and not stored.loc[long_id, "flagged"]
    assert stored.loc[long_id, "candidates"] == 40
    record = json.loads(project.db.execute("SELECT settings FROM cloze_extractions WHERE book_id = ?", [long_id]).fetchone()[0])
    assert record["per_book"] == 20 and "sir" in record["excluded_words"] and record["spacy_model"]


def test_passages_can_be_selected_by_book_and_tag(two_books):
    project, long_id, short_id = two_books
    extract_books(project, settings=ExtractionSettings(per_book=5))
    assert len(select_passage_ids(project)) == 10
    assert len(select_passage_ids(project, book_ids=[short_id])) == 5
    gothic = select_passage_ids(project, tags={"genre": "gothic"})
    assert set(gothic) == set(passages_frame(project, [long_id])["passage_id"])


def _answer_all(project, passage_ids):
    run_id = create_run(project, "cloze")
    run_job(project, run_id, [Unit(i) for i in passage_ids], lambda units, state: [(u, Outcome(raw="x")) for u in units])
    return run_id


def test_extracting_again_is_refused_when_runs_used_the_passages_unless_replace(two_books):
    project, long_id, short_id = two_books
    extract_books(project, [long_id], ExtractionSettings(per_book=5, seed=1))
    # no responses yet: extracting again just replaces the passages
    extract_books(project, [long_id], ExtractionSettings(per_book=6, seed=2))
    ids = select_passage_ids(project, book_ids=[long_id])
    assert len(ids) == 6
    _answer_all(project, ids)
    with pytest.raises(UserError, match="replace"):
        extract_books(project, [long_id], ExtractionSettings(per_book=7))
    assert select_passage_ids(project, book_ids=[long_id]) == ids  # nothing changed
    extract_books(project, [long_id], ExtractionSettings(per_book=7), replace=True)
    assert len(select_passage_ids(project, book_ids=[long_id])) == 7
    assert project.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0


def test_a_book_without_text_is_refused_with_a_plain_message(project):
    with project.db.conn:
        book_id = project.db.execute(
            "INSERT INTO books (title, source_kind, external_id, added_at) VALUES ('', 'external', 'x1', 'now')"
        ).lastrowid
    with pytest.raises(UserError, match="no stored text"):
        extract_books(project, [book_id])


def test_cancel_keeps_nothing_half_done(two_books):
    project, long_id, _ = two_books
    state = TaskState()
    state.cancel()
    with pytest.raises(CancelledError):
        extract_books(project, [long_id], ExtractionSettings(per_book=5), state=state)
    assert passages_frame(project).empty


def test_several_books_in_several_processes_give_the_same_passages(tmp_path, two_books):
    project, long_id, short_id = two_books
    settings = ExtractionSettings(per_book=8, seed=5)
    seen = []
    state = TaskState(on_progress=seen.append, min_interval=0)
    summary = extract_books(project, settings=settings, workers=2, state=state)
    assert list(summary["book_id"]) == [long_id, short_id]
    pooled = passages_frame(project)[["book_id", "gold", "start_char", "name_start"]]
    extract_books(project, settings=settings, workers=1)
    single = passages_frame(project)[["book_id", "gold", "start_char", "name_start"]]
    assert pooled.equals(single)
    assert seen and seen[-1].done == seen[-1].total


def test_cancel_in_several_processes_stops_the_workers_and_keeps_whole_books_only(two_books):
    project, long_id, short_id = two_books
    state = TaskState(on_progress=lambda p: state.cancel(), min_interval=0)
    with pytest.raises(CancelledError):
        extract_books(project, settings=ExtractionSettings(per_book=8), workers=2, state=state)
    stored = passages_frame(project).groupby("book_id").size().to_dict()
    finished = dict(project.db.execute("SELECT book_id, sampled FROM cloze_extractions").fetchall())
    assert stored == finished  # a book is stored whole with its extraction record, or not at all


HELD_RUN = """
import os, sys, time
from workbench import jobs
from workbench.project import Project

path, run_id, release, items = sys.argv[1], int(sys.argv[2]), sys.argv[3], [int(i) for i in sys.argv[4].split(",")]
project = Project.open(path)

def process(chunk, state):
    for unit in chunk:
        while unit.item_id == items[1] and not os.path.exists(release):
            time.sleep(0.02)  # a slow model: the run is still asking when the other program extracts again
        yield unit, jobs.Outcome(raw="<name>Eliza</name>")

report = jobs.run_job(project, run_id, [jobs.Unit(i) for i in items], process, commit_every=1, commit_seconds=0)
print(report.status, report.done, report.total, flush=True)
"""


def test_extracting_again_while_a_run_in_another_program_is_asking_is_refused_and_loses_no_answer(two_books, tmp_path):
    import subprocess
    import sys
    import time
    from pathlib import Path

    from workbench import jobs
    from workbench.errors import UserError
    from workbench.models.catalog import external_model

    project, long_id, _ = two_books
    extract_books(project, [long_id], settings=ExtractionSettings(per_book=4, seed=1))
    items = [i for i, in project.db.execute("SELECT id FROM cloze_passages WHERE book_id = ? ORDER BY id", [long_id])]
    run_id = jobs.create_run(project, "cloze", model_id=external_model(project, "cli-model"), total=len(items))
    release = tmp_path / "release"
    child = subprocess.Popen([sys.executable, "-c", HELD_RUN, str(project.path), str(run_id), str(release),
                              ",".join(map(str, items))], cwd=Path(__file__).resolve().parents[2],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while jobs.run_counts(project, run_id)["ok"] < 1:
            assert child.poll() is None, child.stdout.read()
            assert time.monotonic() < deadline, "the other program never got going"
            time.sleep(0.02)
        with pytest.raises(UserError) as refused:  # what the app does when the person confirms 'replace'
            extract_books(project, [long_id], settings=ExtractionSettings(per_book=4, seed=9), replace=True)
        assert f"run {run_id} (cloze, cli-model)" in str(refused.value)
        release.touch()
        assert child.wait(timeout=60) == 0
        assert child.stdout.read().split() == ["done", str(len(items)), str(len(items))]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    kept = [i for i, in project.db.execute("SELECT id FROM cloze_passages WHERE book_id = ? ORDER BY id", [long_id])]
    assert kept == items
    assert jobs.run_counts(project, run_id) == {"ok": len(items), "failed": 0}
    # once the run has finished, replacing is the person's choice again (and deletes what they agreed to)
    extract_books(project, [long_id], settings=ExtractionSettings(per_book=4, seed=9), replace=True)
    assert jobs.run_counts(project, run_id)["ok"] == 0
