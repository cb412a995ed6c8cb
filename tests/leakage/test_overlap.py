"""Passage overlap: the longest shared run, its frequency, its probability and chance, stored and resumable."""

import json
import math

import pandas as pd
import pytest

from tests.fixtures.leakage import CORPUS, add_cloze_book, brute_suffix_lengths
from workbench.jobs import get_run, resume_run, runs_frame
from workbench.probes.leakage import corpora, overlap, passages
from workbench.probes.leakage.chance import chance_of_occurring, sequence_log_prob
from workbench.probes.leakage.overlap import COLUMNS
from workbench.progress import TaskState

QUERIES = [
    "At first light the ferry left the harbour at dawn, and the gulls followed it far out.",
    "Nothing in this sentence appears in the corpus zebra quagga.",
    "The ferry left the harbour at dawn",  # twice in the corpus
    "and the",  # in several places: the most frequent one is reported
]


@pytest.fixture
def queries(tmp_path):
    path = tmp_path / "queries.txt"
    path.write_text("\n\n".join(QUERIES) + "\n", encoding="utf-8")
    return path


def brute_chance(docs: list[list[int]], span: list[int], words: int, vocabulary: int, span_words: int,
                 order: int = 5) -> dict:
    """The chance model written out by hand: every n-gram occurrence lying inside an occurrence of ``span``
    is left out of the counts, and the span's words out of the corpus size."""
    size = len(span)
    inside = [set() for _ in docs]  # token places covered by an occurrence of the span
    occurrences = 0
    for d, doc in enumerate(docs):
        for q in range(len(doc) - size + 1):
            if doc[q : q + size] == span:
                occurrences += 1
                inside[d].update(range(q, q + size))

    def count(gram):
        if not gram:
            return sum(len(doc) - len(inside[d]) for d, doc in enumerate(docs))
        n = len(gram)
        return sum(1 for d, doc in enumerate(docs) for p in range(len(doc) - n + 1)
                   if doc[p : p + n] == list(gram) and not set(range(p, p + n)) <= inside[d])

    total = 0.0
    for i in range(size):
        h0 = count(())
        p = (count(span[i : i + 1]) + 1) / (h0 + vocabulary)
        for k in range(2, min(order, i + 1) + 1):
            h = count(span[i - k + 1 : i])
            p = (min(count(span[i - k + 1 : i + 1]), h) + p) / (h + 1.0)
        total += math.log(p)
    n = words - occurrences * span_words
    return {"log_prob": total, "chance_p": chance_of_occurring(total, n), "occurrences": occurrences}


def test_log_probability_is_the_interpolated_ngram_estimate():
    # two tokens: unigram for the first; for the second, bigram interpolated with its unigram
    ngram = [[[3, 100]], [[5, 100], [2, 3]]]
    p1 = (3 + 1) / (100 + 50)
    p2_unigram = (5 + 1) / (100 + 50)
    p2 = (2 + 1.0 * p2_unigram) / (3 + 1.0)
    assert sequence_log_prob(ngram, 50) == pytest.approx(math.log(p1) + math.log(p2))
    # order 1 ignores the bigram counts
    assert sequence_log_prob(ngram, 50, order=1) == pytest.approx(math.log(p1) + math.log(p2_unigram))


def test_chance_of_occurring_at_least_once():
    assert chance_of_occurring(math.log(0.01), 10) == pytest.approx(1 - 0.99 ** 10)
    # tiny probabilities in a huge corpus do not underflow to 0 or 1
    assert chance_of_occurring(math.log(1e-20), 1e10) == pytest.approx(1e-10, rel=1e-6)
    # the study's threshold for the Pile: log-probability -28.87 gives a 5% chance in ~1.77e11 words
    assert chance_of_occurring(-28.87, 1.77e11) == pytest.approx(0.05, abs=0.001)


