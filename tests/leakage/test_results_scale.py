"""Reading a probe's stored answers grows with the answers read, not with answers x passages.

A run's config names every passage it covers; reading it once per stored answer (a join onto every row,
parsed per row) made 7,957 passages take 3 GB and 57,000 run out of memory. These tests store runs the way
the probes store them and measure, inside the test, the memory the read allocates for a small and a
four-times larger run: linear growth is about 4 times, the quadratic shape 16 times."""

from __future__ import annotations

import json
import tracemalloc

from workbench import Project
from workbench.jobs import create_run
from workbench.project import now

SMALL, LARGE = 500, 2_000
GROWTH_BOUND = 6.0  # linear: ~4; once per row: ~16


def peak_bytes(read) -> int:
    tracemalloc.start()
    try:
        read()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def store_answers(project: Project, kind: str, config: dict, answers: list[tuple[int, int, str]],
                  model_id: int | None = None) -> int:
    run_id = create_run(project, kind, model_id=model_id, config=config, total=len(answers))
    stamp = now()
    with project.db.transaction():
        project.db.conn.executemany(
            "INSERT INTO responses (run_id, item_id, sample, status, raw, created_at) VALUES (?, ?, ?, 'ok', ?, ?)",
            [(run_id, item, sample, raw, stamp) for item, sample, raw in answers])
    return run_id


def passages(project: Project, count: int) -> list[int]:
    from workbench.probes.leakage.passages import store_passages

    return store_passages(project, "file:scale.txt",
                          [(str(n), None, "A made-up book", f"Passage {n} of a made-up book, with some words in it.")
                           for n in range(1, count + 1)])


def overlap_project(folder, count: int) -> Project:
    """An overlap run of ``count`` passages against corpus 1, as ``run_overlap`` stores it."""
    from workbench.probes.leakage.overlap import KIND

    project = Project.create(folder / f"overlap{count}.palimpsest")
    ids = passages(project, count)
    raw = json.dumps({"tokens": 12, "suffix_lengths": list(range(12)), "frequency": 3, "text": "some words"})
    store_answers(project, KIND, {"corpus": "lit", "corpus_id": 1, "passage_ids": ids},
                  [(item, 0, raw) for item in ids])
    return project


def test_reading_answers_grows_linearly_with_the_passages_a_run_covers(tmp_path):
    from workbench.probes.leakage.overlap import KIND
    from workbench.probes.leakage.runs import responses

    peaks, rows = {}, {}
    for count in (SMALL, LARGE):
        project = overlap_project(tmp_path, count)
        try:
            found = responses(project, KIND, config_filter={"corpus_id": 1})
            rows[count] = len(found)
            peaks[count] = peak_bytes(lambda p=project: responses(p, KIND, config_filter={"corpus_id": 1}))
        finally:
            project.close()
    assert rows == {SMALL: SMALL, LARGE: LARGE}
    growth = peaks[LARGE] / peaks[SMALL]
    assert growth <= GROWTH_BOUND, f"{LARGE:,} answers took {growth:.1f} times the memory of {SMALL:,}: {peaks}"


def test_reading_decop_answers_grows_linearly_with_the_passages_a_quiz_covers(tmp_path):
    """A DE-COP quiz run's config names every passage and its paraphrases; the answers are read per run."""
    from workbench.models.catalog import ModelSpec, add_model
    from workbench.probes.leakage.decop import QUIZ_KIND, answers_frame

    peaks, rows = {}, {}
    for count in (SMALL // 4, LARGE // 4):  # four questions a passage
        project = Project.create(tmp_path / f"decop{count}.palimpsest")
        try:
            spec = add_model(project, ModelSpec(label="quizzed", backend="external"))
            ids = passages(project, count)
            config = {"passage_ids": ids, "paraphraser_id": spec.id, "orders": 4, "seed": 0,
                      "paraphrase_samples": {str(i): [0, 1, 2] for i in ids}}
            store_answers(project, QUIZ_KIND, config, [(item, n, "B") for item in ids for n in range(4)],
                          model_id=spec.id)
            rows[count] = len(answers_frame(project, "quizzed"))
            peaks[count] = peak_bytes(lambda p=project: answers_frame(p, "quizzed"))
        finally:
            project.close()
    assert rows == {SMALL // 4: SMALL, LARGE // 4: LARGE}
    growth = peaks[LARGE // 4] / peaks[SMALL // 4]
    assert growth <= GROWTH_BOUND, f"{LARGE:,} answers took {growth:.1f} times the memory of {SMALL:,}: {peaks}"


def test_answers_are_those_of_the_matching_runs_newest_first(tmp_path):
    """What the linear read keeps of the helper's contract: the runs whose config and settings match, the
    newest answer per passage and sample (a failed one only when failures are asked for), their config."""
    from workbench.probes.leakage.runs import responses

    project = Project.create(tmp_path / "contract.palimpsest")
    try:
        old = store_answers(project, "leakage-overlap", {"corpus_id": 1, "passage_ids": [1, 2, 3]},
                            [(1, 0, "old 1"), (2, 0, "old 2"), (3, 0, "old 3")])
        other = store_answers(project, "leakage-overlap", {"corpus_id": 2}, [(1, 0, "other corpus")])
        new = store_answers(project, "leakage-overlap", {"corpus_id": 1, "passage_ids": [1, 2]},
                            [(1, 0, "new 1")])
        with project.db.transaction():
            project.db.execute("INSERT INTO responses (run_id, item_id, sample, status, error, created_at)"
                               " VALUES (?, 2, 0, 'failed', 'timed out', ?)", [new, now()])
        found = responses(project, "leakage-overlap", config_filter={"corpus_id": 1})
        assert dict(zip(found["item_id"], found["raw"])) == {1: "new 1", 2: "old 2", 3: "old 3"}
        assert dict(zip(found["item_id"], found["run_id"])) == {1: new, 2: old, 3: old}
        assert json.loads(found["config"].iloc[0]) == {"corpus_id": 1, "passage_ids": [1, 2]}
        everything = responses(project, "leakage-overlap", config_filter={"corpus_id": 1}, ok_only=False)
        assert dict(zip(everything["item_id"], everything["status"])) == {1: "ok", 2: "failed", 3: "ok"}
        assert list(responses(project, "leakage-overlap", item_ids=[1])["run_id"]) == [new]
        assert list(responses(project, "leakage-overlap", config_filter={"corpus_id": 2})["run_id"]) == [other]
        assert responses(project, "leakage-overlap", config_filter={"corpus_id": 3}).empty
        assert responses(project, "leakage-overlap", params_filter={"gram": 5}).empty
    finally:
        project.close()
