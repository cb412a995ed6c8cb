"""Reading results at the papers' scale: every results frame a page or command reads, over 57,000 stored answers.

The name-cloze passages of the 571 published gpt4-books files are 56,957; an overlap run over them used to be
killed for want of memory while its answers were read back (a run's config, listing every passage, was joined
onto every answer and parsed per row: 3 GB for 7,957 passages). Each line here builds a project with 57,000
answers of one probe, written straight into the project file the way the probe stores them (its run's config
listing its passages where the probe's does), and reads the frame a page or command shows:

- ``results_scale_overlap``: ``overlap.overlap_frame`` (Overlap tab, ``palimpsest leakage overlap``), answers
  from a real index of made-up novels (64 passages queried, their answers repeated), stored as the probe
  stores them now: with their chance-model numbers derived (``overlap.derived_extra``), which the frame reads;
- ``results_scale_overlap_old``: the same frame of answers stored without those numbers (projects written
  before they were stored), each derived again from its counts as it is read (``overlap_read.derive_many``);
- ``results_scale_frequency``: ``frequency.grams_frame`` (Book frequency tab and table), real counts likewise;
- ``results_scale_membership``: ``membership.scores`` with a reference model (Membership tab): 57,000 answers
  of each model, token values made up in the stored format, each with its scores kept beside it as a run keeps
  them; ``results_scale_membership_old``: the same answers stored without their scores (as before they were
  kept), worked out from the token values when read;
- ``results_scale_decop``: ``decop.accuracy_frame`` (DE-COP tab): 14,250 passages asked 4 questions each;
- ``results_scale_surprisal``: ``surprisal.surprisal_frame`` of one text among 57,000 read (Surprisal tab);
- ``results_scale_reading``: ``reading.results.answers_frame`` (Reading page, forgetting curves): 100 books of
  570 read-along questions;
- ``results_scale_validity``: ``validity.answers.task_answers`` (Validity page): 57,000 year answers;
- ``results_scale_cloze``: ``cloze.analysis.passage_results`` (Name cloze page, ``palimpsest cloze``) of a run
  whose config lists its 57,000 passages (as a run of a local model stores them);
- ``results_scale_leakage_page``: the longest stall of the window (``bench_gui_stall.StallMeter``; goal 100 ms)
  while the Leakage page opens the leakage project above (overlap, book frequency, membership and DE-COP
  answers) and each of its tabs is shown, its table and charts filled (the page's very first painting, before
  any project, is given apart as ``first_paint_ms``).

Each frame line gives the frame's time beside pandas ``read_sql`` of the same answer rows (``SELECT *`` of
the runs it reads), as the ratio ``value``, and the peak memory of one read measured with ``tracemalloc``
(Python's allocations, pandas' and numpy's included; SQLite's own page cache not). Goals: peak at most 1 GB,
time at most 3 times the pandas read. Times are the best CPU time (``time.process_time``) of ``ROUNDS``
reads interleaved with the pandas read, after a first read left out (it imports scipy and the like).
``--quick``: 5,700 answers.
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
import os
import random
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable

from benchmarks.common import line, skipped

ROWS = 57_000
QUICK_ROWS = 5_700
BOOKS = 100
ROUNDS = 3
GOAL_RATIO = 3.0
GOAL_MB = 1024.0
STALL_GOAL_MS = 100.0
FIRST_PAINT = "the page first drawn, without a project"
LIBRARIES_LOADED = "the chart and statistics libraries loaded, as the app does at start"
DISTINCT = 64  # distinct answers queried or made up, repeated over the passages
WORDS = ("the", "lamp", "harbour", "letter", "coach", "window", "winter", "road", "mill", "bells", "garden", "door",
         "night", "morning", "river", "house", "she", "he", "said", "came", "went", "looked", "at", "by", "and", "of")


class Built:
    """A project, the frame function to read, the pandas read of the same answers, and facts to report."""

    def __init__(self, project, read: Callable[[], Any], sql: str, params: list, **facts: Any):
        self.project, self.read, self.sql, self.params, self.facts = project, read, sql, params, facts

    def read_sql(self):
        import pandas as pd

        return pd.read_sql_query(self.sql, self.project.db.conn, params=self.params)


# ---------------------------------------------------------------------------------------------- writing rows
def _stamp() -> str:
    from workbench.project import now

    return now()


def _books(project, count: int = BOOKS) -> list[int]:
    stamp = _stamp()
    with project.db.transaction():
        project.db.conn.executemany(
            "INSERT INTO books (title, author, year, source_kind, external_id, words, added_at)"
            " VALUES (?, ?, ?, 'external', ?, 0, ?)",
            [(f"A Made-up Novel, volume {n + 1}", f"Author {n % 37}", 1800 + (n * 7) % 120, f"mb{n:03d}", stamp)
             for n in range(count)])
    return [r[0] for r in project.db.execute("SELECT id FROM books ORDER BY id").fetchall()]


def _run(project, kind: str, model_id: int | None, config: dict, params: dict | None = None) -> int:
    from workbench.jobs import create_run

    return create_run(project, kind, model_id=model_id, params=params or {}, config=config)


def _answers(project, rows: list[tuple]) -> None:
    """(run id, item id, sample, raw[, extra]) rows, stored as answered."""
    stamp = _stamp()
    with project.db.transaction():
        project.db.conn.executemany(
            "INSERT INTO responses (run_id, item_id, sample, status, raw, extra, created_at)"
            " VALUES (?, ?, ?, 'ok', ?, ?, ?)",
            [(*row[:4], row[4] if len(row) > 4 else None, stamp) for row in rows])
    with project.db.transaction():
        project.db.execute("UPDATE runs SET status = 'done', total = (SELECT COUNT(*) FROM responses x"
                           " WHERE x.run_id = runs.id)")


def _model(project, label: str, backend: str = "hf") -> int:
    from workbench.models.catalog import ModelSpec, add_model

    return add_model(project, ModelSpec(label=label, backend=backend, ref=f"made-up/{label}")).id


def _kind_sql(kind: str, model_id: int | None = None) -> tuple[str, list]:
    sql = "SELECT x.* FROM responses x JOIN runs r ON r.id = x.run_id WHERE r.kind = ?"
    return (sql + " AND r.model_id = ?", [kind, model_id]) if model_id is not None else (sql, [kind])


# ---------------------------------------------------------------------------------------------- leakage
def _novel(number: int, paragraphs: int) -> str:
    from benchmarks.bench_gui_stall import made_up_book

    return made_up_book(number, paragraphs)


def _passage_texts(rows: int) -> list[str]:
    """Passages of about 60 words: half taken from the corpus's novels, half with their words shuffled."""
    novels = [_novel(n, 40).split("\n\n")[1:] for n in range(8)]
    rng = random.Random(3)
    texts = []
    for n in range(rows):
        paragraphs = novels[n % len(novels)]
        k = (n // len(novels)) % (len(paragraphs) - 1)
        text = " ".join(paragraphs[k : k + 2])
        if n % 2:
            words = text.split()
            rng.shuffle(words)
            text = " ".join(words)
        texts.append(f"{text} ({n})")
    return texts


def _leakage_passages(project, books: list[int], rows: int) -> tuple[list[int], list[str]]:
    texts = _passage_texts(rows)
    stamp = _stamp()
    with project.db.transaction():
        project.db.conn.executemany(
            "INSERT INTO leakage_passages (source, source_key, book_id, label, text, hash, created_at)"
            " VALUES ('cloze', ?, ?, '', ?, ?, ?)",
            [(str(n + 1), books[n % len(books)], t, hashlib.sha256(t.encode()).hexdigest(), stamp)
             for n, t in enumerate(texts)])
    ids = [r[0] for r in project.db.execute("SELECT id FROM leakage_passages ORDER BY id").fetchall()]
    return ids, texts


def _token_values(text: str, rng: random.Random) -> dict[str, list]:
    """A membership answer in the stored format (``membership.scoring_process``), values made up."""
    tokens = len(text.split()) + 8
    logprobs = [None] + [round(-rng.expovariate(0.4), 6) for _ in range(tokens - 1)]
    expected = [None] + [round(-rng.uniform(2, 5), 6) for _ in range(tokens - 1)]
    variance = [None] + [round(rng.uniform(1, 6), 6) for _ in range(tokens - 1)]
    return {"logprobs": logprobs, "expected": expected, "variance": variance}


def _surprisal_values(text: str, rng: random.Random) -> dict[str, list]:
    """A surprisal answer in the stored format (``surprisal.scoring_process``): a token per word, made up."""
    import re

    offsets = [[m.start(), m.end()] for m in re.finditer(r"\S+", text)]
    return {"offsets": offsets, "logprobs": [None] + [round(-rng.expovariate(0.3), 6) for _ in offsets[1:]],
            "word_start": [round(rng.uniform(0.2, 0.9), 6) for _ in range(len(offsets) + 1)]}


def leakage_project(folder: Path, rows: int):
    """Overlap and frequency answers against a real index of made-up novels ('lit'), membership answers of
    a model and a reference, DE-COP answers: ``rows`` answers each."""
    from workbench import Project
    from workbench.probes.leakage import decop, frequency
    from workbench.probes.leakage.corpora import build_corpus, open_index

    corpus = folder / "novels"
    corpus.mkdir()
    for n in range(8):
        (corpus / f"novel{n}.txt").write_text(_novel(n, 40), encoding="utf-8")
    project = Project.create(folder / "leakage.palimpsest")
    books = _books(project)
    lit = build_corpus(project, "lit", [corpus])
    ids, texts = _leakage_passages(project, books, rows)
    index = open_index(project, "lit")
    try:
        counted = [json.dumps(frequency.count_gram(index, texts[n], frequency.GRAM, frequency.SEED, ids[n]))
                   for n in range(DISTINCT)]
    finally:
        index.close()
    listed = {"corpus": "lit", "corpus_id": lit.id, "passage_ids": ids}
    _overlap_answers(project, lit, ids, texts, derived=True)
    run = _run(project, frequency.KIND, None, listed,
               {"per_book": rows // BOOKS, "gram": frequency.GRAM, "seed": frequency.SEED})
    _answers(project, [(run, item, 0, counted[n % DISTINCT]) for n, item in enumerate(ids)])
    _membership_answers(project, ids, texts, ("m", "ref"), kept=True)
    asked = ids[: rows // 4]
    quizzed, paraphraser = _model(project, "quizzed", "external"), _model(project, "paraphraser", "external")
    config = {"passage_ids": asked, "paraphraser_id": paraphraser, "orders": 4, "seed": 0,
              "paraphrase_samples": {str(i): [0, 1, 2] for i in asked}}
    run = _run(project, decop.QUIZ_KIND, quizzed, config)
    _answers(project, [(run, item, q, "ABCD"[(item + q) % 4] if item % 5 else "I cannot tell.")
                       for item in asked for q in range(4)])
    return project


def _overlap_answers(project, corpus, ids: list[int], texts: list[str], *, derived: bool) -> None:
    """An overlap run of the passages ``ids`` against ``corpus``, its answers stored as the probe stores them
    (``derived``: with their numbers in ``extra``) or as it stored them before (without)."""
    from workbench.probes.leakage import overlap
    from workbench.probes.leakage.corpora import open_index

    index = open_index(project, corpus.name)
    try:
        queried = [overlap.query_passage(index, texts[n]) for n in range(DISTINCT)]
    finally:
        index.close()
    raws = [json.dumps(answer) for answer in queried]
    extras = [json.dumps(overlap.derived_extra(answer)) if derived else None for answer in queried]
    run = _run(project, overlap.KIND, None, {"corpus": corpus.name, "corpus_id": corpus.id, "passage_ids": ids},
               {"max_order": overlap.MAX_ORDER, "answers": overlap.ANSWERS})
    _answers(project, [(run, item, 0, raws[n % DISTINCT], extras[n % DISTINCT]) for n, item in enumerate(ids)])


def overlap_old_project(folder: Path, rows: int) -> Built:
    """``rows`` overlap answers stored without their derived numbers (as projects written before hold them)."""
    from workbench import Project
    from workbench.probes.leakage import overlap
    from workbench.probes.leakage.corpora import build_corpus

    corpus = folder / "novels-old"
    corpus.mkdir()
    for n in range(8):
        (corpus / f"novel{n}.txt").write_text(_novel(n, 40), encoding="utf-8")
    project = Project.create(folder / "overlap-old.palimpsest")
    lit = build_corpus(project, "lit", [corpus])
    ids, texts = _leakage_passages(project, _books(project), rows)
    _overlap_answers(project, lit, ids, texts, derived=False)
    return Built(project, lambda: overlap.overlap_frame(project, "lit"), *_kind_sql(overlap.KIND),
                 stored="without derived numbers: the first read derives them and keeps them with the answers (the upgrade, first_read_s), later reads take them from there")


def _membership_answers(project, ids: list[int], texts: list[str], labels: tuple[str, ...], kept: bool) -> None:
    """Membership answers of each model to every passage: with their scores kept beside them (``extra``), as a
    run stores them now, or (``kept`` False) without, as answers stored before scores were kept."""
    from workbench.probes.leakage import membership

    rng = random.Random(7)
    for label in labels:
        model_id = _model(project, label)
        run = _run(project, membership.KIND, model_id, {"passage_ids": ids})
        made_up = [json.dumps(_token_values(texts[n], rng)) for n in range(DISTINCT)]
        # the scores depend on the passage text (its zlib size): each answer's own, as the run keeps them
        extras = membership.stored_scores([made_up[n % DISTINCT] for n in range(len(ids))], texts) if kept else None
        _answers(project, [(run, item, 0, made_up[n % DISTINCT], json.dumps(extras[n]) if kept else None)
                           for n, item in enumerate(ids)])


def membership_old_project(folder: Path, rows: int) -> Built:
    """Membership answers of a model and a reference stored without their scores (before they were kept): the
    scores are worked out from every answer's token values when read."""
    from workbench import Project
    from workbench.probes.leakage import membership

    project = Project.create(folder / "membership-old.palimpsest")
    ids, texts = _leakage_passages(project, _books(project), rows)
    _membership_answers(project, ids, texts, ("m", "ref"), kept=False)
    sql = "SELECT x.* FROM responses x JOIN runs r ON r.id = x.run_id WHERE r.kind = ?"
    return Built(project, lambda: membership.scores(project, "m", reference="ref"), sql, [membership.KIND], models=2,
                 passages=rows, stored="token values only (answers stored before their scores were kept): the first read scores them and keeps the scores with the answers (the upgrade, first_read_s), later reads take them from there")


def leakage_frames(project) -> list[tuple[str, Built]]:
    from workbench.probes.leakage import decop, frequency, membership, overlap

    m = project.db.execute("SELECT id FROM models WHERE label = 'm'").fetchone()[0]
    membership_sql = "SELECT x.* FROM responses x JOIN runs r ON r.id = x.run_id WHERE r.kind = ?"
    return [
        ("overlap", Built(project, lambda: overlap.overlap_frame(project, "lit"), *_kind_sql(overlap.KIND),
                          stored="with derived numbers, as the probe stores them")),
        ("frequency", Built(project, lambda: frequency.grams_frame(project, "lit"), *_kind_sql(frequency.KIND))),
        ("membership", Built(project, lambda: membership.scores(project, "m", reference="ref"), membership_sql,
                             [membership.KIND], models=2, passages=len(_items(project, membership.KIND, m)),
                             stored="scores kept with each answer, as a run keeps them")),
        ("decop", Built(project, lambda: decop.accuracy_frame(project, "quizzed"), *_kind_sql(decop.QUIZ_KIND))),
    ]


def _items(project, kind: str, model_id: int) -> list[int]:
    return [r[0] for r in project.db.execute(
        "SELECT x.item_id FROM responses x JOIN runs r ON r.id = x.run_id WHERE r.kind = ? AND r.model_id = ?",
        [kind, model_id]).fetchall()]


def surprisal_project(folder: Path, rows: int) -> Built:
    """``rows`` texts read for surprisal by one model, one run each (as ``run_surprisal`` stores them)."""
    from workbench import Project
    from workbench.probes.leakage import surprisal

    project = Project.create(folder / "surprisal.palimpsest")
    ids, texts = _leakage_passages(project, _books(project), rows)
    model_id = _model(project, "m")
    rng = random.Random(11)
    made_up = [json.dumps(_surprisal_values(texts[n], rng)) for n in range(DISTINCT)]
    stamp = _stamp()
    with project.db.transaction():
        project.db.conn.executemany(
            "INSERT INTO runs (kind, model_id, params, config, status, code_version, created_at, total)"
            " VALUES (?, ?, ?, ?, 'done', 'benchmark', ?, 1)",
            [(surprisal.KIND, model_id, json.dumps({"start_token": True}), json.dumps({"passage_ids": [item]}), stamp)
             for item in ids])
    runs = [r[0] for r in project.db.execute("SELECT id FROM runs ORDER BY id").fetchall()]
    # the texts' own answers (its words) for the one read; the rest repeat made-up ones
    _answers(project, [(run, item, 0, made_up[n % DISTINCT] if n else json.dumps(_surprisal_values(texts[0], rng)))
                       for n, (run, item) in enumerate(zip(runs, ids))])
    return Built(project, lambda: surprisal.surprisal_frame(project, "m", ids[0]), *_kind_sql(surprisal.KIND),
                 texts=rows, frame_rows="one text's words")


# ---------------------------------------------------------------------------------------------- other probes
def reading_project(folder: Path, rows: int) -> Built:
    """100 books, each a question set of read-along questions and a run answering them (``rows`` in all)."""
    from workbench import Project
    from workbench.probes.reading.results import answers_frame
    from workbench.probes.reading.run import ANSWER_RUN

    project = Project.create(folder / "reading.palimpsest")
    books = _books(project)
    model_id = _model(project, "m")
    per_book = rows // len(books)
    stamp = _stamp()
    rng = random.Random(13)
    answers = []
    for book in books:
        with project.db.transaction():
            set_id = project.db.execute(
                "INSERT INTO reading_question_sets (book_id, variant, settings, fingerprint, origin, created_at)"
                " VALUES (?, 'original', '{}', ?, 'built', ?)", [book, f"set{book}", stamp]).lastrowid
            project.db.conn.executemany(
                "INSERT INTO reading_questions (set_id, position, key, kind, checkpoint_scene, scene, retention_words,"
                " retention_scenes, options, sources, answer, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '[]', ?, '{}')",
                [(set_id, k, f"b{book}-q{k}", ("lookahead", "false-summary", "other-book")[k % 3], k // 5 + 1,
                  k // 5, rng.randrange(0, 200_000), k % 7,
                  json.dumps([f"Option {o} of question {k}: someone crosses the moor at night." for o in range(5)]),
                  None if k % 6 == 0 else k % 5) for k in range(per_book)])
        questions = [r[0] for r in project.db.execute("SELECT id FROM reading_questions WHERE set_id = ? ORDER BY id",
                                                      [set_id]).fetchall()]
        run = _run(project, ANSWER_RUN, model_id, {"question_set": set_id, "book_id": book, "variant": "original",
                                                    "context_words": None, "templates": {}})
        answers += [(run, q, 0, f"The answer is {rng.randrange(1, 7)}." if q % 9 else "None of the above.")
                    for q in questions]
    _answers(project, answers)
    return Built(project, lambda: answers_frame(project, "m"), *_kind_sql(ANSWER_RUN))


def validity_project(folder: Path, rows: int) -> Built:
    """``rows`` validity passages over 100 books and a model's year answers to each, in one run."""
    from workbench import Project
    from workbench.probes.validity.answers import task_answers
    from workbench.probes.validity.kinds import RUN_KINDS

    project = Project.create(folder / "validity.palimpsest")
    books = _books(project)
    stamp = _stamp()
    texts = _passage_texts(rows)
    with project.db.transaction():
        project.db.conn.executemany(
            "INSERT INTO validity_passages (book_id, label, passage, words, origin, created_at)"
            " VALUES (?, ?, ?, ?, 'imported', ?)",
            [(books[n % len(books)], str(n + 1), t, len(t.split()), stamp) for n, t in enumerate(texts)])
    ids = [r[0] for r in project.db.execute("SELECT id FROM validity_passages ORDER BY id").fetchall()]
    model_id = _model(project, "m")
    run = _run(project, RUN_KINDS["year"], model_id, {"task": "year", "passage_ids": ids})
    _answers(project, [(run, item, 0, f"It was published in {1800 + item % 150}." if item % 11 else "I cannot say.")
                       for item in ids])
    return Built(project, lambda: task_answers(project, "year", "m"), *_kind_sql(RUN_KINDS["year"]))


def cloze_project(folder: Path, rows: int) -> Built:
    """``rows`` name-cloze passages over 100 books and a local model's answers, its run listing them."""
    from benchmarks.published_results import FIRST, SCENES
    from workbench import Project
    from workbench.probes.cloze.analysis import passage_results

    project = Project.create(folder / "cloze.palimpsest")
    books = _books(project)
    stamp = _stamp()
    with project.db.transaction():
        project.db.conn.executemany(
            "INSERT INTO cloze_passages (book_id, passage, gold, origin, created_at) VALUES (?, ?, ?, 'imported', ?)",
            [(books[n % len(books)], f"{SCENES[n % len(SCENES)]} ({n})", FIRST[n % len(FIRST)], stamp)
             for n in range(rows)])
    ids = [r[0] for r in project.db.execute("SELECT id FROM cloze_passages ORDER BY id").fetchall()]
    model_id = _model(project, "m")
    run = _run(project, "cloze", model_id, {"passage_ids": ids})
    _answers(project, [(run, item, 0, f"<name>{FIRST[(item * 7) % len(FIRST)] if item % 3 else FIRST[(item - 1) % 60]}"
                                      "</name>") for item in ids])
    return Built(project, lambda: passage_results(project, "m"), *_kind_sql("cloze"))


# ---------------------------------------------------------------------------------------------- measuring
def _cpu(fn: Callable[[], Any]) -> float:
    gc.collect()
    start = time.process_time()
    fn()
    return time.process_time() - start


def _peak_mb(fn: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def measure(name: str, built: Built, rounds: int) -> dict[str, Any]:
    first_s = _cpu(built.read)  # left out of the ratio: the first read imports what it needs (and, for answers
    # stored before their numbers were kept, works them out and keeps them: the upgrade, reported on its own)
    answers = len(built.read_sql())
    reads, baselines = [], []
    for _ in range(rounds):
        reads.append(_cpu(built.read))
        baselines.append(_cpu(built.read_sql))
    peak = _peak_mb(built.read)
    read_s, sql_s = min(reads), min(baselines)
    ratio = read_s / sql_s if sql_s > 0 else math.inf
    return line(f"results_scale_{name}", ratio, "x read_sql", f"<= {GOAL_RATIO:g}x read_sql, <= {GOAL_MB:g} MB",
                ratio <= GOAL_RATIO and peak <= GOAL_MB, answers=answers, frame_s=round(read_s, 3),
                read_sql_s=round(sql_s, 3), peak_mb=round(peak, 1), memory="tracemalloc peak of one read",
                first_read_s=round(first_s, 3), **built.facts)


def leakage_page_stall(path: Path) -> dict[str, Any]:
    """The Leakage page opening ``path`` and showing each tab with its table and charts, in the app's window set-up."""
    from benchmarks.bench_gui_stall import StallMeter, run_step, settle
    from ui.background import BackgroundOps
    from ui.leakage.page import LeakagePage
    from ui.main_thread_gc import freeze_libraries, libraries_loading
    from workbench import Project
    from workbench.export.libraries import load_libraries

    ops = BackgroundOps()
    page = LeakagePage(ops)
    page.resize(1400, 900)
    page.show()
    meter = StallMeter()
    idle = lambda: not ops.busy  # noqa: E731
    project = Project.open(path)
    shown = {}
    meter.start()
    try:
        settle(meter, FIRST_PAINT, 0.5)  # the page's first painting, before any project: not what this measures
        # as the app's window does when it starts: the chart and statistics libraries loaded on a worker
        run_step(meter, LIBRARIES_LOADED, lambda: (libraries_loading(), ops.run(
            load_libraries, background_read=True, on_done=lambda _: freeze_libraries())), idle)
        run_step(meter, "the page opened", lambda: (page.set_project(project), page.on_shown()), idle)
        settle(meter, "the page opened", 0.2)
        for index in range(1, page.tabs.count()):
            step = f"the {page.tabs.tabText(index)} tab"
            run_step(meter, step, lambda i=index: page.tabs.setCurrentIndex(i), idle)
            settle(meter, step, 0.3)
            shown[page.tabs.tabText(index)] = page.tabs.widget(index).table.model().rowCount()
    finally:
        meter.stop()
        ops.join()
        page.close()
        project.close()
    steps = [step for step in meter.longest if step != FIRST_PAINT]
    _, worst = meter.worst(steps)
    return line("results_scale_leakage_page", worst, "ms", f"<= {STALL_GOAL_MS:g} ms", worst <= STALL_GOAL_MS,
                rows_shown=shown, first_paint_ms=round(meter.longest.get(FIRST_PAINT, 0.0) * 1000, 1),
                **meter.report(steps))


OTHERS = {"overlap_old": overlap_old_project, "membership_old": membership_old_project, "surprisal": surprisal_project, "reading": reading_project,
          "validity": validity_project, "cloze": cloze_project}
LEAKAGE = ("overlap", "frequency", "membership", "decop")


def run(quick: bool, only: set[str] | None = None):
    """Every line, or only the frames named in ``only`` (``python -m benchmarks.bench_results_scale --only
    membership,membership_old,decop,validity``; the page's stall is measured only with every line)."""
    rows = QUICK_ROWS if quick else ROWS
    rounds = 1 if quick else ROUNDS
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        path = None
        if only is None or only & set(LEAKAGE):
            (folder / "leakage").mkdir()
            project = leakage_project(folder / "leakage", rows)
            try:
                for name, built in leakage_frames(project):
                    if only is None or name in only:
                        yield measure(name, built, rounds)
            finally:
                path = project.path
                project.close()
        for name, build in OTHERS.items():
            if only is not None and name not in only:
                continue
            built = build(folder, rows)
            try:
                yield measure(name, built, rounds)
            finally:
                built.project.close()
        if only is not None:
            return
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        try:
            from ui.app import _application
        except ImportError:
            yield skipped("results_scale_leakage_page", "the GUI extra is not installed")
            return
        _application()
        yield leakage_page_stall(path)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", help="frames to measure, comma-separated (e.g. membership,decop,validity)")
    args = parser.parse_args()
    for result in run(args.quick, set(args.only.split(",")) if args.only else None):
        print(json.dumps(result), flush=True)
