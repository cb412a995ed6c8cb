import pytest

from tests.fixtures.annotation_data import add_book, write_csv
from tests.fixtures.reading_books import SUMMARIES_LABEL, counted_text, named_story, summaries_csv
from workbench.errors import UserError
from workbench.jobs import resume_run, run_counts
from workbench.models.catalog import ModelSpec, add_model
from workbench.probes.reading.scenes import make_scenes
from workbench.probes.reading.summaries import (
    FALSE_RUN,
    SUMMARY_RUN,
    estimate_summary_cost,
    import_summaries,
    level_summaries,
    levels_of,
    merged_texts,
    node_count,
    summarize_with_model,
    summary_models,
)


def _runs(project, kind):
    return [r[0] for r in project.db.execute("SELECT id FROM runs WHERE kind = ? ORDER BY id", [kind]).fetchall()]


def test_imported_summaries_are_a_run_of_an_external_model(project, summarized_book):
    pairs = level_summaries(project, summarized_book.scene_set.id, SUMMARIES_LABEL)
    assert sorted(pairs) == list(range(len(summarized_book.scene_set.scenes)))
    assert pairs[0][0].startswith("In part 0 Clara Whitby goes to") and "quarrels" in pairs[0][1]
    backend = project.db.execute("SELECT backend FROM models WHERE label = ?", [SUMMARIES_LABEL]).fetchone()[0]
    assert backend == "external"
    assert summary_models(project, summarized_book.scene_set.id) == [SUMMARIES_LABEL]


def test_importing_the_same_file_again_changes_nothing_and_bad_rows_fail(project, tmp_path):
    book = add_book(project, "Counted", "Someone", counted_text([100] * 8))
    scene_set = make_scenes(project, book, 200)
    path = summaries_csv(tmp_path / "s.csv", 4, skip={2})
    import_summaries(project, book, path, "ext")
    import_summaries(project, book, path, "ext")
    assert len(_runs(project, SUMMARY_RUN)) == len(_runs(project, FALSE_RUN)) == 1
    assert sorted(level_summaries(project, scene_set.id, "ext")) == [0, 1, 3]
    rows = [[0, "Anna walks.", "Anna walks."], [1, "Anna sings.", ""], [2, "Anna reads.", "Anna burns a book."]]
    report = import_summaries(project, book, write_csv(tmp_path / "t.csv", ["scene", "summary", "false_summary"], rows),
                              "ext2")
    (level,) = report.levels
    assert (level.summaries, level.false, level.false_failed) == (3, 1, 2)  # a repeated and an empty false summary


@pytest.mark.parametrize("rows, problem", [
    ([[0, "a", "b"], [0, "c", "d"]], "appears twice"),
    ([[9, "a", "b"]], "no scene 9"),
    ([["one", "a", "b"]], "not a scene number"),
])
def test_a_file_with_problems_imports_nothing(project, tmp_path, rows, problem):
    book = add_book(project, "Counted", "Someone", counted_text([100] * 8))
    make_scenes(project, book, 200)
    with pytest.raises(UserError, match=problem):
        import_summaries(project, book, write_csv(tmp_path / "bad.csv", ["scene", "summary", "false_summary"], rows), "x")
    with pytest.raises(UserError, match="lacks the column"):
        import_summaries(project, book, write_csv(tmp_path / "cols.csv", ["scene", "summary"], [[0, "a"]]), "x")
    assert _runs(project, SUMMARY_RUN) == []


def test_hierarchical_levels_join_groups_of_summaries():
    assert [node_count(23, level, 5) for level in range(4)] == [23, 5, 1, 1]
    children = {0: "a", 1: "b", 3: "d", 7: "h"}
    assert merged_texts(children, 2, 5) == {0: "a\n\nb\n\nd", 1: "h"}
    assert merged_texts({}, 3, 5) == {}


@pytest.mark.slow
def test_a_model_summarizes_every_scene_level_by_level_and_a_rerun_continues(project, tiny_causal_dir):
    book = add_book(project, "Story", "Someone", named_story(2, paragraphs=12))
    scene_set = make_scenes(project, book, 150)
    spec = add_model(project, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir)))
    report = summarize_with_model(project, book, spec, hierarchical=True, group=3, max_tokens=12)
    scenes = len(scene_set.scenes)
    assert [lv.nodes for lv in report.levels][0] == scenes and report.levels[-1].nodes == 1
    assert levels_of(project, scene_set.id, "tiny-base") == list(range(len(report.levels)))
    first = report.levels[0]
    assert first.summaries + first.summaries_failed == scenes
    for run_id in _runs(project, SUMMARY_RUN) + _runs(project, FALSE_RUN):
        counts = run_counts(project, run_id)
        assert counts["ok"] + counts["failed"] > 0
    calls = project.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    again = summarize_with_model(project, book, spec, hierarchical=True, group=3, max_tokens=12)
    assert project.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == calls
    assert again.levels == report.levels
    resumed = resume_run(project, first.summary_run)
    assert resumed.processed == 0 and resumed.total == scenes


def test_the_cost_of_summaries_still_to_make_is_estimated_before_asking(project, summarized_book):
    paid = ModelSpec(label="api", backend="openai", ref="gpt-4o-mini", api_key_env="OPENAI_API_KEY")
    estimate = estimate_summary_cost(project, summarized_book.book_id, paid)
    scenes = len(summarized_book.scene_set.scenes)
    assert estimate.requests == 2 * scenes and estimate.cost > 0 and not estimate.local
    hierarchical = estimate_summary_cost(project, summarized_book.book_id, paid, hierarchical=True, group=4)
    levels = [node_count(scenes, level, 4) for level in range(1, 6)]
    upper = sum(levels[: levels.index(1) + 1])
    assert hierarchical.requests == 2 * scenes + 2 * upper
    # the imported model has every scene already
    imported = ModelSpec(label=SUMMARIES_LABEL, backend="external")
    assert estimate_summary_cost(project, summarized_book.book_id, imported).requests == 0