def test_overlap_of_passages_from_a_file(mini_corpus, queries):
    report = overlap.run_overlap(mini_corpus, "mini", str(queries))
    assert (report.total, report.processed, report.failed) == (4, 4, 0)
    frame = overlap.overlap_frame(mini_corpus, "mini", positions=True)
    assert list(frame.columns[:9]) == ["book", "passage_id", "tokens", "longest", "longest_text", "frequency",
                                       "covered_share", "log_prob", "chance_p"]
    assert list(frame.columns) == COLUMNS + ["suffix_lengths"]
    index = corpora.open_index(mini_corpus, "mini")
    docs = [index.encode(t).ids.tolist() for t in CORPUS]
    for row in frame.itertuples():
        text = QUERIES[int(row.passage_id) - 1]
        ids = index.encode(text).ids.tolist()
        lengths = brute_suffix_lengths(docs, ids)
        assert row.suffix_lengths == " ".join(map(str, lengths))
        assert row.tokens == len(ids) and row.longest == max(lengths)
        assert row.covered_share == pytest.approx(row.longest / row.tokens)
        seq = ids[row.start : row.start + row.longest]
        assert row.frequency == sum(1 for d in docs for i in range(len(d)) if d[i : i + len(seq)] == seq)
        assert row.longest_text == text[index.encode(text).starts[row.start] : index.encode(text).ends[row.start + row.longest - 1]]
        mini = corpora.get_corpus(mini_corpus, "mini")
        expected = brute_chance(docs, seq, mini.words, index.vocabulary_size, len(row.longest_text.split()))
        assert row.log_prob == pytest.approx(expected["log_prob"], rel=1e-12)
        assert row.chance_p == pytest.approx(expected["chance_p"], rel=1e-9)
        assert row.chance_removed == row.frequency
        assert row.chance_model.startswith("5-gram on the same corpus, the match's own occurrences removed")
    by_passage = frame.set_index("passage_id")
    # "the ferry" is not in the corpus ("The ferry" is: case counts), so the run starts at "ferry"
    assert by_passage.loc["1", "longest_text"] == "ferry left the harbour at dawn, and the gulls followed it far out"
    assert by_passage.loc["3", "covered_share"] == 1.0 and by_passage.loc["3", "frequency"] == 2
    assert by_passage.loc["2", "longest_text"] == "in the"  # common words only
    assert by_passage.loc["4", "frequency"] > 1  # the most frequent of the equally long runs


def test_a_second_run_continues_instead_of_asking_again(mini_corpus, queries):
    first = overlap.run_overlap(mini_corpus, "mini", str(queries))
    again = overlap.run_overlap(mini_corpus, "mini", str(queries))
    assert again.run_id == first.run_id and again.processed == 0 and again.done == 4
    assert len(runs_frame(mini_corpus, "leakage-overlap")) == 1


def test_a_cancelled_run_resumes_from_the_jobs_page(mini_corpus, queries):
    state = TaskState()
    state.cancel()
    report = overlap.run_overlap(mini_corpus, "mini", str(queries), state=state)
    assert report.status == "cancelled" and report.processed == 0
    assert get_run(mini_corpus, report.run_id)["status"] == "cancelled"
    resumed = resume_run(mini_corpus, report.run_id)
    assert resumed.status == "done" and resumed.done == 4
    assert len(overlap.overlap_frame(mini_corpus, "mini")) == 4


def test_raw_answers_are_stored_and_read_again_without_the_index(mini_corpus, queries):
    overlap.run_overlap(mini_corpus, "mini", str(queries))
    before = overlap.overlap_frame(mini_corpus, "mini")
    import shutil

    shutil.rmtree(corpora.get_corpus(mini_corpus, "mini").folder(mini_corpus))
    after = overlap.overlap_frame(mini_corpus, "mini", order=5)
    assert before.equals(after)
    raw = json.loads(mini_corpus.db.execute("SELECT raw FROM responses LIMIT 1").fetchone()[0])
    assert set(raw) >= {"suffix_lengths", "longest", "start", "text", "frequency", "ngram", "vocabulary", "corpus_words"}


def test_cloze_passages_are_queried_with_the_name_put_back(mini_corpus):
    text = ("Margery kept the letters in a tin box under the bed. She read them when Tobias was away. "
            "The clock in the hall struck eleven for Silas.")
    book_id, ids = add_cloze_book(mini_corpus, "Letters", text, ["Tobias", "Silas"],
                                  imported=[("[MASK] left the harbour at dawn.", "Ferris")])
    stored = passages.passages_frame(mini_corpus, passages.gather(mini_corpus, "cloze"))
    stored = stored.sort_values("source_key", key=lambda k: k.astype(int))
    assert stored["text"].tolist() == [" She read them when Tobias was away.",
                                       " The clock in the hall struck eleven for Silas.",
                                       "Ferris left the harbour at dawn."]
    assert stored["book"].tolist() == ["Letters"] * 3
    assert stored["source_key"].tolist() == [str(i) for i in ids]
    overlap.run_overlap(mini_corpus, "mini", "cloze")
    frame = overlap.overlap_frame(mini_corpus, "mini").set_index("passage_id")
    assert frame.loc[str(ids[1]), "longest_text"] == "The clock in the hall struck eleven"
    assert frame.loc[str(ids[2]), "longest_text"] == "left the harbour at dawn"  # the corpus has "dawn,"
    assert frame.loc[str(ids[2]), "book_id"] == book_id


