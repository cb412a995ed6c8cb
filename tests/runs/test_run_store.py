"""The run store (``workbench.runs``): each kind of run declared once, its config typed; runs found by kind,
model and typed config; follow-up runs; deleting runs; the Jobs page, ``palimpsest continue`` and the methods
text all reading the one declaration."""

import dataclasses
import gzip
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from workbench import jobs, runs
from workbench.errors import UserError
from workbench.project import Project
from workbench.runs import RunKind, Unit, config_dict, optional, store

RELEASED = Path(__file__).resolve().parent.parent / "fixtures" / "released" / "format-9.sqlite.gz"


@dataclass(frozen=True)
class CountConfig:
    corpus_id: int | None = None
    passage_ids: tuple[int, ...] = ()
    context: int | None = None
    note: str | None = optional()


@pytest.fixture
def counting():
    kind = runs.declare_run_kind(RunKind("test-count", "counting test passages", "passage", config=CountConfig,
                                         units=lambda _project, run: [Unit(i) for i in run.config.passage_ids]))
    yield kind
    runs.forget_run_kind(kind)


def answer_all(project, run_id, units):
    jobs.run_job(project, run_id, units, lambda chunk, state: [(u, jobs.Outcome(raw=str(u.item_id))) for u in chunk])


# ---------------------------------------------------------------------------------------------- old projects
def test_every_config_of_a_released_project_reads_typed_and_is_stored_the_same_again(tmp_path):
    """A project made by the released version: each run's config reads as its kind's dataclass, and written back it
    is what was stored, key for key, so asking for the same work again finds the old run."""
    path = tmp_path / "study.palimpsest"
    with gzip.open(RELEASED, "rb") as source, open(path, "wb") as target:
        shutil.copyfileobj(source, target)
    with Project.open(path) as project:
        found = runs.runs(project)
        assert len(found) == 11 and {run.kind for run in found} >= {"cloze", "reading-answer", "leakage-overlap"}
        for run in found:
            declared = runs.run_kind(run.kind)
            assert declared is not None and dataclasses.is_dataclass(declared.config), run.kind
            assert isinstance(run.config, declared.config)
            assert config_dict(run.config) == run.stored, run.kind
        answer = runs.latest_run(project, "reading-answer")
        assert answer.config.context_words is None and answer.config.question_set == 1  # stored as null: kept
        overlap = runs.latest_run(project, "leakage-overlap", corpus_id=1)
        assert overlap.config.passage_ids == (1, 2, 3) and overlap.params == {"answers": 2, "max_order": 5}
        imported = runs.runs(project, "cloze", model_id=1)[0]
        assert imported.config.passage_ids is None and len(imported.config.files) >= 2
        run_id = jobs.find_or_create_run(project, "leakage-overlap", model_id=None, params=overlap.params,
                                         config=overlap.config)
        assert run_id == overlap.id  # the typed config finds the run the old code made


def test_a_config_tolerates_keys_it_does_not_know_and_fills_in_those_it_lacks(project, counting):
    run_id = jobs.create_run(project, counting, config={"passage_ids": [3, 1], "retired_setting": "x"})
    run = runs.get_run(project, run_id)
    assert run.config == CountConfig(corpus_id=None, passage_ids=(3, 1), context=None)
    assert run.stored == {"passage_ids": [3, 1], "retired_setting": "x"}  # the record keeps what was stored
    assert config_dict(run.config) == {"corpus_id": None, "passage_ids": [3, 1], "context": None}


def test_a_typed_config_is_stored_with_its_optional_fields_only_when_set(project, counting):
    plain = runs.get_run(project, jobs.create_run(project, counting, config=CountConfig(corpus_id=2)))
    noted = runs.get_run(project, jobs.create_run(project, counting, config=CountConfig(corpus_id=2, note="n")))
    assert plain.stored == {"corpus_id": 2, "passage_ids": [], "context": None}
    assert noted.stored == {"corpus_id": 2, "passage_ids": [], "context": None, "note": "n"}
    with pytest.raises(TypeError, match="CountConfig"):
        jobs.create_run(project, counting, config=object())


def test_find_or_create_run_matches_a_typed_config_with_the_dict_an_earlier_version_stored(project, counting):
    earlier = jobs.create_run(project, counting, params={"k": 1},
                              config={"corpus_id": 2, "passage_ids": [1, 2], "context": None})
    again = jobs.find_or_create_run(project, counting, model_id=None, params={"k": 1.0},
                                    config=CountConfig(corpus_id=2, passage_ids=(1, 2)))
    other = jobs.find_or_create_run(project, counting, model_id=None, params={"k": 1},
                                    config=CountConfig(corpus_id=2, passage_ids=(1, 2), note="another"))
    assert again == earlier and other != earlier


# ---------------------------------------------------------------------------------------------- finding runs
def test_runs_are_found_by_kind_model_and_typed_config(project, counting):
    first = jobs.create_run(project, counting, config=CountConfig(corpus_id=1, passage_ids=(1, 2)))
    second = jobs.create_run(project, counting, config=CountConfig(corpus_id=2, passage_ids=(1, 2)))
    third = jobs.create_run(project, counting, config=CountConfig(corpus_id=1, passage_ids=(3,)))
    jobs.create_run(project, "test-other", config={"corpus_id": 1})
    answer_all(project, third, [Unit(3)])
    assert [r.id for r in runs.runs(project, counting, corpus_id=1)] == [first, third]  # oldest first
    assert [r.id for r in runs.runs(project, counting, passage_ids=[1, 2])] == [first, second]  # list == tuple
    assert [r.id for r in runs.runs(project, counting, corpus_id=1, with_responses=True)] == [third]
    assert runs.latest_run(project, counting, corpus_id=1).id == third
    assert runs.latest_run(project, counting, corpus_id=9) is None
    assert runs.run_ids(project, ["test-count", "test-other"], corpus_id=1) == [first, third, third + 1]
    with pytest.raises(TypeError, match="no field 'corpus'"):
        runs.runs(project, counting, corpus=1)  # a typo is an error, not an empty answer