def test_click_through_detail_marks_the_longest_overlap(mini_corpus, queries):
    report = overlap.run_overlap(mini_corpus, "mini", str(queries))
    item = overlap.overlap_frame(mini_corpus, "mini").set_index("passage_id").loc["1", "item_id"]
    detail = overlap.passage_detail(mini_corpus, "mini", int(item))
    start, end = detail["span"]
    assert detail["text"][start:end] == detail["longest_text"]
    assert report.run_id


def test_a_corpus_built_again_under_its_old_name_shows_none_of_the_old_overlaps(mini_corpus, queries, tmp_path):
    overlap.run_overlap(mini_corpus, "mini", str(queries))
    assert overlap.overlap_frame(mini_corpus, "mini")["longest"].max() > 5
    corpora.remove_corpus(mini_corpus, "mini", delete_files=True)
    other = tmp_path / "other"
    other.mkdir()
    (other / "unrelated.txt").write_text("Quite different words fill this small corpus from start to end.\n")
    corpora.build_corpus(mini_corpus, "mini", [other])  # the same name, and the number the old one had
    assert overlap.overlap_frame(mini_corpus, "mini").empty and overlap.overlap_frame(mini_corpus).empty
    overlap.run_overlap(mini_corpus, "mini", str(queries))
    assert overlap.overlap_frame(mini_corpus, "mini")["longest"].max() <= 2


def _same(a, b) -> bool:
    """Equal, NaN equal to NaN."""
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def _stored(project) -> list[tuple[int, str, str | None]]:
    return project.db.execute("SELECT item_id, raw, extra FROM responses ORDER BY item_id").fetchall()


@pytest.fixture
def with_no_overlap(tmp_path):
    path = tmp_path / "queries.txt"
    path.write_text("\n\n".join(QUERIES + ["7 9 3 \u00a7\u00a7"]) + "\n", encoding="utf-8")
    return path


def test_each_answer_is_stored_with_the_numbers_derive_gives_and_read_back_unchanged(mini_corpus, with_no_overlap):
    overlap.run_overlap(mini_corpus, "mini", str(with_no_overlap))
    stored = _stored(mini_corpus)
    assert len(stored) == 5
    for _, _raw, extra in stored:
        derived = json.loads(extra)["derived"]
        assert (derived["version"], derived["model"], derived["order"], derived["prior"]) == \
            (overlap.DERIVED, "same", overlap.MAX_ORDER, 1.0)
    frame = overlap.overlap_frame(mini_corpus, "mini").set_index("item_id")
    assert frame["longest"].min() == 0  # an answer without overlap: no chance estimate (NaN), read back as NaN
    for item, raw, _ in stored:
        fresh = overlap.derive(json.loads(raw))
        row = frame.loc[item]
        for name, value in fresh.items():
            assert _same(row[name], value), (item, name, row[name], value)
    # the numbers are read from what was stored: the answers themselves are not read again
    with mini_corpus.db.transaction():
        mini_corpus.db.execute("UPDATE responses SET raw = '{}'")
    assert overlap.overlap_frame(mini_corpus, "mini").set_index("item_id").equals(frame)


def test_answers_without_stored_numbers_or_of_other_settings_are_derived_as_before(mini_corpus, with_no_overlap):
    overlap.run_overlap(mini_corpus, "mini", str(with_no_overlap))
    stored = overlap.overlap_frame(mini_corpus, "mini")
    items = [item for item, _, _ in _stored(mini_corpus)]
    with mini_corpus.db.transaction():  # as a project written before, for two of the answers
        mini_corpus.db.execute("UPDATE responses SET extra = NULL WHERE item_id IN (?, ?)", items[:2])
        # and one derived by an earlier version of the derivation
        extra = json.loads(mini_corpus.db.execute("SELECT extra FROM responses WHERE item_id = ?",
                                                  [items[2]]).fetchone()[0])
        extra["derived"]["version"] = overlap.DERIVED - 1
        extra["derived"]["log_prob"] = 0.0
        mini_corpus.db.execute("UPDATE responses SET extra = ? WHERE item_id = ?", [json.dumps(extra), items[2]])
    mixed = overlap.overlap_frame(mini_corpus, "mini")
    assert list(mixed.columns) == list(stored.columns) and (mixed.dtypes == stored.dtypes).all()
    for name in COLUMNS:
        for a, b in zip(mixed[name], stored[name]):
            if isinstance(a, float):  # derived in bulk: NumPy's logarithm may differ from math's in the last bit
                assert _same(a, b) or a == pytest.approx(b, rel=1e-12), name
            else:
                assert (a is pd.NA and b is pd.NA) or a == b, name
    # another order than the stored numbers': every answer derived from its counts under that order
    third = overlap.overlap_frame(mini_corpus, "mini", order=3).set_index("item_id")
    for item, raw, _ in _stored(mini_corpus):
        fresh = overlap.derive(json.loads(raw), order=3)
        assert _same(third.loc[item, "log_prob"], fresh["log_prob"]) or \
            third.loc[item, "log_prob"] == pytest.approx(fresh["log_prob"], rel=1e-12)
        assert third.loc[item, "chance_model"] == fresh["chance_model"]
    assert third["chance_model"].str.startswith("3-gram").all()
    # the positions come with the stored numbers as they are
    placed = overlap.overlap_frame(mini_corpus, "mini", positions=True)
    assert placed[COLUMNS].equals(mixed)
    assert placed["suffix_lengths"].str.len().gt(0).all()


def test_the_first_read_of_answers_stored_before_keeps_their_numbers_so_later_reads_take_them(
        mini_corpus, with_no_overlap):
    overlap.run_overlap(mini_corpus, "mini", str(with_no_overlap))
    as_stored = overlap.overlap_frame(mini_corpus, "mini")
    kept = {item: extra for item, _, extra in _stored(mini_corpus)}
    with mini_corpus.db.transaction():  # as a project written by an earlier release holds them
        mini_corpus.db.execute("UPDATE responses SET extra = NULL")
    first = overlap.overlap_frame(mini_corpus, "mini")  # derived from the answers, and kept with them
    for item, _, extra in _stored(mini_corpus):
        assert json.loads(extra) == json.loads(kept[item]), item  # as the run itself would have kept them
    # the answers are not read again: what the next read shows comes from the numbers kept by the first
    with mini_corpus.db.transaction():
        mini_corpus.db.execute("UPDATE responses SET raw = '{}'")
    again = overlap.overlap_frame(mini_corpus, "mini")
    for frame in (first, again):
        assert list(frame.columns) == list(as_stored.columns)
        for name in COLUMNS:
            for a, b in zip(frame[name], as_stored[name]):
                assert (a is pd.NA and b is pd.NA) or _same(a, b) \
                    or (isinstance(a, float) and a == pytest.approx(b, rel=1e-12)), name


def test_another_order_than_the_stored_one_keeps_nothing(mini_corpus, with_no_overlap):
    overlap.run_overlap(mini_corpus, "mini", str(with_no_overlap))
    with mini_corpus.db.transaction():
        mini_corpus.db.execute("UPDATE responses SET extra = NULL")
    overlap.overlap_frame(mini_corpus, "mini", order=3)
    assert all(extra is None for _, _, extra in _stored(mini_corpus))


def test_a_read_only_project_written_before_is_read_without_keeping_anything(mini_corpus, with_no_overlap):
    overlap.run_overlap(mini_corpus, "mini", str(with_no_overlap))
    expected = overlap.overlap_frame(mini_corpus, "mini")
    with mini_corpus.db.transaction():
        mini_corpus.db.execute("UPDATE responses SET extra = NULL")
    path = mini_corpus.path
    mini_corpus.close()
    from workbench import Project

    read_only = Project.open(path, read_only=True)
    try:
        shown = overlap.overlap_frame(read_only, "mini")
        assert shown["longest"].tolist() == expected["longest"].tolist()
        assert read_only.db.execute("SELECT COUNT(*) FROM responses WHERE extra IS NOT NULL").fetchone()[0] == 0
    finally:
        read_only.close()


def test_while_a_run_holds_the_write_lock_a_read_of_old_answers_does_not_wait_for_it(mini_corpus, with_no_overlap):
    import sqlite3

    overlap.run_overlap(mini_corpus, "mini", str(with_no_overlap))
    expected = overlap.overlap_frame(mini_corpus, "mini")
    with mini_corpus.db.transaction():
        mini_corpus.db.execute("UPDATE responses SET extra = NULL")
    writer = sqlite3.connect(mini_corpus.path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another writer (a run) holds the lock
    try:
        shown = overlap.overlap_frame(mini_corpus, "mini")  # read at once; the numbers are kept another time
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert shown["longest"].tolist() == expected["longest"].tolist()
    assert all(extra is None for _, _, extra in _stored(mini_corpus))
    overlap.overlap_frame(mini_corpus, "mini")  # the lock gone: kept now
    assert all(extra is not None for _, _, extra in _stored(mini_corpus))
    assert mini_corpus.db.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000  # the usual wait restored