def test_the_config_is_read_once_per_run_whatever_the_number_of_answers(project, counting, monkeypatch):
    run_id = jobs.create_run(project, counting, config=CountConfig(corpus_id=1, passage_ids=tuple(range(50))))
    answer_all(project, run_id, [Unit(i) for i in range(50)])
    reads = []
    read = RunKind.read_config
    monkeypatch.setattr(RunKind, "read_config", lambda self, stored: reads.append(1) or read(self, stored))
    (run,) = runs.runs(project, counting, corpus_id=1, with_responses=True)
    _ = run.config, run.config
    frame = runs.responses(project, [run.id])
    assert len(frame) == 50 and len(reads) == 1


def test_follow_up_runs_are_those_whose_config_names_the_run(project):
    from workbench.summaries.runs import DISTORT_RUN, SUMMARY_RUN, DistortConfig, SummaryConfig

    summary = jobs.create_run(project, SUMMARY_RUN, config=SummaryConfig(annotation_task=1, model="m"))
    other = jobs.create_run(project, SUMMARY_RUN, config=SummaryConfig(annotation_task=1, model="m"))
    distorted = [jobs.create_run(project, DISTORT_RUN, config=DistortConfig(annotation_task=1, model="m",
                                                                           summary_run=run)) for run in (summary, other)]
    assert [r.id for r in runs.follow_ups(project, summary, DISTORT_RUN)] == [distorted[0]]
    assert [r.id for r in runs.follow_ups(project, runs.get_run(project, other), DISTORT_RUN)] == [distorted[1]]
    with pytest.raises(TypeError, match="does not declare which run it follows"):
        runs.follow_ups(project, summary, SUMMARY_RUN)


def test_the_units_of_a_run_come_from_its_kind(project, counting):
    from workbench.probes.leakage.kinds import QUIZ_KIND, QuizConfig

    run = runs.get_run(project, jobs.create_run(project, counting, config=CountConfig(passage_ids=(5, 7))))
    assert counting.units_of(project, run) == [Unit(5), Unit(7)]
    quiz = runs.get_run(project, jobs.create_run(project, QUIZ_KIND, config=QuizConfig(passage_ids=(4,), orders=3)))
    assert QUIZ_KIND.units_of(project, quiz) == [Unit(4, 0), Unit(4, 1), Unit(4, 2)]


# ---------------------------------------------------------------------------------------------- deleting runs
def test_deleting_runs_refuses_while_one_is_being_executed_and_takes_its_answers(project, counting):
    keep = jobs.create_run(project, counting, config=CountConfig(corpus_id=1))
    gone = jobs.create_run(project, counting, config=CountConfig(corpus_id=2))
    for run_id in (keep, gone):
        answer_all(project, run_id, [Unit(1), Unit(2)])
    store.set_status(project, gone, "running")
    key = store.begin_execution(project, gone)
    try:
        with pytest.raises(UserError, match=f"run {gone} .*To delete the test runs"):
            runs.delete_runs(project, [gone], doing="delete the test runs")
    finally:
        store.end_execution(key)
    assert runs.delete_runs(project, runs.run_ids(project, counting, corpus_id=2), doing="delete them") == 1
    assert runs.run_ids(project, counting) == [keep]
    assert project.db.execute("SELECT DISTINCT run_id FROM responses").fetchall() == [(keep,)]


def test_a_config_change_keeps_the_other_keys(project, counting):
    run_id = jobs.create_run(project, counting, config=CountConfig(corpus_id=4, passage_ids=(1,)))
    runs.update_configs(project, runs.run_ids(project, counting, corpus_id=4), {"corpus_id": None, "note": "gone"})
    assert runs.get_run(project, run_id).stored == {"corpus_id": None, "passage_ids": [1], "context": None,
                                                     "note": "gone"}
    assert runs.runs(project, counting, corpus_id=4) == []


# ---------------------------------------------------------------------------------------------- one declaration
def test_each_kind_is_declared_once_and_read_by_the_jobs_page_continue_and_the_methods_text():
    """The methods section of each probe lists the very declarations (not a second description), the Jobs page
    names a kind in their words, and every declared kind can be continued and has a typed config."""
    from workbench.export.methods import sections

    declared = runs.declared_kinds()
    assert len({k.kind for k in declared}) == len(declared) >= 20
    claimed = [(section.key, kind) for section in sections() for kind in section.kinds]
    for kind in declared:
        owners = [key for key, listed in claimed if listed is kind]
        assert len(owners) == 1, f"{kind!r} is described by {owners}"
        assert runs.kind_name(kind.kind) == kind.name == kind.description[0].upper() + kind.description[1:]
        assert jobs.can_resume(kind.kind), kind
        assert dataclasses.is_dataclass(kind.config), kind
    assert {kind.kind for _, kind in claimed} == {kind.kind for kind in declared}


def test_a_kind_is_its_string_wherever_the_string_went(project, counting):
    assert counting == "test-count" and {counting: 1}["test-count"] == 1 and str(counting).__class__ is str
    run_id = jobs.create_run(project, counting)
    assert project.db.execute("SELECT kind FROM runs WHERE id = ?", [run_id]).fetchone() == ("test-count",)
    with pytest.raises(AttributeError):
        counting.item = "book"
